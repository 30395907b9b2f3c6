"""`derive` speaks matrix calculus: the Matrix Cookbook's identities, derived with named sizes,
hold at two different sizes, are written without a literal size, and take no more operations
than the Cookbook's own form plus two. Jacobians and Hessians against PyTorch's
`autograd.functional` at two sizes."""

from __future__ import annotations

import re
import types

import numpy as np
import pytest

from autodiff.language import ast
from autodiff.language.parser import parse
from autodiff.program import derive as D
from autodiff.symbolic.sizes import CHECKED, TRACED
from latex import assert_compiles, balanced

from .module_text import without_helpers

torch = pytest.importorskip("torch")

SIZES = ({"n": 3, "m": 4, "k": 2}, {"n": 5, "m": 7, "k": 3})


def module_of(d) -> types.ModuleType:
    module = types.ModuleType("derived")
    exec(compile(D.python_module(d), "<derived module>", "exec"), module.__dict__)  # noqa: S102 - our own code
    return module


def point(shapes: dict, sizes: dict, seed: int = 0, spd: tuple = ()) -> dict:
    """Values in [0.5, 1.5] for each input at `sizes`; the inputs named in `spd` symmetric and
    positive definite (log det's, an inverse's)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, dims in shapes.items():
        shape = tuple(sizes[d] for d in dims)
        value = rng.uniform(0.5, 1.5, size=shape)
        if name in spd:
            value = value @ value.T + shape[0] * np.eye(shape[0])
        out[name] = value
    return out


def operations(program_text: str) -> int:
    """The operations a program's statements take (a size's binding is free): each operator,
    call, `.T` and index."""
    count = 0
    for statement in parse(program_text).body:
        if isinstance(statement.value, ast.Call) and getattr(statement.value.func, "name", "") == "size":
            continue
        for node in ast.walk(statement.value):
            if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.Subscript)):
                count += 1
    return count


def language_value(text: str, values: dict) -> np.ndarray:
    """A formula in the language, run by the language at `values`."""
    from autodiff.language.evaluate import evaluate
    from autodiff.language.source import Source

    names = [n for n in values if re.search(rf"\b{n}\b", text)]
    program_text = "".join(f"{n}: input\n" for n in names) + f"out = {text}\n"
    result = evaluate(parse(program_text), Source(program_text, "<cookbook>"), at={n: values[n] for n in names})
    return np.asarray(result.output.detach().numpy(), dtype=float)


def literal_sizes(program_text: str) -> set:
    """The traced sizes (primes of ours) a program writes as numbers: none may appear."""
    numbers = {int(x) for x in re.findall(r"(?<![\w.])(\d+)(?![\w.])", program_text)}
    return numbers & set(TRACED + CHECKED)


# (program, {input: its sizes by name}, wrt, the Cookbook's form, inputs made positive definite)
COOKBOOK = [
    ("x @ a", {"x": "n", "a": "n"}, "x", "a", ()),
    ("a @ x", {"x": "n", "a": "n"}, "x", "a", ()),
    ("x @ x", {"x": "n"}, "x", "2 * x", ()),
    ("x @ A @ x", {"x": "n", "A": "nn"}, "x", "(A + A.T) @ x", ()),
    ("x @ A @ x", {"x": "n", "A": "nn"}, "A", "outer(x, x)", ()),
    ("a @ X @ b", {"a": "m", "X": "mn", "b": "n"}, "X", "outer(a, b)", ()),
    ("a @ X.T @ b", {"a": "n", "X": "mn", "b": "m"}, "X", "outer(b, a)", ()),
    ("sum((A @ x - b) ** 2)", {"A": "mn", "x": "n", "b": "m"}, "x", "2 * A.T @ (A @ x - b)", ()),
    ("sum((A @ x - b) ** 2)", {"A": "mn", "x": "n", "b": "m"}, "A", "2 * outer(A @ x - b, x)", ()),
    ("sum((A @ x - b) ** 2) + lam * (x @ x)", {"A": "mn", "x": "n", "b": "m", "lam": ""}, "x",
     "2 * A.T @ (A @ x - b) + 2 * lam * x", ()),
    ("mean((A @ x - b) ** 2)", {"A": "mn", "x": "n", "b": "m"}, "x", "2 * A.T @ (A @ x - b) / size(b, 0)", ()),
    ("trace(X)", {"X": "nn"}, "X", "eye(size(X, 0))", ()),
    ("trace(A @ X)", {"A": "nn", "X": "nn"}, "X", "A.T", ()),
    ("trace(X @ A)", {"A": "nn", "X": "nn"}, "X", "A.T", ()),
    ("trace(X.T @ A)", {"A": "nn", "X": "nn"}, "X", "A", ()),
    ("trace(X.T @ X)", {"X": "mn"}, "X", "2 * X", ()),
    ("trace(X @ X)", {"X": "nn"}, "X", "2 * X.T", ()),
    ("trace(X @ A @ X.T)", {"X": "mn", "A": "nn"}, "X", "X @ (A + A.T)", ()),
    ("trace(A @ X @ B)", {"A": "nm", "X": "mk", "B": "kn"}, "X", "A.T @ B.T", ()),
    ("sum(X * X)", {"X": "mn"}, "X", "2 * X", ()),
    ("log(det(X))", {"X": "nn"}, "X", "linalg_inv(X).T", ("X",)),
    ("logdet(X)", {"X": "nn"}, "X", "linalg_inv(X).T", ("X",)),  # assuming det X > 0, said
    ("det(X)", {"X": "nn"}, "X", "det(X) * linalg_inv(X).T", ("X",)),
    ("a @ linalg_inv(X) @ b", {"a": "n", "X": "nn", "b": "n"}, "X",
     "-(linalg_inv(X).T @ outer(a, b) @ linalg_inv(X).T)", ("X",)),
    ("trace(linalg_inv(X))", {"X": "nn"}, "X", "-(linalg_inv(X) @ linalg_inv(X)).T", ("X",)),
    ("norm(x)", {"x": "n"}, "x", "x / norm(x)", ()),
    ("sqrt(x @ x)", {"x": "n"}, "x", "x / sqrt(x @ x)", ()),
    ("sum(exp(A @ x))", {"A": "mn", "x": "n"}, "x", "A.T @ exp(A @ x)", ()),
    ("logsumexp(z, 0) - y @ z", {"z": "n", "y": "n"}, "z", "softmax(z, 0) - y", ()),
    ("-sum(y * log_softmax(z, 0))", {"z": "n", "y": "n"}, "z", "softmax(z, 0) * sum(y) - y", ()),
    ("p = sigmoid(X @ w)\nloss = -sum(y * log(p) + (1 - y) * log(1 - p))", {"X": "mn", "w": "n", "y": "m"}, "w",
     "X.T @ (sigmoid(X @ w) - y)", ()),
    ("sum(softplus(X @ w) - y * (X @ w))", {"X": "mn", "w": "n", "y": "m"}, "w", "X.T @ (sigmoid(X @ w) - y)", ()),
    ("h = tanh(W @ x)\nout = v @ h", {"W": "mn", "x": "n", "v": "m"}, "W", "outer(v * (1 - tanh(W @ x) ** 2), x)", ()),
    ("h = tanh(W @ x)\nout = v @ h", {"W": "mn", "x": "n", "v": "m"}, "v", "tanh(W @ x)", ()),
    ("(x @ A @ x) / (x @ x)", {"x": "n", "A": "nn"}, "x",
     "((A + A.T) @ x - 2 * (x @ A @ x) / (x @ x) * x) / (x @ x)", ()),
    ("sum((T - U @ V.T) ** 2)", {"T": "mk", "U": "mn", "V": "kn"}, "U", "-2 * (T - U @ V.T) @ V", ()),
    ("sum((X @ W - Y) ** 2)", {"X": "mn", "W": "nk", "Y": "mk"}, "W", "2 * X.T @ (X @ W - Y)", ()),
    ("trace(X.T @ A @ X)", {"A": "mm", "X": "mn"}, "X", "(A + A.T) @ X", ()),
    ("log(det(X.T @ X))", {"X": "mn"}, "X", "2 * X @ linalg_inv(X.T @ X)", ()),
    ("trace(linalg_inv(X) @ A)", {"X": "nn", "A": "nn"}, "X", "-(linalg_inv(X).T @ A.T @ linalg_inv(X).T)", ("X",)),
    ("x @ linalg_inv(A) @ x", {"x": "n", "A": "nn"}, "x", "(linalg_inv(A) + linalg_inv(A).T) @ x", ("A",)),
    ("norm(A @ x - b)", {"A": "mn", "x": "n", "b": "m"}, "x", "A.T @ (A @ x - b) / norm(A @ x - b)", ()),
    ("-sum(Y * log_softmax(X @ W, 1))", {"Y": "mk", "X": "mn", "W": "nk"}, "W",
     "X.T @ (softmax(X @ W, 1) * sum(Y, 1, keepdim=True) - Y)", ()),
    ("trace(matrix_exp(X))", {"X": "nn"}, "X", "matrix_exp(X.T)", ()),
    ("sum(kron(A, B) ** 2)", {"A": "mn", "B": "kk"}, "A", "2 * sum(B ** 2) * A", ()),
    ("det(A @ X @ B)", {"A": "nn", "X": "nn", "B": "nn"}, "X", "det(A @ X @ B) * linalg_inv(X).T", ("A", "X", "B")),
    ("log(det(A @ X @ B))", {"A": "nn", "X": "nn", "B": "nn"}, "X", "linalg_inv(X).T", ("A", "X", "B")),
    ("logdet(X.T @ X)", {"X": "mn"}, "X", "2 * X @ linalg_inv(X.T @ X)", ()),
    ("mu = mean(X, 1, keepdim=True)\nv = var(X, 1, keepdim=True, correction=0)\nY = (X - mu) / sqrt(v + 1e-5)\n"
     "out = sum(Y * G)", {"X": "mn", "G": "mn"}, "X",
     "(G - sum(G, 1, keepdim=True) / size(X, 1) - (X - mean(X, 1, keepdim=True)) * sum(G * (X - mean(X, 1, keepdim=True)), 1, keepdim=True)"
     " / (size(X, 1) * (var(X, 1, keepdim=True, correction=0) + 1e-5))) / sqrt(var(X, 1, keepdim=True, correction=0) + 1e-5)", ()),
    ("r = x - y\nloss = sum(where(abs(r) <= 1, 0.5 * r ** 2, abs(r) - 0.5))", {"x": "n", "y": "n"}, "x",
     "where(abs(x - y) <= 1, x - y, sign(x - y))", ()),
    ("trace(2 * matrix_exp(X))", {"X": "nn"}, "X", "2 * matrix_exp(X.T)", ()),
]


def _shapes(spec: dict) -> dict:
    return {name: tuple(dims) for name, dims in spec.items()}


@pytest.mark.parametrize("program, spec, wrt, cookbook, spd", COOKBOOK,
                         ids=[f"{c[0].splitlines()[-1]} wrt {c[2]}" for c in COOKBOOK])
def test_a_cookbook_identity_is_derived_generic_and_short(program, spec, wrt, cookbook, spd):
    shapes = _shapes(spec)
    d = D.derive(program, shapes=shapes, wrt=[wrt])
    assert d.sizes is not None, "the formula is written for every size"
    for text in (d.program, D.latex(d), without_helpers(D.python_module(d)), "\n".join(r for _, r in D.readable_lines(d))):
        assert not literal_sizes(text), text
    assert operations(d.program) <= operations(f"out = {cookbook}") + 2, d.program
    module = module_of(d)
    for sizes in SIZES:
        values = point(shapes, sizes, spd=spd)
        _, grads = module.value_and_grad(**values)
        np.testing.assert_allclose(grads[wrt], language_value(cookbook, values), rtol=1e-9, atol=1e-12)


# -- Jacobians and Hessians against PyTorch, at two sizes -------------------------------------------------


def _resolved(text: str, lines: dict) -> str:
    """A readable formula with the shared values it names (t1, t2...) written in place, in
    parentheses where they are more than one term."""
    def written(value: str) -> str:
        depth, spaced = 0, False
        for c in value:
            depth += c == "(" or -(c == ")")
            spaced = spaced or (c == " " and depth == 0)
        return f"({value})" if spaced else value

    names = [n for n in lines if re.fullmatch(r"t\d+", n)]
    while text in names:
        text = lines[text]
    pattern = {n: rf"(?<!\w){n}(?!\d)" for n in names}  # ᵀ is a letter to \b
    while any(re.search(pattern[n], text) for n in names):
        for name in names:
            text = re.sub(pattern[name], lambda _: written(lines[name]), text)
    return text


def _torch_function(program: str):
    """The program as a PyTorch function: our language's names are PyTorch's here."""
    lines = program.splitlines()

    def run(**values):
        scope = {"torch": torch, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "exp": torch.exp,
                 "log": torch.log, "softmax": torch.softmax, "sum": torch.sum, "det": torch.det,
                 "trace": torch.trace, "relu": torch.relu, "norm": torch.linalg.norm,
                 "logsumexp": torch.logsumexp, "softplus": torch.nn.functional.softplus, "cumsum": torch.cumsum,
                 "log_softmax": torch.log_softmax,
                 **values}
        for line in lines[:-1]:
            name, text = line.split(" = ", 1)
            scope[name] = eval(text, scope)  # noqa: S307 - the test's own programs
        last = lines[-1].split(" = ", 1)[-1]
        return eval(last, scope)  # noqa: S307
    return run


JACOBIANS = [
    ("A @ x", {"A": "mn", "x": "n"}, ("x", "A")),
    ("sigmoid(x)", {"x": "n"}, ("x", "diag(output * (1 - output))")),
    ("tanh(A @ x)", {"A": "mn", "x": "n"}, ("x", "diag(1 - tanh(A @ x) ** 2) @ A")),
    ("softmax(x, 0)", {"x": "n"}, ("x", "diag(output) - output outputᵀ")),
    ("x * sum(x)", {"x": "n"}, None),
    ("x / sum(x)", {"x": "n"}, None),
    ("exp(x) * c", {"x": "n", "c": ""}, None),
    ("A @ B", {"A": "mn", "B": "nk"}, None),
    ("sigmoid(A)", {"A": "mn"}, None),
    ("W @ x + b", {"W": "mn", "x": "n", "b": "m"}, None),
    ("relu(x)", {"x": "n"}, ("x", "diag(where(x <= 0, 0, 1))")),
    ("x @ W", {"x": "n", "W": "nm"}, ("W", "xᵀ ⊗ I")),
    ("tanh(x @ W)", {"x": "n", "W": "nm"}, None),
    ("X.T @ X", {"X": "mn"}, ("X", "Xᵀ ⊗ I + (I ⊗ Xᵀ) K")),
    ("softmax(W @ x, 0)", {"W": "mn", "x": "n"}, ("x", "(diag(output) - output outputᵀ) @ W")),
    ("x / norm(x)", {"x": "n"}, None),
    ("softplus(x)", {"x": "n"}, ("x", "diag(where(x > 20, 1, sigmoid(x)))")),
    ("cumsum(x, 0)", {"x": "n"}, ("x", "tril(ones(n, n))")),
    ("cumsum(A @ x, 0)", {"A": "mn", "x": "n"}, None),
    # the signs of terms collected into a shared factor (a difference, a negative multiple)
    ("A.T @ X - X.T @ A", {"A": "nn", "X": "nn"}, ("X", "Aᵀ ⊗ I - (I ⊗ Aᵀ) K")),
    ("X @ A - A @ X", {"A": "nn", "X": "nn"}, None),
    ("B @ x - 2 * (A @ x)", {"A": "mn", "B": "mn", "x": "n"}, ("x", "B - 2 * A")),
    ("-(W @ x) + b", {"W": "mn", "x": "n", "b": "m"}, ("x", "-W")),
    # a matrix through an elementwise layer, by a weight matrix: one einsum
    ("tanh(X @ W)", {"X": "mn", "W": "nk"}, None),
    ("softmax(X @ W, 1)", {"X": "mn", "W": "nk"}, None),
]


@pytest.mark.parametrize("program, spec, readable", JACOBIANS, ids=[j[0] for j in JACOBIANS])
def test_a_jacobian_agrees_with_pytorch_at_two_sizes(program, spec, readable):
    shapes = _shapes(spec)
    d = D.derive(program, shapes=shapes)
    assert d.jacobian and d.sizes is not None
    assert not literal_sizes(d.program), d.program
    if readable is not None:
        wrt, formula = readable
        lines = dict(D.readable_lines(d))
        assert _resolved(lines[f"∂output/∂{wrt}"], lines) == formula
    _assert_jacobians_are_pytorchs(d, program, shapes, list(shapes))


def _assert_jacobians_are_pytorchs(d, program: str, shapes: dict, wrt: list) -> None:
    """The derived module's Jacobians by `wrt`, at each of SIZES, are PyTorch's."""
    module = module_of(d)
    names = list(shapes)
    function = _torch_function(program)
    for sizes in SIZES:
        values = point(shapes, sizes)
        _, jacobians = module.value_and_jacobian(**values)
        theirs = torch.autograd.functional.jacobian(
            lambda *args: function(**dict(zip(names, args))), tuple(torch.tensor(values[n]) for n in names))
        for name in wrt:
            np.testing.assert_allclose(jacobians[name], theirs[names.index(name)].numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=name)


# Jacobians of a batch, block by block: each output row depends on one row of the input
BLOCK_JACOBIANS = [
    ("-sum(Y * log_softmax(Z, 1), 1)", {"Y": "mk", "Z": "mk"}, "Z",
     "blockdiag(softmax(Z, 1) * sum(Y, dim=1, keepdim=True) - Y)"),
    ("-sum(Y * log_softmax(Z, 1), 1)", {"Y": "mk", "Z": "mk"}, "Y", "blockdiag(-log_softmax(Z, 1))"),
    ("sum(Z ** 2, 1)", {"Z": "mk"}, "Z", "blockdiag(2 * Z)"),
    ("tanh(X @ W + b)", {"X": "mn", "W": "nk", "b": "k"}, "b", "diag(vec(1 - tanh(b + X @ W) ** 2)) (1 ⊗ I)"),
    ("X @ W + b", {"X": "mn", "W": "nk", "b": "k"}, "b", "1 ⊗ I"),
    ("sigmoid(X + b) * 3", {"X": "mk", "b": "k"}, "b", None),
    ("sum(tanh(Z) @ A, 1)", {"Z": "mk", "A": "kn"}, "Z", None),
]


@pytest.mark.parametrize("program, spec, wrt, readable", BLOCK_JACOBIANS, ids=[f"{j[0]} by {j[2]}" for j in BLOCK_JACOBIANS])
def test_a_block_jacobian_of_a_batch_agrees_with_pytorch_at_two_sizes(program, spec, wrt, readable):
    shapes = _shapes(spec)
    d = D.derive(program, shapes=shapes, wrt=[wrt])
    assert d.jacobian and d.sizes is not None
    for text in (d.program, D.latex(d), D.python_module(d)):
        assert not literal_sizes(text), text
    code = D.python_module(d)
    assert "np.diag" not in code and "kron" not in code  # each block written from its rows, no big diagonal
    if readable is not None:
        lines = dict(D.readable_lines(d))
        assert _resolved(lines[f"∂output/∂{wrt}"], lines) == readable
    _assert_jacobians_are_pytorchs(d, program, shapes, [wrt])


HESSIANS = [
    ("x @ A @ x", {"x": "n", "A": "nn"}, ["x"], "A + Aᵀ"),
    ("p = sigmoid(X @ w)\nloss = -sum(y * log(p) + (1 - y) * log(1 - p))", {"X": "mn", "w": "n", "y": "m"}, ["w"],
     "Xᵀ @ diag(p * (1 - p)) @ X"),
    ("sum((T - U @ V.T) ** 2)", {"T": "mk", "U": "mn", "V": "kn"}, ["U"], "2 * (I ⊗ (Vᵀ @ V))"),
    ("sum((A @ x - b) ** 2)", {"A": "mn", "x": "n", "b": "m"}, ["x", "b"], None),
    ("x @ A @ x", {"x": "n", "A": "nn"}, None, None),
    ("sum(exp(A @ x))", {"A": "mn", "x": "n"}, ["x"], None),
    ("sum((T - U @ V.T) ** 2)", {"T": "mk", "U": "mn", "V": "kn"}, None, None),
    ("logsumexp(x, 0)", {"x": "n"}, ["x"], "diag(softmax(x, 0)) - softmax(x, 0) softmax(x, 0)ᵀ"),
    ("sum(log(1 + exp(X @ w)))", {"X": "mn", "w": "n"}, ["w"], None),
    ("(x @ A @ x) / (x @ x)", {"x": "n", "A": "nn"}, ["x"], None),
    ("norm(x)", {"x": "n"}, ["x"], None),
    ("sum(tanh(W @ x))", {"W": "mn", "x": "n"}, ["x"], None),
    ("trace(X @ X)", {"X": "nn"}, ["X"], "2 * ((I ⊗ I) K)"),
    ("x @ A @ y", {"x": "n", "A": "nm", "y": "m"}, ["x", "y"], None),
    # mixed blocks of a vector and a number: a bias, a regularisation weight
    ("p = sigmoid(X @ w + b)\nloss = -sum(y * log(p) + (1 - y) * log(1 - p))",
     {"X": "mn", "w": "n", "b": "", "y": "m"}, ["w", "b"], None),
    ("sum((X @ w - y) ** 2) + lam * sum(w ** 2)", {"X": "mn", "w": "n", "y": "m", "lam": ""}, ["w", "lam"],
     "2 * lam * I + 2 * (Xᵀ @ X)"),
    # a batch's mean: rows of a vector repeated, then summed (m is the batch's size)
    ("R = X - mu\nloss = 0.5 * sum((R @ P) * R)", {"X": "mn", "mu": "n", "P": "nn"}, ["mu"],
     "0.5 * m * P + 0.5 * m * Pᵀ"),
    ("sum((X - mu) ** 2)", {"X": "mn", "mu": "n"}, ["mu"], "2 * m * I"),
    # by a weight matrix through an elementwise layer: Kronecker maps around an elementwise one
    ("-sum(Y * log_softmax(X @ W, 1))", {"Y": "mk", "X": "mn", "W": "nk"}, ["W"], None),
    ("sum(sigmoid(X @ W))", {"X": "mn", "W": "nk"}, ["W"], None),
    ("h = tanh(X @ W1)\nloss = sum((h @ w2 - y) ** 2)", {"X": "mn", "W1": "nk", "w2": "k", "y": "m"}, ["W1"], None),
]


@pytest.mark.parametrize("program, spec, wrt, readable", HESSIANS, ids=[f"{h[0].splitlines()[-1]} {h[2]}" for h in HESSIANS])
def test_a_hessian_agrees_with_pytorch_at_two_sizes(program, spec, wrt, readable):
    shapes = _shapes(spec)
    d = D.derive(program, shapes=shapes, wrt=wrt, order=2)
    assert d.sizes is not None and not literal_sizes(d.program), d.program
    if readable is not None:
        lines = dict(D.readable_lines(d))
        second = next(right for left, right in lines.items() if left.startswith("∂²"))
        assert _resolved(second, lines) == readable
    if wrt is None:  # the blocks with no matrix formula are left out, and said
        assert all("Hessian block" in w.message for w in d.warnings)
    module = module_of(d)
    names = list(shapes)
    function = _torch_function(program)
    for sizes in SIZES:
        values = point(shapes, sizes)
        blocks = module.hessian(**values)
        theirs = torch.autograd.functional.hessian(
            lambda *args: function(**dict(zip(names, args))), tuple(torch.tensor(values[n]) for n in names))
        for a, row in blocks.items():
            for b, block in row.items():
                np.testing.assert_allclose(block, theirs[names.index(a)][names.index(b)].numpy(), rtol=1e-9,
                                           atol=1e-12, err_msg=f"{a}, {b}")


def test_a_mixed_block_of_a_vector_and_a_number_is_a_vector():
    d = D.derive("p = sigmoid(X @ w + b)\nloss = -sum(y * log(p) + (1 - y) * log(1 - p))",
                 shapes={"X": ("m", "n"), "w": ("n",), "b": (), "y": ("m",)}, wrt=["w", "b"], order=2)
    lines = dict(D.readable_lines(d))
    assert lines["∂²loss/∂w∂b"] == "Xᵀ @ t2" and lines["t2"] == "p * (1 - p)"
    assert lines["∂loss/∂b"] == "sum(t1)" and lines["∂²loss/∂b²"] == "sum(t2)"


def test_softmax_regressions_hessian_is_kronecker_maps_around_the_softmax_computed_in_one_einsum():
    d = D.derive("-sum(Y * log_softmax(X @ W, 1))", shapes={"Y": ("m", "k"), "X": ("m", "n"), "W": ("n", "k")},
                 wrt=["W"], order=2)
    lines = dict(D.readable_lines(d))
    assert lines["∂²output/∂W²"].startswith("(Xᵀ ⊗ I) diag(vec(t2)) (X ⊗ I) - (Xᵀ ⊗ I) diag(vec(t1))")
    code = D.python_module(d)
    assert "np.einsum(" in code and "kron" not in code and "np.diag" not in code
    assert "np.eye(m" not in code  # no identity of the batch's size


def test_a_hessian_is_computed_without_a_diagonal_matrix():
    d = D.derive("p = sigmoid(X @ w)\nloss = -sum(y * log(p) + (1 - y) * log(1 - p))",
                 shapes={"X": ("m", "n"), "w": ("n",), "y": ("m",)}, wrt=["w"], order=2)
    code = D.python_module(d)
    assert "np.diag" not in code and "[:, None] * X" in code


# -- random matrix programs against PyTorch ---------------------------------------------------------------


def _random_program(rng) -> tuple:
    """A random number-valued program of a matrix A (m × n) and vectors x (n), b (m)."""
    vector = rng.choice(["A @ x", "A @ x - b", "tanh(A @ x)", "sigmoid(A @ x) * b", "exp(A @ x / 4)",
                         "A @ (x * x)", "A @ x + b * b"])
    outer = rng.choice([f"sum(({vector}) ** 2)", f"b @ ({vector})", f"sum(log(1 + ({vector}) ** 2))",
                        f"logsumexp({vector}, 0)", f"({vector}) @ ({vector}) + x @ x"])
    return outer


@pytest.mark.parametrize("seed", range(12))
def test_random_matrix_programs_agree_with_pytorch_at_two_sizes(seed):
    rng = np.random.default_rng(seed)
    program = _random_program(rng)
    shapes = {name: dims for name, dims in {"A": ("m", "n"), "x": ("n",), "b": ("m",)}.items()
              if re.search(rf"\b{name}\b", program)}
    d = D.derive(program, shapes=shapes)
    assert d.sizes is not None and not literal_sizes(d.program), (program, d.program)
    module = module_of(d)
    names = list(shapes)
    scope = {"sum": torch.sum, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "exp": torch.exp, "log": torch.log,
             "logsumexp": torch.logsumexp}
    for sizes in SIZES:
        values = point(shapes, sizes, seed=seed)
        _, grads = module.value_and_grad(**values)
        leaves = {n: torch.tensor(values[n], requires_grad=True) for n in names}
        out = eval(program, {**scope, **leaves})  # noqa: S307 - the test's own programs
        out.backward()
        for n in names:
            np.testing.assert_allclose(grads[n], leaves[n].grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"{program}: {n}")


# -- the contract's other points ---------------------------------------------------------------------------


def test_shapes_in_a_file_and_on_the_command_line_derive_the_same():
    on_line = D.derive("x @ A @ x", shapes={"x": ("n",), "A": ("n", "n")}, wrt=["x"])
    in_file = D.derive("x: input[n]\nA: input[n, n]\noutput = x @ A @ x", wrt=["x"])
    assert on_line.formula("x") == in_file.formula("x") == "(A + A.T) @ x"


def test_mean_writes_its_size_from_the_inputs():
    d = D.derive("mean(x)", shapes={"x": ("n",)})
    assert d.formula("x") == "ones_like(x) / n" and "n = size(x, 0)" in d.program


def test_with_values_alone_the_formula_is_the_generic_one():
    d = D.derive("x @ A @ x", {"x": [1.0, 2.0, 3.0], "A": np.eye(3).tolist()}, wrt=["x"])
    assert d.formula("x") == "(A + A.T) @ x"
    d = D.derive("trace(X)", {"X": np.eye(3).tolist()})
    assert d.formula("X") == "eye(n)" and "3" not in d.program


def test_a_size_name_of_two_sizes_is_a_usage_error():
    from autodiff.program.errors import UsageProblem

    with pytest.raises(UsageProblem, match="n"):
        D.derive("x @ y", {"x": [1.0, 2.0], "y": [1.0, 2.0, 3.0]}, shapes={"x": ("n",), "y": ("n",)})


def test_the_module_checks_shapes_by_name():
    d = D.derive("x @ A @ x", shapes={"x": ("n",), "A": ("n", "n")})
    module = module_of(d)
    with pytest.raises(ValueError, match=r"A has shape \[3, 4\]"):
        module.value_and_grad(np.ones(3), np.ones((3, 4)))
    with pytest.raises(ValueError, match="A has shape"):
        module.value_and_grad(np.ones(3), np.ones((4, 4)))
    value, grads = module.value_and_grad(x=np.ones(6), A=np.eye(6))
    assert value == 6.0 and grads["x"].shape == (6,)


def test_notation_in_every_format():
    d = D.derive("x @ A @ x", shapes={"x": ("n",), "A": ("n", "n")}, wrt=["x"])
    assert dict(D.readable_lines(d))["∂output/∂x"] == "(A + Aᵀ) @ x"
    assert r"A^{\top}" in D.latex(d)
    d = D.derive("log(det(X))", shapes={"X": ("n", "n")})
    assert dict(D.readable_lines(d))["∂output/∂X"] == "X⁻ᵀ"
    assert r"X^{-\top}" in D.latex(d) and d.formula("X") == "linalg_inv(X).T"
    d = D.derive("trace(A @ X) * trace(X)", shapes={"A": ("n", "n"), "X": ("n", "n")}, wrt=["X"])
    assert r"\operatorname{tr}" in D.latex(d)
    d = D.derive("sum(x * sin(y))", shapes={"x": ("n",), "y": ("n",)}, wrt=["y"])
    assert r"\odot" in D.latex(d)


def test_latex_writes_sizes_by_name_and_numbers_as_fractions():
    d = D.derive("mean(x)", shapes={"x": ("n",)})
    assert r"\frac{1}{n} \mathbf{1}" in D.latex(d)
    d = D.derive("mean((A @ x - b) ** 2)", shapes={"A": ("m", "n"), "x": ("n",), "b": ("m",)}, wrt=["x"])
    assert "}{m}" in D.latex(d)
    d = D.derive("X.T @ X", shapes={"X": ("m", "n")})
    assert "I_{n}" in D.latex(d)
    assert r"\frac{3}{7}" in D.latex(D.derive("x * y - 3 * x / 7"))


def test_constants_stay_exact():
    d = D.derive("exp(-x**2/2)/sqrt(2*pi)")
    assert d.formula("x") == "-x * exp(-x ** 2 / 2) / sqrt(2 * pi)"
    assert D.derive("x / 3").formula("x") == "1 / 3"


def test_json_marks_jacobians_and_gives_hessian_blocks_shapes():
    d = D.derive("sigmoid(x)", shapes={"x": ("n",)})
    assert D.for_json(d)["jacobian"] is True
    d = D.derive("x @ A @ x", {"x": [1.0, 2.0], "A": [[1.0, 2.0], [3.0, 4.0]]}, wrt=["x"], order=2)
    (block,) = D.for_json(d)["second"]
    statements = dict(line.split(" = ", 1) for line in d.program.splitlines())
    assert block["wrt"] == ["x", "x"] and block["shape"] == ["n", "n"]  # sizes by name, as the formulas
    assert statements.get(block["formula"], block["formula"]) == "A + A.T"


def test_check_runs_jacobians_against_the_engine():
    d = D.derive("softmax(x, 0)", {"x": [0.5, -1.0, 2.0]})
    assert D.check(d, "softmax(x, 0)", {"x": [0.5, -1.0, 2.0]}).passed


def test_a_multiplied_out_gradient_is_finite_where_the_engines_is_nan():
    """The guide's "Where autodiff differs": the algebra's p * (1 - p) / (1 - p) is p."""
    from autodiff.program import differentiate

    text = "p = sigmoid(X @ w)\nloss = -sum(y * log(p) + (1 - y) * log(1 - p))"
    at = {"X": [[50.0, 0.0], [0.0, 1.0]], "w": [1.0, 1.0], "y": [1.0, 0.0]}  # p rounds to 1 in the first row
    assert np.isnan(differentiate(text, at).grads["w"]).all()
    d = D.derive(text, shapes={"X": ("m", "n"), "w": ("n",), "y": ("m",)}, wrt=["w"])
    with np.errstate(all="ignore"):
        _, grads = module_of(d).value_and_grad(**at)
    np.testing.assert_allclose(grads["w"], [0.0, 1 / (1 + np.exp(-1.0))], rtol=1e-12)


def test_a_cross_entropys_module_computes_one_log_softmax_and_no_softmax():
    """Its value needs log_softmax and its gradient softmax: the module takes exp of the first."""
    d = D.derive("-sum(Y * log_softmax(X @ W, 1))", shapes={"Y": ("m", "k"), "X": ("m", "n"), "W": ("n", "k")},
                 wrt=["W"])
    code = D.python_module(d)
    body = code[code.index("def value_and_grad"):]
    assert body.count("_log_softmax(") == 1 and "_softmax(" not in body.replace("_log_softmax(", "")
    module = module_of(d)
    values = point({"Y": ("m", "k"), "X": ("m", "n"), "W": ("n", "k")}, SIZES[0])
    value, grads = module.value_and_grad(**values)
    Y, X, W = (torch.tensor(values[n]) for n in "YXW")
    W.requires_grad_(True)
    loss = -(Y * torch.log_softmax(X @ W, 1)).sum()
    loss.backward()
    np.testing.assert_allclose(value, loss.item(), rtol=1e-12)
    np.testing.assert_allclose(grads["W"], W.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_log_det_and_a_z_score_are_textbook_short_assuming_what_their_masks_select_is_not_so():
    """PyTorch masks logdet's gradient where det < 0 and std's where std = 0 (the value is not
    finite there): derive writes the textbook form, states the condition, and the module refuses
    a point where it fails rather than give another number."""
    d = D.derive("logdet(X)", shapes={"X": ("n", "n")}, wrt=["X"])
    assert d.program.strip().endswith("doutput_dX = linalg_inv(X).T")
    assert [a.condition for a in d.assumptions] == ["linalg_slogdet(X)[0] != -1"]
    module = module_of(d)
    _, grads = module.value_and_grad(X=np.array([[2.0, 1.0], [1.0, 3.0]]))
    np.testing.assert_allclose(grads["X"], np.linalg.inv(np.array([[2.0, 1.0], [1.0, 3.0]])).T)
    with pytest.raises(ValueError, match="assuming linalg_slogdet"):
        module.value_and_grad(X=np.array([[0.0, 1.0], [1.0, 0.0]]))  # det = -1
    z = D.derive("z = (x - mean(x)) / std(x)\nout = sum(a * z)", shapes={"x": ("n",), "a": ("n",)}, wrt=["x"])
    assert [a.condition for a in z.assumptions] == ["std(x, dim=(0,), correction=1) != 0"]
    assert operations(z.program) <= 13 + 2  # (a - mean(a) - z mean(a z) n / (n - 1)) / std: 13


def test_the_latex_of_every_matrix_form_compiles(tmp_path):
    """The Jacobians, Hessian blocks and the Cookbook forms of the rules above in LaTeX, one document: pdflatex
    compiles it where installed; elsewhere every block's braces balance (escaped ones aside)."""
    rewritten = ("matrix_exp", "kron", "logdet", "where", "var(", "det(A @ X @ B)", "log_softmax")  # this algebra's own forms
    programs = [(p, s, [w]) for p, s, w, _, _ in COOKBOOK if any(word in p for word in rewritten)]
    programs += [(p, s, [w]) for p, s, w, _ in BLOCK_JACOBIANS]
    programs += [(p, s, w) for p, s, w, _ in HESSIANS if w] + [(p, s, None) for p, s, _ in JACOBIANS]
    blocks = []
    for program, spec, wrt in programs:
        hessian = any(p == program and w == wrt for p, _, w, _ in HESSIANS)
        d = D.derive(program, shapes=_shapes(spec), wrt=wrt, order=2 if hessian else 1)
        blocks.append((program, D.latex(d)))
    for program, latex in blocks:
        assert balanced(latex), program
    assert_compiles(tmp_path, "\n".join(f"\\noindent\n{latex}" for _, latex in blocks), "forms")

"""`derive` writes hygienic code: sizes are symbols, no name it makes collides with a name of
the program, the language or Python, and no user text becomes code.

The oracle is the engine at sizes derive never traced at (it traces named sizes at primes from
7 up): a size frozen into a formula, a name that shadows another, or a module that reads the
wrong thing gives a wrong number there, or fails to run."""

from __future__ import annotations

import ast
import os
import re
import types
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from autodiff.language import ProgramError, Source
from autodiff.language.files import read_file
from autodiff.program import derive as D
from autodiff.program import differentiate
from autodiff.program.errors import GradientProblem, UsageProblem
from autodiff.symbolic.sizes import CHECKED, TRACED

from .module_text import without_helpers
from .test_derive import run_derived

UNTRACED = ({"n": 4, "m": 5, "d": 3, "k": 4, "q": 2}, {"n": 6, "m": 3, "d": 4, "k": 3, "q": 5})
TRACED_NUMBERS = re.compile(r"(?<![\w.])(" + "|".join(str(p) for p in TRACED + CHECKED) + r")(?![\w.])")


def module_of(d) -> types.ModuleType:
    """The derived python module, imported (our own generated code)."""
    module = types.ModuleType("derived")
    exec(compile(D.python_module(d), "<derived module>", "exec"), module.__dict__)  # noqa: S102
    return module


def point_at(shapes: dict, sizes: dict, seed: int = 0) -> dict:
    """Values of each input at `sizes`; a square matrix is symmetric positive definite (a
    covariance or precision matrix), the rest in [0.5, 1.5]."""
    rng = np.random.default_rng(seed)
    point = {}
    for name, dims in shapes.items():
        shape = tuple(sizes[s] if isinstance(s, str) else s for s in dims)
        value = rng.uniform(0.5, 1.5, size=shape)
        if len(shape) == 2 and shape[0] == shape[1] and dims[0] == dims[1]:
            value = value @ value.T + shape[0] * np.eye(shape[0])
        point[name] = value
    return point


def assert_agrees_with_grad(d, text: str, at: dict) -> None:
    """The derived module and the derived `expr` program give grad's value and gradients at `at`."""
    run = differentiate(text, {n: v.tolist() for n, v in at.items()})
    value, grads = module_of(d).value_and_grad(**at)
    np.testing.assert_allclose(value, run.output.value, rtol=1e-9, atol=1e-12)
    derived = run_derived(d, {n: v.tolist() for n, v in at.items()})
    for x in d.derivatives:
        want = run.grads[x.wrt[0]]
        want = np.zeros(np.shape(at[x.wrt[0]])) if want is None else np.asarray(want, dtype=float)
        np.testing.assert_allclose(grads[x.wrt[0]], want, rtol=1e-8, atol=1e-10, err_msg=x.name)
        np.testing.assert_allclose(derived[x.name], want, rtol=1e-8, atol=1e-10, err_msg=x.name)


def every_format(d) -> str:
    """Every format's text, the python module without the helpers it copies from the engine."""
    return "\n".join([*(f"{a} = {b}" for a, b in D.readable_lines(d)), D.latex(d), D.markdown(d), D.expr_program(d),
                      without_helpers(D.python_module(d)), str(D.for_json(d))])


# -- the statistics people write, at two sizes derive never traced at ------------------------------------------

STATISTICS = {
    "var": ("x: input[n]\nf = var(x)", None),
    "std": ("x: input[n]\nf = std(x)", None),
    "a size used as a value": ("x: input[n]\nf = sum(x ** 2) / sqrt(n)", None),
    "size() as a value": ("f = sum(x ** 2) / sqrt(size(x, 0))", {"x": ("n",)}),
    "negative mean": ("f = -mean(x)", {"x": ("n",)}),
    "z-score": ("x: input[n]\nw: input[n]\nz = (x - mean(x)) / std(x)\nf = sum(z * w)", None),
    "layer norm": ("X: input[m, n]\nW: input[m, n]\nmu = mean(X, 1, keepdim=True)\n"
                   "v = var(X, 1, keepdim=True, correction=0)\nf = sum((X - mu) / sqrt(v + 0.00001) * W)", None),
    "batch mean of a linear model": ("X: input[m, n]\nw: input[n]\nf = sum((X @ w) ** 2) / m", None),
    "Gaussian NLL wrt mu with a batch": ("X: input[m, d]\nmu: input[d]\nR = X - mu\n"
                                         "f = 0.5 * sum(R ** 2) / m + 0.5 * d * log(2 * pi)", None),
    "Gaussian NLL wrt Sigma with a batch": ("X: input[m, d]\nmu: input[d]\nS: input[d, d]\nR = X - mu\n"
                                            "f = 0.5 * m * logdet(S) + 0.5 * sum((R @ inverse(S)) * R)", None),
    "precision matrix": ("X: input[m, d]\nP: input[d, d]\nf = -0.5 * m * logdet(P) + 0.5 * sum((X @ P) * X)", None),
    "attention": ("Q: input[q, d]\nK: input[q, d]\nV: input[q, d]\nA = softmax(Q @ K.T / sqrt(d), 1)\n"
                  "f = sum(A @ V)", None),
    "cross-entropy with a batch mean": ("Z: input[m, k]\nY: input[m, k]\nf = -sum(Y * log_softmax(Z, 1)) / m", None),
    "a GELU layer's bias": ("f = sum(gelu(X @ W + b))", {"X": ("m", "n"), "W": ("n", "k"), "b": ("k",)}),
    "trace of a Kronecker product": ("f = trace(kron(A, B))", {"A": ("n", "n"), "B": ("m", "m")}),
    "trace of a matrix exponential": ("f = trace(matrix_exp(X))", {"X": ("n", "n")}),
    "mean and the residuals' sum": ("R = X - mu\nf = sum(R @ A)", {"X": ("m", "n"), "mu": ("n",), "A": ("n", "k")}),
}


@pytest.mark.parametrize("name", list(STATISTICS))
def test_statistics_derive_for_every_size(name):
    text, shapes = STATISTICS[name]
    d = D.derive(text, shapes=shapes)
    assert not d.fixed, "the formulas hold for every size"
    declared = d.shapes
    assert not TRACED_NUMBERS.search(every_format(d)), "no size derive traced at appears in any format"
    for k, sizes in enumerate(UNTRACED):
        assert_agrees_with_grad(d, text, point_at({n: declared[n] for n in d.inputs}, sizes, seed=k))


def test_var_is_bessels_factor_by_name():
    d = D.derive("f = var(x)", shapes={"x": ("n",)})
    assert d.formula("x") == "2 * (x - mean(x)) / (n - 1)"
    assert D.derive("f = sum(x ** 2) / sqrt(size(x, 0))", shapes={"x": ("n",)}).formula("x") == "2 * x / sqrt(n)"


@pytest.mark.parametrize("text, shapes", [
    ("f = -mean(x)", {"x": ("n",)}),
    ("f = -sum(x) / (2 * size(x, 0))", {"x": ("n",)}),
    ("f = 3 - mean(X) * 2", {"X": ("m", "n")}),
    ("X: input[m, n]\nw: input[n]\nf = -sum(X @ w) / (m * n)", None),
    ("f = sum(x) * (1 - size(x, 0))", {"x": ("n",)}),
])
def test_a_negative_ratio_of_sizes_keeps_its_sign(text, shapes):
    d = D.derive(text, shapes=shapes)
    assert not d.fixed
    for k, sizes in enumerate(UNTRACED):
        assert_agrees_with_grad(d, text, point_at({n: d.shapes[n] for n in d.inputs}, sizes, seed=k))
    if text == "f = -mean(x)":
        grads = module_of(d).value_and_grad(np.ones(4))[1]
        np.testing.assert_allclose(grads["x"], -0.25 * np.ones(4))


def test_json_gives_shapes_by_name():
    d = D.derive("X: input[m, 3]\nw: input[3]\nf = sum(X @ w) / m")
    assert D.for_json(d)["inputs"]["X"]["shape"] == ["m", 3]
    assert D.for_json(D.derive("f = sum(x)", shapes={"x": ("n",)}))["inputs"]["x"]["shape"] == ["n"]


def test_where_sizes_cannot_be_named_every_format_says_which_and_eval_refuses_others(tmp_path):
    d = D.derive("f = x[0] * 7", shapes={"x": ("n",)})  # a literal that is a traced size: not generic
    assert d.fixed == {"x": (7,)}
    for text in (D.latex(d), D.markdown(d), D.expr_program(d), "\n".join(D.plain_lines(d)) if hasattr(D, "plain_lines")
                 else D.only_at(d)):
        assert "x [7]" in text
    assert D.for_json(d)["only_at"] == {"x": [7]}
    with pytest.raises(ProgramError, match="declared"):
        run_derived(d, {"x": [1.0, 2.0]})
    with pytest.raises(ValueError, match="derived for shape"):
        module_of(d).value_and_grad(np.ones(2))


# -- names: the user's sizes, the names derive makes, the module's own ---------------------------------------------


@pytest.mark.parametrize("args, message", [
    ({"text": "z = sum(x) * y", "shapes": {"x": ("y",)}}, "'y' is also an input"),
    ({"text": "f = mean(x)", "shapes": {"x": ("pi",)}}, "the language's constant"),
    ({"text": "f = mean(x)", "shapes": {"x": ("x",)}}, "'x' is also an input"),
    ({"text": "n = exp(a)\nf = n * mean(x)", "shapes": {"x": ("n",)}}, "'n' is also a variable"),
    ({"text": "f = mean(x)", "shapes": {"x": ("lambda",)}}, "a size is a name"),
])
def test_a_size_named_like_another_name_is_refused_naming_both(args, message):
    with pytest.raises(UsageProblem, match=message):
        D.derive(args["text"], shapes=args["shapes"])


def test_a_made_up_size_name_is_none_of_the_programs_names():
    text = "n = exp(a)\nloss = n * mean(x ** 2) + n"
    d = D.derive(text, {"x": [1.0, 2.0, 3.0], "a": 1.0})
    assert "n" not in [s for dims in d.shapes.values() for s in dims]
    for k, sizes in enumerate(UNTRACED):
        at = point_at({"x": ("n",)}, sizes, seed=k)
        at["a"] = np.array(0.5)
        assert_agrees_with_grad(d, text, at)


def test_a_declared_size_is_a_name_of_the_program():
    text = "x: input[y]\nz = sum(x) * y"
    run = differentiate(text, {"x": [1.0, 2.0, 3.0, 4.0, 5.0]})
    assert run.grads["x"].tolist() == [5.0] * 5 and "y" not in run.grads
    with pytest.raises(ProgramError, match="'n' is a size of 'x' here, and also a variable"):
        D.derive("x: input[n]\nn = 3\nf = mean(x)")


def test_names_python_reads_as_one_are_one():
    """Python normalises identifiers (NFKC): 𝐱 is x, in the language as in the module."""
    with pytest.raises(ProgramError, match="'x' is used before it is assigned"):
        differentiate("𝐱 = tanh(x * w)\ny = (𝐱 - x) ** 2", {"x": 0.5, "w": 0.1})
    text = "y = tanh(x * w)\n𝐳 = (y - x) ** 2\nout = z + ｗ"
    d = D.derive(text, {"x": 0.5, "w": 0.1})
    assert set(d.inputs) == {"x", "w"}
    assert_agrees_with_grad(d, text, {"x": np.array(0.3), "w": np.array(-0.7)})


# Names a program may use that the module, the language or Python also use.
HOSTILE = ["np", "math", "_as", "_check_point", "_C1", "_assumed1", "ValueError", "list", "len", "print", "float",
           "t1", "t2", "de_dx", "dy_dx", "value", "n", "m", "k", "np_", "list_", "α", "β", "𝐯", "ｕ", "shape", "x", "y",
           "dict", "range", "builtins", "torch", "output"]
# names the language or the module cannot take as these programs use them: refused, with a message
REFUSED = ["exp", "pi", "size", "lambda", "None", "sum", "t", "tanh", "sin", "inf"]


def _program(names: list, matrix: bool, declared: bool) -> str:
    a, b, c, v, w = names
    if matrix and declared:
        return f"{a}: input[n, m]\n{b}: input[m]\n{v} = tanh({a} @ {b} + {c})\n{w} = sum({v} ** 2) / n\n{w}"
    if matrix:
        return f"{v} = tanh({a} @ {b} + {c})\n{w} = sum({v} ** 2) / size({a}, 0)\n{w}"
    return f"{v} = {a} * {b} + sin({a})\n{w} = {v} ** 2 / {c} + {b}\n{w}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(HOSTILE), min_size=5, max_size=5, unique_by=lambda n: unicodedata.normalize("NFKC", n))
       .flatmap(lambda names: st.one_of(st.just(names), st.builds(
           lambda k, spoiler: names[:k] + [spoiler] + names[k + 1:], st.integers(0, 4), st.sampled_from(REFUSED)))),
       st.booleans(), st.booleans())
@example(["np", "math", "_as", "ValueError", "list"], False, False)
@example(["_check_point", "list", "np", "t1", "n"], True, True)
@example(["x", "np", "t", "value", "de_dx"], True, False)
@example(["value", "np", "output", "math", "_as"], False, False)  # found: the module's value clobbered an input
@example(["value", "np", "output", "math", "_as"], True, False)
@example(["size", "np", "math", "_as", "_check_point"], True, False)  # found: size() shadowed by an input
@example(["np", "pi", "math", "_as", "_check_point"], True, False)  # found: an input called pi read as np.pi
@example(["lambda", "np", "math", "_as", "_check_point"], False, False)  # found: a keyword as a parameter
def test_hygiene_fuzz_every_name_or_a_refusal(names, matrix, with_at):
    """A random program whose names come from a hostile pool: derived (with --shape or with
    --at), its module and its `expr` program agree with grad at two sizes derive never traced
    at; or derive refuses with one of our errors. Never a wrong number, never another error."""
    a, b, c = names[:3]
    declared = matrix and not with_at and len(a) % 2 == 0  # some declare the sizes in the file, others with --shape
    text = _program(names, matrix, declared)
    shapes = {a: ("n", "m"), b: ("m",)} if matrix and not with_at and not declared else None
    at = None
    if with_at:
        at = {a: np.ones((3, 2)).tolist(), b: [1.0, 0.5], c: 0.25} if matrix else {a: 0.5, b: 1.5, c: 2.0}
    try:
        d = D.derive(text, at, shapes=shapes)
        module = module_of(d)
    except (ProgramError, UsageProblem, GradientProblem):
        return  # refused, with a message: a name of the language, a keyword...
    assert callable(module.value_and_grad)
    top = ast.parse(D.python_module(d)).body
    assert all(isinstance(node, (ast.Import, ast.FunctionDef)) or (isinstance(node, ast.Expr) and node is top[0])
               or isinstance(node, ast.Assign) for node in top)
    if d.fixed:
        return
    shapes = {n: d.shapes.get(n, ()) for n in d.inputs}
    for k, sizes in enumerate(UNTRACED):
        point = point_at(shapes, {**sizes, **{s: sizes["n"] + 1 + j for j, s in enumerate(
            s for dims in shapes.values() for s in dims if isinstance(s, str) and s not in sizes)}}, seed=k)
        assert_agrees_with_grad(d, text, point)


# -- user text is data in every format -----------------------------------------------------------------------------

FILE_NAMES = [
    'q""";open("pwned","w").write("x");"""q.expr',
    "a\\N{x}b.expr",
    "new\nline\\end{align*}\\input{x}.expr",
    "per%cent^hat{brace}_under#hash&amp$.expr",
    "<script>alert(1)<\\script>.expr",
    "ctrl\x01\x1b[31m.expr",
    os.fsdecode(b"not-utf8-\xff\xfe.expr"),
    "'single'\"double\"`back`.expr",
]


@pytest.mark.parametrize("name", FILE_NAMES, ids=range(len(FILE_NAMES)))
def test_file_names_are_data_in_every_format(name, tmp_path, monkeypatch):
    path = os.path.join(os.fsencode(tmp_path), os.fsencode(name))
    with open(path, "w", encoding="utf-8") as f:
        f.write("u = a * b\nif a > 0:\n    u = u + a\ne = u + log(d) * c\n")
    source = read_file(os.fsdecode(path))
    d = D.derive(source, {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0})
    module = D.python_module(d)
    tree = ast.parse(module)  # compiles, whatever the file is called
    assert isinstance(tree.body[0], ast.Expr)
    assert all(isinstance(node, (ast.Import, ast.FunctionDef)) for node in tree.body[1:])
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    namespace: dict = {}
    exec(compile(tree, "<derived module>", "exec"), namespace)  # noqa: S102 (our generated code)
    assert set(os.listdir(tmp_path)) == before, "importing the module creates nothing"
    latex = D.latex(d)
    for text in (D.expr_program(d), D.markdown(d), latex):
        assert not any(unicodedata.category(ch) in ("Cc", "Cs") and ch != "\n" for ch in text)
    assert latex.count("{") - latex.count(r"\{") == latex.count("}") - latex.count(r"\}")


# -- bounded, and the crashes once found ------------------------------------------------------------------------


def test_the_jacobian_of_a_long_loop_is_no_recursion():
    text = "y = x\nfor i in range(300):\n    y = sin(y) + x"
    d = D.derive(text, {"x": [0.5, 1.0]})
    assert d.jacobian and d.derivatives
    (check,) = [D.check(d, text, {"x": [0.25, 0.75]})]
    assert check.passed


def test_a_transposed_difference_with_a_row_broadcast_derives():
    text = "h0 = B - c\nh1 = h0.T @ B\nf = sum(h1)"
    d = D.derive(text, shapes={"B": ("m", "n"), "c": ("n",)})
    for k, sizes in enumerate(UNTRACED):
        assert_agrees_with_grad(d, text, point_at({"B": ("m", "n"), "c": ("n",)}, sizes, seed=k))


def test_a_long_chain_of_matrix_products_transposed_is_no_recursion():
    text = "f = sum((" + " @ ".join(["A"] * 400) + ").T @ x)"
    d = D.derive(text, shapes={"A": ("n", "n"), "x": ("n",)}, wrt=["x"])
    at = point_at({"A": ("n", "n"), "x": ("n",)}, UNTRACED[0])
    at["A"] = at["A"] / np.abs(np.linalg.eigvals(at["A"])).max()  # powers that stay finite
    assert_agrees_with_grad(d, text, at)

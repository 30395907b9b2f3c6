"""`autodiff derive` against its targets, each a ratio measured in this process.

    PYTHONPATH=src python bench/derive.py [--programs N] [--repeat R]

- agreement: random scalar programs against SymPy's diff and against the engine's grad;
  random tensor programs against PyTorch's gradients;
- size: operations in the derived program over SymPy's `cse([diff(f, x) ...])`, both counted
  by SymPy's count_ops over expressions computed once (median over the programs), and over
  SymPy's `simplify` of each derivative (then cse);
- swell: a 200-step `tanh(x*w+b)` chain: derived operations over the forward's, and derive's
  time over grad's on the same file;
- the emitted Python module (NumPy only) on examples/mlp.expr over a hand-written NumPy gradient;
- matrix calculus, on one thread: the emitted Hessian code of xᵀAx (n = 1000), a logistic loss
  (m = 2000, n = 500), a matrix factorization ‖T − UVᵀ‖² wrt U (T 200 × 100, rank 10), ridge
  regression (m = 2000, n = 500), softmax regression by its weights (m = 2000, n = 100, k = 10)
  and a Gaussian's negative log-likelihood by its mean (a batch of 2000 in 100 dimensions) over
  `torch.func.hessian` of the same functions (the same numbers, rtol 1e-9), and the emitted
  value_and_grad over NumPy written by hand.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import statistics
import sys
import tempfile
import time
import warnings

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread, both sides
    os.environ.setdefault(_variable, "1")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import numpy as np  # noqa: E402
from timing import median_time  # noqa: E402  (bench/, beside this script)
import sympy  # noqa: E402

from autodiff.program import derive as D  # noqa: E402
from autodiff.program import differentiate  # noqa: E402
from tests.differential.symbolic_programs import (as_sympy, derived_as_sympy, straight_program,  # noqa: E402
                                                  sympy_operations)


def paired_times(first, second, pairs: int) -> tuple:
    """Medians of `first` and `second` run in turns, and the median of their ratio pair by pair,
    which a machine's slow spells (that touch both runs of a pair) move least."""
    first(), second()  # warm
    a, b = [], []
    for _ in range(pairs):
        start = time.perf_counter()
        first()
        middle = time.perf_counter()
        second()
        a.append(middle - start)
        b.append(time.perf_counter() - middle)
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b))


def agreement(n: int) -> None:
    agree_sympy = agree_grad = 0
    for seed in range(n):
        text, at = straight_program(random.Random(seed), statements=5)
        d = D.derive(text)
        expression, symbols = as_sympy(text)
        point = {symbols[k]: v for k, v in at.items()}
        run = differentiate(text, at)
        values = D.check(d, text, at)
        agree_grad += values.passed
        derived = dict(zip([name for name, _ in d.statements], derived_as_sympy(d.statements, symbols)))
        ok = True
        for x in d.derivatives:
            want = float(sympy.diff(expression, symbols[x.wrt[0]]).evalf(subs=point))
            got = float(_substitute(derived, x.name, point))
            ok &= math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
        agree_sympy += ok
        del run
    print(f"agreement: {agree_sympy}/{n} random scalar programs agree with SymPy's diff, "
          f"{agree_grad}/{n} with grad")
    tensor_agreement(n)


def second_order(n: int) -> None:
    """--order 2 on random nested programs (powers of powers, symbolic exponents, compositions)
    against torch.autograd.functional.hessian: the class of wrong second derivatives once found."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print("second order: not measured (PyTorch is not installed)")
        return
    from autodiff.language import Source, evaluate, parse
    from tests.differential.symbolic_programs import nested_program, torch_hessian

    agree = 0
    for seed in range(n):
        text, at = nested_program(random.Random(10_000 + seed), depth=5)
        d = D.derive(text, at, order=2)
        source = Source(D.expr_program(d), "<derived>")
        values = evaluate(parse(source), source, at=at).variables
        want = torch_hessian(text, at)
        agree += all(_same(float(values[x.name].detach().numpy() if hasattr(values[x.name], "detach")
                                 else values[x.name]), want[x.wrt]) for x in d.derivatives if len(x.wrt) == 2)
    print(f"second order: {agree}/{n} random nested programs' Hessians agree with torch.autograd.functional.hessian")


def _same(a: float, b: float) -> bool:
    """Equal to 1e-9, or both nan (a program that overflows: PyTorch's nan is the engine's)."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _substitute(derived: dict, name: str, point: dict):
    """A derived statement's value: earlier statements substituted in, then the point."""
    values = dict(point)
    for key, expression in derived.items():
        values[sympy.Symbol(key)] = expression.subs(values)
        if key == name:
            return values[sympy.Symbol(key)].evalf()
    raise KeyError(name)


def tensor_agreement(n: int) -> None:
    try:
        import torch
    except ImportError:
        print("agreement with PyTorch: not measured (PyTorch is not installed)")
        return
    from tests.differential.oracle import run_torch
    from tests.differential.programs import tensor_program

    agree = tried = 0
    for seed in range(n):
        rng = random.Random(seed)
        category = rng.choice(("elementwise", "reduction", "matmul", "shape", "control", "function"))
        program = tensor_program(rng, category)
        weights = program.weights
        text = program.text + (f"\n__loss = sum({program.output} * {weights!r})\n" if weights is not None
                               else f"\n__loss = sum({program.output})\n")
        tried += 1
        d = D.derive(text, program.inputs, output="__loss")
        out, inputs = run_torch(program)
        w = torch.tensor(weights, dtype=out.dtype) if weights is not None else torch.ones_like(out)
        grads = torch.autograd.grad((out * w).sum(), list(inputs.values()), allow_unused=True)
        from autodiff.language import Source, evaluate, parse

        source = Source(D.expr_program(d), "<derived>")
        values = evaluate(parse(source), source, at=program.inputs).variables
        ok = True
        for (name, _), g in zip(inputs.items(), grads):
            derived = next(x for x in d.derivatives if x.wrt == (name,))
            want = np.zeros(np.shape(program.inputs[name])) if g is None else g.numpy()
            got = values[derived.name]
            got = got.detach().numpy() if hasattr(got, "detach") else np.asarray(got)
            ok &= np.allclose(got, want, rtol=1e-9, atol=1e-12)
        agree += ok
    print(f"agreement: {agree}/{tried} random tensor programs agree with PyTorch's gradients")


def size(n: int) -> None:
    ratios, simplified = [], []
    for seed in range(n):
        text, _ = straight_program(random.Random(1000 + seed), statements=5)
        d = D.derive(text)
        expression, symbols = as_sympy(text)
        ours = sympy_operations(derived_as_sympy(d.statements, symbols))
        diffs = [sympy.diff(expression, symbols[x.wrt[0]]) for x in d.derivatives]
        replacements, reduced = sympy.cse(diffs)
        theirs = sympy_operations([e for _, e in replacements] + list(reduced))
        replacements, reduced = sympy.cse([sympy.simplify(e) for e in diffs])
        theirs_simplified = sympy_operations([e for _, e in replacements] + list(reduced))
        ratios.append(ours / max(theirs, 1))
        simplified.append(ours / max(theirs_simplified, 1))
    print(f"size: median {statistics.median(ratios):.2f}x SymPy's cse(diff) operations "
          f"(target <= 1.0x; {sum(r <= 1.0 for r in ratios)}/{n} programs at or below), "
          f"median {statistics.median(simplified):.2f}x SymPy's cse(simplify(diff))")


def chain(steps: int = 200) -> str:
    lines = ["h0 = x"] + [f"h{i} = tanh(h{i - 1} * w + b)" for i in range(1, steps + 1)]
    return "\n".join(lines) + "\n"


def swell(repeat: int) -> None:
    text = chain(200)
    d = D.derive(text)
    forward_ops = 3 * 200
    symbols = {n: sympy.Symbol(n) for n in ("x", "w", "b")}
    ours = sympy_operations(derived_as_sympy(d.statements, symbols))
    at = {"x": 0.5, "w": 0.9, "b": 0.1}
    t_derive, t_grad, ratio = paired_times(lambda: D.derive(text), lambda: differentiate(text, at), 5 * repeat)
    print(f"swell: 200-step tanh chain derives to {ours} operations, {ours / forward_ops:.2f}x the forward's "
          f"{forward_ops} (target <= 5x); derive {t_derive * 1e3:.1f} ms vs grad {t_grad * 1e3:.1f} ms "
          f"(medians of {5 * repeat} runs in turns): {ratio:.2f}x, the median ratio of a pair (target <= 3x)")
    nested = symbols["x"]
    for _ in range(50):
        nested = sympy.tanh(nested * symbols["w"] + symbols["b"])
    try:
        replacements, reduced = sympy.cse([sympy.diff(nested, symbols["x"])])
        print(f"       SymPy on 50 nested levels: {sympy_operations([e for _, e in replacements] + list(reduced))} "
              "operations after cse")
    except RecursionError:
        print("       SymPy on 50 nested levels: RecursionError")


def module_speed(repeat: int) -> None:
    from autodiff.language import Source, evaluate, parse

    path = os.path.join(ROOT, "examples", "mlp.expr")
    text = open(path).read()
    module = _imported(D.derive(Source(text, path)))
    source = Source(text, path)
    evaluation = evaluate(parse(source), source)
    inputs = {n: t.detach().numpy().copy() for n, t in evaluation.inputs.items()}
    X = evaluation.constants["X"].numpy()

    def by_hand(W1, b1, W2):
        h = np.tanh(X @ W1 + b1)
        y = h @ W2
        loss = np.mean(y ** 2)
        g_y = 2 * y / y.size
        g_W2 = h.T @ g_y
        g_h = (g_y @ W2.T) * (1 - h ** 2)
        return loss, {"W1": X.T @ g_h, "b1": g_h.sum(0), "W2": g_W2}

    ours_value, ours = module.value_and_grad(**inputs)
    hand_value, hand = by_hand(**inputs)
    assert math.isclose(float(ours_value), float(hand_value), rel_tol=1e-12)
    for name in hand:
        assert np.allclose(ours[name], hand[name], rtol=1e-12), name
    loops = 2000
    t_ours = median_time(lambda: [module.value_and_grad(**inputs) for _ in range(loops)], repeat) / loops
    t_hand = median_time(lambda: [by_hand(**inputs) for _ in range(loops)], repeat) / loops
    print(f"python module: value_and_grad on examples/mlp.expr {t_ours * 1e6:.1f} us vs hand-written NumPy "
          f"{t_hand * 1e6:.1f} us: {t_ours / t_hand:.2f}x (target <= 1.5x)")


def _module(text: str, shapes: dict, wrt: str, order: int):
    """The derived python module of `text`, imported from a file as a user would."""
    return _imported(D.derive(text, shapes=shapes, wrt=[wrt], order=order))


def _imported(d):
    """Derivation `d`'s python module, written to a file and imported from it."""
    with tempfile.TemporaryDirectory() as folder:
        file = os.path.join(folder, "derived.py")
        with open(file, "w") as f:
            f.write(D.python_module(d))
        spec = importlib.util.spec_from_file_location("derived", file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def matrix(repeat: int) -> None:
    try:
        import torch
    except ImportError:
        print("matrix calculus: PyTorch is not installed; nothing to compare with")
        return
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    n = 1000
    A, x = rng.normal(size=(n, n)), rng.normal(size=n)
    m, k = 2000, 500
    X, w, y = rng.normal(size=(m, k)) / math.sqrt(k), rng.normal(size=k), (rng.uniform(size=m) < 0.5) * 1.0
    T, U, V = rng.normal(size=(200, 100)), rng.normal(size=(200, 10)), rng.normal(size=(100, 10))
    Xs, Ws = rng.normal(size=(2000, 100)) / 10, rng.normal(size=(100, 10)) / 10
    Ys = np.eye(10)[rng.integers(0, 10, size=2000)]  # one class per example
    G, mu = rng.normal(size=(2000, 100)), rng.normal(size=100)
    Q = rng.normal(size=(100, 100))
    P = Q @ Q.T / 100 + np.eye(100)  # a precision matrix
    logistic = "p = sigmoid(X @ w)\nloss = -sum(y * log(p) + (1 - y) * log(1 - p))"
    cases = [
        ("x'Ax, n = 1000", "x @ A @ x", {"x": ("n",), "A": ("n", "n")}, "x", {"x": x, "A": A},
         lambda x: x @ torch.tensor(A) @ x,
         lambda x, A: (x @ A @ x, (A + A.T) @ x)),
        ("logistic, m = 2000, n = 500", logistic, {"X": ("m", "n"), "w": ("n",), "y": ("m",)}, "w",
         {"X": X, "w": w, "y": y},
         lambda w: -(torch.tensor(y) * torch.log(torch.sigmoid(torch.tensor(X) @ w))
                     + (1 - torch.tensor(y)) * torch.log(1 - torch.sigmoid(torch.tensor(X) @ w))).sum(),
         _logistic_by_hand),
        ("factorization, T 200x100, rank 10", "sum((T - U @ V.T) ** 2)",
         {"T": ("m", "r"), "U": ("m", "k"), "V": ("r", "k")}, "U", {"T": T, "U": U, "V": V},
         lambda U: ((torch.tensor(T) - U @ torch.tensor(V).T) ** 2).sum(),
         lambda T, U, V: (np.sum((T - U @ V.T) ** 2), -2 * ((T - U @ V.T) @ V))),
        ("ridge, m = 2000, n = 500", "sum((X @ w - y) ** 2) + lam * sum(w ** 2)",
         {"X": ("m", "n"), "w": ("n",), "y": ("m",), "lam": ()}, "w", {"X": X, "w": w, "y": y, "lam": 0.1},
         lambda w: ((torch.tensor(X) @ w - torch.tensor(y)) ** 2).sum() + 0.1 * (w ** 2).sum(),
         _ridge_by_hand),
        ("softmax regression, m = 2000, n = 100, k = 10", "-sum(Y * log_softmax(X @ W, 1))",
         {"Y": ("m", "k"), "X": ("m", "n"), "W": ("n", "k")}, "W", {"Y": Ys, "X": Xs, "W": Ws},
         lambda W: -(torch.tensor(Ys) * torch.log_softmax(torch.tensor(Xs) @ W, 1)).sum(),
         _softmax_by_hand),
        ("Gaussian NLL by its mean, a batch of 2000 in 100 dims", "R = X - mu\nloss = 0.5 * sum((R @ P) * R)",
         {"X": ("m", "n"), "mu": ("n",), "P": ("n", "n")}, "mu", {"X": G, "mu": mu, "P": P},
         lambda mu: 0.5 * (((torch.tensor(G) - mu) @ torch.tensor(P)) * (torch.tensor(G) - mu)).sum(),
         _gaussian_by_hand),
    ]
    from torch.func import hessian

    for label, text, shapes, wrt, values, theirs, by_hand in cases:
        module = _module(text, shapes, wrt, order=2)
        ours = module.hessian(**values)[wrt][wrt]
        point = torch.tensor(values[wrt])
        with torch.no_grad():
            want = hessian(theirs)(point).numpy()
        same = np.allclose(ours, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
        t_ours, t_theirs, ratio = paired_times(lambda: module.hessian(**values), lambda: hessian(theirs)(point), repeat)
        print(f"matrix calculus: Hessian of {label}: emitted code {t_ours * 1e3:.2f} ms, torch.func.hessian "
              f"{t_theirs * 1e3:.1f} ms: {1 / ratio:.1f}x faster (target >= 10x), same numbers: {same}")
        value, grads = module.value_and_grad(**values)
        hand_value, hand_grad = by_hand(**values)
        assert math.isclose(float(value), float(hand_value), rel_tol=1e-9) and np.allclose(grads[wrt], hand_grad)
        loops = 20
        t_grad, t_hand, ratio = paired_times(lambda: [module.value_and_grad(**values) for _ in range(loops)],
                                             lambda: [by_hand(**values) for _ in range(loops)], repeat)
        print(f"                 value_and_grad {t_grad / loops * 1e3:.3f} ms vs NumPy by hand "
              f"{t_hand / loops * 1e3:.3f} ms: {ratio:.2f}x (target <= 1.1x)")


def _softmax_by_hand(Y, X, W):
    Z = X @ W
    Z = Z - Z.max(axis=1, keepdims=True)
    log_p = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
    return -np.sum(Y * log_p), X.T @ (np.exp(log_p) * Y.sum(axis=1, keepdims=True) - Y)


def _ridge_by_hand(X, w, y, lam):
    r = X @ w - y
    return r @ r + lam * (w @ w), 2 * (X.T @ r) + 2 * lam * w


def _gaussian_by_hand(X, mu, P):
    R = X - mu
    RP = R @ P
    return 0.5 * np.sum(RP * R), -0.5 * np.sum(RP + R @ P.T, axis=0)


def _logistic_by_hand(X, w, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)), X.T @ (p - y)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--second-order", type=int, default=1000, help="random programs derived at order 2")
    parser.add_argument("--matrix-only", action="store_true", help="only the matrix-calculus section")
    args = parser.parse_args(argv)
    if args.matrix_only:
        matrix(args.repeat)
        return 0
    warnings.simplefilter("ignore")
    agreement(args.programs)
    second_order(args.second_order)
    size(args.programs)
    swell(args.repeat)
    module_speed(args.repeat)
    matrix(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

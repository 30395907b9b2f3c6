"""Random programs on the tape against PyTorch: the same values and gradients, by backward() (the
records' own loop) and by autograd.grad (the general one), on graphs of one tape and of many;
then the same programs in two threads at once, each bit for bit what it gives alone."""

import numpy as np
import pytest
from threads import run_threads, switching_every_microsecond

import autodiff
from autodiff.autograd.tape import WINDOW

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

UNARY = ["tanh", "exp", "sin", "sigmoid", "neg", "square"]
BINARY = ["add", "sub", "mul", "div"]


def program(seed: int):
    """A list of steps (op, operand choices) and the leaves' values."""
    rng = np.random.default_rng(seed)
    shapes = [(), (3,), (2, 3)][rng.integers(3)]
    values = [rng.uniform(0.5, 1.5, size=shapes) for _ in range(3)]
    steps = []
    for _ in range(rng.integers(5, 3 * WINDOW)):
        kind = rng.integers(4)
        far = int(rng.integers(0, 2 * WINDOW + 2))  # from far back: another tape
        near = int(rng.integers(0, 3))
        if kind == 0:
            steps.append(("unary", UNARY[rng.integers(len(UNARY))], near, 0))
        elif kind == 1:
            steps.append(("binary", BINARY[rng.integers(len(BINARY))], near, far))
        elif kind == 2:
            steps.append(("scale", float(rng.uniform(0.5, 1.5)), near, 0))
        else:
            steps.append(("reduce", "sum", near, 0))
    return values, steps


def run(lib, values, steps, how: str):
    leaves = [lib.tensor(v, requires_grad=True) for v in values]
    made = list(leaves)
    for kind, op, i, j in steps:
        a = made[-1 - i % len(made)]
        b = made[-1 - j % len(made)]
        if kind == "unary":
            made.append(getattr(lib, op)(a) if op != "square" else a * a)
        elif kind == "binary":
            if op == "div":
                b = b * b + 1.0
            made.append(getattr(lib, op)(a, b))
        elif kind == "scale":
            made.append(a * op)
        elif a.ndim:
            made.append(a.sum(0))
        else:
            made.append(a * 1.0)
    out = sum((t.sum() for t in made[-4:]), lib.tensor(0.0))
    if how == "grad":
        grads = lib.autograd.grad(out, leaves, allow_unused=True)
    else:
        out.backward()
        grads = [t.grad for t in leaves]
    return [out.detach().numpy().copy()] + [None if g is None else g.detach().numpy().copy() for g in grads]


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


def same(got, want, exact: bool) -> bool:
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if (g is None) != (w is None):
            return False
        if g is None:
            continue
        if exact and g.tobytes() != w.tobytes():
            return False
        if not exact and not np.allclose(g, w, rtol=1e-12, atol=1e-300):
            return False
    return True


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_random_programs_give_pytorchs_values_and_gradients(how):
    for seed in range(40):
        values, steps = program(seed)
        assert same(run(autodiff, values, steps, how), run(torch, values, steps, how), exact=False), seed


def test_random_programs_in_two_threads_give_each_what_it_gives_alone():
    seeds = list(range(40, 64))
    alone = {(seed, how): run(autodiff, *program(seed), how) for seed in seeds for how in ("backward", "grad")}
    for seed in seeds[:4]:
        assert same(alone[(seed, "grad")], run(torch, *program(seed), "grad"), exact=False)
    wrong = []

    def work(mine):
        for _ in range(3):
            for seed in mine:
                for how in ("backward", "grad"):
                    if not same(run(autodiff, *program(seed), how), alone[(seed, how)], exact=True):
                        wrong.append((seed, how))

    with switching_every_microsecond():
        run_threads(lambda: work(seeds[0::2]), lambda: work(seeds[1::2]))
    assert wrong == []

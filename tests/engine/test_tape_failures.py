"""A backward that fails part-way, as PyTorch's: the exception goes on; every leaf whose
gradient was complete before the failure has it (PyTorch has run its AccumulateGrad); a leaf
with a contribution still to come has none; nothing is rolled back, so a retry raises the
"second time" error where a node that ran has freed what it saved. Each case runs the same code
on autodiff and on PyTorch, on graphs of one tape and of several (an early tensor used again
after more than a tape's window of records)."""

import numpy as np
import pytest

import autodiff
from autodiff.autograd.tape import WINDOW

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

SECOND_BACKWARD = "Trying to backward through the graph a second time"


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


class Stop(BaseException):
    """Not an Exception: what a KeyboardInterrupt in a hook looks like to the engine."""


def leaves(lib):
    return {name: lib.tensor(values, requires_grad=True)
            for name, values in (("a", [1.0, 2.0]), ("b", [3.0, -1.0]), ("c", [0.5, 4.0]), ("w", [2.0, 0.25]))}


def spread(lib, x, long: bool):
    """x through WINDOW + 2 records when `long` (the graph then spans tapes), else one."""
    for _ in range(WINDOW + 2 if long else 1):
        x = x * 1.0
    return x


def failing_branch(lib, how: str, p, q, long: bool):
    """p * q * 2, whose backward fails (`how`) before it reaches p and q."""
    if how == "freed":  # the graph's records were freed by an earlier backward (the lean path)
        h = p * q * 2.0
        h.sum().backward()
        p.grad = q.grad = None
        return spread(lib, h, long)
    h = spread(lib, p * q * 2.0, long)
    if how in ("hook", "base exception"):
        error = ValueError("a hook fails") if how == "hook" else Stop()

        def hook(g):
            raise error

        h.register_hook(hook)
        return h

    class Fails(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            raise ValueError("a custom Function's backward fails")

    return Fails.apply(h)


def run(lib, how: str, long: bool):
    """The case's outcome: the exception, then each leaf's gradient (None where it has none),
    then what a retry raises."""
    x = leaves(lib)
    a, b, c, w = x["a"], x["b"], x["c"], x["w"]
    failing = failing_branch(lib, how, w, c, long)  # w and c: contributions still to come
    loss = (failing * b).sum()  # b complete before the failure
    loss = loss + spread(lib, (a * c), long).sum() * 3.0  # a complete; c's first contribution
    try:
        loss.backward()
        raised = None
    except (Exception, Stop) as exc:  # noqa: BLE001 - compared with PyTorch's
        raised = (type(exc).__name__, str(exc).split("\n")[0][:60])
    grads = {name: None if t.grad is None else t.grad.tolist() for name, t in x.items()}
    try:
        loss.backward()
        retried = None
    except (Exception, Stop) as exc:  # noqa: BLE001
        retried = (type(exc).__name__, SECOND_BACKWARD in str(exc) or str(exc).split("\n")[0][:60])
    return raised, grads, retried


@pytest.mark.parametrize("long", [False, True], ids=["one tape", "several tapes"])
@pytest.mark.parametrize("how", ["freed", "hook", "custom Function", "base exception"])
def test_a_failure_part_way_leaves_the_complete_leaves_their_gradients_as_pytorch(how, long):
    got = run(autodiff, how, long)
    want = run(torch, how, long)
    assert got == want
    raised, grads, retried = got
    assert raised is not None and grads["a"] is not None and grads["b"] is not None
    assert grads["c"] is None and grads["w"] is None


def test_the_lean_path_is_the_one_that_failed():
    """The "freed" case runs on the records themselves (no hook, no custom Function)."""
    from autodiff.autograd import engine

    x = leaves(autodiff)
    h = x["w"] * 2.0
    h.sum().backward()
    x["w"].grad = None
    loss = (h * x["b"]).sum() + (x["a"] * 3.0).sum()
    assert engine._lean_tapes([loss]) is not None
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        loss.backward()
    assert x["a"].grad.tolist() == [3.0, 3.0]
    assert x["b"].grad.tolist() == (2.0 * np.array([2.0, 0.25])).tolist()


def reentrant(lib):
    """A custom Function whose backward calls autograd.grad (checkpointing's way)."""

    class Checkpointed(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return lib.tanh(x * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            with lib.enable_grad():
                y = x.detach().requires_grad_(True)
                out = lib.tanh(spread(lib, y * y, True))
                (gx,) = lib.autograd.grad(out, [y], g)
            return gx

    w = lib.tensor([0.3, -0.7, 1.1], requires_grad=True)
    loss = (Checkpointed.apply(w * 2.0) * w).sum()
    loss.backward()
    return w.grad.detach().numpy()


def test_reentrant_backward_equals_the_plain_computation_and_pytorch():
    w = autodiff.tensor([0.3, -0.7, 1.1], requires_grad=True)
    x = w * 2.0
    (autodiff.tanh(x * x) * w).sum().backward()
    got = reentrant(autodiff)
    assert got.tolist() == w.grad.tolist()
    np.testing.assert_allclose(got, reentrant(torch), rtol=1e-14)

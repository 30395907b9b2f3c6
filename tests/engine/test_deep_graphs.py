"""Graphs as deep as the user makes them: no recursion, and memory that dies with the graph."""

import gc
import sys
import weakref

import pytest

import autodiff as torch

STEPS = 100_000


@pytest.fixture
def no_cycle_collector():
    """Run with the cycle collector off: what is freed here is freed by reference counts alone."""
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    if was_enabled:
        gc.enable()


def chain(steps: int):
    x = torch.tensor(0.5, requires_grad=True)
    w = torch.tensor(0.9, requires_grad=True)
    b = torch.tensor(0.1, requires_grad=True)
    y = x
    for _ in range(steps):
        y = torch.tanh(y * w + b)
    return x, w, b, y


@pytest.mark.slow
def test_a_100000_step_chain_builds_runs_backward_and_prints(no_cycle_collector):
    limit = sys.getrecursionlimit()
    x, w, b, y = chain(STEPS)
    y.backward()
    assert sys.getrecursionlimit() == limit
    assert x.grad is not None and w.grad is not None and b.grad is not None
    assert repr(y).startswith("tensor(") and "TanhBackward0" in repr(y)
    # Walking next_functions iteratively reaches the leaf at the bottom.
    node, depth = y.grad_fn, 0
    while node.next_functions:
        node = node.next_functions[0][0]
        depth += 1
    assert node.variable is x and depth == 3 * STEPS


@pytest.mark.slow
def test_graph_memory_is_freed_with_the_graph(no_cycle_collector):
    x, w, b, y = chain(STEPS)
    root = weakref.ref(y.grad_fn)
    bottom = y.grad_fn
    while bottom.next_functions[0][0].next_functions:
        bottom = bottom.next_functions[0][0]
    bottom = weakref.ref(bottom)
    del y
    assert root() is None and bottom() is None  # no reference cycles keep any node alive


@pytest.mark.slow
def test_backward_frees_saved_values_of_a_deep_chain(no_cycle_collector):
    x, w, b, y = chain(STEPS)
    bottom = y.grad_fn
    while bottom.next_functions[0][0].next_functions:
        bottom = bottom.next_functions[0][0]
    y.backward()
    assert bottom._saved is None  # the first multiply's saved tensors were released
    assert w.grad.item() != 0.0


def test_leaf_and_its_accumulator_do_not_form_a_cycle(no_cycle_collector):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    accumulator = weakref.ref(y.grad_fn.next_functions[0][0])
    leaf = weakref.ref(x)
    del x, y
    assert accumulator() is None and leaf() is None


def test_deep_autograd_grad_and_create_graph():
    x = torch.tensor(0.3, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 0.9999 + 0.0001
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    assert g.item() == pytest.approx(0.9999**20_000)

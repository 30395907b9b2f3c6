"""Records of leaves alone go to the thread's open tape while it is young, so a program of many
statements is a few tapes, not one per statement; a graph that shares a tape with others is
read only over its own records, and a tape that would send backward off its lean path takes no
unrelated graph."""

import inspect
import sys
import threading

import numpy as np
import pytest

import autodiff
from autodiff.autograd import engine
from autodiff.autograd.tape import CHUNK, JOIN_BYTES, WINDOW, Tape


def statements(x, w, lines: int):
    """`y = y * w + x * 0.001`, line after line: every line starts with a record of a leaf."""
    y = x * 1.0
    for _ in range(lines):
        y = y * w + x * 0.001
    return y


def tapes_of(t) -> list:
    """Every tape the lean walk reaches from `t`."""
    found = engine._lean_tapes([t])
    assert found is not None
    return [tape for tape, _, _, _ in found.values()]


def test_a_program_of_many_statements_is_a_few_tapes_and_gives_the_same_gradients():
    lines = 3000  # 9,001 records
    x = autodiff.tensor(0.7, requires_grad=True)
    w = autodiff.tensor(0.999, requires_grad=True)
    y = statements(x, w, lines)
    assert len(tapes_of(y)) <= 3 * lines // CHUNK + 2  # (one per statement before)
    y.backward()
    # the same sums by hand: y_k = y_{k-1} w + 0.001 x
    value, dx, dw = 0.7, 1.0, 0.0
    for _ in range(lines):
        value, dx, dw = value * 0.999 + 0.0007, dx * 0.999 + 0.001, dw * 0.999 + value
    assert x.grad.item() == pytest.approx(dx, rel=1e-12)
    assert w.grad.item() == pytest.approx(dw, rel=1e-12)


def test_unrelated_graphs_of_leaves_share_the_open_tape_and_keep_their_own_gradients():
    a = autodiff.tensor([1.0, 2.0], requires_grad=True)
    b = autodiff.tensor([3.0, -1.0], requires_grad=True)
    first = (a * b).sum()
    second = (b * 2.0).sum()
    assert first._node is second._node  # one tape
    second.backward()
    assert a.grad is None and b.grad.tolist() == [2.0, 2.0]
    first.backward()  # its records were untouched by the other's backward
    assert a.grad.tolist() == [3.0, -1.0] and b.grad.tolist() == [3.0, 4.0]


def loop_iterations(function) -> int:
    """How many records backward's hot loop looked at while `function` ran (the times its
    first statement, `g = buffer[i]`, ran)."""
    code = engine._run_records.__code__
    body, start = inspect.getsourcelines(engine._run_records)
    (at,) = [start + k for k, line in enumerate(body) if line.strip() == "g = buffer[i]"]
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line" and frame.f_lineno == at:
            count += 1
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code is code else None

    sys.settrace(tracer)
    try:
        function()
    finally:
        sys.settrace(None)
    return count


def test_backward_of_a_graph_on_a_shared_tape_reads_only_its_own_records():
    s = autodiff.tensor(0.5, requires_grad=True)
    v = autodiff.tensor(1.5, requires_grad=True)
    before = s * 1.0
    for _ in range(300):  # another graph's records, below
        before = autodiff.tanh(before * s)
    mine = v * 2.0  # leaves alone: the open tape, above them
    mine = autodiff.tanh(mine) * v
    after = s * 3.0
    for _ in range(300):  # and another's, above
        after = autodiff.tanh(after * s)
    assert mine._node is before._node is after._node
    looked = loop_iterations(lambda: mine.backward())
    assert looked <= 6  # its own 3 records (and not the 1,200 around them)
    assert v.grad.item() == pytest.approx(np.tanh(3.0) + 3.0 * (1 - np.tanh(3.0) ** 2))
    s_grad = loop_iterations(lambda: before.backward())
    assert s_grad <= 601 + WINDOW


def test_records_of_leaves_start_a_tape_of_their_own_where_the_open_one_should_not_take_them():
    x = autodiff.tensor([1.0, 2.0], requires_grad=True)
    # a hook on the open tape (backward of a graph there leaves the lean path)
    hooked = x * 2.0
    hooked.register_hook(lambda g: g)
    assert (x * 3.0)._node is not hooked._node
    # a custom Function's output, linked: the same
    class Twice(autodiff.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    linked = Twice.apply(x) * 1.0
    assert linked._node.foreign and (x * 3.0)._node is not linked._node
    # a sealed chunk: the tape is no longer young
    long = x * 1.0
    for _ in range(CHUNK):
        long = long * 1.0
    assert long._node.base and (x * 3.0)._node is not long._node
    # past JOIN_BYTES of results
    big = autodiff.tensor(np.ones(JOIN_BYTES // 8 + 1), requires_grad=True) * 1.0
    assert (x * 3.0)._node is not big._node
    # and a young, lean tape does take them
    small = x * 1.0
    assert (x * 3.0)._node is small._node


def test_each_thread_puts_records_of_leaves_on_a_tape_of_its_own():
    x = autodiff.tensor(1.0, requires_grad=True)
    mine = x * 1.0
    theirs = []
    thread = threading.Thread(target=lambda: theirs.append(x * 2.0))
    thread.start()
    thread.join()
    assert isinstance(theirs[0]._node, Tape) and theirs[0]._node is not mine._node
    assert theirs[0]._node.owner != mine._node.owner

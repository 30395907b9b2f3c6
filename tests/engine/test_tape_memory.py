"""What the tape of records keeps, and for how long: what a surviving tensor holds, what a loop of
in-place changes leaves behind, and that nothing is forgotten that a check still needs."""

import gc
import tracemalloc

import numpy as np
import pytest

import autodiff as torch
from autodiff.autograd import versions

INPLACE = "modified by an inplace operation"


def held_by(make) -> int:
    """The bytes still allocated once `make()` has run and everything but its result is gone."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = make()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before + 0 * len(kept)
    finally:
        tracemalloc.stop()


def test_ten_thousand_in_place_steps_leave_almost_nothing_behind():
    w = torch.tensor(np.linspace(0.1, 1.0, 16).reshape(4, 4), requires_grad=True)
    x = torch.tensor(np.ones((2, 4)))

    def step():
        loss = torch.tanh(x @ w).sum()
        w.grad = None
        loss.backward()
        with torch.no_grad():
            w.sub_(0.01 * w.grad)
        return loss

    for _ in range(300):
        last = step()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(10_000):
            last = step()  # the last loss, and its tape, stay alive throughout
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert last.requires_grad
    assert growth < 64_000
    assert sum(len(entry) - 1 for entry in versions.EVENTS.values()) < 600
    assert w._version == 10_300  # every change counted, though the old ones only as a count


def test_an_event_a_record_needs_is_kept_through_any_number_of_others():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2
    z = y * y  # saves y's array
    others = [torch.tensor([float(k)]) for k in range(50)]
    for _ in range(40):  # many events and prunes since
        for t in others:
            t.add_(1.0)
    y.add_(1.0)
    for _ in range(40):
        for t in others:
            t.add_(1.0)
    with pytest.raises(RuntimeError, match=INPLACE) as info:
        z.sum().backward()
    assert "is at version 1; expected version 0 instead" in str(info.value)


def test_a_version_counted_long_ago_still_counts():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = w * 2
    for _ in range(100):  # older than every record made from here on: kept as a count
        y.add_(1.0)
    z = y * y
    z.sum().backward(retain_graph=True)
    assert y._version == 100
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="is at version 101; expected version 100 instead"):
        z.sum().backward()


def test_a_new_array_at_a_dead_arrays_address_has_no_events_of_its_own():
    for _ in range(500):
        y = torch.tensor([1.0, 2.0]) * 2
        y.add_(1.0)  # an event on the array y held, which then dies
        del y
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        z = w * w  # may reuse that address; must not see that event
        z.sum().backward()
        assert w.grad.tolist() == [2.0, 4.0]


# -- what a surviving tensor keeps -----------------------------------------------------------------

BIG = 100_000  # 0.8 MB of float64


def big_chain(steps: int, keep_at: int | None):
    """A chain of tanh(y * s) over 0.8 MB arrays, all on one tape; the result at step `keep_at`
    (a small one: its sum) is kept, everything else dropped. Returns what is kept."""
    x = torch.tensor(np.linspace(-1, 1, BIG))
    s = torch.tensor(0.9, requires_grad=True)
    y = x * s
    kept = None
    for k in range(steps):
        y = torch.tanh(y * s)
        if k == keep_at:
            kept = (y * 2.0).sum()
    return [kept, s]


def test_an_early_small_result_kept_holds_what_it_needs_and_no_more():
    needed = held_by(lambda: big_chain(3, keep_at=2))  # the chain stops there
    held = held_by(lambda: big_chain(60, keep_at=2))  # goes on, then is dropped
    assert needed > 4 * BIG * 8  # (it does keep its own ancestors)
    assert held <= 1.1 * needed + 64_000
    kept, s = big_chain(60, keep_at=2)
    gc.collect()
    (g,) = torch.autograd.grad(kept, [s])  # and its backward still runs
    (want,) = torch.autograd.grad(*big_chain(3, keep_at=2))
    assert g.item() == want.item()


def test_the_first_result_of_a_long_scalar_chain_keeps_at_most_one_tape():
    def chain():
        s = torch.tensor(0.5, requires_grad=True)
        y = s
        first = None
        for _ in range(40_000):
            y = torch.tanh(y * s)
            if first is None:
                first = y
        return [first]

    assert held_by(chain) < 2_000_000  # a tape of at most 8192 records (3.6 MB for the whole chain)


def test_a_loop_keeping_each_loss_keeps_nothing_of_its_dead_branches():
    def loop(dead_branches: bool):
        w = torch.tensor(np.linspace(0, 1, 200 * 200).reshape(200, 200), requires_grad=True)
        h = torch.tensor(np.ones((20, 200)))
        losses = []
        for _ in range(20):
            h = torch.tanh(h @ w)
            if dead_branches:
                for _ in range(3):
                    torch.tanh(h @ w * 2.0).sum()  # computed and dropped (0.3 MB each)
            losses.append((h * h).sum())
        return losses

    assert held_by(lambda: loop(True)) <= 1.1 * held_by(lambda: loop(False)) + 64_000


# -- a sweep never frees what something live needs ---------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from autodiff.autograd.engine import topological  # noqa: E402
from autodiff.autograd.node import AccumulateGrad  # noqa: E402
from autodiff.autograd.tape import WINDOW, Tape  # noqa: E402

STEPS = st.lists(st.tuples(st.sampled_from(["mul", "add", "tanh", "sum", "scale", "matmul"]),
                           st.integers(0, 10 ** 6), st.integers(0, 10 ** 6)), min_size=1, max_size=60)
KEEP = st.sampled_from(["tensor", "grad_fn", "hook", "retain_grad", "linked", "none"])


def build(steps, leaves):
    """Tensors made by random ops on earlier ones (some from far back: other tapes)."""
    made = list(leaves)
    for op, i, j in steps:
        a = made[-1 - i % min(len(made), 2 * WINDOW + 4)]
        b = made[-1 - j % len(made)]
        if op == "mul":
            made.append(a * b if a.shape == b.shape or b.ndim == 0 else a * b.sum())
        elif op == "add":
            made.append(a + b if a.shape == b.shape or b.ndim == 0 else a + b.sum())
        elif op == "tanh":
            made.append(torch.tanh(a))
        elif op == "sum":
            made.append(a.sum())
        elif op == "scale":
            made.append(a * 1.5)
        else:
            made.append(a @ leaves[1] if a.ndim == 2 else a * leaves[2])
    return made


def every_saved_value_is_there(tensor) -> None:
    for node in topological([tensor.grad_fn]):
        if node.__class__ is not AccumulateGrad and hasattr(node, "_slots"):
            assert node._slots() is not None, node


@settings(max_examples=15, deadline=None)  # each example collects the whole heap: few, drawn alike every run
@given(steps=STEPS, keep=st.lists(st.tuples(st.integers(0, 10 ** 6), KEEP), min_size=1, max_size=6))
def test_a_sweep_never_frees_what_a_live_tensor_node_hook_or_other_tape_needs(steps, keep):
    rng = np.random.default_rng(len(steps))
    leaves = [torch.tensor(rng.normal(size=(3, 3)), requires_grad=True),
              torch.tensor(rng.normal(size=(3, 3)), requires_grad=True),
              torch.tensor(0.7, requires_grad=True)]
    made = build(steps, leaves)[3:]
    tapes = {id(t._node): t._node for t in made if t._node.__class__ is Tape}
    survivors, hooked = [], []
    for i, kind in keep:
        t = made[i % len(made)]
        if kind == "tensor":
            survivors.append(t)
        elif kind == "grad_fn":
            survivors.append(t.grad_fn)
        elif kind == "hook":
            hooked.append(t)
            t.register_hook(lambda g: g * 2.0)
        elif kind == "retain_grad":
            t.retain_grad()
            survivors.append(t)
        elif kind == "linked":  # a newer tape that links to it
            far = t
            for _ in range(WINDOW + 2):
                far = far * 1.0
            survivors.append(far)
    want = [torch.autograd.grad(t.sum(), leaves, retain_graph=True, allow_unused=True)
            for t in survivors if not hasattr(t, "next_functions")]
    del made, t
    gc.collect()
    for tape in tapes.values():
        tape.sweep()
    for s in survivors:
        if hasattr(s, "next_functions"):  # a grad_fn alone: all it leads to keeps what it saved
            for node in topological([s]):
                if node.__class__ is not AccumulateGrad:
                    assert node._slots() is not None, node
        else:
            every_saved_value_is_there(s)
    got = [torch.autograd.grad(t.sum(), leaves, retain_graph=True, allow_unused=True)
           for t in survivors if not hasattr(t, "next_functions")]
    for g, w in zip(got, want):
        assert [None if x is None else x._data.tobytes() for x in g] == \
            [None if x is None else x._data.tobytes() for x in w]
    for h in hooked:
        every_saved_value_is_there(h)


def test_a_sweep_frees_what_nothing_needs():
    x = torch.tensor(np.ones(1000))
    s = torch.tensor(0.5, requires_grad=True)
    y = x * s
    kept = y.sum()
    for _ in range(10):
        y = torch.tanh(y * s)
    tape = kept._node
    del y
    gc.collect()
    tape.sweep()
    records = tape.unpack()
    assert len(records) == 22
    # the first mul and the sum, which `kept` leads to, keep theirs; the chain after is freed
    assert [len(r) > tapes_op_head(r) for r in records] == [True, True] + [False] * 20
    every_saved_value_is_there(kept)


def tapes_op_head(record) -> int:
    from autodiff.autograd.tape import NODE_CLASSES

    return NODE_CLASSES[record[0]].op.head


def test_a_live_chain_costs_few_bytes_and_almost_nothing_to_the_collector():
    """bench/engine.py's memory and collector rows, as a smoke check: bytes per recorded op
    (target 160), and objects the cyclic collector walks per op (the records are untracked)."""
    steps = 20_000

    def chain():
        x = torch.tensor(0.5, requires_grad=True)
        w = torch.tensor(0.9, requires_grad=True)
        b = torch.tensor(0.1, requires_grad=True)
        y = x
        for _ in range(steps):
            y = torch.tanh(y * w + b)
        return [x, w, b, y]

    assert held_by(chain) / (3 * steps) <= 160
    gc.collect()
    before = len(gc.get_objects())
    graph = chain()
    gc.collect()
    tracked = len(gc.get_objects()) - before
    assert tracked / (3 * steps) < 0.01
    del graph

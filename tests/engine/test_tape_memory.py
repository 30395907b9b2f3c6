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

"""What became of a saved array: changed in place, written through `.data`, or detached.

A recorded operation keeps the arrays its formulas need, not the tensors they came from (a
tensor is an object the cyclic garbage collector must walk; an array is not). The engine never
writes an array in place: an in-place operation computes a new array and rebinds the tensor's
`_data`. So a change made after an operation was recorded is told here, as an event on the array
the tensor held until then, stamped with the in-place clock:

- VERSION: the tensor was changed in place (backward raises PyTorch's "modified by an inplace
  operation" error for a record that saved the old array);
- DATA: a new array was written through `.data` (backward reads the new one, as PyTorch's saved
  variables see a change made through `.data`);
- DETACH: the tensor was detached in place (PyTorch's error, checked before the versions).

Events are keyed by the array's id. A record keeps its arrays alive, so while a record could ask,
the id means the array it saved; an array made later at the same address was made after the
event, and every record that saved it is stamped later than the event, which it then ignores.
"""

from __future__ import annotations

import weakref

VERSION, DATA, DETACH = "version", "data", "detach"


class InplaceClock:
    """Counts in-place changes, so that backward checks saved values only after one.

    A record is stamped with the clock at its making (autograd/tape.py keeps the stamp per run
    of records); an event counts for the records stamped before it."""

    ticks = 0


# id(array) -> [(tick, kind, payload)]: VERSION's payload is (tensor weakref, its version log, the
# array's type name and shape), DATA's the new array, DETACH's None.
EVENTS: dict = {}
# The oldest clock any live tape may still ask about (tape.py keeps it); events at or before it
# can be dropped, which keeps EVENTS small in a long loop of in-place changes.
OLDEST = None  # set by tape.py: a function returning that clock, or None when no tape is alive
_prune_at = 256


def tick() -> int:
    """Advance the clock (an in-place change is about to happen) and return the new time."""
    InplaceClock.ticks += 1
    CLOSE()  # the open run of records was stamped with the old time
    return InplaceClock.ticks


def CLOSE() -> None:  # replaced by tape.py: ends the run of records that the old time stamped
    pass


def _add(array, event: tuple) -> None:
    global _prune_at
    events = EVENTS.get(id(array))
    if events is None:
        EVENTS[id(array)] = [event]
    else:
        events.append(event)
    if len(EVENTS) >= _prune_at:
        _prune()
        _prune_at = max(256, 2 * len(EVENTS))


def _prune() -> None:
    oldest = OLDEST() if OLDEST is not None else None
    if oldest is None:  # no tape is alive: no record can ask
        EVENTS.clear()
        return
    for key in list(EVENTS):
        kept = [e for e in EVENTS[key] if e[0] > oldest]
        if kept:
            EVENTS[key] = kept
        else:
            del EVENTS[key]


def changed_in_place(tensor, array, when: int) -> None:
    """`tensor`, whose values were `array`, was changed in place at `when`."""
    _add(array, (when, VERSION, (weakref.ref(tensor), tensor._version_log, _describe(array))))


def written(array, new, when: int) -> None:
    """The tensor that held `array` holds `new` now, written through `.data` at `when`."""
    _add(array, (when, DATA, new))


def detached(array, when: int) -> None:
    """The tensor that held `array` was detached in place at `when`."""
    _add(array, (when, DETACH, None))


def _describe(array) -> tuple:
    return array.dtype, tuple(getattr(array, "shape", ()))


def since(array, clock: int) -> list:
    """The events of `array` after `clock` (usually none)."""
    events = EVENTS.get(id(array))
    if not events:
        return []
    return [e for e in events if e[0] > clock]


def current(array, clock: int):
    """The array a record stamped `clock` reads for `array`: the last one written through `.data`
    (each write is followed from its own time on, so writing an old array back ends the walk)."""
    while True:
        events = EVENTS.get(id(array))
        if not events:
            return array
        for when, kind, payload in events:
            if kind is DATA and when > clock:
                array, clock = payload, when
                break
        else:
            return array

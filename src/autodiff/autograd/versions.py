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

Events are keyed by the array's id, beside a weak reference to the array (a NumPy scalar, which
has none, is held instead): an array's events go when the array dies, so an id used again by a
new array never finds them. A record keeps its arrays alive, so while a record could ask, the
entry is the array it saved. Events older than every live tape are dropped too, by a count of
events (not of arrays), and a held NumPy scalar that nothing else holds; so a loop of in-place
changes keeps a few events, not one per step.

A tensor's own count of in-place changes (its version, PyTorch's `_version`) is a VersionLog:
the ticks of its changes, those older than every live tape kept as a count only.
"""

from __future__ import annotations

import sys
import threading
import weakref

VERSION, DATA, DETACH = "version", "data", "detach"


class InplaceClock:
    """Counts in-place changes, so that backward checks saved values only after one.

    A record is stamped with the clock at its making (autograd/tape.py keeps the stamp per run
    of records); an event counts for the records stamped before it."""

    ticks = 0


# id(array) -> [the array's weakref (or a NumPy scalar itself), (tick, kind, payload)...]: VERSION's
# payload is (tensor weakref, its version log, the array's type name and shape), DATA's the new
# array, DETACH's None.
EVENTS: dict = {}
# The oldest clock any live tape may still ask about (tape.py keeps it); events at or before it
# can be dropped, which keeps EVENTS small in a long loop of in-place changes.
OLDEST = None  # set by tape.py: a function returning that clock, or None when no tape is alive
_PRUNE_AT = 256
_state = {"events": 0, "prune at": _PRUNE_AT}
_LOCK = threading.RLock()  # threads adding events, and an array's death dropping its entry


def tick() -> int:
    """Advance the clock (an in-place change is about to happen) and return the new time."""
    with _LOCK:
        InplaceClock.ticks += 1
        now = InplaceClock.ticks
    CLOSE()  # the open runs of records were stamped with the old time
    return now


def CLOSE() -> None:  # replaced by tape.py: ends the runs of records that the old time stamped
    pass


def _dropper(key: int):
    # (the module's objects bound here: an array may die as the interpreter clears the module)
    def drop(ref, lock=_LOCK, events=EVENTS, state=_state) -> None:
        with lock:
            entry = events.get(key)
            if entry is not None and entry[0] is ref:
                del events[key]
                state["events"] -= len(entry) - 1

    return drop


def _add(array, event: tuple) -> None:
    key = id(array)
    with _LOCK:
        entry = EVENTS.get(key)
        if entry is None or not _holds(entry[0], array):
            try:
                holder = weakref.ref(array, _dropper(key))
            except TypeError:  # a NumPy scalar: held, dropped by _prune once nothing else holds it
                holder = array
            EVENTS[key] = entry = [holder]
        entry.append(event)
        _state["events"] += 1
        if _state["events"] >= _state["prune at"]:
            _prune()
            _state["prune at"] = max(_PRUNE_AT, 2 * _state["events"])


def _holds(holder, array) -> bool:
    return holder is array or (holder.__class__ is weakref.ReferenceType and holder() is array)


def _prune() -> None:
    oldest = OLDEST() if OLDEST is not None else None
    if oldest is None:  # no tape is alive: no record can ask
        EVENTS.clear()
        _state["events"] = 0
        return
    count = 0
    for key, entry in list(EVENTS.items()):
        holder = entry[0]
        # a held scalar that only this entry (and this frame, and getrefcount) refers to
        if holder.__class__ is not weakref.ReferenceType and sys.getrefcount(holder) <= 3:
            EVENTS.pop(key, None)  # (an array dying meanwhile may have taken it)
            continue
        kept = [e for e in entry[1:] if e[0] > oldest]
        if kept:
            if len(kept) < len(entry) - 1:
                entry[1:] = kept
            count += len(kept)
        else:
            EVENTS.pop(key, None)  # (an array dying meanwhile may have taken it)
    _state["events"] = count


class VersionLog:
    """A tensor's in-place changes: the ticks of the recent ones, and how many older ones there
    were (older than every live tape: every record's check counts them). Its length is the
    tensor's version."""

    __slots__ = ("older", "ticks")

    def __init__(self) -> None:
        self.older = 0
        self.ticks: list = []

    def __len__(self) -> int:
        return self.older + len(self.ticks)

    def append(self, when: int) -> None:
        ticks = self.ticks
        ticks.append(when)
        if len(ticks) >= 32:
            oldest = OLDEST() if OLDEST is not None else None
            kept = [t for t in ticks if t > oldest] if oldest is not None else []
            self.older += len(ticks) - len(kept)
            self.ticks = kept

    def before(self, clock: int) -> int:
        """How many of the changes came at or before `clock` (a record's stamp)."""
        return self.older + sum(1 for t in self.ticks if t <= clock)


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
    entry = EVENTS.get(id(array))
    if not entry or not _holds(entry[0], array):
        return []
    return [e for e in entry[1:] if e[0] > clock]


def current(array, clock: int):
    """The array a record stamped `clock` reads for `array`: the last one written through `.data`
    (each write is followed from its own time on, so writing an old array back ends the walk)."""
    while True:
        for when, kind, payload in since(array, clock):
            if kind is DATA:
                array, clock = payload, when
                break
        else:
            return array

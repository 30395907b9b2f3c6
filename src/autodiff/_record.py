"""`@record`: a dataclass whose `__repr__`, `__eq__` and `__hash__` are shared functions.

`dataclasses.dataclass` writes out the source of each class's `__init__`, `__repr__` and
`__eq__` and compiles it, a few hundred microseconds a class; the classes of the language,
the program layer and the command line are made on every start of `autodiff`. A record is the
same dataclass (`dataclasses.fields`, `replace` and `asdict` work on it; its `__init__` is
still dataclasses'), whose `__repr__`, `__eq__` and `__hash__` are the functions below, shared
by every record and written to behave as dataclasses' own: the same text, the same equality
(a record equals one of its own class with equal compared fields), unhashable where a
dataclass would be, hashed by its compared fields where frozen. A method the class defines
itself is kept, as dataclasses keeps it.
"""

from __future__ import annotations

import dataclasses
import reprlib

_OPTIONS = {"init", "frozen", "kw_only", "match_args"}  # passed on; eq and repr are made here


def record(cls=None, /, *, repr: bool = True, eq: bool = True, **options):  # noqa: A002  (dataclass's names)
    """`@record` or `@record(frozen=True, ...)`, as `@dataclass` (without `order`, `slots`,
    `unsafe_hash`, `weakref_slot`)."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"record() does not take {sorted(unknown)}: use dataclasses.dataclass")

    def make(cls):
        own = cls.__dict__
        cls = dataclasses.dataclass(cls, repr=False, eq=False, **options)
        if repr and "__repr__" not in own:
            cls.__repr__ = _repr
        if eq:
            if "__eq__" not in own:
                cls.__eq__ = _eq
            if "__hash__" not in own:  # dataclasses' rule: eq without frozen is unhashable
                cls.__hash__ = _hash if options.get("frozen") else None
        return cls

    return make if cls is None else make(cls)


def _compared(self) -> tuple:
    return tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.compare)


@reprlib.recursive_repr()
def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr)
    return f"{self.__class__.__qualname__}({shown})"


def _eq(self, other):
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(tuple(getattr(self, f.name) for f in dataclasses.fields(self)
                      if (f.compare if f.hash is None else f.hash)))

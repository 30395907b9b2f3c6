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

A record that is not frozen is made a dataclass on first use, not when it is declared: its first
instance, or the first read of its fields (`dataclasses.fields`, `is_dataclass`, `replace`,
`asdict`, a subclass made a dataclass, `repr` or `==` of an instance made without `__init__`,
as unpickling makes one). Most commands use a few of the records their modules declare, and
each one made a dataclass costs about 0.3 ms of the start. A frozen record is made at once, as
a dataclass would be (until then, nothing would stop an unpickled instance from changing).
"""

from __future__ import annotations

import dataclasses
import reprlib
import threading

_OPTIONS = {"init", "frozen", "kw_only", "match_args"}  # passed on; eq and repr are made here


def record(cls=None, /, *, repr: bool = True, eq: bool = True, **options):  # noqa: A002  (dataclass's names)
    """`@record` or `@record(frozen=True, ...)`, as `@dataclass` (without `order`, `slots`,
    `unsafe_hash`, `weakref_slot`)."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"record() does not take {sorted(unknown)}: use dataclasses.dataclass")

    def make(cls):
        own = cls.__dict__
        if repr and "__repr__" not in own:
            cls.__repr__ = _repr
        if eq:
            if "__eq__" not in own:
                cls.__eq__ = _eq
            if "__hash__" not in own:  # dataclasses' rule: eq without frozen is unhashable
                cls.__hash__ = _hash if options.get("frozen") else None
        if options.get("frozen"):
            return dataclasses.dataclass(cls, repr=False, eq=False, **options)
        _made_on_first_use(cls, options)
        return cls

    return make if cls is None else make(cls)


_MAKING = threading.RLock()  # one thread makes a class a dataclass; another waits, then finds it made


def _made_on_first_use(cls, options: dict) -> None:
    """Stand-ins for `cls.__init__` and `cls.__dataclass_fields__` that make `cls` a dataclass
    (dataclasses' own work, unchanged) the first time either is used, then step aside."""
    own_init = cls.__dict__.get("__init__")

    def make_now() -> None:
        with _MAKING:
            if cls.__dict__.get("__init__") is not first_init:
                return  # made already
            if own_init is None:
                del cls.__init__
            else:
                cls.__init__ = own_init  # dataclasses keeps an __init__ the class wrote
            del cls.__dataclass_fields__
            dataclasses.dataclass(cls, repr=False, eq=False, **options)

    def first_init(self, *args, **kwargs):
        make_now()
        cls.__init__(self, *args, **kwargs)

    cls.__init__ = first_init
    cls.__dataclass_fields__ = _FieldsOnFirstUse(make_now)


class _FieldsOnFirstUse:
    """`__dataclass_fields__` of a record not yet made a dataclass: reading it makes it one."""

    __slots__ = ("make_now",)

    def __init__(self, make_now) -> None:
        self.make_now = make_now

    def __get__(self, instance, owner):
        self.make_now()
        return owner.__dataclass_fields__


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

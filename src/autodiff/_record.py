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
as unpickling makes one), its `__match_args__` (a `match` statement) or its signature
(`inspect.signature`). Most commands use a few of the records their modules declare, and each
one made a dataclass costs about 0.3 ms of the start. Until then a field's class attribute is
as the class body wrote it (`field(...)` itself, where dataclasses would leave the default or
nothing), and a declaration dataclasses refuses is refused at first use, not at import. A
frozen record is made at once, as a dataclass would be (until then, nothing would stop an
unpickled instance from changing).
"""

from __future__ import annotations

import dataclasses
import functools
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


ON_FIRST_USE: list = []  # every record declared to be made on first use (the tests make them all)
_MAKING = threading.RLock()  # one thread makes a record a dataclass; another waits for it, then uses it

# Values whose __set_name__ does the same again for the twin (below), touching nothing else
_NAMED_TWICE_ALIKE = (property, functools.cached_property, dataclasses.Field)
# What dataclasses sets on a class besides `__init__`: copied from the twin it made (below)
_MADE = ("__dataclass_fields__", "__dataclass_params__", "__match_args__")


def _made_on_first_use(cls, options: dict) -> None:
    """Stand-ins on `cls` that make it a dataclass the first time one is used: `__init__`, and
    `__dataclass_fields__`, `__match_args__` and `__signature__` as descriptors.

    dataclasses' own work runs on a twin of the class (its namespace, its bases); what it made is
    then copied onto `cls`, `__init__` last. So `cls` is never without a working `__init__` or
    fields while another thread uses it, and a declaration dataclasses refuses leaves the
    stand-ins in place (each use raises its error again; tests make every record). A class whose
    making could act on something else (a base with `__init_subclass__`, a value with
    `__set_name__`) is made at once."""
    namespace = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    namespace["__qualname__"] = cls.__qualname__
    if any("__init_subclass__" in vars(base) for base in cls.__mro__[1:-1]) or any(
            hasattr(type(v), "__set_name__") and not isinstance(v, _NAMED_TWICE_ALIKE) for v in namespace.values()):
        dataclasses.dataclass(cls, repr=False, eq=False, **options)
        return
    made: list = []
    ON_FIRST_USE.append(cls)

    def make_now() -> None:
        if made:
            return
        with _MAKING:
            if made:
                return
            twin = dataclasses.dataclass(type(cls.__name__, cls.__bases__, dict(namespace)),
                                         repr=False, eq=False, **options)
            made_here = vars(twin)
            # what dataclasses made, and each field's class attribute as it left it; a stand-in or
            # a class attribute it removed (match_args=False, a field(default_factory=...)) goes
            for name in (*_MADE, *namespace.get("__annotations__", {})):
                if name in made_here:
                    setattr(cls, name, made_here[name])
                elif name in vars(cls):
                    delattr(cls, name)
            if cls.__doc__ is None:
                cls.__doc__ = twin.__doc__
            del cls.__signature__
            cls.__init__ = made_here["__init__"]
            made.append(True)

    def first_init(self, *args, **kwargs):
        make_now()
        cls.__init__(self, *args, **kwargs)

    cls.__init__ = first_init
    cls.__dataclass_fields__ = _OnFirstUse(make_now, "__dataclass_fields__")
    cls.__match_args__ = _OnFirstUse(make_now, "__match_args__")
    cls.__signature__ = _OnFirstUse(make_now, "__signature__")


class _OnFirstUse:
    """A class attribute of a record not yet made a dataclass: reading it makes it one, then reads
    what dataclasses made (`__signature__`: none, so that inspect reads the new `__init__`)."""

    __slots__ = ("make_now", "name")

    def __init__(self, make_now, name: str) -> None:
        self.make_now = make_now
        self.name = name

    def __get__(self, instance, owner):
        self.make_now()
        return getattr(owner, self.name, None) if self.name == "__signature__" else getattr(owner, self.name)


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

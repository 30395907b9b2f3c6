"""Which op module declares each name, so that most of them load on first use, not at start-up.

Importing autodiff loads the op modules that bind Python's operators onto Tensor (`EAGER`, in
ops/__init__.py) and nothing of the others (`LAZY`): a program of `*`, `+` and `log` never pays for
the linear algebra, the losses or the statistics. The tables those modules fill as they load
(the public functions, the registry, the method forms, the spellings) are `Catalogue`s: a read of
one name loads the module that declares it (`DECLARED_IN`, written by tools/catalogue.py and held
current by tests/engine/test_catalogue.py), and any read of a whole table (iterating it, its length,
its keys) loads every module first, so that no reader ever sees part of the catalogue. Each Tensor
method of a lazy module stands on the class as a `_StandIn` until its module loads: the first
look-up (`x.sum`) loads it, and the module's own method takes the stand-in's place. (A
`Tensor.__getattr__` would do it in fewer lines, but a class with one loses CPython's fast
attribute look-ups on every tensor: the 0-d chain ran 15% slower.) Python's operators are all
declared by the eager modules (the tool refuses a lazy module that binds one).
"""

from __future__ import annotations

from importlib import import_module

from ..tensor import TensorMethods
from .declared_in import DECLARED_IN, METHODS

# The op modules imported with autodiff: those that bind Tensor's operators, and what they import.
EAGER = ("pointwise", "selection", "arithmetic", "comparison", "shape", "indexing", "products")
# The others, in the order load_all loads them: the catalogue's order (declared_in.PUBLIC_NAMES).
LAZY = ("reduction", "loss", "special", "activation", "rearrange", "statistics", "pieces", "gathering", "ordering",
        "matrices", "decompositions", "spectral")

_all_loaded = False


def load(name: str) -> bool:
    """Load the op modules that declare `name`, if lazy ones do; whether they do."""
    modules = DECLARED_IN.get(name)
    if modules is None:
        return False
    for module in modules:
        import_module(f"{__package__}.{module}")
    return True


def load_all() -> None:
    """Load every op module: the whole catalogue is declared after this."""
    global _all_loaded
    if not _all_loaded:
        for module in LAZY:
            import_module(f"{__package__}.{module}")
        _all_loaded = True


class _StandIn:
    """A Tensor method of an op module not loaded yet: its look-up loads the module, whose own method
    replaces this one on the class, and returns that."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, tensor, cls=None):
        load(self.name)
        method = TensorMethods.__dict__.get(self.name)
        if method is self or method is None:  # the module did not declare it after all
            raise AttributeError(f"'Tensor' object has no attribute {self.name!r}")
        return method.__get__(tensor, cls) if hasattr(method, "__get__") else method


def stand_in_for_methods() -> None:
    """Put a stand-in on Tensor for each method of a lazy op module not loaded yet."""
    for name in METHODS:
        if name not in TensorMethods.__dict__:
            setattr(TensorMethods, name, _StandIn(name))


_UNDECLARED = object()


class Catalogue(dict):
    """A table the op modules fill as they load (name -> what they declare). Reading one name loads
    the module that declares it; reading the whole table loads them all. Declarations write with
    `declare`, and `declared` asks without loading anything."""

    __slots__ = ()

    def declared(self, name) -> bool:
        return dict.__contains__(self, name)

    def declare(self, name, value) -> None:
        dict.__setitem__(self, name, value)

    def __missing__(self, name):  # dict's [] calls it for a name not declared (yet)
        if load(name) and dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or (load(name) and dict.__contains__(self, name))

    def get(self, name, default=None):
        value = dict.get(self, name, _UNDECLARED)  # a declared name (every op a trace meets): no second call
        if value is _UNDECLARED:
            return dict.__getitem__(self, name) if self.__contains__(name) else default
        return value

    def __iter__(self):
        load_all()
        return dict.__iter__(self)

    def __len__(self) -> int:
        load_all()
        return dict.__len__(self)

    def keys(self):
        load_all()
        return dict.keys(self)

    def values(self):
        load_all()
        return dict.values(self)

    def items(self):
        load_all()
        return dict.items(self)

    def copy(self) -> dict:
        return dict(self.items())

    def loaded(self) -> dict:
        """What is declared so far, loading nothing."""
        return dict(dict.items(self))

    def __repr__(self) -> str:
        load_all()
        return dict.__repr__(self)

    def __eq__(self, other) -> bool:
        load_all()
        return dict.__eq__(self, other)

    __hash__ = None


class LazyTable(dict):
    """name -> value for a fixed list of names, each value made by `find(name)` on its first read:
    a table of functions whose modules need not load before one is called (the language's)."""

    __slots__ = ("names", "_find")

    def __init__(self, names, find) -> None:
        super().__init__()
        self.names = dict.fromkeys(names)  # ordered, for iteration; membership without finding
        self._find = find

    def __missing__(self, name):
        if name not in self.names:
            raise KeyError(name)
        value = self._find(name)
        dict.__setitem__(self, name, value)
        return value

    def __setitem__(self, name, value) -> None:
        self.names[name] = None
        dict.__setitem__(self, name, value)

    def update(self, other) -> None:
        for name, value in dict(other).items():
            self[name] = value

    def __contains__(self, name) -> bool:
        return name in self.names

    def get(self, name, default=None):
        return self[name] if name in self.names else default

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def keys(self):
        return self.names.keys()

    def items(self):
        return [(name, self[name]) for name in self.names]

    def values(self):
        return [self[name] for name in self.names]

    def copy(self) -> dict:
        return dict(self.items())

    def __repr__(self) -> str:
        return f"LazyTable({list(self.names)})"

    def __eq__(self, other) -> bool:
        return dict(self.items()) == (dict(other.items()) if isinstance(other, dict) else other)

    __hash__ = None

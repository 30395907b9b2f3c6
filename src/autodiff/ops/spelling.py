"""How an operation is written: in the expression language, in NumPy, in LaTeX, and how the
symbolic algebra builds it.

An op's spelling is part of its declaration (`defop(..., spelling=Spelling(...))`, `nondiff`,
`@public`), beside its forward and its derivative, as JAX registers every interpretation of a
primitive beside it. `derive` and `explain` write formulas with generic readers of this table
(symbolic/printing.py, symbolic/build.py); they keep no table of op names of their own, and a
test walks the registry for ops that cannot be written in every format.

Each of `language`, `numpy` and `latex` is one of:

- `CALL`: a call of the op's own name with its arguments (`cumsum(x, 0)`; in LaTeX
  `\\operatorname{cumsum}\\left(x, 0\\right)`);
- a name: a call of that function with the arguments (`numpy="np.exp"`, `latex=r"\\log_{10}"`);
- a template, which has `{0}`: `"np.clip({0}, {1}, {2})"`, each `{i}` the i-th argument written
  out in full (braces that are text doubled, as Python's str.format wants them);
- a function `(write, *args) -> str`, where `write(arg)` is an argument's text and
  `write(arg, level)` parenthesizes it where it binds less tightly than `level`;
- None: no spelling (the printer says which op it cannot write).

`infix` is a binary operator written between its operands in the language and in NumPy
(`@`, `%`, `<=`), at precedence `level`. `called` is the function a user calls for the op where that
is not its own name (explain names a node as that call). `helper` is the NumPy source of the
functions a numpy spelling calls (`def _softplus(...)`), which a derived module defines. `build` is how the
algebra makes the op's expression from its arguments' (`sqrt(x)` is `x ** 0.5`, `rsub` is
`other - input`): a function `(s, *args)` given the builder `s` (symbolic/build.py), returning an
expression, or None to keep the op as a call.
"""

from __future__ import annotations


from .catalogue import Catalogue

# Precedence, as Python's: comparisons < + - < * / @ % < unary minus < ** < atoms.
COMPARE, SUM, PRODUCT, UNARY, POWER, ATOM = range(6)


class _Call:
    def __repr__(self) -> str:
        return "CALL"


CALL = _Call()  # written as a call of the op's own name


class Spelling:
    """How formulas write one op, in each notation. A plain class, not a dataclass: one is made for
    every op as autodiff starts, and a dataclass's generated methods cost a compile each."""

    __slots__ = ("language", "numpy", "latex", "helper", "build", "infix", "latex_infix", "level", "called")

    def __init__(self, language: object = CALL, numpy: object = None, latex: object = CALL, helper: str = "",
                 build: object = None, infix: str | None = None, latex_infix: str | None = None, level: int = ATOM,
                 called: str | None = None) -> None:  # called: the function users call, where not its own name
        for name, value in zip(self.__slots__, (language, numpy, latex, helper, build, infix, latex_infix, level,
                                                called)):
            object.__setattr__(self, name, value)

    def but(self, **changes) -> Spelling:
        """This spelling with some parts changed (it is never changed in place)."""
        return Spelling(**{name: changes.get(name, getattr(self, name)) for name in self.__slots__})

    def __setattr__(self, name, value):
        raise AttributeError(f"a Spelling is not changed in place: use .but({name}=...)")

    def __repr__(self) -> str:
        return f"Spelling({', '.join(f'{name}={getattr(self, name)!r}' for name in self.__slots__)})"


# An op without a name users can call: written only through its `build` (or not at all).
INTERNAL = Spelling(language=None, latex=None)

SPELLINGS = Catalogue()  # op name -> Spelling


def called_as(op_name: str) -> str:
    """The function a user calls for an op (explain names a node so: `squeeze` for squeeze_dim)."""
    spelling = SPELLINGS.get(op_name)
    if spelling is not None and spelling.called:
        return spelling.called
    name = op_name.rstrip("_")
    for suffix in ("_dims", "_dim"):
        name = name.removesuffix(suffix)
    return name


def declare(name: str, spelling: Spelling | None, public: bool) -> None:
    """Record `name`'s spelling: given, or a call of its name where it is public."""
    if spelling is None:
        spelling = Spelling() if public else INTERNAL
    SPELLINGS.declare(name, spelling)


def infix(symbol: str, level: int, numpy: str | None = None, latex: str | None = None, **more) -> Spelling:
    """A binary operator: `a @ b` in the language and (unless `numpy` says otherwise) in NumPy."""
    return Spelling(infix=symbol, level=level, numpy=numpy, latex_infix=latex if latex is not None else symbol,
                    **more)


def elementwise(numpy: str, latex: object = CALL, **more) -> Spelling:
    """An elementwise function the language calls by its name and NumPy by `numpy`."""
    return Spelling(numpy=numpy, latex=latex, **more)


def helped(source: str, latex: object = CALL, **more) -> Spelling:
    """A function NumPy lacks: the derived module defines `_name` from `source` and calls it (or
    what `numpy` says, which may call it)."""
    name = source.split("(", 1)[0].removeprefix("def ").strip()
    return Spelling(numpy=more.pop("numpy", name), helper=source, latex=latex, **more)


def carried(namespace: dict, *names: str, prelude: str = ""):
    """A helper read from the engine's own source: the functions and constants `names` of a module
    (its `namespace`), for a derived module to carry the very algorithm. Read when a module is
    written, never at start-up."""
    def source() -> str:
        import inspect

        parts = [prelude]
        for name in names:
            value = namespace[name]
            parts.append(inspect.getsource(value) if callable(value) else f"{name} = {value!r}\n")
        return "".join(parts)

    return source


def linalg_call(name: str, index: int | None = None, **keywords) -> object:
    """`linalg_solve(A, B)`, `linalg_qr(A, mode=complete)[0]`: the matrices, then each keyword
    where it differs from its default (strings as the language's words), a result of several
    as the call indexed."""
    def written(w, *args):
        count = len(args) - len(keywords)
        parts = [w(a) for a in args[:count]]
        for (keyword, default), value in zip(keywords.items(), args[count:]):
            if value != default:
                parts.append(f"{keyword}={value if isinstance(value, str) else w(value)}")
        call = f"{name}({', '.join(parts)})"
        return call if index is None else f"{call}[{index}]"

    return written

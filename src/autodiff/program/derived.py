"""What `derive` gives: each derivative (`Derived`), the assumptions it holds under
(`Assumption`), and the whole derivation (`Derivation`), as program/derive.py makes them and
the writers (derived_text.py, derived_module.py) and --check (derive_check.py) read them."""

from __future__ import annotations

import re
from dataclasses import field

from .._record import record


@record
class Assumption:
    """A condition the derived program holds under: a branch taken, a loop's count, a value read.

    `turn` says which time its line decided (1, 2, ...) where the line decided more than once (a
    condition tested on each turn of a loop); `test` is the expression whose value was read and
    `value` what it was, which the python module checks at each call."""

    line: int
    condition: str
    turn: int | None = None
    test: object = field(default=None, repr=False, compare=False)
    value: object = field(default=None, repr=False, compare=False)

    @property
    def where(self) -> str:
        return f"line {self.line}" + (f", turn {self.turn}" if self.turn is not None else "")


@record
class Derived:
    """One derivative: of the output with respect to `wrt` (a pair of names at order 2)."""

    wrt: tuple
    name: str  # de_da, d2e_da_db
    formula: str  # the right-hand side of its statement in `program`
    expr: object = None  # its expression (symbolic/expr.py)
    shape: tuple = ()


@record
class Derivation:
    """derive's result: each derivative as statements that compute shared parts once, and what they assume."""

    source: str
    output: str
    inputs: dict  # input name -> shape, in the program's order
    derivatives: list  # Derived, first order, then second
    statements: list  # (name, right-hand side), each defined before use, derivatives last
    assumptions: list = field(default_factory=list)
    order: int = 1
    value: object = None  # the output's expression
    declared: dict = field(default_factory=dict)  # input name -> its default value's text, where the file gives one
    check: object = None  # DeriveCheck with --check
    warnings: list = field(default_factory=list)
    labels: dict = field(default_factory=dict, repr=False)  # expression -> the user's name for it
    shapes: dict = field(default_factory=dict)  # input name -> its sizes by name (and numbers), where named
    sizes: object = field(default=None, repr=False)  # SizeNames of the formulas' trace (None: literal sizes)
    jacobian: bool = False  # a tensor output: each derivative is a Jacobian (the output's shape, then the input's)
    fixed: dict = field(default_factory=dict)  # input -> its shape, where sizes were named but hold only as traced

    @property
    def bindings(self) -> list:
        """[(size name, input, dim)]: where each named size a formula uses is read from."""
        out, seen = [], set()
        for name, dims in self.shapes.items():
            for dim, size in enumerate(dims):
                if isinstance(size, str) and size not in seen:
                    seen.add(size)
                    out.append((size, name, dim))
        return out

    @property
    def program(self) -> str:
        sizes = "".join(f"{size} = size({name}, {dim})\n" for size, name, dim in self.bindings
                        if self._uses(size))
        return sizes + "".join(f"{name} = {text}\n" for name, text in self.statements)

    def _uses(self, size: str) -> bool:
        return any(re.search(rf"\b{re.escape(size)}\b", text) for _, text in self.statements)

    def formula(self, wrt) -> str:
        key = (wrt,) if isinstance(wrt, str) else tuple(wrt)
        return next(d.formula for d in self.derivatives if d.wrt == key)

def fixed_text(fixed: dict) -> str:
    """`x [3], A [3, 3]`: the sizes a derivation holds at only."""
    return ", ".join(f"{n} {list(shape)}" for n, shape in fixed.items())


def only_at(d: Derivation) -> str | None:
    """`holds only at the sizes x [3]`, where named sizes could not be kept."""
    return f"holds only at the sizes {fixed_text(d.fixed)}" if d.fixed else None

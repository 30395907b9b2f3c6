"""An operation's expression from its arguments' expressions, simplified as it is built.

How an op is built is part of its declaration (`Spelling.build`, ops/spelling.py): arithmetic
goes to the algebra of expr.py (sums, products, powers), an op without a name of its own is
written as the public ops it amounts to (`slice` as `narrow`, `select_backward` as a `cat` of
zeros), and the rewrites that need no values apply (shape operations that change nothing are
dropped, constants folded). This module only reads those declarations, and gives them the
builder `s`: the algebra's vocabulary, and the rewrites several ops share.
"""

from __future__ import annotations

import math

import numpy as np

from ..ops.spelling import SPELLINGS
from . import expr as E


def build(name: str, args: list, shape: tuple, result=None) -> E.Expr:
    """The expression of op `name` applied to `args` (expressions, or static parameters)."""
    spelling = SPELLINGS.get(name)
    rule = spelling.build if spelling is not None else None
    if rule is not None:
        builder = _BUILDERS.get(shape)
        if builder is None:
            builder = _BUILDERS[shape] = Builder(shape)
        built = rule(builder, *args)
        if built is not None:
            return E.with_shape(built, shape) if built.shape != shape else built
    for a in args:
        if a.__class__ is not E.Expr:
            return E.call(name, tuple(_static(a) for a in args), shape)
    return E.call(name, tuple(args), shape)  # expressions only (exp(x), tanh(x)): nothing to convert


class Builder:
    """What a `build` rule is handed: the result's `shape` and the algebra's words."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple) -> None:
        self.shape = tuple(shape)

    # -- the algebra ----------------------------------------------------------------------------------

    @staticmethod
    def number(value) -> E.Expr:
        """A value as an expression: expressions stay, numbers and arrays become constants."""
        return _as_expr(value)

    @staticmethod
    def const(value: float, shape: tuple = ()) -> E.Expr:
        return E.const(value, shape)

    @staticmethod
    def power(base, exponent) -> E.Expr:
        return E.power(_as_expr(base), exponent if isinstance(exponent, (int, float)) else _as_expr(exponent))

    def call(self, op: str, *args, shape: tuple | None = None) -> E.Expr:
        """op(args) as a call the algebra does not look inside, of the result's shape unless said."""
        return E.call(op, tuple(_static(a) for a in args), self.shape if shape is None else tuple(shape))

    def build(self, op: str, *args, shape: tuple | None = None) -> E.Expr:
        """op(args) built by op's own rule (a decomposition into another op)."""
        return build(op, list(args), self.shape if shape is None else tuple(shape))

    @staticmethod
    def uniform_bool(x) -> bool | None:
        """The one bool of a constant whose elements are all that bool, else None."""
        if getattr(x, "op", None) == "tensor":
            array = x.args[0].array
            if array.dtype == bool and array.size and (array.all() or not array.any()):
                return bool(array.flat[0])
            return None
        if isinstance(x, (bool, np.bool_)):
            return bool(x)
        return None

    def same(self, x) -> E.Expr:
        """x itself, in the result's shape (a copy, a cast, an alias)."""
        return E.with_shape(_as_expr(x), self.shape)

    # -- rewrites that several ops share ----------------------------------------------------------------

    def reshape(self, x, shape: tuple | None = None) -> E.Expr:
        """x reshaped (a reshape of a reshape is one; one that changes nothing is dropped)."""
        shape = self.shape if shape is None else tuple(shape)
        if x.shape == shape:
            return x
        if x.op == "const":
            return E.const(x.number, shape)
        if x.op == "reshape":
            x = x.args[0]
            if x.shape == shape:
                return x
        if x.op == "sum_to" and x.shape[:len(x.shape) - len(shape)] == (1,) * (len(x.shape) - len(shape)) \
                and x.shape[len(x.shape) - len(shape):] == shape:  # a bias's gradient: summed to (1, n), then (n,)
            return E.call("sum_to", (x.args[0], shape), shape)
        return E.call("reshape", (x, shape), shape)

    def compare(self, name: str, a, b) -> E.Expr:
        a, b = _as_expr(a), _as_expr(b)
        # relu's formula asks `relu(x) <= 0`: for a number 0 that is `x <= 0` (nan included)
        if a.op == "relu" and b.op == "const" and b.number == 0 and name in ("le", "gt"):
            a = a.args[0]
        # pow's asks `base == 0`: never, for a base such as x * x + 0.5 (nan and inf included)
        if name in ("eq", "ne") and b.op == "const" and b.number == 0 and _positive(a):
            return E.constant(np.full(self.shape, name == "ne"))
        return E.call(name, (a, b), self.shape)

    def where(self, condition, a, b) -> E.Expr:
        a, b = _as_expr(a), _as_expr(b)
        if a is b:
            return a
        if condition.op == "const":
            return a if condition.number else b
        if condition.op == "tensor":
            mask = condition.args[0].array
            if mask.all():
                return a
            if not mask.any():
                return b
        return E.call("where", (condition, a, b), self.shape)

    def sum_to(self, x, target) -> E.Expr:
        target = tuple(target)
        if x.shape == target:
            return x
        copies = math.prod(x.shape) / max(math.prod(target), 1)  # how many elements each one of target sums
        if x.op == "const":
            return E.const(x.number * copies, target)
        if x.op == "expand" and x.args[0].shape == target:  # each element was repeated `copies` times
            return x.args[0] * copies
        return E.call("sum_to", (x, target), target)

    def summed(self, x, *rest) -> E.Expr | None:
        """A sum (over dims, or all) of a uniform constant is a constant; None otherwise."""
        if x.op == "const":
            return E.const(x.number * (math.prod(x.shape) / max(math.prod(self.shape), 1)), self.shape)
        return None

    def averaged(self, x, *rest) -> E.Expr | None:
        return E.const(x.number, self.shape) if x.op == "const" else None

    def transposed(self, x, d0=None, d1=None) -> E.Expr | None:
        """A transpose of a transpose is x; of a constant, the constant."""
        if x.op in ("t", "transpose") and x.args[1:] == ((d0, d1) if d0 is not None else ()):
            return x.args[0]
        if x.op == "const":
            return E.const(x.number, self.shape)
        return None

    def narrow(self, x, dim: int, start, stop, step) -> E.Expr | None:
        """x[start:stop] along dim as the language's narrow (a step other than 1: None)."""
        dim = dim % len(x.shape)
        begin, end, stride = slice(start, stop, step).indices(x.shape[dim])
        if stride != 1:
            return None
        if (begin, end) == (0, x.shape[dim]):
            return x
        return E.call("narrow", (x, dim, begin, max(0, end - begin)), self.shape)

    def padded(self, g, shape, dim: int, start: int, count: int) -> E.Expr:
        """g placed at [start, start + count) along `dim` of zeros of `shape`, as a `cat` of
        zeros, g and zeros: the language's spelling of select's and slice's derivatives."""
        shape = tuple(shape)
        dim = dim % len(shape)
        parts = []
        for size in (start, shape[dim] - start - count):
            part_shape = shape[:dim] + (size,) + shape[dim + 1:]
            parts.append(E.const(0.0, part_shape) if size > 0 else None)
        pieces = tuple(p for p in (parts[0], g, parts[1]) if p is not None)
        return pieces[0] if len(pieces) == 1 else E.call("cat", (pieces, dim), shape)


def _positive(e: E.Expr) -> bool:
    """Whether e is above 0 (or nan, or inf) wherever its symbols are real, infinities included:
    a positive number, or a sum of one with terms that are never negative."""
    if e.op == "const":
        return e.number > 0
    if e.op == "add":
        number, terms = e.args
        return number > 0 and all(k > 0 and _never_negative(t) for t, k in terms)
    if e.op == "mul":  # a positive number to a power that is a number (not one that may be infinite)
        number, factors = e.args
        return number > 0 and all(isinstance(x, float) and _positive(b) for b, x in factors)
    return False


def _never_negative(e: E.Expr) -> bool:
    if e.op == "pow":
        return _even(e.args[1])
    if e.op == "mul":
        number, factors = e.args
        return number > 0 and all(_even(x) or _positive(b) for b, x in factors)
    return _positive(e)


def _even(exponent) -> bool:
    return isinstance(exponent, float) and exponent > 0 and exponent % 2 == 0


_BUILDERS: dict = {}  # a builder holds only its shape: one per shape serves every rule


def _as_expr(value):
    """A formula's operand as an expression: a number (a bool too) a const, an array a constant."""
    if value.__class__ is E.Expr:
        return value
    return E.const(float(value)) if isinstance(value, (int, float)) else E.constant(np.asarray(value))


def _static(value):
    """A parameter as a hashable value (lists of dims become tuples)."""
    if value.__class__ is E.Expr:
        return value
    if isinstance(value, (list, tuple)):  # an index key: a tuple of arrays and slices
        return tuple(_static(v) for v in value)
    if isinstance(value, np.ndarray):
        return E.constant(value)
    if isinstance(value, slice):
        return Slice(value.start, value.stop, value.step)
    return value


class Slice:
    """A slice as a static parameter: hashable (Python's slices are not before 3.12)."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop, step) -> None:
        self.start, self.stop, self.step = start, stop, step

    def __eq__(self, other) -> bool:
        return isinstance(other, Slice) and (self.start, self.stop, self.step) == (other.start, other.stop, other.step)

    def __hash__(self) -> int:
        return hash((Slice, self.start, self.stop, self.step))

    def __repr__(self) -> str:
        parts = ["" if v is None else str(v) for v in (self.start, self.stop, self.step)]
        return ":".join(parts[:2] if self.step is None else parts)

    def as_slice(self) -> slice:
        return slice(self.start, self.stop, self.step)

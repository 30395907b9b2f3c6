"""An operation's expression from its arguments' expressions, simplified as it is built.

Arithmetic goes to the algebra of expr.py (sums, products, powers); the other operations
become calls, after the rewrites that need no values: shape operations that change nothing
are dropped, constants are folded, and a few identities of the derivative formulas apply
(`relu(x) <= 0` is `x <= 0`).
"""

from __future__ import annotations

import math

import numpy as np

from . import expr as E

_SAME = ("alias", "clone", "to_dtype", "to_device", "contiguous")
_RESHAPES = ("view", "reshape_alias", "unsafe_view", "squeeze", "squeeze_dim", "squeeze_", "squeeze_dims",
             "unsqueeze")
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
_FLIPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}


def _number(value):
    if value.__class__ is E.Expr:
        return value
    return E.const(float(value)) if isinstance(value, (int, float)) else E.constant(np.asarray(value))


def build(name: str, args: list, shape: tuple, result=None) -> E.Expr:
    """The expression of op `name` applied to `args` (expressions, or static parameters)."""
    rule = _RULES.get(name)
    if rule is not None:
        built = rule(shape, *args)
        if built is not None:
            return E.with_shape(built, shape) if built.shape != shape else built
    if name in _SAME:
        return E.with_shape(args[0], shape)
    if name in _RESHAPES:
        return _reshape(args[0], shape)
    if name in _COMPARISONS:
        return _compare(name, _number(args[0]), _number(args[1]), shape)
    for a in args:
        if a.__class__ is not E.Expr:
            return E.call(name, tuple(_static(a) for a in args), shape)
    return E.call(name, tuple(args), shape)  # expressions only (exp(x), tanh(x)): nothing to convert


def _static(value):
    """A parameter as a hashable value (lists of dims become tuples)."""
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


def _reshape(x: E.Expr, shape: tuple) -> E.Expr:
    if x.shape == shape:
        return x
    if x.op == "const":
        return E.const(x.number, shape)
    if x.op == "reshape":  # a reshape of a reshape is one reshape
        x = x.args[0]
        if x.shape == shape:
            return x
    return E.call("reshape", (x, shape), shape)


def _compare(name: str, a: E.Expr, b: E.Expr, shape) -> E.Expr:
    # relu's formula asks `relu(x) <= 0`: for a number 0 that is `x <= 0` (nan included)
    if a.op == "relu" and b.op == "const" and b.number == 0 and name in ("le", "gt"):
        a = a.args[0]
    return E.call(name, (a, b), shape)


def _sum_to(shape, x, target):
    target = tuple(target)
    if x.shape == target:
        return x
    copies = math.prod(x.shape) / max(math.prod(target), 1)  # how many elements each one of target sums
    if x.op == "const":
        return E.const(x.number * copies, target)
    if x.op == "expand" and x.args[0].shape == target:  # each element was repeated `copies` times
        return x.args[0] * copies
    return E.call("sum_to", (x, target), target)


def _expand(shape, x, target):
    return E.with_shape(x, tuple(shape))


def _where(shape, condition, a, b):
    a, b = _number(a), _number(b)
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
    return E.call("where", (condition, a, b), shape)


def _sum(shape, x):
    if x.op == "const":
        return E.const(x.number * math.prod(x.shape))
    return None


def _mean(shape, x):
    if x.op == "const":
        return E.const(x.number)
    return None


def _transpose(shape, x, d0=None, d1=None):
    if x.op in ("t", "transpose") and x.args[1:] == ((d0, d1) if d0 is not None else ()):
        return x.args[0]
    if x.op == "const":
        return E.const(x.number, shape)
    return None


def _mean_dim(shape, x, dim, keepdim):
    return E.const(x.number, shape) if x.op == "const" else None


def _sum_dim(shape, x, dim, keepdim):
    if x.op == "const":
        return E.const(x.number * (math.prod(x.shape) / max(math.prod(shape), 1)), shape)
    return None


def _padded(g: E.Expr, shape, dim: int, start: int, count: int) -> E.Expr:
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


def _select_backward(shape, g, target, dim, index):
    target = tuple(target)
    dim = dim % len(target)
    index = index % target[dim]
    row = _reshape(g, target[:dim] + (1,) + target[dim + 1:])
    return _padded(row, target, dim, index, 1)


def _slice_backward(shape, g, target, dim, start, stop, step):
    target = tuple(target)
    dim = dim % len(target)
    begin, end, stride = slice(start, stop, step).indices(target[dim])
    if stride != 1:
        return None  # no spelling yet: derive says so
    return _padded(g, target, dim, begin, max(0, end - begin))


def _slice(shape, x, dim, start, stop, step):
    dim = dim % len(x.shape)
    begin, end, stride = slice(start, stop, step).indices(x.shape[dim])
    if stride != 1:
        return None
    if (begin, end) == (0, x.shape[dim]):
        return x
    return E.call("narrow", (x, dim, begin, max(0, end - begin)), shape)


_RULES = {
    "slice": _slice,
    "select_backward": _select_backward,
    "slice_backward": _slice_backward,
    "add": lambda shape, a, b: E.add(_number(a), _number(b)),
    "sub": lambda shape, a, b: _number(a) - _number(b),
    "rsub": lambda shape, input, other: _number(other) - _number(input),
    "mul": lambda shape, a, b: E.mul(_number(a), _number(b)),
    "div": lambda shape, a, b: _number(a) / _number(b),
    "div_scalar": lambda shape, a, b: _number(a) / _number(b),
    "neg": lambda shape, a: -a,
    "reciprocal": lambda shape, a: E.power(a, -1.0),
    "sqrt": lambda shape, a: E.power(a, 0.5),
    "pow": lambda shape, x, c: E.power(x, float(c)),
    "pow_tensor": lambda shape, x, y: E.power(x, _number(y)),
    "pow_scalar_base": lambda shape, exponent, base: E.power(_number(base), exponent),
    "sum_to": _sum_to,
    "expand": _expand,
    "where": _where,
    "sum": _sum,
    "mean": _mean,
    "sum_dim": _sum_dim,
    "mean_dim": _mean_dim,
    "t": lambda shape, x: _transpose(shape, x),
    "transpose": _transpose,
}


# -- issue 24: the ops behind one public function, written as that function
_RULES.update({
    "xlogy_by_number": lambda shape, x, y: E.call("xlogy", (x, y), shape),
    "xlogy_of_number": lambda shape, y, x: E.call("xlogy", (x, y), shape),
    "clamp_min_tensor": lambda shape, x, bound: E.call("clamp_min", (x, bound), shape),
    "clamp_max_tensor": lambda shape, x, bound: E.call("clamp_max", (x, bound), shape),
})

# -- issue 24: the pieces of unbind and split, written as the select or narrow they are
_RULES.update({
    "unbind": lambda shape, x, dim, index: E.call("select", (x, dim, index), shape),
    "split": lambda shape, x, dim, start, stop: _slice(shape, x, dim, start, stop, 1),
    "split_with_sizes": lambda shape, x, dim, start, stop: _slice(shape, x, dim, start, stop, 1),
})

# -- issue 24: scatter with a number (the gradient of scatter's input) is the language's scatter too
_RULES["scatter_value"] = lambda shape, x, dim, index, value: E.call("scatter", (x, dim, _static(index), value), shape)

# -- issue 24: ordering's values are the input gathered at the indices found (ops/ordering.py); the
# indices stay the call that found them (argsort(x, ...), topk(x, ...).indices: symbolic/printing.py)
_RULES.update({name: lambda shape, x, dim, index: E.call("gather", (x, dim, _static(index)), shape)
               for name in ("sort_values", "sort_values_stable", "topk_values", "cummax_values", "cummin_values")})
_RULES.update({name: lambda shape, x, dim, index, keepdim: _reshape(
    E.call("gather", (x, dim, _static(index)), tuple(index.shape)), shape) for name in ("median_dim", "kthvalue_values")})
# diag of a matrix copies its diagonal: the language's diagonal
_RULES["diagonal_copy"] = lambda shape, x, offset, dim1, dim2: E.call("diagonal", (x, offset, dim1, dim2), shape)

"""Arithmetic: + - * / ** and negation, with NumPy broadcasting.

Each formula returns the gradient in the output's shape; the engine sums it back to the
shape of each input.
"""

from __future__ import annotations

import math
import operator

from .. import backend
from ..backend import np  # the host module: its own shortcuts need no help

from ..tensor import Tensor
from .pointwise import LOG
from .batching import ELEMENTWISE
from .registry import binary_op, elementwise_op, nondiff, unary_op, zeros_as
from .spelling import PRODUCT, Spelling, elementwise, infix
from .surface import bind_operators, public
from .selection import WHERE

ADD = elementwise_op(  # the public add(), with alpha, is below
    "add",
    lambda xp, input, other: input + other, operators=("__add__", "__radd__"), scalar=operator.add,
    input=lambda grad: grad,
    other=lambda grad: grad,
    spelling=Spelling(build=lambda s, a, b: s.number(a) + s.number(b)),
)
SUB = elementwise_op(
    "sub",
    lambda xp, input, other: input - other, operators=("__sub__",), scalar=operator.sub,
    input=lambda grad: grad,
    other=lambda grad: -grad,
    spelling=Spelling(build=lambda s, a, b: s.number(a) - s.number(b)),
)
RSUB = elementwise_op(  # `10 - x`: the number is a constant, so only x has an edge
    "rsub",
    lambda xp, input, other: other - input, grad_fn="RsubBackward1",
    operators=("__rsub__",),  # only ever called with a number on the left
    input=lambda grad: -grad,
    spelling=Spelling(build=lambda s, input, other: s.number(other) - s.number(input)),
)
MUL = binary_op(
    "mul",
    lambda xp, input, other: input * other, doc="input * other", inplace=True,
    operators=("__mul__", "__rmul__"), aliases=("multiply",), scalar=operator.mul,
    input=lambda grad, other: grad * other,
    other=lambda grad, input: grad * input,
    spelling=Spelling(build=lambda s, a, b: s.number(a) * s.number(b)),
)
DIV = binary_op(
    "div",
    lambda xp, input, other: input / other, doc="input / other (true division)", inplace=True,
    operators=("__truediv__",), aliases=("divide", "true_divide"),
    domain=True,
    input=lambda grad, other: grad / other,
    other=lambda grad, input, other: -grad * input / (other * other),
    spelling=Spelling(build=lambda s, a, b: s.number(a) / s.number(b)),
)


def _negative(xp, input):
    if input.dtype == bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead."
        )
    return -input


NEG = unary_op(
    "neg", _negative, doc="-input", operators=("__neg__",), aliases=("negative",),
    input=lambda grad: -grad,
    spelling=Spelling(build=lambda s, x: -x),
)
RECIPROCAL = unary_op(
    "reciprocal",
    lambda xp, input: 1 / input, doc="1 / input",
    domain=True,
    input=lambda grad, result: -grad * result * result,
    spelling=Spelling(build=lambda s, x: s.power(x, -1.0)),
    floats=True,
)


FLOOR = unary_op(
    "floor", lambda xp, input: xp.floor(input), doc="The largest integer <= input (gradient zero everywhere).",
    input=lambda grad: zeros_as(grad),
    spelling=elementwise("np.floor", latex=r"\left\lfloor {0} \right\rfloor"),
    why_zero="floor, whose derivative is 0",
)
CEIL = unary_op(
    "ceil", lambda xp, input: xp.ceil(input), doc="The smallest integer >= input (gradient zero everywhere).",
    input=lambda grad: zeros_as(grad),
    spelling=elementwise("np.ceil", latex=r"\left\lceil {0} \right\rceil"),
    why_zero="ceil, whose derivative is 0",
)
# input % other takes the sign of other, as Python's %: input - floor(input / other) * other.
REMAINDER = elementwise_op(
    "remainder", lambda xp, input, other: xp.remainder(input, other), grad_fn="RemainderBackward1", domain=True,
    input=lambda grad: grad,
    other=lambda grad, input, other: -grad * FLOOR.apply(input / other),
    spelling=infix("%", PRODUCT, latex=r"\bmod"),
)
REMAINDER_SCALAR = elementwise_op(  # x % 2
    "remainder_scalar", lambda xp, input, other: xp.remainder(input, other), grad_fn="RemainderBackward0",
    domain=True,
    input=lambda grad: grad,
    spelling=infix("%", PRODUCT, latex=r"\bmod", called="remainder"),
)
# 2 % x: PyTorch records it without a derivative.
_remainder_of_number = nondiff("remainder_of_number", lambda xp, input, other: xp.remainder(other, input),
                               unimplemented="aten::remainder", batch=ELEMENTWISE,
    spelling=Spelling(build=lambda s, input, other: s.call("remainder", s.number(other), input)),
)


def _pow_grad_by_scalar_exponent(grad, input, exponent):
    """d(x**c)/dx = c * x**(c-1), and 0 when c == 0 (also at x == 0, as PyTorch)."""
    if exponent == 0:
        return zeros_as(grad)
    xp = backend.array_module(input)  # NumPy for tensors and symbols: their own ** is the one to use
    power = input ** (exponent - 1) if xp is np else _power_by_number(xp, input, exponent - 1)
    return grad * (exponent * power)


def _pow_grad_base(grad, input, exponent):
    """d(x**y)/dx = y * x**(y-1), and 0 where y == 0."""
    return WHERE.apply(exponent == 0, 0.0, grad * (exponent * input ** (exponent - 1)))


def _pow_grad_exponent(grad, input, exponent, result):
    """d(x**y)/dy = x**y * log(x), and 0 where x == 0 and y >= 0 (as PyTorch)."""
    return WHERE.apply((input == 0) & (exponent >= 0), 0.0, grad * (result * LOG.apply(input)))


def _pow_grad_scalar_base(grad, input, exponent, result):
    """d(c**y)/dy = c**y * log(c), and 0 where c == 0 and y >= 0."""
    log_base = math.log(input) if input > 0 else -math.inf if input == 0 else math.nan
    if input == 0:
        return WHERE.apply(exponent >= 0, 0.0, grad * (result * log_base))
    return grad * (result * log_base)


def _power_by_number(xp, input, exponent):
    """input ** exponent, with NumPy's exact shortcuts on CuPy too (as PyTorch's kernels have them):
    x ** 1 is x and x ** 2 is x * x, where CUDA's pow(3.0, 1.0) may be an ulp off."""
    if xp is not np and isinstance(exponent, (int, float)) and getattr(input, "dtype", None) is not None \
            and input.dtype.kind == "f":
        shortcut = _EXACT_POWERS.get(exponent)
        if shortcut is not None:
            return shortcut(xp, input)
    return input ** exponent


_EXACT_POWERS = {1: lambda xp, a: a.copy(), 2: lambda xp, a: a * a, 0.5: lambda xp, a: xp.sqrt(a),
                 -1: lambda xp, a: xp.reciprocal(a)}

POW = elementwise_op(  # x ** 2
    "pow",
    _power_by_number,
    domain=True,
    input=_pow_grad_by_scalar_exponent,
    spelling=Spelling(build=lambda s, x, c: s.power(x, float(c))),
)
POW_TENSOR = elementwise_op(  # x ** y
    "pow_tensor",
    lambda xp, input, exponent: input ** exponent, grad_fn="PowBackward1",
    domain=True,
    input=_pow_grad_base,
    exponent=_pow_grad_exponent,
    spelling=Spelling(build=lambda s, x, y: s.power(x, y), called="pow"),
)
POW_SCALAR_BASE = elementwise_op(  # 2 ** x
    "pow_scalar_base",
    lambda xp, exponent, input: input ** exponent, grad_fn="PowBackward2",
    domain=True,
    exponent=_pow_grad_scalar_base,
    spelling=Spelling(build=lambda s, exponent, base: s.power(base, exponent), called="pow"),
)


@public(method=True, inplace=True, batch=ELEMENTWISE)
def add(input, other, *, alpha=1):
    """input + alpha * other"""
    return ADD.apply(input, other if alpha == 1 else other * alpha)


@public(method=True, inplace=True, aliases=("subtract",), batch=ELEMENTWISE)
def sub(input, other, *, alpha=1):
    """input - alpha * other"""
    return SUB.apply(input, other if alpha == 1 else other * alpha)


@public(batch=ELEMENTWISE)
def rsub(input, other):
    """other - input (what `10 - x` computes)."""
    if isinstance(other, Tensor):
        return SUB.apply(other, input)
    return RSUB.apply(input, other)


def rdiv(input, other):
    """other / input (what `2 / x` computes: as PyTorch, reciprocal(x) * 2)."""
    if isinstance(other, Tensor):
        return DIV.apply(other, input)
    return MUL.apply(RECIPROCAL.apply(input), other)


@public(method=True, inplace=True, operators=("__mod__",), batch=ELEMENTWISE)
def remainder(input, other):
    """input % other, with the sign of other (as Python); its gradient is 1 for input and
    -floor(input / other) for other."""
    if not isinstance(input, Tensor):
        return _remainder_of_number(other, input)
    if isinstance(other, Tensor):
        return REMAINDER.apply(input, other)
    return REMAINDER_SCALAR.apply(input, other)


@public(method=True, inplace=True, operators=("__pow__",), batch=ELEMENTWISE)
def pow(input, exponent):
    """input ** exponent; either may be a number."""
    if not isinstance(input, Tensor):
        return rpow(exponent, input)
    if isinstance(exponent, Tensor):
        return POW_TENSOR.apply(input, exponent)
    return POW.apply(input, exponent)


def rpow(input, base):
    """base ** input (what `2 ** x` computes)."""
    if isinstance(base, Tensor):
        return POW_TENSOR.apply(base, input)
    return POW_SCALAR_BASE.apply(input, base)


@public(method=True, inplace=True, batch=ELEMENTWISE)
def square(input):
    """input ** 2"""
    return POW.apply(input, 2)


bind_operators(rdiv, ("__rtruediv__",), batch=ELEMENTWISE)
bind_operators(_remainder_of_number, ("__rmod__",), batches_itself=True)
bind_operators(rpow, ("__rpow__",), batch=ELEMENTWISE)

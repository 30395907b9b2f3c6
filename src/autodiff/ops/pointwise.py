"""Elementwise functions, each beside its derivative.

Kinks take PyTorch's subgradient: relu'(0) = 0 and abs'(0) = sign(0) = 0; and as in PyTorch,
sign(nan) = 0, so abs'(nan) = 0, while relu passes the gradient through at NaN.
"""

from __future__ import annotations

import math

from ..backend import np  # the host module, for the 0-d float64 path (scalar=)
from ..tensor import Tensor
from .batching import ELEMENTWISE
from .registry import binary_op, elementwise_op, unary_op, zeros_as
from .selection import WHERE
from .spelling import Spelling, elementwise, helped
from .surface import public

EXP = unary_op(
    "exp", lambda xp, input: xp.exp(input), domain=True, doc="e ** input",
    input=lambda grad, result: grad * result,
    spelling=elementwise("np.exp", latex=r"\exp"),
    floats=True,
)
LOG = unary_op(
    "log", lambda xp, input: xp.log(input), domain=True,
    doc="Natural logarithm (nan below 0, -inf at 0, as NumPy and PyTorch).",
    input=lambda grad, input: grad / input,
    spelling=elementwise("np.log", latex=r"\log"),
    floats=True,
)
SQRT = unary_op(
    "sqrt", lambda xp, input: xp.sqrt(input), domain=True, doc="Square root.",
    input=lambda grad, result: grad / (2 * result),
    spelling=elementwise("np.sqrt", build=lambda s, x: s.power(x, 0.5)),
    floats=True,
)
SIN = unary_op(
    "sin", lambda xp, input: xp.sin(input), domain=True, doc="Sine (radians).",
    input=lambda grad, input: grad * COS.apply(input),
    spelling=elementwise("np.sin", latex=r"\sin"),
    floats=True,
)
COS = unary_op(
    "cos", lambda xp, input: xp.cos(input), domain=True, doc="Cosine (radians).",
    input=lambda grad, input: grad * -SIN.apply(input),
    spelling=elementwise("np.cos", latex=r"\cos"),
    floats=True,
)
TAN = unary_op(
    "tan", lambda xp, input: xp.tan(input), domain=True, doc="Tangent (radians).",
    input=lambda grad, result: grad * (1 + result * result),
    spelling=elementwise("np.tan", latex=r"\tan"),
    floats=True,
)
TANH = unary_op(
    "tanh", lambda xp, input: xp.tanh(input), doc="Hyperbolic tangent.", scalar=np.tanh,
    input=lambda grad, result: grad * (1 - result * result),
    spelling=elementwise("np.tanh", latex=r"\tanh"),
    floats=True,
)
SIGMOID = unary_op(
    "sigmoid", lambda xp, input: 1 / (1 + xp.exp(-input)), domain=True, doc="1 / (1 + exp(-input))",
    input=lambda grad, result: grad * (result * (1 - result)),
    spelling=helped("def _sigmoid(x):\n    return 1 / (1 + np.exp(-x))\n", latex=r"\sigma"),
    floats=True,
)
RELU = unary_op(
    "relu", lambda xp, input: xp.maximum(input, 0), doc="max(input, 0); its gradient at 0 is 0.",
    input=lambda grad, result: WHERE.apply(result <= 0, 0.0, grad),  # at NaN the gradient passes
    spelling=elementwise("np.maximum({0}, 0)", latex=r"\operatorname{relu}"),
    why_zero="relu at a value that is not positive",
)
ABS = unary_op(
    "abs", lambda xp, input: xp.abs(input), doc="|input|; its gradient at 0 is 0.",
    operators=("__abs__",), aliases=("absolute",),
    input=lambda grad, input: grad * SIGN.apply(input),
    spelling=elementwise("np.abs", latex=r"\left|{0}\right|"),
    why_zero="abs at 0",
)
SIGN = unary_op(
    "sign", lambda xp, input: xp.where(input != input, 0, xp.sign(input)),  # sign(nan) = 0
    doc="-1, 0 or 1 (gradient zero everywhere).",
    input=lambda grad: zeros_as(grad),
    spelling=elementwise("np.nan_to_num(np.sign({0}))", latex=r"\operatorname{sign}"),
    why_zero="sign, whose derivative is 0",
)
LOG1P = unary_op(
    "log1p", lambda xp, input: xp.log1p(input), domain=True, doc="log(1 + input), accurate near 0.",
    input=lambda grad, input: grad / (input + 1),
    spelling=elementwise("np.log1p"),
    floats=True,
)
EXPM1 = unary_op(
    "expm1", lambda xp, input: xp.expm1(input), domain=True, doc="exp(input) - 1, accurate near 0.",
    input=lambda grad, result: grad * (result + 1),
    spelling=elementwise("np.expm1"),
    floats=True,
)


# -- inverse and hyperbolic trigonometry, logarithms and powers of other bases ------------
# Each formula is PyTorch's (derivatives.yaml), so edges agree: asin'(±1) = inf, acosh' below 1 is
# nan where x² < 1, and sinc'(0) = 0.

_LN2 = 0.6931471805599453
_LN10 = 2.302585092994046
_PI = 3.141592653589793

RSQRT = unary_op(
    "rsqrt", lambda xp, input: 1 / xp.sqrt(input), domain=True, doc="1 / sqrt(input)",
    input=lambda grad, result: -0.5 * grad * result ** 3,
    spelling=elementwise("(1 / np.sqrt({0}))", build=lambda s, x: s.power(x, -0.5)),
    floats=True,
)
ASIN = unary_op(
    "asin", lambda xp, input: xp.arcsin(input), domain=True, aliases=("arcsin",),
    doc="Inverse sine (nan outside [-1, 1]; its gradient is inf at ±1).",
    input=lambda grad, input: grad * RSQRT.apply(1 - input * input),
    spelling=elementwise("np.arcsin", latex=r"\arcsin"),
    floats=True,
)
ACOS = unary_op(
    "acos", lambda xp, input: xp.arccos(input), domain=True, aliases=("arccos",),
    doc="Inverse cosine (nan outside [-1, 1]; its gradient is -inf at ±1).",
    input=lambda grad, input: grad * -RSQRT.apply(1 - input * input),
    spelling=elementwise("np.arccos", latex=r"\arccos"),
    floats=True,
)
ATAN = unary_op(
    "atan", lambda xp, input: xp.arctan(input), doc="Inverse tangent.",
    aliases=("arctan",),
    input=lambda grad, input: grad / (input * input + 1),
    spelling=elementwise("np.arctan", latex=r"\arctan"),
    floats=True,
)
SINH = unary_op(
    "sinh", lambda xp, input: xp.sinh(input), domain=True, doc="Hyperbolic sine.",
    input=lambda grad, input: grad * COSH.apply(input),
    spelling=elementwise("np.sinh", latex=r"\sinh"),
    floats=True,
)
COSH = unary_op(
    "cosh", lambda xp, input: xp.cosh(input), domain=True, doc="Hyperbolic cosine.",
    input=lambda grad, input: grad * SINH.apply(input),
    spelling=elementwise("np.cosh", latex=r"\cosh"),
    floats=True,
)
ASINH = unary_op(
    "asinh", lambda xp, input: xp.arcsinh(input), doc="Inverse hyperbolic sine.",
    aliases=("arcsinh",),
    input=lambda grad, input: grad * RSQRT.apply(input * input + 1),
    spelling=elementwise("np.arcsinh", latex=r"\operatorname{arsinh}"),
    floats=True,
)
ACOSH = unary_op(
    "acosh", lambda xp, input: xp.arccosh(input), domain=True, aliases=("arccosh",),
    doc="Inverse hyperbolic cosine (nan below 1).",
    input=lambda grad, input: grad * RSQRT.apply(input * input - 1),
    spelling=elementwise("np.arccosh", latex=r"\operatorname{arcosh}"),
    floats=True,
)
ATANH = unary_op(
    "atanh", lambda xp, input: xp.arctanh(input), domain=True, aliases=("arctanh",),
    doc="Inverse hyperbolic tangent (±inf at ±1, nan outside).",
    input=lambda grad, input: grad / (1 - input * input),
    spelling=elementwise("np.arctanh", latex=r"\operatorname{artanh}"),
    floats=True,
)
LOG2 = unary_op(
    "log2", lambda xp, input: xp.log2(input), domain=True, doc="Logarithm to base 2.",
    input=lambda grad, input: grad / (input * _LN2),
    spelling=elementwise("np.log2", latex=r"\log_2"),
    floats=True,
)
LOG10 = unary_op(
    "log10", lambda xp, input: xp.log10(input), domain=True, doc="Logarithm to base 10.",
    input=lambda grad, input: grad / (input * _LN10),
    spelling=elementwise("np.log10", latex=r"\log_{10}"),
    floats=True,
)
EXP2 = unary_op(
    "exp2", lambda xp, input: xp.exp2(input), domain=True, doc="2 ** input",
    input=lambda grad, result: grad * result * _LN2,
    spelling=elementwise("np.exp2", latex="2^{{{0}}}"),
    floats=True,
)


def _sinc_grad(grad, input):
    """(pi x cos(pi x) - sin(pi x)) / (pi x²), and 0 at x = 0 (as PyTorch)."""
    pi_x = input * _PI
    pi_x_x = input * input * _PI
    out = grad * (pi_x * COS.apply(pi_x) - SIN.apply(pi_x)) / pi_x_x
    return WHERE.apply(pi_x_x == 0, 0.0, out)


SINC = unary_op(
    "sinc", lambda xp, input: xp.sinc(input), domain=True, doc="sin(pi * input) / (pi * input), and 1 at 0.",
    input=_sinc_grad,
    spelling=elementwise("np.sinc", latex=r"\operatorname{sinc}"),
    floats=True,
)
DEG2RAD = unary_op(
    "deg2rad", lambda xp, input: input * 0.017453292519943295, doc="Degrees to radians.",
    input=lambda grad: grad * 0.017453292519943295,
    spelling=elementwise("np.deg2rad"),
    floats=True,
)
RAD2DEG = unary_op(
    "rad2deg", lambda xp, input: input * 57.29577951308232, doc="Radians to degrees.",
    input=lambda grad: grad * 57.29577951308232,
    spelling=elementwise("np.rad2deg"),
    floats=True,
)
ROUND = unary_op(
    "round", lambda xp, input: xp.round(input),
    doc="The nearest integer, halves to even (gradient zero everywhere).",
    input=lambda grad: zeros_as(grad),
    spelling=elementwise("np.round"),
)
TRUNC = unary_op(
    "trunc", lambda xp, input: xp.trunc(input), aliases=("fix",),
    doc="The integer part, rounded towards 0 (gradient zero everywhere).",
    input=lambda grad: zeros_as(grad),
    spelling=elementwise("np.trunc"),
)
FRAC = unary_op(
    "frac", lambda xp, input: input - xp.trunc(input), doc="input - trunc(input), with the sign of input.",
    input=lambda grad: grad,
    spelling=elementwise("np.fmod({0}, 1)"),
)


# -- functions of two tensors -------------------------------------------------------------------------


def _atan2_grads(grad, input, other):
    """d atan2(y, x) = (x dy - y dx) / (x² + y²), and 0 where x² + y² is 0 (as PyTorch)."""
    denominator = input * input + other * other
    recip = WHERE.apply(denominator == 0, 0.0, 1 / denominator)
    return grad * other * recip, grad * -input * recip


ATAN2 = binary_op(
    "atan2", lambda xp, input, other: xp.arctan2(input, other), inplace=True, aliases=("arctan2",),
    doc="The angle of the point (other, input), in (-pi, pi]: atan(input / other) with the quadrant.",
    input=lambda grad, input, other: _atan2_grads(grad, input, other)[0],
    other=lambda grad, input, other: _atan2_grads(grad, input, other)[1],
    spelling=elementwise("np.arctan2"),
)
HYPOT = binary_op(
    "hypot", lambda xp, input, other: xp.hypot(input, other), inplace=True,
    doc="sqrt(input ** 2 + other ** 2), without overflow (its gradient at (0, 0) is nan, as PyTorch).",
    domain=True,
    input=lambda grad, input, result: grad * input / result,
    other=lambda grad, other, result: grad * other / result,
    spelling=elementwise("np.hypot"),
)
LOGADDEXP = binary_op(
    "logaddexp", lambda xp, input, other: xp.logaddexp(input, other),
    domain=True,
    doc="log(exp(input) + exp(other)), without overflow.",
    input=lambda grad, input, other: grad / (1 + EXP.apply(other - input)),
    other=lambda grad, input, other: grad / (1 + EXP.apply(input - other)),
    spelling=elementwise("np.logaddexp"),
)


def _xlogy(xp, input, other):
    """input * log(other), 0 where input == 0 (log(0) too), nan where other is nan (as PyTorch)."""
    if isinstance(other, (int, float)):  # a number: its log a Python float, so float32 stays float32
        log = math.log(other) if other > 0 else -math.inf if other == 0 else math.nan
        return xp.where(input == 0, 0.0, input * log) if other == other else input * log
    # input == 0 is a Python bool when input is a number (xlogy(2.0, y)): CuPy's where takes arrays only
    return xp.where(other != other, xp.nan, xp.where(xp.asarray(input == 0), 0.0, input * xp.log(other)))


def _xlogy_grad_input(grad, input, other):
    """log(other), as xlogy(grad, other); 0 where input == 0 and other <= 0 (as PyTorch)."""
    log_other = (XLOGY if isinstance(other, Tensor) or hasattr(other, "shape") else XLOGY_BY_NUMBER).apply(grad, other)
    return WHERE.apply((input == 0) & (other <= 0), 0.0, log_other)


_XLOGY = helped("def _xlogy(x, y):\n"
               "    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(np.where(x == 0, 1.0, y))))\n")
XLOGY = elementwise_op(
    "xlogy", _xlogy, domain=True,
    input=_xlogy_grad_input,
    other=lambda grad, input, other: grad * input / other,
    spelling=_XLOGY,
)
XLOGY_BY_NUMBER = elementwise_op(  # xlogy(x, 2.0)
    "xlogy_by_number", _xlogy, grad_fn="XlogyBackward2", domain=True,
    input=_xlogy_grad_input,
    spelling=Spelling(build=lambda s, x, y: s.call("xlogy", x, s.number(y))),
)
XLOGY_OF_NUMBER = elementwise_op(  # xlogy(2.0, y): the tensor first, as pow_scalar_base
    "xlogy_of_number", lambda xp, other, input: _xlogy(xp, input, other), grad_fn="XlogyBackward1", domain=True,
    other=lambda grad, other, input: grad * input / other,
    spelling=Spelling(build=lambda s, y, x: s.call("xlogy", s.number(x), y)),
)


@public(method=True, inplace=True, batch=ELEMENTWISE)
def xlogy(input, other):
    """input * log(other), and 0 where input is 0 (even where other is 0); nan where other is nan."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError("xlogy() received an invalid combination of arguments: one of input and other must "
                            "be a Tensor")
        return XLOGY_OF_NUMBER.apply(other, input)
    if not isinstance(other, Tensor):
        return XLOGY_BY_NUMBER.apply(input, other)
    return XLOGY.apply(input, other)

"""Elementwise functions, each beside its derivative.

Kinks take PyTorch's subgradient: relu'(0) = 0 and abs'(0) = sign(0) = 0; and as in PyTorch,
sign(nan) = 0, so abs'(nan) = 0, while relu passes the gradient through at NaN.
"""

from __future__ import annotations

from .registry import defop, zeros_as
from .selection import WHERE

__all__ = [  # the functions users call by name (the language finds them here)
    "abs",
    "cos",
    "exp",
    "expm1",
    "log",
    "log1p",
    "relu",
    "sigmoid",
    "sign",
    "sin",
    "sqrt",
    "tan",
    "tanh",
]

EXP = defop(
    "exp", "ExpBackward0", lambda xp, input: xp.exp(input), domain=True,
    input=lambda grad, result: grad * result,
)
LOG = defop(
    "log", "LogBackward0", lambda xp, input: xp.log(input), domain=True,
    input=lambda grad, input: grad / input,
)
SQRT = defop(
    "sqrt", "SqrtBackward0", lambda xp, input: xp.sqrt(input), domain=True,
    input=lambda grad, result: grad / (2 * result),
)
SIN = defop(
    "sin", "SinBackward0", lambda xp, input: xp.sin(input), domain=True,
    input=lambda grad, input: grad * COS.apply(input),
)
COS = defop(
    "cos", "CosBackward0", lambda xp, input: xp.cos(input), domain=True,
    input=lambda grad, input: grad * -SIN.apply(input),
)
TAN = defop(
    "tan", "TanBackward0", lambda xp, input: xp.tan(input), domain=True,
    input=lambda grad, result: grad * (1 + result * result),
)
TANH = defop(
    "tanh", "TanhBackward0", lambda xp, input: xp.tanh(input),
    input=lambda grad, result: grad * (1 - result * result),
)
SIGMOID = defop(
    "sigmoid", "SigmoidBackward0", lambda xp, input: 1 / (1 + xp.exp(-input)), domain=True,
    input=lambda grad, result: grad * (result * (1 - result)),
)
RELU = defop(
    "relu", "ReluBackward0", lambda xp, input: xp.maximum(input, 0),
    input=lambda grad, result: WHERE.apply(result <= 0, 0.0, grad),  # at NaN the gradient passes
)
ABS = defop(
    "abs", "AbsBackward0", lambda xp, input: xp.abs(input),
    input=lambda grad, input: grad * SIGN.apply(input),
)
SIGN = defop(
    "sign", "SignBackward0", lambda xp, input: xp.where(input != input, 0, xp.sign(input)),  # sign(nan) = 0
    input=lambda grad: zeros_as(grad),
)
LOG1P = defop(
    "log1p", "Log1PBackward0", lambda xp, input: xp.log1p(input), domain=True,
    input=lambda grad, input: grad / (input + 1),
)
EXPM1 = defop(
    "expm1", "Expm1Backward0", lambda xp, input: xp.expm1(input), domain=True,
    input=lambda grad, result: grad * (result + 1),
)


def exp(input):
    """e ** input"""
    return EXP.apply(input)


def log(input):
    """Natural logarithm (nan below 0, -inf at 0, as NumPy and PyTorch)."""
    return LOG.apply(input)


def sqrt(input):
    """Square root."""
    return SQRT.apply(input)


def sin(input):
    """Sine (radians)."""
    return SIN.apply(input)


def cos(input):
    """Cosine (radians)."""
    return COS.apply(input)


def tan(input):
    """Tangent (radians)."""
    return TAN.apply(input)


def tanh(input):
    """Hyperbolic tangent."""
    return TANH.apply(input)


def sigmoid(input):
    """1 / (1 + exp(-input))"""
    return SIGMOID.apply(input)


def relu(input):
    """max(input, 0); its gradient at 0 is 0."""
    return RELU.apply(input)


def abs(input):
    """|input|; its gradient at 0 is 0."""
    return ABS.apply(input)


def sign(input):
    """-1, 0 or 1 (gradient zero everywhere)."""
    return SIGN.apply(input)


def log1p(input):
    """log(1 + input), accurate near 0."""
    return LOG1P.apply(input)


def expm1(input):
    """exp(input) - 1, accurate near 0."""
    return EXPM1.apply(input)

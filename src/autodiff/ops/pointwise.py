"""Elementwise functions, each beside its derivative.

Kinks take PyTorch's subgradient: relu'(0) = 0 and abs'(0) = sign(0) = 0; and as in PyTorch,
sign(nan) = 0, so abs'(nan) = 0, while relu passes the gradient through at NaN.
"""

from __future__ import annotations

from .batching import ELEMENTWISE
from .registry import defop, zeros_as
from .selection import WHERE

EXP = defop(
    "exp", lambda xp, input: xp.exp(input), domain=True, doc="e ** input", method=True, inplace=True,
    input=lambda grad, result: grad * result,
    batch=ELEMENTWISE,
)
LOG = defop(
    "log", lambda xp, input: xp.log(input), domain=True, method=True, inplace=True,
    doc="Natural logarithm (nan below 0, -inf at 0, as NumPy and PyTorch).",
    input=lambda grad, input: grad / input,
    batch=ELEMENTWISE,
)
SQRT = defop(
    "sqrt", lambda xp, input: xp.sqrt(input), domain=True, doc="Square root.", method=True, inplace=True,
    input=lambda grad, result: grad / (2 * result),
    batch=ELEMENTWISE,
)
SIN = defop(
    "sin", lambda xp, input: xp.sin(input), domain=True, doc="Sine (radians).", method=True, inplace=True,
    input=lambda grad, input: grad * COS.apply(input),
    batch=ELEMENTWISE,
)
COS = defop(
    "cos", lambda xp, input: xp.cos(input), domain=True, doc="Cosine (radians).", method=True, inplace=True,
    input=lambda grad, input: grad * -SIN.apply(input),
    batch=ELEMENTWISE,
)
TAN = defop(
    "tan", lambda xp, input: xp.tan(input), domain=True, doc="Tangent (radians).", method=True, inplace=True,
    input=lambda grad, result: grad * (1 + result * result),
    batch=ELEMENTWISE,
)
TANH = defop(
    "tanh", lambda xp, input: xp.tanh(input), doc="Hyperbolic tangent.", method=True, inplace=True,
    input=lambda grad, result: grad * (1 - result * result),
    batch=ELEMENTWISE,
)
SIGMOID = defop(
    "sigmoid", lambda xp, input: 1 / (1 + xp.exp(-input)), domain=True, doc="1 / (1 + exp(-input))",
    method=True, inplace=True,
    input=lambda grad, result: grad * (result * (1 - result)),
    batch=ELEMENTWISE,
)
RELU = defop(
    "relu", lambda xp, input: xp.maximum(input, 0), doc="max(input, 0); its gradient at 0 is 0.",
    method=True, inplace=True,
    input=lambda grad, result: WHERE.apply(result <= 0, 0.0, grad),  # at NaN the gradient passes
    batch=ELEMENTWISE,
)
ABS = defop(
    "abs", lambda xp, input: xp.abs(input), doc="|input|; its gradient at 0 is 0.", method=True, inplace=True,
    operators=("__abs__",), aliases=("absolute",),
    input=lambda grad, input: grad * SIGN.apply(input),
    batch=ELEMENTWISE,
)
SIGN = defop(
    "sign", lambda xp, input: xp.where(input != input, 0, xp.sign(input)),  # sign(nan) = 0
    doc="-1, 0 or 1 (gradient zero everywhere).", method=True, inplace=True,
    input=lambda grad: zeros_as(grad),
    batch=ELEMENTWISE,
)
LOG1P = defop(
    "log1p", lambda xp, input: xp.log1p(input), domain=True, doc="log(1 + input), accurate near 0.",
    method=True, inplace=True,
    input=lambda grad, input: grad / (input + 1),
    batch=ELEMENTWISE,
)
EXPM1 = defop(
    "expm1", lambda xp, input: xp.expm1(input), domain=True, doc="exp(input) - 1, accurate near 0.",
    method=True, inplace=True,
    input=lambda grad, result: grad * (result + 1),
    batch=ELEMENTWISE,
)

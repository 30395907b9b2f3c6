"""torch.nn.functional's activations, each beside its derivative, with PyTorch's node names.

They are ops without a `doc`: PyTorch has them under `torch.nn.functional` only, and so they
are public as `autodiff.nn.functional.softplus`... (nn/functional.py gives them PyTorch's
signatures) and, by the same names, in the expression language (language/builtins.py).
Derivatives take PyTorch's choices at the kinks: elu and leaky_relu use the negative side at
0, hardtanh's gradient is 0 at its bounds, softplus is the identity above `threshold`.
"""

from __future__ import annotations

import math

from .batching import ELEMENTWISE
from . import comparison  # noqa: F401  (binds the comparisons used below: >, <=, |)
from .pointwise import EXP, LOG1P, SIGMOID, TANH
from .registry import defop
from .selection import WHERE
from .special import erf_values

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_CUBIC = 0.044715


# -- softplus, logsigmoid -----------------------------------------------------------------------------


def _softplus(xp, input, beta, threshold):
    scaled = input * beta
    return xp.where(scaled > threshold, input, xp.log1p(xp.exp(-xp.abs(scaled))) / beta + xp.maximum(input, 0))


def _softplus_grad(grad, input, beta, threshold):
    scaled = input * beta
    return WHERE.apply(scaled > threshold, grad, grad * SIGMOID.apply(scaled))


def _logsigmoid(xp, input):
    return xp.minimum(input, 0) - xp.log1p(xp.exp(-xp.abs(input)))


# -- gelu -----------------------------------------------------------------------------------------------


def _gelu(xp, input, approximate):
    if approximate == "tanh":
        return 0.5 * input * (1 + xp.tanh(_SQRT_2_OVER_PI * (input + _GELU_CUBIC * input ** 3)))
    return 0.5 * input * (1 + erf_values(xp, input / math.sqrt(2)))


def _gelu_derivative(xp, input, approximate):
    """gelu'(input), as PyTorch's gelu_backward computes it."""
    if approximate == "tanh":
        t = xp.tanh(_SQRT_2_OVER_PI * (input + _GELU_CUBIC * input ** 3))
        return 0.5 * (1 + t) + 0.5 * input * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * input * input)
    cdf = 0.5 * (1 + erf_values(xp, input / math.sqrt(2)))
    return cdf + input * xp.exp(-0.5 * input * input) / math.sqrt(2 * math.pi)


def _gelu_second(input, approximate):
    """gelu''(input), written with ops so that it is recorded too."""
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (input + _GELU_CUBIC * input * input * input)
        slope = _SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * input * input)
        bend = 6 * _SQRT_2_OVER_PI * _GELU_CUBIC * input
        t = TANH.apply(inner)
        flat = 1 - t * t
        return flat * slope + 0.5 * input * flat * (bend - 2 * t * slope * slope)
    density = EXP.apply(-0.5 * input * input) * (1 / math.sqrt(2 * math.pi))
    return density * (2 - input * input)


# -- the ops --------------------------------------------------------------------------------------------

SOFTPLUS = defop(
    "softplus", _softplus, domain=True, batch=ELEMENTWISE,
    input=_softplus_grad,
)
LOGSIGMOID = defop(
    "logsigmoid", _logsigmoid, grad_fn="LogSigmoidBackward0", domain=True, batch=ELEMENTWISE,
    input=lambda grad, input: grad * SIGMOID.apply(-input),
)
ELU = defop(
    "elu", lambda xp, input, alpha: xp.where(input > 0, input, alpha * xp.expm1(xp.minimum(input, 0))),
    domain=True, batch=ELEMENTWISE,
    input=lambda grad, input, alpha: WHERE.apply(input > 0, grad, grad * alpha * EXP.apply(input)),
)
LEAKY_RELU = defop(
    "leaky_relu", lambda xp, input, negative_slope: xp.where(input > 0, input, input * negative_slope),
    batch=ELEMENTWISE,
    input=lambda grad, input, negative_slope: WHERE.apply(input > 0, grad, grad * negative_slope),
)
# In place (F.elu(x, inplace=True)), PyTorch's nodes read the result, as its input is gone:
# EluBackward1 and LeakyReluBackward1, with the same values and gradients.
ELU_INPLACE = defop(
    "elu_inplace", ELU.forward, grad_fn="EluBackward1", domain=True, batch=ELEMENTWISE,
    input=lambda grad, result, alpha: WHERE.apply(result > 0, grad, grad * (result + alpha)),
)
LEAKY_RELU_INPLACE = defop(
    "leaky_relu_inplace", LEAKY_RELU.forward, grad_fn="LeakyReluBackward1", batch=ELEMENTWISE,
    input=lambda grad, result, negative_slope: WHERE.apply(result > 0, grad, grad * negative_slope),
)
HARDTANH = defop(
    "hardtanh", lambda xp, input, min_val, max_val: xp.minimum(xp.maximum(input, min_val), max_val),
    batch=ELEMENTWISE,
    input=lambda grad, input, min_val, max_val: WHERE.apply((input <= min_val) | (input >= max_val), 0.0, grad),
)
SILU = defop(
    "silu", lambda xp, input: input / (1 + xp.exp(-input)), domain=True, batch=ELEMENTWISE,
    input=lambda grad, input: _silu_grad(grad, input),
)


def _silu_grad(grad, input):
    s = SIGMOID.apply(input)
    return grad * (s * (1 + input * (1 - s)))


def _mish_grad(grad, input):
    t = TANH.apply(LOG1P.apply(EXP.apply(input)))
    return grad * (t + input * SIGMOID.apply(input) * (1 - t * t))


MISH = defop(
    "mish", lambda xp, input: input * xp.tanh(xp.log1p(xp.exp(input))), domain=True, batch=ELEMENTWISE,
    input=_mish_grad,
)
GELU = defop(
    "gelu", _gelu, domain=True, batch=ELEMENTWISE,
    input=lambda grad, input, approximate: GELU_BACKWARD.apply(grad, input, approximate),
)
# PyTorch's gelu_backward(grad, input): its node is the second derivative's (GeluBackwardBackward0).
GELU_BACKWARD = defop(
    "gelu_backward",
    lambda xp, grad_output, input, approximate: grad_output * _gelu_derivative(xp, input, approximate),
    domain=True, batch=ELEMENTWISE,
    grad_output=lambda grad, input, approximate: GELU_BACKWARD.apply(grad, input, approximate),
    input=lambda grad, grad_output, input, approximate: grad * grad_output * _gelu_second(input, approximate),
)

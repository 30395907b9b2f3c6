"""torch.nn.functional's activations, each beside its derivative, with PyTorch's node names.

They are ops without a `doc`: PyTorch has them under `torch.nn.functional` only, and so they
are public as `autodiff.nn.functional.softplus`... (nn/functional.py gives them PyTorch's
signatures) and, by the same names, in the expression language (language/builtins.py).
Derivatives take PyTorch's choices at the kinks: elu and leaky_relu use the negative side at
0, hardtanh's gradient is 0 at its bounds, softplus is the identity above `threshold`.
"""

from __future__ import annotations

import math

from . import comparison  # noqa: F401  (binds the comparisons used below: >, <=, |)
from .pointwise import EXP, LOG1P, SIGMOID, TANH
from .registry import elementwise_op
from .selection import WHERE
from .spelling import Spelling, helped
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


# -- how formulas write them ----------------------------------------------------------------------------

_ERF_HELPER = ("def _erf(x):\n    import math\n\n"
               "    return np.vectorize(math.erf, otypes=[float])(x)\n")


_SOFTPLUS = (
    "def _softplus(x, beta, threshold):\n"
    "    return np.where(x * beta > threshold, x, np.log1p(np.exp(-np.abs(x * beta))) / beta + np.maximum(x, 0))\n")
_LOGSIGMOID = "def _logsigmoid(x):\n    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))\n"
_GELU = (
    "def _gelu(x, approximate):\n"
    "    if approximate == 'tanh':\n"
    "        return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))\n"
    "    return 0.5 * x * (1 + _erf(x / 1.4142135623730951))\n")


def _gelu_call(w, input, approximate) -> str:
    return f"gelu({w(input)}{', approximate=tanh' if approximate == 'tanh' else ''})"


def _gelu_derivative_built(s, grad_output, input, approximate):
    """grad_output * gelu'(input), written with the language's functions."""
    x = input
    if approximate == "tanh":
        t = s.call("tanh", (x + x ** 3 * _GELU_CUBIC) * _SQRT_2_OVER_PI)
        derivative = (t + 1) * 0.5 + x * (1 - t ** 2) * (x ** 2 * (3 * _GELU_CUBIC) + 1) * (0.5 * _SQRT_2_OVER_PI)
    else:
        cdf = (s.call("erf", x * (1 / math.sqrt(2))) + 1) * 0.5
        derivative = cdf + x * s.call("exp", x ** 2 * -0.5) * (1 / math.sqrt(2 * math.pi))
    return s.number(grad_output) * derivative


# -- the ops --------------------------------------------------------------------------------------------

SOFTPLUS = elementwise_op(
    "softplus", _softplus, domain=True,
    input=_softplus_grad,
    spelling=helped(_SOFTPLUS),
)
LOGSIGMOID = elementwise_op(
    "logsigmoid", _logsigmoid, grad_fn="LogSigmoidBackward0", domain=True,
    input=lambda grad, input: grad * SIGMOID.apply(-input),
    spelling=helped(_LOGSIGMOID, latex=r"\log \sigma"),
)
ELU = elementwise_op(
    "elu", lambda xp, input, alpha: xp.where(input > 0, input, alpha * xp.expm1(xp.minimum(input, 0))),
    domain=True,
    input=lambda grad, input, alpha: WHERE.apply(input > 0, grad, grad * alpha * EXP.apply(input)),
    spelling=helped("def _elu(x, alpha):\n    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))\n"),
)
LEAKY_RELU = elementwise_op(
    "leaky_relu", lambda xp, input, negative_slope: xp.where(input > 0, input, input * negative_slope),
    input=lambda grad, input, negative_slope: WHERE.apply(input > 0, grad, grad * negative_slope),
    spelling=helped("def _leaky_relu(x, negative_slope):\n    return np.where(x > 0, x, x * negative_slope)\n"),
)
# In place (F.elu(x, inplace=True)), PyTorch's nodes read the result, as its input is gone:
# EluBackward1 and LeakyReluBackward1, with the same values and gradients.
ELU_INPLACE = elementwise_op(
    "elu_inplace", ELU.forward, grad_fn="EluBackward1", domain=True,
    input=lambda grad, result, alpha: WHERE.apply(result > 0, grad, grad * (result + alpha)),
    spelling=Spelling(build=lambda s, x, alpha: s.call("elu", x, alpha)),
)
LEAKY_RELU_INPLACE = elementwise_op(
    "leaky_relu_inplace", LEAKY_RELU.forward, grad_fn="LeakyReluBackward1",
    input=lambda grad, result, negative_slope: WHERE.apply(result > 0, grad, grad * negative_slope),
    spelling=Spelling(build=lambda s, x, slope: s.call("leaky_relu", x, slope)),
)
HARDTANH = elementwise_op(
    "hardtanh", lambda xp, input, min_val, max_val: xp.minimum(xp.maximum(input, min_val), max_val),
    input=lambda grad, input, min_val, max_val: WHERE.apply((input <= min_val) | (input >= max_val), 0.0, grad),
    spelling=Spelling(numpy="np.clip"),
)
SILU = elementwise_op(
    "silu", lambda xp, input: input / (1 + xp.exp(-input)), domain=True,
    input=lambda grad, input: _silu_grad(grad, input),
    spelling=helped("def _silu(x):\n    return x / (1 + np.exp(-x))\n"),
)


def _silu_grad(grad, input):
    s = SIGMOID.apply(input)
    return grad * (s * (1 + input * (1 - s)))


def _mish_grad(grad, input):
    t = TANH.apply(LOG1P.apply(EXP.apply(input)))
    return grad * (t + input * SIGMOID.apply(input) * (1 - t * t))


MISH = elementwise_op(
    "mish", lambda xp, input: input * xp.tanh(xp.log1p(xp.exp(input))), domain=True,
    input=_mish_grad,
    spelling=helped("def _mish(x):\n    return x * np.tanh(np.log1p(np.exp(x)))\n"),
)
GELU = elementwise_op(
    "gelu", _gelu, domain=True,
    input=lambda grad, input, approximate: GELU_BACKWARD.apply(grad, input, approximate),
    spelling=helped(_GELU + _ERF_HELPER, language=_gelu_call),
)
# PyTorch's gelu_backward(grad, input): its node is the second derivative's (GeluBackwardBackward0).
GELU_BACKWARD = elementwise_op(
    "gelu_backward",
    lambda xp, grad_output, input, approximate: grad_output * _gelu_derivative(xp, input, approximate),
    domain=True,
    grad_output=lambda grad, input, approximate: GELU_BACKWARD.apply(grad, input, approximate),
    input=lambda grad, grad_output, input, approximate: grad * grad_output * _gelu_second(input, approximate),
    spelling=Spelling(build=_gelu_derivative_built),
)

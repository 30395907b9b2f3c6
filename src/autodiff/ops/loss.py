"""Loss functions that PyTorch records as one node: mse_loss, binary_cross_entropy (and
with_logits), nll_loss. Their public, argument-checking wrappers are `autodiff.nn.functional`.

Each takes its reduction as a string ('none', 'sum' or 'mean') after the tensors; a formula
gets the gradient of the reduced value, which broadcasts against the elementwise terms, so
`_scale` only divides it by the count for 'mean'. Weights that are not given arrive as the
constant 1.0. `nll_loss`'s gradient is linear in `grad` with constant coefficients (a one-hot
of the targets), so it is recorded like any other formula.
"""

from __future__ import annotations

import math

from .. import backend
from .pointwise import ABS, EXP, LOG, LOG1P, RELU, SIGMOID
from .registry import array_of, defop, like
from .spelling import Spelling, helped
from .comparison import ne
from .gathering import INDEX_SELECT, SCATTER_VALUE
from .reduction import SUM
from .selection import CLAMP, WHERE
from .shape import RESHAPE_ALIAS, UNSQUEEZE, VIEW

REDUCTIONS = ("none", "mean", "sum")


# -- how formulas write them: the language's calls (the reduction a word), NumPy's as helpers --------


def _loss_call(name: str, *keywords: tuple):
    """`mse_loss(x, t)`, `binary_cross_entropy(x, t, weight=w, reduction=sum)`: the tensors, then
    each keyword (name, default) where its value differs from the default."""
    def written(w, input, target, *rest):
        parts = [w(input), w(target)]
        for (keyword, default), value in zip(keywords, rest):
            if keyword == "reduction":
                if value != "mean":
                    parts.append(f"reduction={value}")
            elif not (isinstance(value, (int, float)) and value == default):
                parts.append(f"{keyword}={w(value)}")
        return f"{name}({', '.join(parts)})"

    return written


_REDUCE_HELPER = ("def _reduce(loss, reduction):\n"
                  "    return np.mean(loss) if reduction == 'mean' else np.sum(loss) if reduction == 'sum' else loss\n")


_MSE_LOSS = "def _mse_loss(x, t, reduction):\n    return _reduce((x - t) ** 2, reduction)\n"
_BCE = (
    "def _binary_cross_entropy(x, t, weight, reduction):\n"
    "    log_x = np.maximum(np.log(x), -100)\n"
    "    log_1mx = np.maximum(np.log1p(-x), -100)\n"
    "    return _reduce(-weight * (t * log_x + (1 - t) * log_1mx), reduction)\n")
_BCE_LOGITS = (
    "def _binary_cross_entropy_with_logits(x, t, weight, pos_weight, reduction):\n"
    "    softplus = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)\n"
    "    return _reduce(weight * ((1 - t) * x + ((pos_weight - 1) * t + 1) * softplus), reduction)\n")


def _reduce(xp, loss, reduction: str):
    if reduction == "mean":
        return xp.asarray(xp.mean(loss), dtype=loss.dtype)
    if reduction == "sum":
        return xp.asarray(xp.sum(loss), dtype=loss.dtype)
    return loss


def _scale(grad, reduction: str, shape: tuple):
    return grad / math.prod(shape) if reduction == "mean" else grad


# -- mse_loss -------------------------------------------------------------------------------------

MSE_LOSS = defop(
    "mse_loss",
    lambda xp, input, target, reduction: _reduce(xp, (input - target) ** 2, reduction),
    input=lambda grad, input, target, reduction, input_shape: _scale(grad, reduction, input_shape) * 2 * (input - target),
    target=lambda grad, input, target, reduction, input_shape: _scale(grad, reduction, input_shape) * -2 * (input - target),
    spelling=helped(_MSE_LOSS + _REDUCE_HELPER, language=_loss_call("mse_loss", ("reduction", "mean"))),
)


# -- binary_cross_entropy -------------------------------------------------------------------------


def _bce(xp, input, target, weight, reduction):
    log_x = xp.maximum(xp.log(input), -100)  # PyTorch clamps the logs at -100
    log_1mx = xp.maximum(xp.log1p(-input), -100)
    return _reduce(xp, -weight * (target * log_x + (1 - target) * log_1mx), reduction)


def _bce_input_grad(grad, input, target, weight, reduction, input_shape):
    denominator = CLAMP.apply((1 - input) * input, 1e-12, None)
    return _scale(grad, reduction, input_shape) * weight * (input - target) / denominator


def _bce_target_grad(grad, input, target, weight, reduction, input_shape):
    # -logit(input), not clamped (PyTorch's binary_cross_entropy_target_backward)
    return _scale(grad, reduction, input_shape) * weight * (LOG1P.apply(-input) - LOG.apply(input))


BINARY_CROSS_ENTROPY = defop(
    "binary_cross_entropy", _bce, domain=True, nondiff=("weight",),
    input=_bce_input_grad,
    target=_bce_target_grad,
    spelling=helped(_BCE + _REDUCE_HELPER,
                    language=_loss_call("binary_cross_entropy", ("weight", 1.0), ("reduction", "mean"))),
)


# -- binary_cross_entropy_with_logits ----------------------------------------------------------------
# loss = (1 - t) x + (1 + (p - 1) t) softplus(-x), softplus(-x) = log1p(exp(-|x|)) + max(-x, 0)


def _bce_logits(xp, input, target, weight, pos_weight, reduction):
    softplus = xp.log1p(xp.exp(-xp.abs(input))) + xp.maximum(-input, 0)
    log_weight = (pos_weight - 1) * target + 1
    return _reduce(xp, weight * ((1 - target) * input + log_weight * softplus), reduction)


def _bce_logits_input_grad(grad, input, target, weight, pos_weight, reduction, input_shape):
    log_weight = (pos_weight - 1) * target + 1
    return _scale(grad, reduction, input_shape) * weight * ((1 - target) - log_weight * (1 - SIGMOID.apply(input)))


def _bce_logits_target_grad(grad, input, target, weight, pos_weight, reduction, input_shape):
    softplus = LOG1P.apply(EXP.apply(-ABS.apply(input))) + RELU.apply(-input)
    return _scale(grad, reduction, input_shape) * weight * ((pos_weight - 1) * softplus - input)


BINARY_CROSS_ENTROPY_WITH_LOGITS = defop(
    "binary_cross_entropy_with_logits", _bce_logits, domain=True, nondiff=("weight", "pos_weight"),
    input=_bce_logits_input_grad,
    target=_bce_logits_target_grad,
    spelling=helped(_BCE_LOGITS + _REDUCE_HELPER, language=_loss_call(
        "binary_cross_entropy_with_logits", ("weight", 1.0), ("pos_weight", 1.0), ("reduction", "mean"))),
)


# -- nll_loss -------------------------------------------------------------------------------------
# input (N, C, d...) or (C,), target (N, d...) or (); weight (C,) or 1.0.


def _picked(xp, input, target, weight, ignore_index):
    """-weight[t] at each target's class, 0 where the target is ignored; and the one-hot of t."""
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    weight = xp.broadcast_to(xp.asarray(weight, dtype=input.dtype), (classes,))
    kept = target != ignore_index
    safe = xp.where(kept, target, 0)
    w = xp.where(kept, weight[safe], 0).astype(input.dtype)
    axis = 0 if input.ndim == 1 else 1
    onehot = xp.expand_dims(safe, axis) == xp.arange(classes).reshape((-1,) + (1,) * (input.ndim - axis - 1))
    return w, onehot


def _nll(xp, input, target, weight, reduction, ignore_index):
    w, onehot = _picked(xp, input, target, weight, ignore_index)
    axis = 0 if input.ndim == 1 else 1
    picked = xp.sum(xp.where(onehot, input, 0), axis=axis)
    loss = -w * picked
    if reduction == "mean":
        return xp.asarray(xp.sum(loss) / xp.sum(w), dtype=input.dtype)
    return _reduce(xp, loss, reduction)


def _nll_grad(grad, input_shape, target, weight, reduction, ignore_index):
    """-weight[t] at each target's class, in ops (on arrays, or recorded on tensors) so that a
    derivation keeps the targets as they are: the one-hot is scattered at them, never read."""
    axis = 0 if len(input_shape) == 1 else 1
    kept = ne(target, ignore_index)
    safe = WHERE.apply(kept, target, 0)
    if not getattr(weight, "ndim", 0):  # one weight for every class (1.0 where none is given)
        w = WHERE.apply(kept, weight, 0.0)
    else:
        picked = INDEX_SELECT.apply(weight, 0, RESHAPE_ALIAS.apply(safe, (-1,)))
        w = WHERE.apply(kept, VIEW.apply(picked, tuple(safe.shape)), 0.0)
    zeros = like(grad, backend.array_module(array_of(grad)).zeros(input_shape, dtype=array_of(grad).dtype))
    onehot = SCATTER_VALUE.apply(zeros, axis, UNSQUEEZE.apply(safe, axis), 1.0)
    coefficients = -UNSQUEEZE.apply(w, axis) * onehot
    if reduction == "mean":  # all ignored: the loss is nan (0 / 0), its gradient 0 (as PyTorch)
        total = SUM.apply(w)
        coefficients = coefficients / WHERE.apply(ne(total, 0), total, 1.0)
    elif reduction == "none" and len(input_shape) > 1:
        grad = UNSQUEEZE.apply(grad, 1)
    return grad * coefficients


_NLL = helped(
    "def _nll_loss(x, t, weight, reduction, ignore_index):\n"
    "    axis = 0 if x.ndim == 1 else 1\n"
    "    t = np.asarray(t).astype(np.int64)\n"
    "    kept = t != ignore_index\n"
    "    safe = np.where(kept, t, 0)\n"
    "    w = np.where(kept, np.broadcast_to(np.asarray(weight, dtype=float), (x.shape[axis],))[safe], 0.0)\n"
    "    loss = -w * np.squeeze(np.take_along_axis(x, np.expand_dims(safe, axis), axis=axis), axis)\n"
    "    return np.sum(loss) / np.sum(w) if reduction == 'mean' else _reduce(loss, reduction)\n" + _REDUCE_HELPER,
    language=_loss_call("nll_loss", ("weight", 1.0), ("reduction", "mean"), ("ignore_index", -100)))

NLL_LOSS = defop(
    "nll_loss", _nll, domain=True, nondiff=("target", "weight"),  # all ignored: 0 / 0
    input=_nll_grad,
    spelling=_NLL,
)
NLL_LOSS2D = defop(  # (N, C, d1, ...) inputs: PyTorch's node for them
    "nll_loss2d", _nll, domain=True, nondiff=("target", "weight"),
    input=_nll_grad,
    spelling=_NLL,
)


# -- a division by a count (`x / n` inside PyTorch's C++: div.Scalar) ----------------------------

DIV_SCALAR = defop(
    "div_scalar", lambda xp, input, other: input / other, grad_fn="DivBackward1",
    input=lambda grad, other: grad / other,
    spelling=Spelling(build=lambda s, a, b: s.number(a) / s.number(b), called="div"),
)

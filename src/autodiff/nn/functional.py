"""torch.nn.functional's activations and losses, with PyTorch's values, gradients, grad_fn
names and error texts.

Where PyTorch records a loss as one node (`MseLossBackward0`, `NllLossBackward0`...), it is a
registry op (ops/loss.py); the others are written with the engine's ops, in PyTorch's order,
so that the result's node is PyTorch's (`l1_loss` ends in `MeanBackward0`, `cross_entropy`
in `NllLossBackward0` after a `LogSoftmaxBackward0`).
"""

from __future__ import annotations

import warnings

from .. import backend
from ..creation import as_tensor
from ..ops.activation import (ELU, ELU_INPLACE, GELU, HARDTANH, LEAKY_RELU, LEAKY_RELU_INPLACE, LOGSIGMOID, MISH, SILU,
                              SOFTPLUS)
from ..ops.products import ADDMM, matmul
from ..ops.loss import (
    BINARY_CROSS_ENTROPY,
    BINARY_CROSS_ENTROPY_WITH_LOGITS,
    DIV_SCALAR,
    MSE_LOSS,
    NLL_LOSS,
    NLL_LOSS2D,
    REDUCTIONS,
)
from ..ops.surface import PUBLIC
from ..ops.reduction import log_softmax as _log_softmax
from ..ops.reduction import softmax as _softmax
from ..ops.selection import where
from ..ops.shape import broadcast_shapes, expand, reshape, view
from ..tensor import Size, Tensor

__all__ = [
    "relu", "sigmoid", "tanh", "softmax", "log_softmax", "linear", "mse_loss", "l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy",
    "softplus", "elu", "gelu", "silu", "mish", "leaky_relu", "hardtanh", "logsigmoid",
]
# The activations that the expression language calls by name too (language/builtins.py).
ACTIVATIONS = ("softplus", "elu", "gelu", "silu", "mish", "leaky_relu", "hardtanh", "logsigmoid")


def _check_reduction(reduction: str, size_average=None, reduce=None) -> str:
    """The reduction; PyTorch's deprecated `size_average` and `reduce` override it, with its warning."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
            UserWarning,
            stacklevel=3,
        )
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _size(shape) -> str:
    return repr(Size(shape))


def _implicit_dim(name: str, ndim: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


# -- activations ---------------------------------------------------------------------------------

relu, sigmoid, tanh = PUBLIC["relu"], PUBLIC["sigmoid"], PUBLIC["tanh"]  # autodiff.relu... themselves


def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(input) / sum(exp(input)) along `dim`."""
    if dim is None:
        dim = _implicit_dim("softmax", input.ndim)
    return _softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log(softmax(input)) along `dim`, computed stably."""
    if dim is None:
        dim = _implicit_dim("log_softmax", input.ndim)
    return _log_softmax(input, dim, dtype)


def _maybe_inplace(op, input: Tensor, inplace: bool, *params) -> Tensor:
    return input._apply_inplace(op.apply, *params) if inplace else op.apply(input, *params)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * input)) / beta; the identity where beta * input > threshold."""
    return SOFTPLUS.apply(input, beta, threshold)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where input > 0, else alpha * (exp(input) - 1)."""
    return input._apply_inplace(ELU_INPLACE.apply, alpha) if inplace else ELU.apply(input, alpha)


def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """input * Phi(input), Phi the standard normal CDF; approximate='tanh' uses PyTorch's tanh formula."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh.")
    return GELU.apply(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """input * sigmoid(input) (swish)."""
    return _maybe_inplace(SILU, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """input * tanh(softplus(input))."""
    return _maybe_inplace(MISH, input, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """input where input > 0, else negative_slope * input."""
    return input._apply_inplace(LEAKY_RELU_INPLACE.apply, negative_slope) if inplace else \
        LEAKY_RELU.apply(input, negative_slope)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """input clamped to [min_val, max_val] (gradient 0 at the bounds, as PyTorch)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(HARDTANH, input, inplace, min_val, max_val)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(input)), computed stably."""
    return LOGSIGMOID.apply(input)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias: AddmmBackward0 for a 2-D input with a bias, as PyTorch."""
    if bias is None:
        return matmul(input, weight.t())
    if input.ndim == 2:
        _check_mm(input, weight)
        return ADDMM.apply(bias, input, weight.t())
    rows = reshape(input, (-1, input.shape[-1]))
    _check_mm(rows, weight)
    return view(ADDMM.apply(bias, rows, weight.t()), tuple(input.shape[:-1]) + (weight.shape[0],))


def _check_mm(input: Tensor, weight: Tensor) -> None:
    (n, k), (m, k2) = input.shape, weight.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")


# -- regression losses ----------------------------------------------------------------------------


def _broadcast_pair(input: Tensor, target, name_warning: bool = True):
    if not isinstance(target, Tensor) or tuple(target.shape) == tuple(input.shape):
        return input, target
    warnings.warn(
        f"Using a target size ({_size(target.shape)}) that is different to the input size ({_size(input.shape)}). "
        "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
        UserWarning,
        stacklevel=3,
    )
    shape = broadcast_shapes(tuple(input.shape), tuple(target.shape))
    return expand(input, shape), expand(target, shape)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """The mean (or sum, or each) of (input - target) ** 2."""
    reduction = _check_reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    return MSE_LOSS.apply(input, target, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """The mean (or sum, or each) of |input - target|."""
    reduction = _check_reduction(reduction, size_average, reduce)
    input, target = _broadcast_pair(input, target)
    loss = (input - target).abs()
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


# -- binary classification ------------------------------------------------------------------------


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """-weight * (target * log(input) + (1 - target) * log(1 - input)); the logs are clamped at -100."""
    reduction = _check_reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({_size(target.shape)}) that is different to the input size "
            f"({_size(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    data = input._data
    xp = backend.array_module(data)
    if data.size and not bool(xp.all((data >= 0) & (data <= 1))):
        raise RuntimeError("all elements of input should be between 0 and 1")
    return BINARY_CROSS_ENTROPY.apply(input, target, 1.0 if weight is None else weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target), computed stably; `pos_weight` weighs the
    positive examples of each class (the last dim)."""
    reduction = _check_reduction(reduction, size_average, reduce)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size ({_size(input.shape)})")
    return BINARY_CROSS_ENTROPY_WITH_LOGITS.apply(
        input, target, 1.0 if weight is None else weight, 1.0 if pos_weight is None else pos_weight, reduction
    )


# -- multi-class classification --------------------------------------------------------------------


def _check_targets(input: Tensor, target: Tensor, ignore_index: int) -> None:
    if target.dtype.name not in ("int64", "uint8"):
        name = {"float64": "Double", "float32": "Float", "int32": "Int", "bool": "Bool", "float16": "Half"}
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {name.get(target.dtype.name, target.dtype.name)}"
        )
    if input.ndim >= 2 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
        got = target.shape[0] if target.ndim else 1
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({got}).")
    if input.ndim >= 3 and tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(
            f"size mismatch (got input: {list(input.shape)}, target: {list(target.shape)})"
        )
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    data = target._data
    xp = backend.array_module(data)
    bad = (data != ignore_index) & ((data < 0) | (data >= classes))
    if bool(xp.any(bad)):
        raise IndexError(f"Target {int(data[bad].ravel()[0])} is out of bounds.")


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] (times weight[target[n]]), averaged over the weights for 'mean'."""
    reduction = _check_reduction(reduction, size_average, reduce)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    _check_targets(input, target, ignore_index)
    weight = 1.0 if weight is None else weight
    if input.ndim <= 2 or input.ndim == 4:
        op = NLL_LOSS2D if input.ndim == 4 else NLL_LOSS
        return op.apply(input, target, weight, reduction, ignore_index)
    # Other (N, C, d...) inputs go through the 4-D op, as in PyTorch.
    n, c = input.shape[:2]
    loss = NLL_LOSS2D.apply(reshape(input, (n, c, 1, -1)), reshape(target, (n, 1, -1)), weight, reduction, ignore_index)
    return view(loss, (n,) + tuple(input.shape[2:])) if reduction == "none" else loss


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, 1), target) for class indices; for class probabilities
    -(log_softmax(input, 1) * target).sum(1), reduced. `label_smoothing` mixes in the uniform
    distribution, as PyTorch."""
    reduction = _check_reduction(reduction, size_average, reduce)
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    logp = _log_softmax(input, class_dim)
    if target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
        return _cross_entropy_probabilities(logp, target, weight, reduction, label_smoothing, class_dim, classes)
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return loss
    ignored = target == ignore_index
    if weight is not None:
        shape = [1] * input.ndim
        shape[class_dim] = classes
        smooth = -(logp * view(weight, tuple(shape))).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = where(ignored, 0.0, smooth)
    if reduction == "mean":
        if weight is not None:
            kept = target._data[~ignored._data]
            total = weight[_long(kept)].sum()
        else:
            total = (~ignored).sum()
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / classes)


def _long(array) -> Tensor:
    return as_tensor(array)


def _cross_entropy_probabilities(logp, target, weight, reduction, label_smoothing, class_dim, classes):
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * target
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = classes
        terms = terms * view(weight, tuple(shape))
    if reduction == "none":
        return -terms.sum(class_dim)
    if reduction == "sum":
        return -terms.sum()
    return DIV_SCALAR.apply(-terms.sum(), logp.numel() // classes)

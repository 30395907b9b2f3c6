"""Reductions: sum, mean, prod, max, min, logsumexp, softmax and log_softmax; and cumsum.

A reduction's gradient goes back to the input's shape by restoring the reduced dims and
broadcasting. Kinks: a full max or min shares the gradient evenly among ties (PyTorch's
choice); max or min along a dim gives it to the index it returned.
"""

from __future__ import annotations

import math

from .. import backend, return_types
from ..backend import contiguous
from ..tensor import Tensor
from .comparison import isnan, nondiff_argmax, nondiff_argmin
from .dims import kept_shape, normalize_dim, normalize_dims
from .pointwise import EXP
from .batching import ELEMENTWISE, dims
from .registry import array_of, defop, like, on_arrays
from .spelling import Spelling, helped
from .surface import along_dim, public
from .selection import MAXIMUM, MINIMUM, WHERE
from .shape import CAT, EXPAND, FLIP, UNSQUEEZE, VIEW

def _reduced(name: str, numpy: str, build=None) -> Spelling:
    """`sum(x, dim=(1,), keepdim=True)` in the language (where max along a dim is its values),
    `np.sum(x, axis=(1,), keepdims=True)` in NumPy."""
    def language(w, x, dim, keepdim):
        return f"{name}({w(x)}, dim={w(dim)}{', keepdim=True' if keepdim else ''})"

    return Spelling(language=language, numpy=lambda w, x, dim, keepdim: f"np.{numpy}({w(x)}, axis={w(dim)}, "
                                                                        f"keepdims={keepdim})", build=build)


_LOGSUMEXP_HELPER = ("def _logsumexp(x, dim, keepdim=False):\n    m = np.max(x, axis=dim, keepdims=True)\n"
                     "    out = m + np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True))\n"
                     "    return out if keepdim else np.squeeze(out, axis=dim)\n")


def _unreduce(grad, input_shape: tuple, dims: tuple, keepdim: bool):
    """A reduction's gradient, back in the input's shape: each reduced dim put back by unsqueeze,
    in increasing order, then expanded (PyTorch's sum_backward, so its nodes are PyTorch's)."""
    if not keepdim and input_shape:
        for dim in sorted(d % len(input_shape) for d in dims):
            grad = UNSQUEEZE.apply(grad, dim)
    return EXPAND.apply(grad, input_shape)


def _with_kept_dims(value, input_shape: tuple, dims: tuple, keepdim: bool):
    """A reduced value reshaped so that it broadcasts against the input."""
    target = kept_shape(input_shape, dims)
    return value if keepdim or tuple(value.shape) == target else VIEW.apply(value, target)


# -- sum and mean -----------------------------------------------------------------------------------

# Sums are marked `domain`: inf + -inf is nan, which NumPy would warn about and PyTorch does not.
SUM = defop(
    "sum", lambda xp, input: input.sum(), domain=True,
    input=lambda grad, input_shape: EXPAND.apply(grad, input_shape),
    spelling=Spelling(numpy="np.sum", latex=r"\sum {0}", build=lambda s, x: s.summed(x)),
)


def _sum_input(grad, input_shape):  # SUM's formula on NumPy data, as a plain backward() calls it
    if grad.__class__ in backend.NUMPY_CLASSES:
        return backend.broadcast_to(backend.np, grad, input_shape)
    return EXPAND.apply(grad, input_shape)


on_arrays(SUM, input=_sum_input)
SUM_DIM = defop(
    "sum_dim", lambda xp, input, dim, keepdim: contiguous(xp, xp.sum(input, axis=dim, keepdims=keepdim)),
    grad_fn="SumBackward1", domain=True,
    input=lambda grad, input_shape, dim, keepdim: _unreduce(grad, input_shape, dim, keepdim),
    spelling=_reduced("sum", "sum", build=lambda s, x, dim, keepdim: s.summed(x)),
)
MEAN = defop(
    "mean", lambda xp, input: xp.mean(input), domain=True,
    input=lambda grad, input_shape: EXPAND.apply(grad, input_shape) / math.prod(input_shape),
    spelling=Spelling(numpy="np.mean", build=lambda s, x: s.averaged(x)),
)
MEAN_DIM = defop(
    "mean_dim", lambda xp, input, dim, keepdim: contiguous(xp, xp.mean(input, axis=dim, keepdims=keepdim)),
    grad_fn="MeanBackward1", domain=True,
    input=lambda grad, input_shape, dim, keepdim: _unreduce(grad, input_shape, dim, keepdim)
    / math.prod(input_shape[d] for d in dim),
    spelling=_reduced("mean", "mean", build=lambda s, x, dim, keepdim: s.averaged(x)),
)


def _reduction_dims(input: Tensor, dim) -> tuple:
    """PyTorch's dim argument: None or [] mean every dimension."""
    ndim = input._data.ndim
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(ndim))
    dims = normalize_dims(dim, ndim)
    return () if ndim == 0 else dims


@along_dim(every=True)
def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum of all elements, or along `dim` (an int or a tuple of ints)."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None and not keepdim:
        return SUM.apply(input)
    return SUM_DIM.apply(input, _reduction_dims(input, dim), keepdim)


_SCALAR_TYPE_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool", "uint8": "Byte"}


@along_dim(every=True)
def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Mean of all elements, or along `dim`."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        name = _SCALAR_TYPE_NAMES.get(input.dtype.name, input.dtype.name)
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {name}"
        )
    if dim is None and not keepdim:
        return MEAN.apply(input)
    return MEAN_DIM.apply(input, _reduction_dims(input, dim), keepdim)


# -- prod -------------------------------------------------------------------------------------------


def _exclusive_scan(x, dim: int):
    """out[i] = x[0] * ... * x[i-1] along `dim`, as a log-depth scan of mul, cat and slices.

    Built from ordinary ops, so it is exact where x has zeros and differentiable to any order.
    """
    from .indexing import SLICE

    data = array_of(x)
    xp = backend.array_module(data)
    n = data.shape[dim]

    def ones_block(size: int):
        shape = list(data.shape)
        shape[dim] = size
        return like(x, xp.ones(shape, dtype=data.dtype))

    inclusive, step = x, 1
    while step < n:
        inclusive = inclusive * CAT.apply([ones_block(step), SLICE.apply(inclusive, dim, 0, n - step, 1)], dim)
        step *= 2
    return CAT.apply([ones_block(1), SLICE.apply(inclusive, dim, 0, n - 1, 1)], dim)


def _product_of_others(x, dim: int):
    """out[i] = the product of every x[j] with j != i along `dim`."""
    return _exclusive_scan(x, dim) * FLIP.apply(_exclusive_scan(FLIP.apply(x, (dim,)), dim), (dim,))


def _prod_grad(grad, input, dim, keepdim):
    shape = tuple(input.shape)
    if not shape:
        return grad
    if dim is None:
        others = VIEW.apply(_product_of_others(VIEW.apply(input, (math.prod(shape),)), 0), shape)
        return EXPAND.apply(grad, shape) * others
    return _unreduce(grad, shape, (dim,), keepdim) * _product_of_others(input, dim)


PROD = defop(
    "prod", lambda xp, input: xp.prod(input), domain=True,
    input=lambda grad, input: _prod_grad(grad, input, None, False),
    spelling=Spelling(numpy="np.prod", latex=r"\prod {0}"),
)
PROD_DIM = defop(
    "prod_dim", lambda xp, input, dim, keepdim: contiguous(xp, xp.prod(input, axis=dim, keepdims=keepdim)),
    grad_fn="ProdBackward1", domain=True,
    input=lambda grad, input, dim, keepdim: _prod_grad(grad, input, dim, keepdim),
    spelling=_reduced("prod", "prod"),
)


@along_dim(none_by_example=True)
def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one `dim`."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return PROD.apply(input)
    if not isinstance(dim, int):
        raise TypeError("prod(): argument 'dim' must be int")
    ndim = input._data.ndim
    dim = normalize_dim(dim, ndim)
    if ndim == 0:
        return PROD.apply(input)
    return PROD_DIM.apply(input, dim, keepdim)


# -- cumsum ----------------------------------------------------------------------------------------


def _cumsum(xp, input, dim):
    dim = normalize_dim(dim, input.ndim)  # PyTorch's error for a dim out of range
    return contiguous(xp, xp.cumsum(input, axis=dim)) if input.ndim else input


def _reversed_cumsum(grad, dim):
    """out[i] = grad[i] + grad[i+1] + ...: every later partial sum used input i."""
    if not grad.ndim:
        return grad
    dims = (normalize_dim(dim, grad.ndim),)
    return FLIP.apply(CUMSUM.apply(FLIP.apply(grad, dims), dim), dims)


CUMSUM = defop(
    "cumsum", _cumsum, batch=dims("dim"), doc="Running sums along `dim`: out[i] = input[0] + ... + input[i].", method=True,
    inplace=True,
    input=_reversed_cumsum,
    spelling=Spelling(numpy="np.cumsum({0}, axis={1})"),
)


# -- max and min ------------------------------------------------------------------------------------


def _evenly_distribute(grad, input, result):
    """A full max/min: ties share the gradient equally (NaN counts as the extreme)."""
    mask = (input == result) | (isnan(input) & isnan(result))
    return WHERE.apply(mask, grad / mask.sum(), 0.0)


def _to_selected_index(grad, input, dim, keepdim, select_index):
    """max/min along a dim: the gradient goes to the index the forward returned."""
    data = array_of(input)
    shape = data.shape
    index = select_index(input, dim, True)
    positions_shape = [1] * len(shape)
    positions_shape[dim] = shape[dim]
    positions = like(input, backend.array_module(data).arange(shape[dim]).reshape(positions_shape))
    return WHERE.apply(positions == index, _unreduce(grad, shape, (dim,), keepdim), 0.0)


MAX = defop(
    "max", lambda xp, input: xp.max(input), grad_fn="MaxBackward1",
    input=_evenly_distribute,
    spelling=Spelling(numpy="np.max", latex=r"\max"),
    why_zero="an element that is not the largest of max",
)
MIN = defop(
    "min", lambda xp, input: xp.min(input), grad_fn="MinBackward1",
    input=_evenly_distribute,
    spelling=Spelling(numpy="np.min", latex=r"\min"),
    why_zero="an element that is not the smallest of min",
)
MAX_DIM = defop(
    "max_dim", lambda xp, input, dim, keepdim: contiguous(xp, xp.max(input, axis=dim, keepdims=keepdim)),
    grad_fn="MaxBackward0",
    input=lambda grad, input, dim, keepdim: _to_selected_index(grad, input, dim, keepdim, nondiff_argmax),
    spelling=_reduced("max", "max"),
    why_zero="an element that is not the largest of max",
)
MIN_DIM = defop(
    "min_dim", lambda xp, input, dim, keepdim: contiguous(xp, xp.min(input, axis=dim, keepdims=keepdim)),
    grad_fn="MinBackward0",
    input=lambda grad, input, dim, keepdim: _to_selected_index(grad, input, dim, keepdim, nondiff_argmin),
    spelling=_reduced("min", "min"),
    why_zero="an element that is not the smallest of min",
)


def _extremes_rule(function, args, kwargs):
    """max(a, b) is elementwise; max(x, dim) moves dim past the batch; max(x) runs per example."""
    other = args[1] if len(args) > 1 else kwargs.get("dim")
    if isinstance(other, Tensor):
        return ELEMENTWISE(function, args, kwargs)
    return dims("dim", none_by_example=True)(function, args, kwargs)


def _extreme(name, full_op, dim_op, pick_index, pairwise, input, dim, keepdim):
    if isinstance(dim, Tensor):  # max(a, b) is maximum(a, b), as in PyTorch
        return pairwise(input, dim)
    if dim is None:
        if input._data.size == 0:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                "the reduction dim with the 'dim' argument."
            )
        return full_op.apply(input)
    ndim = input._data.ndim
    dim = normalize_dim(dim, ndim)
    if ndim == 0:
        values = full_op.apply(input)
        indices = pick_index(input, None, False)
    else:
        if input._data.shape[dim] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        values = dim_op.apply(input, dim, keepdim)
        indices = pick_index(input, dim, keepdim)
    return getattr(return_types, name)(values, indices)


@public(method=True, batch=_extremes_rule)
def max(input: Tensor, dim=None, keepdim: bool = False):
    """The largest element; with `dim`, `(values, indices)` along it; with a tensor, maximum."""
    return _extreme("max", MAX, MAX_DIM, nondiff_argmax, MAXIMUM.apply, input, dim, keepdim)


@public(method=True, batch=_extremes_rule)
def min(input: Tensor, dim=None, keepdim: bool = False):
    """The smallest element; with `dim`, `(values, indices)` along it; with a tensor, minimum."""
    return _extreme("min", MIN, MIN_DIM, nondiff_argmin, MINIMUM.apply, input, dim, keepdim)


@along_dim(none_by_example=True)
def argmax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened tensor when `dim` is None)."""
    if dim is not None:
        dim = normalize_dim(dim, input._data.ndim)
    return nondiff_argmax(input, dim, keepdim)


@along_dim(none_by_example=True)
def argmin(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened tensor when `dim` is None)."""
    if dim is not None:
        dim = normalize_dim(dim, input._data.ndim)
    return nondiff_argmin(input, dim, keepdim)


# -- logsumexp, softmax, log_softmax ----------------------------------------------------------------


def _logsumexp(xp, input, dim, keepdim):
    if input.size == 0:
        return xp.log(xp.sum(xp.exp(input), axis=dim, keepdims=keepdim))
    shift = xp.max(input, axis=dim, keepdims=True)
    shift = xp.where(xp.isfinite(shift), shift, 0)
    out = xp.log(xp.sum(xp.exp(input - shift), axis=dim, keepdims=True)) + shift
    return contiguous(xp, out if keepdim else xp.squeeze(out, axis=dim))


LOGSUMEXP = defop(
    "logsumexp", _logsumexp, domain=True,
    input=lambda grad, input, result, dim, keepdim: _with_kept_dims(grad, tuple(input.shape), dim, keepdim)
    * EXP.apply(input - _with_kept_dims(result, tuple(input.shape), dim, keepdim)),
    spelling=helped(_LOGSUMEXP_HELPER, language=lambda w, x, dim, keepdim: (
        f"logsumexp({w(x)}, {w(dim)}{', keepdim=True' if keepdim else ''})")),
)


def _softmax(xp, input, dim):
    e = xp.exp(input - xp.max(input, axis=dim, keepdims=True))
    return contiguous(xp, e / xp.sum(e, axis=dim, keepdims=True))


SOFTMAX = defop(
    "softmax", _softmax, domain=True,
    input=lambda grad, result, dim: result * (grad - SUM_DIM.apply(grad * result, dim, True)),
    spelling=helped("def _softmax(x, dim):\n    e = np.exp(x - np.max(x, axis=dim, keepdims=True))\n"
                    "    return e / np.sum(e, axis=dim, keepdims=True)\n"),
)
LOG_SOFTMAX = defop(
    "log_softmax", lambda xp, input, dim: contiguous(xp, input - _logsumexp(xp, input, dim, True)), domain=True,
    input=lambda grad, result, dim: grad - EXP.apply(result) * SUM_DIM.apply(grad, dim, True),
    spelling=helped("def _log_softmax(x, dim):\n    return x - _logsumexp(x, dim, True)\n" + _LOGSUMEXP_HELPER),
)


@along_dim(every=True)
def logsumexp(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(input))) over `dim` (all dims when None), computed without overflow."""
    return LOGSUMEXP.apply(input, _reduction_dims(input, dim), keepdim)


def _one_dim(input: Tensor, dim):
    ndim = input._data.ndim
    dim = normalize_dim(dim, ndim)
    return None if ndim == 0 else dim


@along_dim()
def softmax(input: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """exp(input) normalised to sum to 1 along `dim` (the last dim by default)."""
    if dtype is not None:
        input = input.to(dtype)
    return SOFTMAX.apply(input, _one_dim(input, dim))


@along_dim()
def log_softmax(input: Tensor, dim: int = -1, dtype=None) -> Tensor:
    """log(softmax(input)) along `dim`, computed stably."""
    if dtype is not None:
        input = input.to(dtype)
    return LOG_SOFTMAX.apply(input, _one_dim(input, dim))


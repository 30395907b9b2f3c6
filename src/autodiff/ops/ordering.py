"""Ordering (issue 24): sort, argsort, msort, topk, cummax, cummin, median and kthvalue.

Each function finds its indices first, with an op that has no gradient (`argsort`,
`topk_indices`...), and its values are the input gathered at them, by an op named as PyTorch
names the node (`SortBackward0`, and `SortBackward1` when `stable=` is given, `TopkBackward0`,
`CummaxBackward0`, `CumminBackward0`, `MedianBackward1`, `KthvalueBackward0`). Its gradient
puts each value's gradient back at its index (PyTorch's value_selecting_reduction_backward; a
place picked twice, as cummax picks it, adds up). The indices are kept as a tensor, so that
derive writes them as the call that found them, never as constants of one point.

Ties and nan, as PyTorch's CPU kernels (checked against them, tests/engine/test_torch_agreement.py):
nan sorts as the largest value; sorts are stable (PyTorch's unstable sort is too, along a dim of
at most 16); cummax and cummin move to the latest of equal values and stay at nan; median along
a dim picks the lower middle value and, among equal ones, the one a stable sort puts there (the
first nan where there is one); kthvalue picks what PyTorch's own quickselect picks. The full
`median(x)` shares its gradient among the elements equal to it (`MedianBackward0`), as `max(x)`.
"""

from __future__ import annotations

import math

import numpy as np

from .. import backend, return_types
from ..tensor import Tensor
from .batching import dims
from .dims import normalize_dim
from .gathering import SCATTER_ADD, _along_rule, _gather, _zeros
from .reduction import _evenly_distribute
from .registry import defop, nondiff
from .rearrange import _through
from .shape import SQUEEZE_DIM, UNSQUEEZE
from .surface import public

_INT64 = np.int64


# -- finding the indices -----------------------------------------------------------------------------


def _is_nan(xp, a):
    return xp.isnan(a) if a.dtype.kind in "fc" else xp.zeros(a.shape, dtype=bool)


def _order(xp, input, dim: int, descending: bool):
    """The indices that sort `input` along `dim`, stably, nan the largest value (as NumPy puts it
    last). Descending: the reversed input sorted and the order reversed back, so ties keep their
    order and nan comes first."""
    if input.ndim == 0:
        return xp.zeros((), dtype=_INT64)
    if not descending:
        return xp.argsort(input, axis=dim, kind="stable")
    last = input.shape[dim] - 1
    return xp.flip(last - xp.argsort(xp.flip(input, axis=dim), axis=dim, kind="stable"), axis=dim)


def _first(xp, order, dim: int, k: int):
    """The first k positions of `order` along `dim`."""
    key = [slice(None)] * order.ndim
    key[dim] = slice(0, k)
    return backend.contiguous(xp, order[tuple(key)])


def _running(xp, name: str, a):
    """`name`'s running values along the last axis (np.maximum.accumulate); CuPy has no
    ufunc.accumulate, so elsewhere a log-depth scan."""
    ufunc = getattr(xp, name)
    if xp is np:
        return ufunc.accumulate(a, axis=-1)
    out = a.copy()
    step = 1
    while step < out.shape[-1]:
        out[..., step:] = ufunc(out[..., step:], out[..., :-step])
        step *= 2
    return out


def _running_indices(xp, input, dim: int, largest: bool):
    """cummax's (cummin's) indices: PyTorch moves to element i where it is nan or at least as large
    (small) as the running extreme, and stays at a nan; so i is taken where it equals the running
    value (nan propagates through maximum) or is nan, and the index is the latest taken."""
    if input.ndim == 0:
        return xp.zeros((), dtype=_INT64)
    a = xp.moveaxis(input, dim, -1)
    extreme = _running(xp, "maximum" if largest else "minimum", a)
    taken = (a == extreme) | _is_nan(xp, a)
    positions = xp.where(taken, xp.arange(a.shape[-1]), 0)
    return backend.contiguous(xp, xp.moveaxis(_running(xp, "maximum", positions), -1, dim))


def _median_indices(xp, input, dim: int, keepdim: bool):
    """PyTorch's median along a dim: the first nan where there is one, else the element a stable
    sort puts at (n - 1) // 2 (its nth_element orders equal values by index)."""
    if input.ndim == 0:
        return xp.zeros((), dtype=_INT64)
    middle = (input.shape[dim] - 1) // 2
    key = [slice(None)] * input.ndim
    key[dim] = slice(middle, middle + 1)
    index = _order(xp, input, dim, False)[tuple(key)]
    nan = _is_nan(xp, input)
    index = xp.where(xp.any(nan, axis=dim, keepdims=True), xp.argmax(nan, axis=dim, keepdims=True), index)
    return backend.contiguous(xp, index if keepdim else xp.squeeze(index, axis=dim))


def _kthvalue_indices(xp, input, k: int, dim: int, keepdim: bool):
    """The k-th smallest along `dim`: a stable sort's choice, except along rows where it ties,
    which PyTorch's quickselect settles its own way (_quickselect, run on those rows alone)."""
    if input.ndim == 0:
        return xp.zeros((), dtype=_INT64)
    a = xp.moveaxis(input, dim, -1)
    index = _order(xp, a, -1, False)[..., k - 1 : k]
    kth = xp.take_along_axis(a, index, axis=-1)
    tied = ((a == kth) | (_is_nan(xp, a) & _is_nan(xp, kth))).sum(axis=-1) > 1
    if bool(tied.any()):
        host = a if xp is np else xp.asnumpy(a)
        rows = np.nonzero(tied if xp is np else xp.asnumpy(tied))
        fixed = index if xp is np else xp.asnumpy(index)
        fixed = fixed.copy()
        for row in zip(*rows):
            fixed[row + (0,)] = _quickselect(host[row].tolist(), k - 1)
        index = fixed if xp is np else xp.asarray(fixed)
    index = xp.moveaxis(index, -1, dim)
    return backend.contiguous(xp, index if keepdim else xp.squeeze(index, axis=dim))


def _above(x, y) -> bool:
    """PyTorch's order for kthvalue: nan above everything, then >."""
    return (x != x and y == y) or x > y


def _quickselect(values: list, k: int) -> int:
    """The index PyTorch's quick_select_template (ATen's SortingUtils.h) leaves at position k: a
    median-of-three quickselect whose swaps decide which of equal values is chosen."""
    arr, idx = values, list(range(len(values)))

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]

    low, high = 0, len(arr) - 1
    while high > low:
        if high == low + 1:
            if _above(arr[low], arr[high]):
                swap(low, high)
            break
        swap(low + (high - low) // 2, low + 1)
        if _above(arr[low + 1], arr[high]):
            swap(low + 1, high)
        if _above(arr[low], arr[high]):
            swap(low, high)
        if _above(arr[low + 1], arr[low]):
            swap(low + 1, low)
        i, j, pivot = low + 1, high, arr[low]
        while True:
            i += 1
            while _above(pivot, arr[i]):
                i += 1
            j -= 1
            while _above(arr[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
    return idx[k]


# Without a gradient; derive writes each as the call whose indices it is (symbolic/printing.py).
ARGSORT = nondiff("argsort", lambda xp, input, dim, descending, stable: _order(xp, input, dim, descending))
TOPK_INDICES = nondiff("topk_indices", lambda xp, input, k, dim, largest, sorted:
                       _first(xp, _order(xp, input, dim, largest), dim, k) if input.ndim else _order(xp, input, 0, 0))
CUMMAX_INDICES = nondiff("cummax_indices", lambda xp, input, dim: _running_indices(xp, input, dim, True))
CUMMIN_INDICES = nondiff("cummin_indices", lambda xp, input, dim: _running_indices(xp, input, dim, False))
MEDIAN_INDICES = nondiff("median_indices", _median_indices)
KTHVALUE_INDICES = nondiff("kthvalue_indices", _kthvalue_indices)


# -- the values: the input gathered at the indices -----------------------------------------------------


def _put_back(grad, input_shape, dim, index):
    return SCATTER_ADD.apply(_zeros(grad, input_shape), dim, index, grad)


def _picked(xp, input, dim, index, keepdim):
    """The input at `index` (kept dims) along `dim`, that dim dropped unless `keepdim`."""
    out = _gather(xp, input, dim, index)
    return out if keepdim or input.ndim == 0 else xp.squeeze(out, axis=dim)


def _put_back_reduced(grad, input_shape, dim, index, keepdim):
    if not keepdim and input_shape:
        grad = UNSQUEEZE.apply(grad, dim)
    return _put_back(grad, input_shape, dim, index)


def _picking(name: str, grad_fn: str):
    return defop(name, _gather, grad_fn=grad_fn, frees=True, carries=("index",), batch=_along_rule, input=_put_back)


SORT = _picking("sort_values", "SortBackward0")
SORT_STABLE = _picking("sort_values_stable", "SortBackward1")
TOPK = _picking("topk_values", "TopkBackward0")
CUMMAX = _picking("cummax_values", "CummaxBackward0")
CUMMIN = _picking("cummin_values", "CumminBackward0")
MEDIAN_DIM = defop("median_dim", _picked, grad_fn="MedianBackward1", frees=True, carries=("index",),
                   batch=_along_rule, input=_put_back_reduced)
KTHVALUE = defop("kthvalue_values", _picked, grad_fn="KthvalueBackward0", frees=True, carries=("index",),
                 batch=_along_rule, input=_put_back_reduced)


def _median(xp, input):
    """The lower of the two middle values (nan where there is a nan, and for no element)."""
    flat = input.reshape(-1)
    n = flat.size
    if n == 0 or bool(_is_nan(xp, flat).any()):
        return xp.asarray(math.nan, dtype=input.dtype)
    return xp.sort(flat)[(n - 1) // 2].copy()


MEDIAN = defop("median", _median, input=_evenly_distribute)


# -- the public functions: PyTorch's arguments and checks, then the ops --------------------------------


def _int(value, function: str, argument: str, position: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{function}(): argument '{argument}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def _dim(function: str, input: Tensor, dim, position: int = 2) -> int:
    return normalize_dim(_int(dim, function, "dim", position), input.ndim)


def _kept(indices, dim: int, keepdim: bool):
    """Indices found with the dim kept, as the function returns them."""
    return indices if keepdim or indices.ndim == 0 else SQUEEZE_DIM.apply(indices, dim)


@public(method=True, batch=dims("dim"))
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable=None):
    """`(values, indices)`: the values along `dim` in ascending order (descending with
    `descending=True`), nan last, and where each came from. Equal values keep their order."""
    dim = _dim("sort", input, dim)
    indices = ARGSORT(input, dim, bool(descending), bool(stable))
    op = SORT if stable is None else SORT_STABLE  # PyTorch's sort.stable overload: another node
    return return_types.sort(op.apply(input, dim, indices), indices)


@public(method=True, batch=dims("dim"))
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort `input` along `dim`: sort(input, dim, descending).indices."""
    return ARGSORT(input, _dim("argsort", input, dim), bool(descending), bool(stable))


@public(method=True, batch=_through)
def msort(input: Tensor) -> Tensor:
    """The values sorted along dim 0: sort(input, 0).values."""
    return sort(input, 0).values


@public(method=True, batch=dims("dim"))
def topk(input: Tensor, k: int, dim=None, largest: bool = True, sorted: bool = True):
    """`(values, indices)` of the k largest values along `dim` (the last by default), largest
    first; the k smallest with `largest=False`. nan counts as the largest value."""
    k = _int(k, "topk", "k", 2)
    dim = _dim("topk", input, -1 if dim is None else dim, 3)
    size = input.shape[dim] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    indices = TOPK_INDICES(input, k, dim, bool(largest), bool(sorted))
    return return_types.topk(TOPK.apply(input, dim, indices), indices)


def _running_extreme(name, op, find, input, dim):
    dim = _dim(name, input, dim)
    indices = find(input, dim)
    return getattr(return_types, name)(op.apply(input, dim, indices), indices)


@public(method=True, batch=dims("dim"))
def cummax(input: Tensor, dim: int):
    """`(values, indices)`: the running maximum along `dim` and where it was found (the latest of
    equal values); once a nan comes, the values are nan."""
    return _running_extreme("cummax", CUMMAX, CUMMAX_INDICES, input, dim)


@public(method=True, batch=dims("dim"))
def cummin(input: Tensor, dim: int):
    """`(values, indices)`: the running minimum along `dim` and where it was found (the latest of
    equal values); once a nan comes, the values are nan."""
    return _running_extreme("cummin", CUMMIN, CUMMIN_INDICES, input, dim)


def _nonempty(name: str, input: Tensor, dim: int) -> None:
    if input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


@public(method=True, batch=dims("dim", none_by_example=True))
def median(input: Tensor, dim=None, keepdim: bool = False):
    """The median: the lower of the two middle values (nan if there is a nan). With `dim`,
    `(values, indices)` along it; without, one value whose gradient equal elements share."""
    if dim is None:
        if keepdim:
            raise TypeError('median() missing 1 required positional arguments: "dim"')
        return MEDIAN.apply(input)
    dim = _dim("median", input, dim)
    _nonempty("median", input, dim)
    indices = MEDIAN_INDICES(input, dim, True)
    return return_types.median(MEDIAN_DIM.apply(input, dim, indices, bool(keepdim)), _kept(indices, dim, keepdim))


@public(method=True, batch=dims("dim"))
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """`(values, indices)`: the k-th smallest value along `dim` (k from 1), nan the largest."""
    k = _int(k, "kthvalue", "k", 2)
    dim = _dim("kthvalue", input, dim, 3)
    _nonempty("kthvalue", input, dim)
    size = input.shape[dim] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    indices = KTHVALUE_INDICES(input, k, dim, True)
    return return_types.kthvalue(KTHVALUE.apply(input, dim, indices, bool(keepdim)), _kept(indices, dim, keepdim))

"""Ordering: sort, argsort, msort, topk, cummax, cummin, median and kthvalue.

Each function finds its indices first, with an op that has no gradient (`argsort`,
`topk_indices`...), and its values are the input gathered at them, by an op named as PyTorch
names the node (`SortBackward0`, and `SortBackward1` when `stable=` is given, `TopkBackward0`,
`CummaxBackward0`, `CumminBackward0`, `MedianBackward1`, `KthvalueBackward0`). Its gradient
puts each value's gradient back at its index (PyTorch's value_selecting_reduction_backward; a
place picked twice, as cummax picks it, adds up). The indices are kept as a tensor, so that
derive writes them as the call that found them, never as constants of one point.

Ties and nan, as PyTorch's CPU kernels (checked against them, tests/engine/test_torch_agreement.py):
nan sorts as the largest value. `stable=True` keeps equal values in order; without it PyTorch
runs std::sort, stable up to 16 elements, and along longer rows with equal values a copy of it
(_cpu_orders.py) puts them where PyTorch does; topk likewise (partial_sort or nth_element, whose
order `sorted=False` returns). cummax and cummin move to the latest of equal values and stay
at nan; median along a dim picks the lower middle value and, among equal ones, the one a stable
sort puts there (the first nan where there is one); kthvalue picks what PyTorch's quickselect
picks. The full `median(x)` shares its gradient among the elements equal to it
(`MedianBackward0`), as `max(x)`.
"""

from __future__ import annotations

import math
import operator

from .. import backend, return_types
from . import _cpu_orders
from ..tensor import Tensor
from .dims import normalize_dim
from .gathering import SCATTER_ADD, _along_rule, _gather, _zeros
from .reduction import _evenly_distribute
from .registry import defop, nondiff
from .spelling import Spelling, helped
from .rearrange import _through
from .shape import SQUEEZE_DIM, UNSQUEEZE
from .surface import along_dim, public

np = backend.np  # for host-side work and NumPy's types; the ops compute with the `xp` they are given
_INT64 = np.int64


# -- finding the indices -----------------------------------------------------------------------------


def _is_nan(xp, a):
    return xp.isnan(a) if a.dtype.kind in "fc" else xp.zeros(a.shape, dtype=bool)


def _ascending(a, b) -> bool:
    """PyTorch's order: nan above every number (and equal to nan)."""
    return (a == a and b != b) or a < b


def _descending(a, b) -> bool:
    return (a != a and b == b) or a > b


def _order(xp, input, dim: int, descending: bool, stable: bool = True):
    """The indices that sort `input` along `dim`, nan the largest value. Stable: NumPy's stable
    sort (nan last, as PyTorch's), descending as the reversed input sorted and the order
    reversed back, so that equal values keep their order. Unstable, as PyTorch's std::sort,
    which is stable up to 16 elements: along longer rows with equal values, its copy decides."""
    if input.ndim == 0:
        return xp.zeros((), dtype=_INT64)
    if not descending:
        order = xp.argsort(input, axis=dim, kind="stable")
    else:
        last = input.shape[dim] - 1
        order = xp.flip(last - xp.argsort(xp.flip(input, axis=dim), axis=dim, kind="stable"), axis=dim)
    if stable or input.shape[dim] <= 16:
        return order
    before = _descending if descending else _ascending

    def arrange(items):
        _cpu_orders.sort(items, before)
        return [i for _, i in items]

    return _as_pytorch(xp, input, order, dim, _tied(xp, input, order, dim), arrange)


def _tied(xp, input, order, dim: int):
    """Which rows along `dim` hold equal values (nan counts as equal to nan)."""
    ordered = xp.take_along_axis(input, order, axis=dim)
    n = ordered.shape[dim]
    key = [slice(None)] * ordered.ndim
    key[dim] = slice(1, n)
    later = ordered[tuple(key)]
    key[dim] = slice(0, n - 1)
    earlier = ordered[tuple(key)]
    return xp.any((later == earlier) | (_is_nan(xp, later) & _is_nan(xp, earlier)), axis=dim)


def _as_pytorch(xp, input, index, dim: int, rows, arrange):
    """`index` (positions along `dim`), with each row where `rows` holds replaced by `arrange`'s
    positions for that row's (value, position) pairs: PyTorch's kernel's order, on the host."""
    rows = rows if xp is np else xp.asnumpy(rows)
    if not rows.any():
        return index
    values = xp.moveaxis(input, dim, -1)
    values = values if xp is np else xp.asnumpy(values)
    n = values.shape[-1]
    fixed = xp.moveaxis(index, dim, -1)
    fixed = (fixed if xp is np else xp.asnumpy(fixed)).copy()
    for row in [()] if rows.ndim == 0 else zip(*np.nonzero(rows)):  # a vector is one row
        fixed[row] = arrange(list(zip(values[row].tolist(), range(n))))[: fixed.shape[-1]]
    fixed = np.moveaxis(fixed, -1, dim)
    return backend.contiguous(xp, fixed if xp is np else xp.asarray(fixed))


def _topk_indices(xp, input, k: int, dim: int, largest: bool, sorted: bool):
    """The first k of the order, except along rows with equal values, or all rows for an unsorted
    result: there PyTorch's partial_sort (k * 64 <= n), or nth_element and then std::sort of the
    first k - 1 (only when sorted) decide, as its CPU kernel does."""
    if input.ndim == 0:
        return xp.zeros((), dtype=_INT64)
    order = _order(xp, input, dim, largest)
    top = _first(xp, order, dim, k)
    n = input.shape[dim]
    if k == 0:
        return top
    rows = _tied(xp, input, order, dim)
    if not sorted and k * 64 > n:  # the order nth_element leaves is the order returned
        rows = xp.ones(rows.shape, dtype=bool)
    before = _descending if largest else _ascending

    def arrange(items):
        if k * 64 <= n:
            _cpu_orders.partial_sort(items, k, before)
        else:
            _cpu_orders.nth_element(items, k - 1, before)
            if sorted:
                _cpu_orders.sort(items, before, 0, k - 1)
        return [i for _, i in items[:k]]

    return _as_pytorch(xp, input, top, dim, rows, arrange)


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
    """The k-th smallest along `dim`: the stable order's, except along rows where it ties with
    another, where PyTorch's quickselect decides which of them."""
    if input.ndim == 0:
        return xp.zeros((), dtype=_INT64)
    key = [slice(None)] * input.ndim
    key[dim] = slice(k - 1, k)
    index = _order(xp, input, dim, False)[tuple(key)]
    kth = xp.take_along_axis(input, index, axis=dim)
    tied = xp.sum((input == kth) | (_is_nan(xp, input) & _is_nan(xp, kth)), axis=dim) > 1

    def arrange(items):
        _cpu_orders.quickselect(items, k - 1, _ascending)
        return [items[k - 1][1]]

    index = _as_pytorch(xp, input, index, dim, tied, arrange)
    return backend.contiguous(xp, index if keepdim else xp.squeeze(index, axis=dim))


# -- how formulas write them: the indices as the call that finds them, the values as a gather -----------

_ARGSORT_HELPER = (
    "def _argsort(x, dim, descending=False, stable=False):\n"
    "    key = np.where(np.isnan(x), -np.inf, -x) if descending else x\n"
    "    return np.argsort(key, axis=dim, kind='stable')\n")
_RUNNING_HELPER = (
    "def _running_indices(x, dim, largest):\n"
    "    a = np.moveaxis(x, dim, -1)\n"
    "    extreme = (np.maximum if largest else np.minimum).accumulate(a, axis=-1)\n"
    "    positions = np.where((a == extreme) | np.isnan(a), np.arange(a.shape[-1]), 0)\n"
    "    return np.moveaxis(np.maximum.accumulate(positions, axis=-1), -1, dim)\n")


def _argsort_call(w, input, dim, descending, stable) -> str:
    return f"argsort({w(input)}, {w(dim)}, {w(descending)}{', stable=True' if stable else ''})"


def _indices_of(call: str):
    """The indices of a function that returns (values, indices): `topk(x, 2, 0, True, True).indices`."""
    return lambda w, *args: f"{call}({', '.join(w(a) for a in args)}).indices"


def _nth_sorted(w, input, n, dim, keepdim) -> str:
    """The n-th index of the stable order along dim (the median's, the k-th value's)."""
    return f"np.take(_argsort({w(input)}, {w(dim)}), [{w(n)}], axis={w(dim)})" + (
        "" if keepdim else f".squeeze({w(dim)})")


def _gathered(s, x, dim, index, keepdim=True):
    """Values found by their indices: x gathered at them (the dim dropped unless kept)."""
    gathered = s.call("gather", x, dim, index, shape=tuple(index.shape))
    return gathered if keepdim else s.reshape(gathered)


# Without a gradient; derive writes each as the call whose indices it is.
_TOPK_INDICES = helped(_ARGSORT_HELPER, language=_indices_of("topk"), numpy=lambda w, x, k, dim, largest, sorted: (
    f"np.take(_argsort({w(x)}, {w(dim)}, {w(largest)}), np.arange({w(k)}), axis={w(dim)})"))
_MEDIAN_INDICES = helped(_ARGSORT_HELPER, language=_indices_of("median"), numpy=lambda w, x, dim, keepdim: (
    _nth_sorted(w, x, (x.shape[dim] - 1) // 2, dim, keepdim)))
_KTHVALUE_INDICES = helped(_ARGSORT_HELPER, language=_indices_of("kthvalue"), numpy=lambda w, x, k, dim, keepdim: (
    _nth_sorted(w, x, k - 1, dim, keepdim)))

ARGSORT = nondiff("argsort", _order, spelling=helped(_ARGSORT_HELPER, language=_argsort_call))
TOPK_INDICES = nondiff("topk_indices", _topk_indices, spelling=_TOPK_INDICES)
CUMMAX_INDICES = nondiff("cummax_indices", lambda xp, input, dim: _running_indices(xp, input, dim, True),
                         spelling=helped(_RUNNING_HELPER, language=_indices_of("cummax"),
                                         numpy="_running_indices({0}, {1}, True)"))
CUMMIN_INDICES = nondiff("cummin_indices", lambda xp, input, dim: _running_indices(xp, input, dim, False),
                         spelling=helped(_RUNNING_HELPER, language=_indices_of("cummin"),
                                         numpy="_running_indices({0}, {1}, False)"))
MEDIAN_INDICES = nondiff("median_indices", _median_indices, spelling=_MEDIAN_INDICES)
KTHVALUE_INDICES = nondiff("kthvalue_indices", _kthvalue_indices, spelling=_KTHVALUE_INDICES)


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
    return defop(name, _gather, grad_fn=grad_fn, frees=True, carries=("index",), batch=_along_rule, input=_put_back,
                 spelling=Spelling(build=_gathered))


SORT = _picking("sort_values", "SortBackward0")
SORT_STABLE = _picking("sort_values_stable", "SortBackward1")
TOPK = _picking("topk_values", "TopkBackward0")
CUMMAX = _picking("cummax_values", "CummaxBackward0")
CUMMIN = _picking("cummin_values", "CumminBackward0")
MEDIAN_DIM = defop("median_dim", _picked, grad_fn="MedianBackward1", frees=True, carries=("index",),
                   batch=_along_rule, input=_put_back_reduced,
    spelling=Spelling(build=lambda s, x, dim, index, keepdim: _gathered(s, x, dim, index, keepdim)),
)
KTHVALUE = defop("kthvalue_values", _picked, grad_fn="KthvalueBackward0", frees=True, carries=("index",),
                 batch=_along_rule, input=_put_back_reduced,
    spelling=Spelling(build=lambda s, x, dim, index, keepdim: _gathered(s, x, dim, index, keepdim)),
)


def _median(xp, input):
    """The lower of the two middle values (nan where there is a nan, and for no element)."""
    flat = input.reshape(-1)
    n = flat.size
    if n == 0 or bool(_is_nan(xp, flat).any()):
        return xp.asarray(math.nan, dtype=input.dtype)
    return xp.sort(flat)[(n - 1) // 2].copy()


_MEDIAN = ("def _median(x):\n"
           "    flat = np.sort(np.reshape(x, -1))\n"
           "    return flat[(flat.size - 1) // 2] if flat.size and not np.isnan(flat).any() else np.nan\n")
MEDIAN = defop("median", _median, input=_evenly_distribute, spelling=helped(_MEDIAN))


# -- the public functions: PyTorch's arguments and checks, then the ops --------------------------------


def _int(value, function: str, argument: str, position: int) -> int:
    """An int argument, as PyTorch's parser takes one: an int, or what has __index__ (a 0-d
    integer tensor); a float or a bool is its TypeError."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{function}(): argument '{argument}' (position {position}) must be int, not "
                    f"{type(value).__name__}")


def _dim(function: str, input: Tensor, dim, position: int = 2) -> int:
    """A dim in range, non-negative (0 for a 0-d input, which takes 0 and -1)."""
    return normalize_dim(_int(dim, function, "dim", position), input.ndim) if input.ndim else 0


def _kept(indices, dim: int, keepdim: bool):
    """Indices found with the dim kept, as the function returns them."""
    return indices if keepdim or indices.ndim == 0 else SQUEEZE_DIM.apply(indices, dim)


@along_dim()
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable=None):
    """`(values, indices)`: the values along `dim` in ascending order (descending with
    `descending=True`), nan last, and where each came from. Equal values keep their order with
    `stable=True`; without, they are where PyTorch's sort puts them (in order up to 16)."""
    dim = _dim("sort", input, dim)
    indices = ARGSORT(input, dim, bool(descending), bool(stable))
    op = SORT if stable is None else SORT_STABLE  # PyTorch's sort.stable overload: another node
    return return_types.sort(op.apply(input, dim, indices), indices)


@along_dim()
def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort `input` along `dim`: sort(input, dim, descending).indices."""
    return ARGSORT(input, _dim("argsort", input, dim), bool(descending), bool(stable))


@public(method=True, batch=_through)
def msort(input: Tensor) -> Tensor:
    """The values sorted along dim 0: sort(input, 0).values."""
    return sort(input, 0).values


@along_dim()
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


@along_dim()
def cummax(input: Tensor, dim: int):
    """`(values, indices)`: the running maximum along `dim` and where it was found (the latest of
    equal values); once a nan comes, the values are nan."""
    return _running_extreme("cummax", CUMMAX, CUMMAX_INDICES, input, dim)


@along_dim()
def cummin(input: Tensor, dim: int):
    """`(values, indices)`: the running minimum along `dim` and where it was found (the latest of
    equal values); once a nan comes, the values are nan."""
    return _running_extreme("cummin", CUMMIN, CUMMIN_INDICES, input, dim)


def _nonempty(name: str, input: Tensor, dim: int) -> None:
    if input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


@along_dim(none_by_example=True)
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


@along_dim()
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

"""Picking and placing by index tensors: index_select, gather, scatter, scatter_add.

`gather(input, dim, index)[i][j][k] = input[i][index[i][j][k]][k]` (dim 1), and `scatter` and
`scatter_add` are its transposes: they put (or add) `src`'s values at those places of a copy of
`input`. Each gradient is another of them: gather's is a scatter_add into zeros, scatter_add's
src gets gather(grad), scatter's input gets grad with the scattered places zeroed. Nodes as
PyTorch names them (`IndexSelectBackward0`, `GatherBackward0`, `ScatterBackward0` and, with a
number for src, `ScatterBackward1`, `ScatterAddBackward0`), and PyTorch's errors.

Indices are int64 (or int32) tensors, carried by the op as arrays (as PyTorch saves them). The
expression language, whose numbers are floats, converts whole numbers (language/builtins.py).
"""

from __future__ import annotations

from .. import backend
from ..backend import contiguous
from ..tensor import Tensor
from .batching import Batched, _batch_size, _bind, _result, _shift, by_example, dims
from .dims import normalize_dim
from .indexing import SLICE_BACKWARD
from .registry import array_of, defop, like
from .spelling import Spelling, helped
from .surface import public


def _key(xp, index, dim: int) -> tuple:
    """The full key of the places `index` names along `dim`: positions elsewhere, index at dim."""
    index = _positions(xp, index)
    ndim = index.ndim
    key = [xp.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1)) for d, n in enumerate(index.shape)]
    key[dim] = index
    return tuple(key)


def _positions(xp, index):
    """The index on the input's device, as integers (a derivation's constants come back as floats).

    It may be an index tensor (sort's indices, kept as a tensor so that derive traces them)."""
    index = xp.asarray(array_of(index))
    return index if index.dtype.kind in "iu" else index.astype("int64")


def _region(index, src):
    """The part of `src` that `index` covers (src may be larger than the index; a number is itself)."""
    return src[tuple(slice(0, n) for n in index.shape)] if getattr(src, "ndim", 0) else src


def _gather(xp, input, dim, index):
    if input.ndim == 0:
        return xp.broadcast_to(input, index.shape).copy()
    return contiguous(xp, input[_key(xp, index, dim)])


def _scatter(xp, input, dim, index, src):
    out = xp.array(input, copy=True)
    if input.ndim == 0:
        return xp.array(xp.asarray(src).reshape(-1)[-1] if index.size else input, copy=True)
    out[_key(xp, index, dim)] = _region(index, src)
    return out


def _scatter_value(xp, input, dim, index, value):
    out = xp.array(input, copy=True)
    if input.ndim == 0:
        return xp.full((), value, dtype=input.dtype) if index.size else out
    out[_key(xp, index, dim)] = value
    return out


def _scatter_add(xp, input, dim, index, src):
    out = xp.array(input, copy=True)
    if input.ndim == 0:
        return out + _region(index, src).sum() if index.ndim else out + src
    backend.scatter_add(out, _key(xp, index, dim), _region(index, src))  # repeated places add up
    return out


def _zeros(reference, shape):
    """Zeros of `shape` in `reference`'s dtype, of the same kind (tensor or array)."""
    data = array_of(reference)
    return like(reference, backend.array_module(data).zeros(tuple(shape), dtype=data.dtype))


def _to_shape(grad, shape):
    """A gradient of the index's shape, padded with zeros to `shape` (a src larger than the index;
    PyTorch fails there, "returned an invalid gradient")."""
    for d, n in enumerate(shape):
        have = tuple(grad.shape)
        if have[d] != n:
            grad = SLICE_BACKWARD.apply(grad, have[:d] + (n,) + have[d + 1:], d, 0, have[d], 1)
    return grad


def _along_rows(grad, dim, index):
    """index_select's index as gather's: each position along `dim` of grad's shape."""
    data = array_of(grad)
    xp = backend.array_module(data)
    shape = [1] * data.ndim
    shape[dim] = -1
    return xp.broadcast_to(xp.asarray(index).reshape(shape), data.shape)


def _along_rule(function, args, kwargs):
    """gather and the scatters on examples: input and src (an unbatched one repeated) get the
    batch in front, the index too (the same for every example), and dim moves past it."""
    bound = _bind(function, args, kwargs)
    a = bound.arguments
    input = a["input"]
    ndim = input.ndim
    if not ndim or a["index"].__class__ is Batched:
        return by_example(function, args, kwargs)
    size = _batch_size(args, kwargs)
    for name in ("input", "src"):
        value = a.get(name)
        if value.__class__ is Batched:
            a[name] = value.physical
        elif isinstance(value, Tensor):
            a[name] = value.unsqueeze(0).expand((size,) + tuple(value.shape))
        elif hasattr(value, "shape"):
            a[name] = backend.array_module(value).broadcast_to(value, (size,) + value.shape)
    index = array_of(a["index"])
    a["index"] = backend.array_module(index).broadcast_to(index, (size,) + index.shape)
    a["dim"] = _shift(a["dim"], ndim)
    return _result(function(*bound.args, **bound.kwargs))


# NumPy's spelling of each: the places `index` names along `dim`, as the forward finds them.
_KEY_HELPER = (
    "def _key(index, dim):\n"
    "    index = np.asarray(index).astype(np.int64)\n"
    "    key = [np.arange(n).reshape((1,) * d + (n,) + (1,) * (index.ndim - d - 1)) for d, n in enumerate(index.shape)]\n"
    "    key[dim] = index\n"
    "    return tuple(key)\n"
    "def _region(index, src):\n"
    "    return src[tuple(slice(0, n) for n in np.shape(index))] if np.ndim(src) else src\n")
_GATHER = helped("def _gather(x, dim, index):\n"
                 "    return x[_key(index, dim)] if x.ndim else np.broadcast_to(x, np.shape(index)).copy()\n"
                 + _KEY_HELPER)
_SCATTER = helped("def _scatter(x, dim, index, src):\n"
                  "    out = np.array(x, dtype=np.float64, copy=True)\n"
                  "    out[_key(index, dim)] = _region(index, src)\n"
                  "    return out\n" + _KEY_HELPER)
_SCATTER_ADD = helped("def _scatter_add(x, dim, index, src):\n"
                      "    out = np.array(x, dtype=np.float64, copy=True)\n"
                      "    np.add.at(out, _key(index, dim), _region(index, src))\n"
                      "    return out\n" + _KEY_HELPER)

GATHER = defop(
    "gather", _gather, frees=True, carries=("index",), batch=_along_rule,
    input=lambda grad, input_shape, dim, index: SCATTER_ADD.apply(_zeros(grad, input_shape), dim, index, grad),
    spelling=_GATHER,
)
SCATTER_ADD = defop(
    "scatter_add", _scatter_add, frees=True, carries=("index",), batch=_along_rule,
    input=lambda grad: grad,
    src=lambda grad, dim, index, src_shape: _to_shape(GATHER.apply(grad, dim, index), src_shape),
    spelling=_SCATTER_ADD,
)
SCATTER = defop(
    "scatter", _scatter, frees=True, carries=("index",), batch=_along_rule,
    input=lambda grad, dim, index: SCATTER_VALUE.apply(grad, dim, index, 0.0),
    src=lambda grad, dim, index, src_shape: _to_shape(GATHER.apply(grad, dim, index), src_shape),
    spelling=_SCATTER,
)
SCATTER_VALUE = defop(
    "scatter_value", _scatter_value, grad_fn="ScatterBackward1", frees=True, carries=("index",), batch=_along_rule,
    input=lambda grad, dim, index, value: SCATTER_VALUE.apply(grad, dim, index, 0.0),
    spelling=Spelling(build=lambda s, x, dim, index, value: s.call("scatter", x, dim, index, s.number(value))),
)
INDEX_SELECT = defop(
    "index_select",
    lambda xp, input, dim, index: contiguous(xp, xp.take(input, _positions(xp, index), axis=dim)) if input.ndim else input.copy(),
    frees=True, batch=dims("dim"),
    input=lambda grad, input_shape, dim, index: SCATTER_ADD.apply(
        _zeros(grad, input_shape), dim, _along_rows(grad, dim, index), grad) if input_shape else grad,
    spelling=Spelling(numpy="np.take({0}, np.asarray({2}, dtype=np.int64), axis={1})"),
)


# -- the public functions: PyTorch's checks, then the op --------------------------------------------


def _fixed_index(function, args, kwargs):
    """The functions batch through their ops, which take one index for every example; an index
    that differs by example runs example by example."""
    if _bind(function, args, kwargs).arguments.get("index").__class__ is Batched:
        return by_example(function, args, kwargs)
    return function(*args, **kwargs)


def _index_array(name: str, index, dtype_error: str):
    """The index tensor's array; int64 or int32, as PyTorch takes it (arrays of ints pass as they are)."""
    if not isinstance(index, Tensor):
        if hasattr(index, "shape") and index.dtype.kind in "iu":
            return index
        raise TypeError(f"{name}(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(dtype_error)
    return index._data


def _check_bounds(index, size: int, dim: int) -> None:
    if index.size:
        low, high = int(index.min()), int(index.max())
        if low < 0 or high >= size:
            raise RuntimeError(f"index {low if low < 0 else high} is out of bounds for dimension {dim} with size {size}")


@public(method=True, batch=_fixed_index)
def gather(input: Tensor, dim: int, index) -> Tensor:
    """The values of `input` along `dim` at `index`, which has input's number of dims:
    out[i][j] = input[index[i][j]][j] (dim 0), out[i][j] = input[i][index[i][j]] (dim 1)."""
    ndim = input.ndim
    dim = normalize_dim(dim, ndim)
    array = _index_array("gather", index, "gather(): Expected dtype int32/int64 for index")
    shape = tuple(input.shape) or (1,)
    if array.ndim != len(shape) and not (ndim == 0 and array.ndim == 0):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, n in enumerate(array.shape):
        if d != dim and n > shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {list(array.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {dim}")
    _check_bounds(array, shape[dim], dim)
    return GATHER.apply(input, dim, array.astype("int64", copy=False))


def _scatter_checks(name: str, input, dim, index, src):
    ndim = input.ndim
    dim = normalize_dim(dim, ndim)
    array = _index_array(name, index, f"{name}(): Expected dtype int32/int64 for index")
    shape = tuple(input.shape) or (1,)
    if array.ndim != len(shape) and not (ndim == 0 and array.ndim == 0):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor):
        if src.dtype != input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        if src.ndim != array.ndim and not (src.ndim == 0 and array.ndim <= 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        src_shape = tuple(src.shape) or (1,)
        if any((d != dim and n > shape[d]) or n > src_shape[d] for d, n in enumerate(array.shape)):
            raise RuntimeError(f"Expected index {list(array.shape)} to be no larger than self {list(input.shape)} "
                               f"apart from dimension {dim} and to be no larger size than src {list(src.shape)}")
    elif any(d != dim and n > shape[d] for d, n in enumerate(array.shape)):
        raise RuntimeError(f"Expected index {list(array.shape)} to be no larger than self {list(input.shape)} "
                           f"apart from dimension {dim}")
    _check_bounds(array, shape[dim], dim)
    return dim, array.astype("int64", copy=False)


@public(method=True, batch=_fixed_index)
def scatter(input: Tensor, dim: int, index, src, *, reduce=None) -> Tensor:
    """A copy of `input` with src's values put at `index` along `dim` (the transpose of gather):
    out[index[i][j]][j] = src[i][j] (dim 0); `src` may be a number. Its gradient: src gets
    gather(grad, dim, index), input gets grad with the scattered places zeroed."""
    if reduce is not None:
        raise RuntimeError(f"scatter(): reduce={reduce!r} is not supported: write scatter_add(input, dim, index, "
                           "src) for reduce='add'")
    dim, array = _scatter_checks("scatter", input, dim, index, src)
    if isinstance(src, Tensor):
        return SCATTER.apply(input, dim, array, src)
    return SCATTER_VALUE.apply(input, dim, array, float(src))


@public(method=True, batch=_fixed_index)
def scatter_add(input: Tensor, dim: int, index, src) -> Tensor:
    """A copy of `input` with src's values added at `index` along `dim`, repeated places adding up
    (the transpose of gather, whose gradient it is)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' (position 4) must be Tensor, not {type(src).__name__}")
    dim, array = _scatter_checks("scatter_add", input, dim, index, src)
    return SCATTER_ADD.apply(input, dim, array, src)


@public(method=True, batch=_fixed_index)
def index_select(input: Tensor, dim: int, index) -> Tensor:
    """The slices of `input` along `dim` at the positions in the 1-d `index` (repeats allowed)."""
    ndim = input.ndim
    dim = normalize_dim(dim, ndim)
    array = _index_array("index_select", index, "index_select(): Expected dtype int32 or int64 for index")
    if array.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    array = array.reshape(-1)
    size = input.shape[dim] if ndim else 1
    if ndim == 0 and array.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {array.size} value(s)")
    if array.size:
        bad = array[(array < 0) | (array >= size)]
        if bad.size:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad[0])} axis_dim={size}")
    return INDEX_SELECT.apply(input, dim, array.astype("int64", copy=False))

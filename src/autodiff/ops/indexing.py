"""Indexing and its gradients: x[0], x[1:3], W[:, 1], x[None], x[[0, 2]], x[mask], x[i] = v.

Basic indexing is applied one dimension at a time, so the graph shows PyTorch's nodes
(`SelectBackward0`, `SliceBackward0`, `UnsqueezeBackward0`); any list, array or tensor index
makes the whole lookup one `IndexBackward0` with NumPy's rules. The gradient of a lookup
places the incoming gradient into zeros of the input's shape (adding where an index repeats).
"""

from __future__ import annotations

from .. import backend
from ..backend import contiguous
from ..tensor import Tensor, _as_tensor
from .dims import normalize_dim
from .batching import indexing
from .registry import defop
from .spelling import ATOM, Spelling
from .surface import along_dim, bind_operators, tensor_method
from .shape import ALIAS, UNSQUEEZE, VIEW

# -- how formulas write them: the language's indexing, narrow, select, cat of zeros and scatters ----


def _select_backward(s, g, shape, dim, index):
    """g placed at `index` along `dim` of zeros: a cat of zeros, g and zeros."""
    shape = tuple(shape)
    dim = dim % len(shape)
    row = s.reshape(g, shape[:dim] + (1,) + shape[dim + 1:])
    return s.padded(row, shape, dim, index % shape[dim], 1)


def _positions(shape, dim, start, stop, step):
    """The positions a strided slice takes along `dim`, as an index of the slice's shape."""
    np = backend.np
    begin, end, stride = slice(start, stop, step).indices(shape[dim])
    taken = np.arange(begin, end, stride)
    sliced = tuple(shape[:dim]) + (len(taken),) + tuple(shape[dim + 1:])
    return np.broadcast_to(taken.reshape((1,) * dim + (-1,) + (1,) * (len(shape) - dim - 1)), sliced)


def _slice(s, x, dim, start, stop, step):
    """narrow(x, dim, start, length); a strided slice picks its positions with index_select."""
    built = s.narrow(x, dim, start, stop, step)
    if built is not None:
        return built
    dim = dim % len(x.shape)
    begin, end, stride = slice(start, stop, step).indices(x.shape[dim])
    return s.call("index_select", x, dim, backend.np.arange(begin, end, stride))


def _slice_backward(s, g, shape, dim, start, stop, step):
    """g placed at the slice's positions of zeros: a cat of zeros, g and zeros; strided, a scatter."""
    shape = tuple(shape)
    dim = dim % len(shape)
    begin, end, stride = slice(start, stop, step).indices(shape[dim])
    if stride == 1:
        return s.padded(g, shape, dim, begin, max(0, end - begin))
    return s.call("scatter", s.const(0.0, shape), dim, _positions(shape, dim, start, stop, step), g, shape=shape)


def _flat_positions(shape, key):
    """Where each element of `x[key]` sits in x flattened: an index of the lookup's shape. None
    where the key holds an expression (an index that data chose): no constant positions then."""
    if any(hasattr(k, "op") for k in key):
        return None
    np = backend.np
    return np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)[key]


def _flat_scatter(s, function, input, shape, key, values):
    """function(input flattened, 0, positions, values flattened), reshaped back: every key of
    constants written with one scatter of the language."""
    positions = _flat_positions(shape, key)
    if positions is None:
        return None
    size = (int(positions.size),)
    flat = s.reshape(input, (max(1, int(backend.np.prod(shape, dtype=backend.np.int64))),))
    if hasattr(values, "op"):
        values = s.reshape(s.build("expand", values, tuple(positions.shape), shape=positions.shape), size)
    return s.reshape(s.call(function, flat, 0, positions.reshape(-1), values, shape=flat.shape), shape)


def _index_text(w, key) -> str:
    return ", ".join(w(k) for k in key) if key else "..."


def _indexed(w, x, key) -> str:
    """x[key], in the language as in NumPy (the key holds slices and integer arrays only)."""
    return f"{w(x, ATOM)}[{_index_text(w, key)}]"


def _place(xp, values, shape, key):
    out = xp.zeros(shape, dtype=values.dtype)
    out[key] = values
    return out


def _slice_key(dim, start, stop, step):
    return (slice(None),) * dim + (slice(start, stop, step),)


def _select_key(dim, index):
    return (slice(None),) * dim + (index,)


SELECT = defop(
    "select",
    lambda xp, input, dim, index: input[_select_key(dim, index)],
    input=lambda grad, input_shape, dim, index: SELECT_BACKWARD.apply(grad, input_shape, dim, index),
    spelling=Spelling(numpy="np.take({0}, {2}, axis={1})"),
)
SELECT_BACKWARD = defop(
    "select_backward",
    lambda xp, input, shape, dim, index: _place(xp, input, shape, _select_key(dim, index)),
    input=lambda grad, dim, index: SELECT.apply(grad, dim, index),
    spelling=Spelling(build=_select_backward),
)
SLICE = defop(
    "slice",
    lambda xp, input, dim, start, stop, step: input[_slice_key(dim, start, stop, step)],
    input=lambda grad, input_shape, dim, start, stop, step: SLICE_BACKWARD.apply(grad, input_shape, dim, start, stop, step),
    spelling=Spelling(build=_slice),
)
SLICE_BACKWARD = defop(
    "slice_backward",
    lambda xp, input, shape, dim, start, stop, step: _place(xp, input, shape, _slice_key(dim, start, stop, step)),
    input=lambda grad, dim, start, stop, step: SLICE.apply(grad, dim, start, stop, step),
    spelling=Spelling(build=_slice_backward),
)


def _index_add(xp, input, shape, key):
    out = xp.zeros(shape, dtype=input.dtype)
    backend.scatter_add(out, key, input)  # repeated indices add up
    return out


# The index arrays are tensors PyTorch saves (and CopySlices lets go of its node): backward
# twice through these is PyTorch's retain_graph error.
INDEX = defop(
    "index",
    lambda xp, input, key: contiguous(xp, input[key]), frees=True,
    input=lambda grad, input_shape, key: INDEX_BACKWARD.apply(grad, input_shape, key),
    spelling=Spelling(language=_indexed, numpy=_indexed,
                      latex=lambda w, x, key: f"{w(x, ATOM)}\\left[{_index_text(w, key)}\\right]"),
)
INDEX_BACKWARD = defop(
    "index_backward", _index_add, grad_fn="IndexPutBackward0", frees=True,
    input=lambda grad, key: INDEX.apply(grad, key),
    spelling=Spelling(build=lambda s, g, shape, key: _flat_scatter(
        s, "scatter_add", s.const(0.0, tuple(shape)), tuple(shape), key, g)),
)


def _put(xp, input, values, key):
    out = xp.array(input, copy=True)
    out[key] = values
    return out


def _zero_region(xp, input, key):
    out = xp.array(input, copy=True)
    out[key] = 0
    return out


def _region_grad(grad, key, values_shape):
    region = INDEX.apply(grad, key)
    missing = len(values_shape) - region.ndim
    if missing > 0:  # NumPy let leading size-1 dims of the values drop away
        region = VIEW.apply(region, (1,) * missing + tuple(region.shape))
    return region


INDEX_PUT = defop(
    "index_put", _put, grad_fn="CopySlices", frees=True,
    input=lambda grad, key: ZERO_REGION.apply(grad, key),
    values=lambda grad, key, values_shape: _region_grad(grad, key, values_shape),
    spelling=Spelling(build=lambda s, x, values, key: _flat_scatter(s, "scatter", x, x.shape, key, values)),
)
ZERO_REGION = defop(
    "zero_region", _zero_region, grad_fn="IndexFillBackward0",
    input=lambda grad, key: ZERO_REGION.apply(grad, key),
    spelling=Spelling(build=lambda s, x, key: _flat_scatter(s, "scatter", x, x.shape, key, 0.0)),
)


# -- turning a Python index into steps ------------------------------------------------------------


def _plain(k, xp):
    """An index component as NumPy takes it: ints stay ints, tensors and lists become arrays."""
    if isinstance(k, Tensor):
        if k._data.ndim == 0 and not k.dtype.is_floating_point and k.dtype.name != "bool":
            return int(k.item())
        k = k._values_read()  # which places: the key's values decide the path
        if k.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return xp.asarray(k)
    if isinstance(k, (list, tuple)):
        array = backend.np.asarray(k)
        if array.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return xp.asarray(array)
    if hasattr(k, "__index__") and not isinstance(k, bool) and not hasattr(k, "shape"):
        return k.__index__()
    if isinstance(k, backend.np.integer):
        return int(k)
    if k is None or k is Ellipsis or isinstance(k, (slice, bool)) or hasattr(k, "shape"):
        return k
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {type(k).__name__})"
    )


def _is_advanced(k) -> bool:
    return hasattr(k, "shape") or isinstance(k, bool)


def getitem(input: Tensor, key) -> Tensor:
    """`input[key]`, with PyTorch's steps and errors."""
    xp = backend.array_module(input._data)
    parts = key if isinstance(key, tuple) else (key,)
    parts = tuple(_plain(k, xp) for k in parts)
    if any(_is_advanced(k) for k in parts):
        return _mixed(input, parts)
    result = _basic(input, parts, lone=not isinstance(key, tuple))
    # `x[:, :]` and `x[...]` are new tensors all the same (PyTorch's alias), not x itself.
    return ALIAS.apply(input) if result is input else result


def _mixed(input: Tensor, parts: tuple) -> Tensor:
    """Tensor indices among basic ones, in PyTorch's order: integers, slices and None first (as
    views), then the tensor indices over what is left. So `x[3, 2:, [1, 3]]` keeps the sliced
    dim before the indexed one, where NumPy, which counts 3 as a tensor index, would not."""
    basic, advanced = [], []  # advanced: per remaining dim of the viewed result, its index or None
    for k in parts:
        if _is_advanced(k):
            width = k.ndim if getattr(k, "dtype", None) == bool else 1  # a mask covers its dims
            basic.extend([slice(None)] * width)
            advanced.append(k)
        else:
            basic.append(k)
            if k is None or isinstance(k, slice):
                advanced.append(None)
            elif k is Ellipsis:
                advanced.append(Ellipsis)
    viewed = _basic(input, tuple(basic), lone=False)
    key = []
    for k in advanced:
        if k is Ellipsis:  # the dims it stands for: whatever the explicit entries leave
            covered = sum(k.ndim if getattr(k, "dtype", None) == bool else 1 for k in advanced
                          if k is not Ellipsis)
            key.extend([slice(None)] * (viewed._data.ndim - covered))
        else:
            key.append(slice(None) if k is None else k)
    return _advanced(viewed, tuple(key))


def _basic(input: Tensor, parts: tuple, lone: bool) -> Tensor:
    ndim = input._data.ndim
    consumed = sum(1 for k in parts if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if sum(1 for k in parts if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    result, dim, source_dim = input, 0, 0
    for k in parts:
        if k is None:
            result = UNSQUEEZE.apply(result, dim)
            dim += 1
        elif k is Ellipsis:
            skipped = ndim - consumed
            dim += skipped
            source_dim += skipped
        elif isinstance(k, int):
            size = result._data.shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {source_dim} with size {size}")
            result = SELECT.apply(result, dim, k + size if k < 0 else k)
            source_dim += 1
        else:  # a slice
            size = result._data.shape[dim]
            start, stop, step = k.indices(size)
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            if lone or (start, stop, step) != (0, size, 1):
                result = SLICE.apply(result, dim, start, max(stop, start), step)
            dim += 1
            source_dim += 1
    return result


def _advanced(input: Tensor, parts: tuple) -> Tensor:
    xp = backend.array_module(input._data)
    key = []
    for k in parts:
        if hasattr(k, "shape") and k.dtype == bool:
            key.extend(xp.nonzero(k))  # masks become integer indices, which add.at accepts
        else:
            key.append(k)
    key = tuple(key)
    try:
        input._data[key]  # let NumPy validate the key before anything is recorded
    except IndexError as exc:
        raise IndexError(str(exc).replace("axis", "dimension")) from None
    return INDEX.apply(input, key)


@along_dim()
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, which disappears."""
    dim = normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {dim}")
    return SELECT.apply(input, dim, index + size if index < 0 else index)


@along_dim(spelling=Spelling(numpy=lambda w, x, dim, start, length: (
    f"{w(x, ATOM)}[{':, ' * dim}{w(start)}:{w(start + length)}]")))
def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Elements start..start+length-1 along `dim`."""
    dim = normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return SLICE.apply(input, dim, start, start + length, 1)


def index_put(input: Tensor, key, values) -> Tensor:
    """A copy of `input` with `input[key] = values` (what `x[key] = v` records)."""
    xp = backend.array_module(input._data)
    parts = key if isinstance(key, tuple) else (key,)
    parts = tuple(_plain(k, xp) for k in parts)
    try:
        input._data[parts]
    except IndexError as exc:
        raise IndexError(str(exc).replace("axis", "dimension")) from None
    return INDEX_PUT.apply(input, values, parts)


bind_operators(getitem, ("__getitem__",), batch=indexing)


@tensor_method("__setitem__")
def _setitem(self, key, value) -> None:
    """`x[key] = value`: records index_put and makes its result x's new value; a key that takes
    the whole of x (`:` in every place given, `...`) is PyTorch's copy_ or fill_ of x itself."""
    parts = key if isinstance(key, tuple) else (key,)
    if isinstance(value, Tensor) and value.__class__ is Tensor:
        _check_fits(self, parts, value)
    if _whole(parts, self._data.shape):
        if isinstance(value, Tensor):
            self.copy_(value)
        else:  # a number becomes a 0-d tensor first, as PyTorch's indexing makes it (FillBackward3)
            self.fill_(_as_tensor(value, self))
        return
    self._apply_inplace(index_put, key, value)


def _whole(parts: tuple, shape: tuple) -> bool:
    """Whether an index is `:` or `...` in every place it gives, each slice the whole dimension."""
    if sum(part is Ellipsis for part in parts) > 1:
        return False
    given = [part for part in parts if part is not Ellipsis]
    if len(given) > len(shape):
        return False
    dims = list(range(len(given)))
    at = next((i for i, part in enumerate(parts) if part is Ellipsis), None)
    if at is not None:  # the places after `...` are the last dimensions
        dims = dims[:at] + list(range(len(shape) - (len(given) - at), len(shape)))
    for part, dim in zip(given, dims):
        if part.__class__ is not slice or part.indices(shape[dim]) != (0, shape[dim], 1):
            return False
    return True


def _check_fits(self: Tensor, parts: tuple, value: Tensor) -> None:
    """PyTorch's error for a value that does not expand to the places it is set into (its
    leading dimensions of size 1 dropped first, as PyTorch drops them)."""
    try:
        target = self._data[tuple(_plain(k, backend.array_module(self._data)) for k in parts)].shape
    except (IndexError, TypeError, ValueError):
        return  # index_put says what is wrong with the key
    have = value._data.shape
    while have and have[0] == 1 and len(have) > len(target):
        have = have[1:]
    if len(have) <= len(target) and all(h in (1, t) for h, t in zip(have[::-1], target[::-1])):
        return
    from .shape import expand

    expand(value.detach().reshape(have), target)  # raises PyTorch's text

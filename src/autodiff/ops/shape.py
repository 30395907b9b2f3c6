"""Shape operations: broadcasting, transposes, reshapes, joins, copies and casts."""

from __future__ import annotations

import math

from .. import backend, dtypes
from ..autograd.grad_mode import STATE as GRAD_MODE, no_grad
from ..backend import contiguous
from ..tensor import Tensor, _as_tensor, _make, _sizes, legacy_type_name
from .dims import normalize_dim, normalize_dims
from .batching import ELEMENTWISE, Batched, by_example, dims, joins, shape_argument
from .registry import defop, elementwise_op
from .running import broadcast_error
from .spelling import ATOM, Spelling
from .surface import along_dim, public, tensor_method

# -- broadcasting: expand and its adjoint, the sum back to a shape -----------------------------


def _sum_to_forward(xp, input, shape):
    lead = input.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, size in enumerate(shape) if size == 1 and input.shape[lead + i] != 1
    )
    if axes:
        input = input.sum(axis=axes, keepdims=True)
    return input.reshape(shape)


def _numpy_sum_to(w, input, shape) -> str:
    """np.sum over the axes that broadcasting added (the shapes are known: worked out here, once)."""
    lead = len(input.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and input.shape[lead + i] != 1)
    summed = f"np.sum({w(input)}, axis={w(axes)})"
    kept = tuple(input.shape[lead + i] for i in range(len(shape)) if (lead + i) not in axes)
    return summed if kept == tuple(shape) else f"np.reshape({summed}, {w(tuple(shape))})"


def _joined(numpy_name: str):
    """np.concatenate and np.stack take a list of arrays, then the axis."""
    return lambda w, tensors, dim: f"np.{numpy_name}([{', '.join(w(t) for t in tensors)}], axis={w(dim)})"


def _cast(s, input, dtype):
    """A cast to floats is the value itself; to integers it truncates, to bool it asks `!= 0`."""
    name = getattr(dtype, "name", str(dtype))
    if name == "bool":
        return s.compare("ne", input, 0.0)
    if "int" in name:
        return s.call("trunc", input)
    return s.same(input)


def _dot_t(w, x) -> str:
    """`A.T`, in the language as in NumPy (a vector's is itself there too)."""
    return f"{w(x, ATOM)}.T"


_RESHAPED = Spelling(build=lambda s, input, *dims: s.reshape(input))
_SAME = Spelling(build=lambda s, input, *rest: s.same(input))
_CAST = Spelling(build=_cast, called="to")


def sum_to_recorded(grad, shape):
    """expand's adjoint as PyTorch's at::sum_to records it: a sum over the dims to reduce kept as
    1 (SumBackward1), then a view without the leading ones (ViewBackward0) where there were
    any. On arrays, and down to a number, one step."""
    if grad.__class__ is not Tensor and not isinstance(grad, Tensor):
        return SUM_TO.apply(grad, shape)
    shape = tuple(shape)
    have = tuple(grad.shape)
    if have == shape or not shape:  # to a number: one node still (PyTorch's is SumBackward0; derive reads sum_to)
        return grad if have == shape else SUM_TO.apply(grad, shape)
    lead = len(have) - len(shape)
    kept = (1,) * lead + shape
    summed = SUM_TO.apply(grad, kept) if kept != have else grad
    return VIEW.apply(summed, shape) if lead else summed


EXPAND = defop(
    "expand",
    lambda xp, input, shape: backend.broadcast_to(xp, input, shape),
    input=lambda grad, input_shape: sum_to_recorded(grad, input_shape),
    spelling=Spelling(numpy="np.broadcast_to", build=lambda s, x, shape: s.same(x)),
)
SUM_TO = defop(
    "sum_to", _sum_to_forward, grad_fn="SumBackward1", domain=True,
    input=lambda grad, input_shape: EXPAND.apply(grad, input_shape),
    spelling=Spelling(numpy=_numpy_sum_to, build=lambda s, x, shape: s.sum_to(x, shape)),
)


@public(method=lambda self, *sizes: expand(self, _sizes(sizes)), batch=shape_argument("shape"))
def expand(input: Tensor, shape) -> Tensor:
    """`input` broadcast to `shape` (-1 keeps a size), without copying."""
    shape = tuple(shape)
    have = input._data.shape
    if len(shape) < len(have):
        raise RuntimeError(
            f"expand({legacy_type_name(input)}{{{list(have)}}}, size={list(shape)}): the number of sizes "
            f"provided ({len(shape)}) must be greater or equal to the number of dimensions in the tensor ({len(have)})"
        )
    lead = len(shape) - len(have)
    target = []
    for i, size in enumerate(shape):
        existing = have[i - lead] if i >= lead else None
        if size == -1:
            if existing is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}")
            size = existing
        if existing is not None and existing != 1 and existing != size:
            raise RuntimeError(
                f"The expanded size of the tensor ({size}) must match the existing size ({existing}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor sizes: {list(have)}"
            )
        target.append(size)
    return EXPAND.apply(input, tuple(target))  # a new node even for the same shape, as PyTorch


@public
def sum_to(input: Tensor, shape) -> Tensor:
    """Sum `input` down to `shape`, which it must broadcast from: the adjoint of expand."""
    shape = tuple(shape)
    have = input._data.shape
    if have == shape:
        return input
    lead = len(have) - len(shape)
    if lead < 0 or any(s != 1 and s != have[lead + i] for i, s in enumerate(shape)):
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(have)}.")
    return SUM_TO.apply(input, shape)


@public(batch=None)
def broadcast_shapes(*shapes) -> tuple:
    """The shape that tensors of these shapes broadcast to."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise broadcast_error(shapes)
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _t_rule(function, args, kwargs):
    """t() of a matrix example swaps its two dims; vectors and numbers stay (each example alone)."""
    (input,) = args
    if input.ndim == 2:
        return Batched(TRANSPOSE.apply(input.physical, 1, 2))
    return by_example(function, args, kwargs)


def _permute_rule(function, args, kwargs):
    input, order = args
    if input.__class__ is not Batched:
        return by_example(function, args, kwargs)
    ndim = input.ndim
    order = tuple(normalize_dim(d, ndim) + 1 for d in order)
    return Batched(function(input.physical, (0,) + order))


def _squeeze_rule(function, args, kwargs):
    """squeeze() of an example removes its own size-1 dims, never the batch dim."""
    input = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None and input.__class__ is Batched:
        ones = tuple(i for i, size in enumerate(input.shape) if size == 1)
        return Batched(function(input.physical, tuple(d + 1 for d in ones))) if ones else input
    return dims("dim")(function, args, kwargs)


# -- transposes -----------------------------------------------------------------------------------

def _latex_t(w, x) -> str:
    """Xᵀ; of an inverse X^{-⊤} (one superscript: LaTeX refuses two)."""
    if getattr(x, "op", None) == "linalg_inv":
        return f"{w(x.args[0], ATOM)}^{{-\\top}}"
    return f"{w(x, ATOM)}^{{\\top}}"


T = defop("t", lambda xp, input: input.T, input=lambda grad: T.apply(grad),
          spelling=Spelling(language=_dot_t, numpy=_dot_t, latex=_latex_t,
                            build=lambda s, x: s.transposed(x)))
TRANSPOSE = defop(
    "transpose",
    lambda xp, input, dim0, dim1: xp.swapaxes(input, dim0, dim1),
    input=lambda grad, dim0, dim1: TRANSPOSE.apply(grad, dim0, dim1),
    spelling=Spelling(numpy="np.swapaxes", build=lambda s, x, d0, d1: s.transposed(x, d0, d1)),
)
PERMUTE = defop(
    "permute",
    lambda xp, input, dims: xp.transpose(input, dims),
    input=lambda grad, dims: PERMUTE.apply(grad, _inverse_permutation(dims)),
    spelling=Spelling(numpy="np.transpose", build=lambda s, x, dims: _permute_built(s, x, dims)),
)


def _permute_built(s, x, dims):
    """A matrix's dims swapped (`A.T`, PyTorch's permute) is its transpose, t(A)."""
    if len(dims) == 2 and tuple(d % 2 for d in dims) == (1, 0):
        return s.transposed(x) or s.call("t", x)
    return None


def _inverse_permutation(dims) -> tuple:
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return tuple(inverse)


@public(method=True, batch=_t_rule)
def t(input: Tensor) -> Tensor:
    """Transpose a matrix; 0-d and 1-d tensors come back as they are."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._data.ndim}D")
    return T.apply(input)


@public(method=True, aliases=("swapaxes",), batch=dims("dim0", "dim1"))
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions."""
    ndim = input._data.ndim
    dim0, dim1 = normalize_dim(dim0, ndim), normalize_dim(dim1, ndim)
    return TRANSPOSE.apply(input, dim0, dim1)


@public(method=lambda self, *dims: permute(self, _sizes(dims)), batch=_permute_rule)
def permute(input: Tensor, dims) -> Tensor:
    """Reorder the dimensions: output dimension i is input dimension dims[i]."""
    ndim = input._data.ndim
    dims = tuple(normalize_dim(d, ndim) for d in dims)
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}"
        )
    if len(set(dims)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return PERMUTE.apply(input, dims)


# -- reshapes -------------------------------------------------------------------------------------

VIEW = defop(
    "view",
    lambda xp, input, shape: input.reshape(shape),
    input=lambda grad, input_shape: VIEW.apply(grad, input_shape),
    spelling=_RESHAPED,
)
RESHAPE_ALIAS = defop(
    "reshape_alias",
    lambda xp, input, shape: input.reshape(shape),
    input=lambda grad, input_shape: VIEW.apply(grad, input_shape),
    spelling=_RESHAPED.but(called="reshape"),
)
UNSAFE_VIEW = defop(
    "unsafe_view",
    lambda xp, input, shape: input.reshape(shape),
    input=lambda grad, input_shape: VIEW.apply(grad, input_shape),
    spelling=_RESHAPED.but(called="view"),
)
ALIAS = defop("alias", lambda xp, input: input, input=lambda grad: grad, spelling=_SAME)  # x[:, :], x[...]
CLONE = defop("clone", lambda xp, input: input.copy(order="K"), batch=ELEMENTWISE,  # keeps the layout, as PyTorch's clone
              doc="A copy that stays in the graph.", method=True,
              input=lambda grad: grad,
    spelling=_SAME,
)


def _infer_shape(shape, numel: int) -> tuple:
    shape = tuple(int(s) for s in shape)
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {min(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: unknown[0]] + (numel // known,) + shape[unknown[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _viewable(array, shape) -> bool:
    """Whether `array` can take `shape` without copying (as a PyTorch view could)."""
    if getattr(array, "flags", None) is None or array.flags.c_contiguous:
        return True
    if not backend.is_numpy(array):  # CuPy copies silently when it must: see whether it did
        return bool(backend.array_module(array).may_share_memory(array, array.reshape(shape)))
    try:
        backend.np.reshape(array, shape, copy=False)
    except (ValueError, TypeError):
        return False
    return True


@public(method=lambda self, *shape: view(self, _sizes(shape)), batch=shape_argument("shape"))
def view(input: Tensor, shape) -> Tensor:
    """The same values in a new shape; fails where the data would have to be copied."""
    shape = _infer_shape(shape, input._data.size)
    if not _viewable(input._data, shape):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return VIEW.apply(input, shape)


@public(method=lambda self, *shape: reshape(self, _sizes(shape)), batch=shape_argument("shape"),
        spelling=Spelling(numpy="np.reshape"))
def reshape(input: Tensor, shape) -> Tensor:
    """The same values in a new shape (a view where possible, else a copy, as in PyTorch)."""
    data = input._data
    shape = _infer_shape(shape, data.size)
    if _viewable(data, shape):  # PyTorch names the view of a non-contiguous tensor apart
        return (VIEW if data.flags.c_contiguous else RESHAPE_ALIAS).apply(input, shape)
    return UNSAFE_VIEW.apply(CLONE.apply(input), shape)


def unsafe_view(input: Tensor, shape) -> Tensor:
    return UNSAFE_VIEW.apply(input, tuple(shape))


@public(method=True, batch=dims("start_dim", "end_dim"))
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one."""
    shape = input._data.shape
    if not shape:
        return reshape(input, (1,))
    start, end = normalize_dim(start_dim, len(shape)), normalize_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    return reshape(input, shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :])


UNSQUEEZE = defop(
    "unsqueeze",
    lambda xp, input, dim: xp.expand_dims(input, dim),
    input=lambda grad, dim: SQUEEZE_DIM.apply(grad, dim),
    spelling=_RESHAPED,
)
def _unsqueeze_to(grad, input_shape: tuple, dims=None):
    """squeeze's gradient: an unsqueeze for each of `dims` (every dim: None) that has size 1 in
    the input, in increasing order, as PyTorch's unsqueeze_to (no node where none is needed)."""
    for dim in range(len(input_shape)):
        if input_shape[dim] == 1 and (dims is None or dim in dims):
            grad = UNSQUEEZE.apply(grad, dim)
    return grad


SQUEEZE_ALL = defop(
    "squeeze",
    lambda xp, input: xp.squeeze(input),
    input=lambda grad, input_shape: _unsqueeze_to(grad, input_shape),
    spelling=_RESHAPED,
)
SQUEEZE_DIM = defop(
    "squeeze_dim",
    lambda xp, input, dim: xp.squeeze(input, axis=dim) if input.shape[dim] == 1 else input, grad_fn="SqueezeBackward1",
    input=lambda grad, input_shape, dim: _unsqueeze_to(grad, input_shape, (dim,)),
    spelling=_RESHAPED,
)
SQUEEZE_MATMUL = defop(  # matmul's vector @ matrix squeezes in place, which PyTorch names so
    "squeeze_",
    lambda xp, input, dim: xp.squeeze(input, axis=dim), grad_fn="SqueezeBackward4",
    input=lambda grad, input_shape: VIEW.apply(grad, input_shape),
    spelling=_RESHAPED,
)
SQUEEZE_DIMS = defop(
    "squeeze_dims",
    lambda xp, input, dims: xp.squeeze(input, axis=tuple(d for d in dims if input.shape[d] == 1)),
    grad_fn="SqueezeBackward2",
    input=lambda grad, input_shape, dims: _unsqueeze_to(grad, input_shape, dims),
    spelling=_RESHAPED,
)


@along_dim(new_dims=1)
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at `dim`."""
    return UNSQUEEZE.apply(input, normalize_dim(dim, input._data.ndim + 1))


@public(method=True, batch=_squeeze_rule)
def squeeze(input: Tensor, dim=None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or those in `dim`)."""
    ndim = input._data.ndim
    if dim is None:
        return SQUEEZE_ALL.apply(input)
    if ndim == 0:
        normalize_dim(dim if isinstance(dim, int) else dim[0], 0)
        return SQUEEZE_ALL.apply(input)
    if isinstance(dim, int):
        return SQUEEZE_DIM.apply(input, normalize_dim(dim, ndim))
    return SQUEEZE_DIMS.apply(input, normalize_dims(dim, ndim))


FLIP = defop(
    "flip",
    lambda xp, input, dims: xp.flip(input, axis=dims).copy(order="K"),  # new, in the layout of input
    input=lambda grad, dims: FLIP.apply(grad, dims),
    spelling=Spelling(numpy="np.flip({0}, axis={1})"),
)


@public(method=lambda self, *dims: flip(self, _sizes(dims)), batch=dims("dims"))
def flip(input: Tensor, dims) -> Tensor:
    """Reverse the order of elements along `dims`."""
    return FLIP.apply(input, normalize_dims(dims, input._data.ndim))


# -- joins ------------------------------------------------------------------------------------------

def _cat_grad(grad, i, tensors_shape, dim):
    from .indexing import SLICE

    start = sum(shape[dim] for shape in tensors_shape[:i])
    return SLICE.apply(grad, dim, start, start + tensors_shape[i][dim], 1)


CAT = defop(
    "cat",
    lambda xp, tensors, dim: contiguous(xp, xp.concatenate(tensors, axis=dim)),
    variadic=True,
    tensors=_cat_grad,
    spelling=Spelling(numpy=_joined("concatenate")),
)
STACK = defop(
    "stack",
    lambda xp, tensors, dim: contiguous(xp, xp.stack(tensors, axis=dim)),
    variadic=True,
    tensors=lambda grad, i, dim: _select(grad, dim, i),
    spelling=Spelling(numpy=_joined("stack")),
)


def _select(grad, dim, i):
    from .indexing import SELECT

    return SELECT.apply(grad, dim, i)


@public(aliases=("concat", "concatenate"), batch=joins(new_dim=False))
def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("autodiff.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    first = tensors[0]._data.shape
    dim = normalize_dim(dim, len(first))
    for i, t in enumerate(tensors[1:], start=1):
        shape = t._data.shape
        if len(shape) != len(first):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)}"
            )
        for d, (a, b) in enumerate(zip(first, shape)):
            if d != dim and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {a} but got "
                    f"size {b} for tensor number {i} in the list."
                )
    return CAT.apply(tensors, dim)


@public(batch=joins(new_dim=True))
def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors of equal shape along a new dimension."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors[1:], start=1):
        if t._data.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                f"{list(t._data.shape)} at entry {i}"
            )
    return STACK.apply(tensors, normalize_dim(dim, len(first) + 1))


# -- casts and moves --------------------------------------------------------------------------------

TO_DTYPE = defop(
    "to_dtype", lambda xp, input, dtype: input.astype(dtype), grad_fn="ToCopyBackward0",
    input=lambda grad, input_dtype: TO_DTYPE.apply(grad, input_dtype),
    spelling=_CAST,
)
TO_DEVICE = defop(
    "to_device", lambda xp, input, device: backend.to_device(input, device), grad_fn="ToCopyBackward0",
    input=lambda grad, input_device: TO_DEVICE.apply(grad, input_device),
    spelling=_SAME.but(called="to"),
)



def _zeros_for(grad):
    """PyTorch's zeros_like(grad), recorded nowhere: the overwritten value has no gradient."""
    data = grad._data if isinstance(grad, Tensor) else grad
    zeros = backend.array_module(data).zeros(data.shape, dtype=data.dtype)
    return _make(zeros) if isinstance(grad, Tensor) else zeros


# `x.copy_(src)`: src broadcast to x's shape and cast to its dtype. The engine sums the gradient
# back to src's shape and dtype, as PyTorch's CopyBackwards does.
COPY = elementwise_op(
    "copy", lambda xp, input, src: backend.broadcast_to(xp, src, input.shape).astype(input.dtype),
    grad_fn="CopyBackwards",
    input=lambda grad: _zeros_for(grad),
    src=lambda grad: grad,
    spelling=Spelling(build=lambda s, input, src: s.same(src)),
)


# `x.fill_(v)` and `x.zero_()` on a tensor in a graph: recorded, as PyTorch records them, with no
# gradient for the value they overwrite (FillBackward3: a 0-d tensor value gets the gradient's sum).
FILL = elementwise_op(
    "fill", lambda xp, input, value: backend.full_like_array(input, value), grad_fn="FillBackward2",
    input=lambda grad: _zeros_for(grad),
    spelling=Spelling(build=lambda s, input, value: s.const(value, s.shape)),
)
FILL_TENSOR = elementwise_op(
    "fill_tensor", lambda xp, input, value: backend.broadcast_to(xp, value, input.shape).astype(input.dtype),
    grad_fn="FillBackward3",
    input=lambda grad: _zeros_for(grad),
    value=lambda grad: grad,
    spelling=Spelling(build=lambda s, input, value: s.same(value)),
)
ZERO = elementwise_op(
    "zero", lambda xp, input: backend.zeros_like_array(input), grad_fn="ZeroBackward0",
    input=lambda grad: _zeros_for(grad),
    spelling=Spelling(build=lambda s, input: s.const(0.0, s.shape)),
)


@tensor_method("fill_")
def _fill_(self: Tensor, value) -> Tensor:
    """Set every element to `value` (a number, or a 0-d tensor), in place."""
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               "dimensions.")
        if GRAD_MODE.enabled and (self._requires_grad or value._requires_grad):
            return self._apply_inplace(FILL_TENSOR.apply, value)
        value = value.item()
    if GRAD_MODE.enabled and self._requires_grad:
        return self._apply_inplace(FILL.apply, value)
    return self._fill_with(backend.full_like_array(self._data, value))  # nothing to record


@tensor_method("zero_")
def _zero_(self: Tensor) -> Tensor:
    """Set every element to 0, in place."""
    if GRAD_MODE.enabled and self._requires_grad:
        return self._apply_inplace(ZERO.apply)
    return self._fill_with(backend.zeros_like_array(self._data))


@tensor_method("copy_")
def _copy_(self: Tensor, src) -> Tensor:
    """Copy `src` (broadcast, cast) into this tensor, in place."""
    return self._apply_inplace(COPY.apply, _as_tensor(src, self))


def to_dtype(input: Tensor, dtype) -> Tensor:
    numpy_dtype = dtypes.to_numpy(dtype)
    if input._data.dtype == numpy_dtype:
        return input
    if numpy_dtype.kind not in "fc":  # integers and bools carry no gradient: nothing recorded (PyTorch's)
        with no_grad():
            return TO_DTYPE.apply(input, numpy_dtype)
    return TO_DTYPE.apply(input, numpy_dtype)


def to_device(input: Tensor, device) -> Tensor:
    device = backend.device(device)
    if input.device == device or (device.index is None and input.device.type == device.type):
        return input
    return TO_DEVICE.apply(input, device)


@tensor_method("to", batch=ELEMENTWISE)
def to(input: Tensor, *args, dtype=None, device=None, copy: bool = False, non_blocking: bool = False) -> Tensor:
    """`to(dtype)`, `to(device)`, `to(device, dtype)` or `to(other_tensor)`, as in PyTorch."""
    for arg in args:
        if isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, (dtypes.dtype,)) or (isinstance(arg, str) and arg in dtypes._BY_NAME):
            dtype = arg
        elif isinstance(arg, (str, backend.device)):
            device = arg
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {arg!r}")
    result = input
    if device is not None:
        result = to_device(result, device)
    if dtype is not None:
        result = to_dtype(result, dtype)
    if copy and result is input:
        result = CLONE.apply(input)
    return result


@public(batch=ELEMENTWISE, spelling=Spelling(numpy="np.asarray"))
def detach(input: Tensor) -> Tensor:
    """The same values, cut from the graph: gradients do not flow through."""
    return input.detach()


@tensor_method("view_as")
def _view_as(self, other):
    """This tensor's values in `other`'s shape (a view)."""
    return view(self, other._data.shape)


@tensor_method("expand_as")
def _expand_as(self, other):
    """This tensor broadcast to `other`'s shape."""
    return expand(self, other._data.shape)


@tensor_method("sum_to_size")
def _sum_to_size(self, *size):
    """This tensor summed down to `size`, which it broadcasts from."""
    return sum_to(self, _sizes(size))

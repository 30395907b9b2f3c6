"""Rearranging values: roll, repeat and tile, movedim, triangles, diagonals and trace, outer, masked_fill.

Each with PyTorch's node (`RollBackward0`, `RepeatBackward0`, `TrilBackward0`,
`DiagonalBackward0`, `TraceBackward0`; movedim is a permute and outer a product, as in
PyTorch) and its error texts; each gradient is written with ops.
"""

from __future__ import annotations

from ..backend import contiguous
from ..tensor import Tensor, _sizes
from .batching import Batched, by_example, dims
from .dims import normalize_dim
from .reduction import SUM_DIM
from .registry import defop, elementwise_op, like
from .spelling import Spelling
from .shape import PERMUTE, VIEW, reshape
from .surface import public


def _through(function, args, kwargs):
    """The rule of a function written with ops that batch themselves: it runs as it is."""
    return function(*args, **kwargs)


def _matrices(function, args, kwargs):
    """Ops on the last two dims (tril, triu): the batch dimension in front changes nothing."""
    input = args[0]
    if input.__class__ is not Batched or input.ndim < 2 or any(a.__class__ is Batched for a in args[1:]):
        return by_example(function, args, kwargs)
    return Batched(function(input.physical, *args[1:], **kwargs))


# -- roll -------------------------------------------------------------------------------------------


def _roll(xp, input, shifts, dims):
    """`dims` () rolls the flattened tensor (PyTorch's roll without dims)."""
    return contiguous(xp, xp.roll(input, shifts, axis=dims) if dims else xp.roll(input, shifts[0]))


def _roll_rule(function, args, kwargs):
    dims_given = args[2] if len(args) > 2 else kwargs.get("dims")
    if not dims_given:
        return by_example(function, args, kwargs)  # the whole example, flattened
    return dims("dims")(function, args, kwargs)


def _numpy_roll(w, input, shifts, dims) -> str:
    return f"np.roll({w(input)}, {w(shifts)}, axis={w(dims)})" if dims else f"np.roll({w(input)}, {shifts[0]})"


ROLL = defop("roll", _roll, batch=_roll_rule,
             input=lambda grad, shifts, dims: ROLL.apply(grad, tuple(-s for s in shifts), dims),
    spelling=Spelling(numpy=_numpy_roll),
)


@public(method=True, batch=_roll_rule)
def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Shift the elements along `dims` by `shifts`, those that leave at one end coming back at the
    other; without `dims`, the flattened tensor is shifted and given its shape back."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None or dims == ():
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return ROLL.apply(input, shifts, ())
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    ndim = input._data.ndim
    return ROLL.apply(input, shifts, tuple(normalize_dim(d, ndim) for d in dims))


# -- repeat and tile ----------------------------------------------------------------------------------


def _repeat_grad(grad, input_shape, repeats):
    """Each input element's copies summed: the gradient seen as (repeat, size) pairs, the repeats summed."""
    shape = (1,) * (len(repeats) - len(input_shape)) + tuple(input_shape)
    pairs = tuple(n for r, s in zip(repeats, shape) for n in (r, s))
    summed = SUM_DIM.apply(VIEW.apply(grad, pairs), tuple(range(0, len(pairs), 2)), False)
    return VIEW.apply(summed, tuple(input_shape))


def _repeat_rule(function, args, kwargs):
    input, repeats = args[0], tuple(args[1])
    if input.__class__ is not Batched or len(repeats) < input.ndim:
        return by_example(function, args, kwargs)
    physical = input.physical
    lead = len(repeats) - input.ndim  # new dims of the example go after the batch dimension
    physical = reshape(physical, physical.shape[:1] + (1,) * lead + tuple(physical.shape[1:]))
    return Batched(REPEAT.apply(physical, (1,) + repeats))


REPEAT = defop(
    "repeat", lambda xp, input, repeats: contiguous(xp, xp.tile(input, repeats)), batch=_repeat_rule,
    input=_repeat_grad,
    spelling=Spelling(numpy="np.tile"),
)


def _repeat(input: Tensor, repeats) -> Tensor:
    repeats = tuple(int(r) for r in repeats)
    if len(repeats) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(repeats)}: {list(repeats)}")
    return REPEAT.apply(input, repeats)


@public(method=lambda self, *repeats: repeat(self, _sizes(repeats)), batch=_repeat_rule)
def repeat(input: Tensor, repeats) -> Tensor:
    """`input` repeated `repeats[i]` times along dim i (new leading dims where `repeats` is longer)."""
    return _repeat(input, repeats)


@public(method=lambda self, *dims: tile(self, _sizes(dims)), batch=_through)
def tile(input: Tensor, dims) -> Tensor:
    """`repeat`, with `dims` padded with ones in front where it is shorter than `input`'s dims."""
    dims = tuple(int(d) for d in dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


# -- movedim ------------------------------------------------------------------------------------------


@public(method=True, aliases=("moveaxis",), batch=_through)
def movedim(input: Tensor, source, destination) -> Tensor:
    """Move the dims `source` to the places `destination`, the others keeping their order (a permute)."""
    ndim = input.ndim
    source = [source] if isinstance(source, int) else list(source)
    destination = [destination] if isinstance(destination, int) else list(destination)
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({source} dims) should contain the same number "
            f"of dims as destination ({destination} dims)"
        )
    source = [normalize_dim(d, ndim) for d in source]
    destination = [normalize_dim(d, ndim) for d in destination]
    for name, given in (("source", source), ("destination", destination)):
        if len(set(given)) != len(given):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    order = [None] * ndim
    for s, d in zip(source, destination):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in source)
    order = tuple(next(rest) if o is None else o for o in order)
    from .shape import permute

    return permute(input, order)


# -- triangles ----------------------------------------------------------------------------------------

TRIL = defop("tril", lambda xp, input, diagonal: xp.tril(input, diagonal),
             input=lambda grad, diagonal: TRIL.apply(grad, diagonal), batch=_matrices,
    spelling=Spelling(numpy="np.tril"),
)
TRIU = defop("triu", lambda xp, input, diagonal: xp.triu(input, diagonal),
             input=lambda grad, diagonal: TRIU.apply(grad, diagonal), batch=_matrices,
    spelling=Spelling(numpy="np.triu"),
)


@public(method=True, batch=_matrices)
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (on and below `diagonal`), zeros elsewhere."""
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return TRIL.apply(input, int(diagonal))


@public(method=True, batch=_matrices)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (on and above `diagonal`), zeros elsewhere."""
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return TRIU.apply(input, int(diagonal))


# -- diagonals and trace ------------------------------------------------------------------------------


def _diagonal_key(shape, offset, dim1, dim2):
    """The index arrays of the diagonal in `shape` moved to (..., dim1, dim2)."""
    n = max(0, min(shape[dim1] - max(-offset, 0), shape[dim2] - max(offset, 0)))
    return n, max(-offset, 0), max(offset, 0)


def _diagonal(xp, input, offset, dim1, dim2):
    return contiguous(xp, xp.diagonal(input, offset, dim1, dim2))


def _diagonal_place(xp, input, shape, offset, dim1, dim2):
    """Zeros of `shape` with `input` (the diagonal, in its last dim) on the diagonal (dim1, dim2)."""
    out = xp.zeros(shape, dtype=input.dtype)
    n, row, column = _diagonal_key(shape, offset, dim1, dim2)
    view = xp.moveaxis(out, (dim1, dim2), (-2, -1))
    steps = xp.arange(n)
    view[..., steps + row, steps + column] = input
    return out


def _diagonal_backward_built(s, g, shape, offset, dim1, dim2):
    """g on the diagonal of zeros of `shape`: diag_embed where that is the whole shape, else a
    scatter into the flattened zeros at the diagonal's places."""
    from .. import backend

    np = backend.np
    shape = tuple(shape)
    n = g.shape[-1]
    embedded = list(g.shape[:-1])
    for d in sorted((dim1, dim2)):
        embedded.insert(d, n + abs(offset))
    if tuple(embedded) == shape:
        return s.call("diag_embed", g, offset, dim1, dim2)
    positions = np.diagonal(np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape), offset, dim1, dim2)
    size = (int(np.prod(shape, dtype=np.int64)),)
    flat = s.call("scatter_add", s.const(0.0, size), 0, positions.reshape(-1), s.reshape(g, (positions.size,)),
                  shape=size)
    return s.reshape(flat, shape)


DIAGONAL = defop(
    "diagonal", _diagonal, batch=dims("dim1", "dim2"),
    input=lambda grad, input_shape, offset, dim1, dim2: DIAGONAL_BACKWARD.apply(grad, input_shape, offset, dim1, dim2),
    spelling=Spelling(numpy="np.diagonal"),
)
DIAGONAL_BACKWARD = defop(
    "diagonal_backward", _diagonal_place,
    input=lambda grad, offset, dim1, dim2: DIAGONAL.apply(grad, offset, dim1, dim2),
    spelling=Spelling(build=_diagonal_backward_built),
)


@public(method=True, batch=dims("dim1", "dim2"))
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal `offset` (above the main one where positive) of the dims dim1, dim2, as a new last dim."""
    ndim = input._data.ndim
    dim1, dim2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DIAGONAL.apply(input, int(offset), dim1, dim2)


def _trace_rule(function, args, kwargs):
    (input,) = args
    if input.__class__ is not Batched or input.ndim != 2:
        return by_example(function, args, kwargs)
    return Batched(SUM_DIM.apply(DIAGONAL.apply(input.physical, 0, 1, 2), (1,), False))


def _trace_grad(grad, input_shape, input_dtype):
    """grad on the diagonal: grad times the identity of the input's shape."""
    from .. import backend

    data = grad._data if isinstance(grad, Tensor) else grad
    eye = backend.array_module(data).eye(*input_shape, dtype=input_dtype)
    return grad * like(grad, eye)


TRACE = defop("trace", lambda xp, input: xp.trace(input), input=_trace_grad, batch=_trace_rule,
              spelling=Spelling(numpy="np.trace", latex=r"\operatorname{tr}"))


@public(method=True, batch=_trace_rule)
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input._data.ndim}")
    return TRACE.apply(input)


# -- outer ----------------------------------------------------------------------------------------------


@public(method=True, batch=_through)
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """input[i] * vec2[j]: the outer product of two vectors (a product, MulBackward0, as PyTorch)."""
    for name, value in (("self", input), ("vec2", vec2)):
        if value.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {value.ndim}-D")
    return reshape(input, (input.shape[0], 1)) * vec2



# -- masked_fill --------------------------------------------------------------------------------------

from .batching import ELEMENTWISE  # noqa: E402
from .selection import WHERE  # noqa: E402

MASKED_FILL = elementwise_op(
    "masked_fill", lambda xp, input, mask, value: xp.where(mask, xp.asarray(value, dtype=input.dtype), input),
    nondiff=("mask",),
    input=lambda grad, mask: WHERE.apply(mask, 0.0, grad),
    spelling=Spelling(numpy="np.where({1}, {2}, {0})"),
)


@public(method=True, inplace=True, batch=ELEMENTWISE)
def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """`value` where the boolean `mask` (broadcast) holds, `input` elsewhere."""
    if mask.dtype.name != "bool":
        dtype = {"float64": "double", "float32": "float", "int64": "long", "int32": "int"}.get(mask.dtype.name, mask.dtype.name)
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {dtype}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        if value.requires_grad:  # the value gets its gradient too: a where (PyTorch's node is MaskedFillBackward1)
            return WHERE.apply(mask, value.to(input.dtype), input)
        value = value.item()
    return MASKED_FILL.apply(input, mask, float(value))

"""Vectors into matrices and back, and two products: diag, diag_embed, kron, cross.

As PyTorch records them: `diag` of a vector is a `diag_embed` (`DiagEmbedBackward0`) and of a
matrix a copy of its diagonal (`DiagonalBackward0_copy`, PyTorch's name for that node); `kron`
is a product of two reshapes (`UnsafeViewBackward0` over `MulBackward0`); `cross` is
`linalg_cross` (`LinalgCrossBackward0`). Each gradient is another of them: a diagonal's is the
diagonal placed among zeros, a cross product's is a cross product.
"""

from __future__ import annotations

import warnings

from ..backend import contiguous
from ..tensor import Tensor
from .batching import Batched, _aligned, _bind, _example_ndim, _result, _shift, by_example, dims
from .dims import normalize_dim
from .registry import defop
from .running import broadcast_error
from .spelling import Spelling, helped
from .rearrange import DIAGONAL, DIAGONAL_BACKWARD, _diagonal, _diagonal_place
from .shape import unsafe_view
from .surface import public


# -- diag_embed and diag -------------------------------------------------------------------------------


def _embedded_shape(shape: tuple, offset: int, dim1: int, dim2: int) -> tuple:
    """diag_embed's result: input's dims but the last, with two of size n + |offset| at dim1, dim2."""
    size = (shape[-1] if shape else 1) + abs(offset)
    rest = iter(shape[:-1])
    return tuple(size if d in (dim1, dim2) else next(rest) for d in range(len(shape) + 1))


def _diag_embed(xp, input, offset, dim1, dim2):
    return _diagonal_place(xp, input, _embedded_shape(input.shape, offset, dim1, dim2), offset, dim1, dim2)


_DIAG_EMBED = helped(
    "def _diag_embed(x, offset, dim1, dim2):\n"
    "    ndim = x.ndim + 1\n"
    "    dim1, dim2 = dim1 % ndim, dim2 % ndim\n"
    "    rest = iter(x.shape[:-1])\n"
    "    size = x.shape[-1] + abs(offset)\n"
    "    out = np.zeros(tuple(size if d in (dim1, dim2) else next(rest) for d in range(ndim)), dtype=x.dtype)\n"
    "    view = np.moveaxis(out, (dim1, dim2), (-2, -1))\n"
    "    steps = np.arange(x.shape[-1])\n"
    "    view[..., steps + max(-offset, 0), steps + max(offset, 0)] = x\n"
    "    return out\n")

DIAG_EMBED = defop(
    "diag_embed", _diag_embed, batch=dims("dim1", "dim2", new_dims=1),
    input=lambda grad, offset, dim1, dim2: DIAGONAL.apply(grad, offset, dim1, dim2),
    spelling=_DIAG_EMBED,
)
DIAGONAL_COPY = defop(
    "diagonal_copy", _diagonal, grad_fn="DiagonalBackward0_copy", batch=dims("dim1", "dim2"),
    input=lambda grad, input_shape, offset, dim1, dim2: DIAGONAL_BACKWARD.apply(grad, input_shape, offset, dim1, dim2),
    spelling=Spelling(build=lambda s, x, offset, dim1, dim2: s.call("diagonal", x, offset, dim1, dim2)),
)


@public(method=True, batch=dims("dim1", "dim2", new_dims=1))
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose diagonals (offset `offset`) in the dims dim1, dim2 hold input's last dim,
    zeros elsewhere: input's other dims come first, in order."""
    ndim = input.ndim + 1
    dim1, dim2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return DIAG_EMBED.apply(input, int(offset), dim1, dim2)


def _diag_rule(function, args, kwargs):
    """A batch of vectors embeds each in the dims after the batch; a batch of matrices likewise."""
    bound = _bind(function, args, kwargs)
    input = bound.arguments["input"]
    diagonal = bound.arguments.get("diagonal", 0)
    if input.__class__ is not Batched or input.ndim not in (1, 2) or diagonal.__class__ is Batched:
        return by_example(function, args, kwargs)
    op = DIAG_EMBED if input.ndim == 1 else DIAGONAL_COPY
    return _result(op.apply(input.physical, int(diagonal), 1, 2))


@public(method=True, batch=_diag_rule)
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """Of a vector, the square matrix with it on the diagonal `diagonal` (above the main one where
    positive); of a matrix, that diagonal as a vector."""
    if input.ndim == 1:
        return DIAG_EMBED.apply(input, int(diagonal), 0, 1)
    if input.ndim == 2:
        return DIAGONAL_COPY.apply(input, int(diagonal), 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


# -- kron ------------------------------------------------------------------------------------------------


@public(method=True)
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: each element of input times the whole of other, in blocks. Written
    as PyTorch writes it: input's dims interleaved with ones, other's after ones, multiplied
    (broadcast) and reshaped."""
    ndim = max(input.ndim, other.ndim)
    a = (1,) * (ndim - input.ndim) + tuple(input.shape)
    b = (1,) * (ndim - other.ndim) + tuple(other.shape)
    left = unsafe_view(input, tuple(n for size in a for n in (size, 1)))
    right = unsafe_view(other, tuple(n for size in b for n in (1, size)))
    return unsafe_view(left * right, tuple(m * n for m, n in zip(a, b)))


# -- cross ----------------------------------------------------------------------------------------------


def _cross_rule(function, args, kwargs):
    """Both operands aligned from the right with the batch in front; dim moves past it."""
    bound = _bind(function, args, kwargs)
    bound.apply_defaults()
    a = bound.arguments
    ndim = max(_example_ndim(a["input"]), _example_ndim(a["other"]))
    if a["dim"] is None or not ndim:
        return by_example(function, args, kwargs)
    for name in ("input", "other"):
        value = a[name]
        a[name] = _aligned(value, ndim) if value.__class__ is Batched else value.unsqueeze(0)
    a["dim"] = _shift(a["dim"], ndim)
    return _result(function(*bound.args, **bound.kwargs))


CROSS = defop(
    "cross", lambda xp, input, other, dim: contiguous(xp, xp.cross(input, other, axis=dim)),
    grad_fn="LinalgCrossBackward0", batch=_cross_rule,
    input=lambda grad, other, dim: CROSS.apply(other, grad, dim),
    other=lambda grad, input, dim: CROSS.apply(grad, input, dim),
    spelling=Spelling(numpy="np.cross({0}, {1}, axis={2})"),
)

# PyTorch's warning, naming autodiff's function; autodiff has no linalg.cross for it to point to.
_NO_DIM = ("Using autodiff.cross without specifying the dim arg is deprecated.\nPlease pass the dim explicitly.\n"
           "The default value of dim will change to agree with that of linalg.cross in a future release.")


@public(method=True, batch=_cross_rule)
def cross(input: Tensor, other: Tensor, dim=None) -> Tensor:
    """The cross product of the 3-vectors along `dim` (operands broadcast); without `dim`, along the
    first dim of size 3, with PyTorch's warning that this default will change."""
    if dim is None:
        warnings.warn(_NO_DIM, UserWarning, stacklevel=2)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    given, dim = dim, normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {given} but tensor has no dimensions")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {given} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    for d, (m, n) in enumerate(zip(input.shape, other.shape)):
        if m != n and 1 not in (m, n):
            raise broadcast_error((tuple(input.shape), tuple(other.shape)))
    return CROSS.apply(input, other, dim)

"""Matrix products. `matmul` (`@`) dispatches as PyTorch does, so the graph shows its nodes:
1-D·1-D is `dot`, 2-D@1-D is `mv`, 2-D@2-D is `mm`, and batched products fold into `mm`
or `bmm` and come back through `_unsafe_view`.
"""

from __future__ import annotations

import math

from ..tensor import Tensor
from .registry import ShapeError, defop
from .surface import bind_operators, public
from .shape import SQUEEZE_MATMUL, T, TRANSPOSE, UNSQUEEZE, broadcast_shapes, expand, reshape, squeeze, unsafe_view, unsqueeze

MM = defop(
    "mm", lambda xp, input, mat2: input @ mat2,
    input=lambda grad, mat2: MM.apply(grad, T.apply(mat2)),
    mat2=lambda grad, input: MM.apply(T.apply(input), grad),
)
MV = defop(
    "mv", lambda xp, input, vec: input @ vec,
    input=lambda grad, vec: UNSQUEEZE.apply(grad, 1) * vec,
    vec=lambda grad, input: MV.apply(T.apply(input), grad),
)
DOT = defop(
    "dot", lambda xp, input, other: input @ other,
    input=lambda grad, other: grad * other,
    other=lambda grad, input: grad * input,
)
BMM = defop(
    "bmm", lambda xp, input, mat2: input @ mat2,
    input=lambda grad, mat2: BMM.apply(grad, TRANSPOSE.apply(mat2, 1, 2)),
    mat2=lambda grad, input: BMM.apply(TRANSPOSE.apply(input, 1, 2), grad),
)


def _shape_text(shape) -> str:
    return "x".join(str(s) for s in shape)


@public(method=True)
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-D tensors."""
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    a, b = input._data.shape, mat2._data.shape
    if a[1] != b[0]:
        raise ShapeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(a)} and {_shape_text(b)})", (a, b)
        )
    return MM.apply(input, mat2)


@public(method=True)
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product."""
    a, b = input._data.shape, vec._data.shape
    if len(a) != 2 or len(b) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a)}, {len(b)}")
    if a[1] != b[0]:
        raise ShapeError(f"size mismatch, got input ({a[0]}), mat ({_shape_text(a)}), vec ({b[0]})", (a, b))
    return MV.apply(input, vec)


@public(method=True)
def dot(input: Tensor, other: Tensor) -> Tensor:
    """Inner product of two 1-D tensors."""
    a, b = input._data.shape, other._data.shape
    if len(a) != 1 or len(b) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(a)}D and {len(b)}D tensors")
    if a[0] != b[0]:
        raise ShapeError(
            f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the same number "
            f"of elements, but got {a[0]} and {b[0]} elements respectively",
            (a, b),
        )
    return DOT.apply(input, other)


@public(method=True)
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product of two 3-D tensors with equal batch sizes."""
    a, b = input._data.shape, mat2._data.shape
    if len(a) != 3 or len(b) != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if len(a) != 3 else "batch2 must be a 3D tensor")
    if a[0] != b[0] or a[2] != b[1]:
        raise ShapeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a[0]}, {a[2]}] but got: "
            f"[{b[0]}, {b[1]}].",
            (a, b),
        )
    return BMM.apply(input, mat2)


@public(method=True, operators=("__matmul__",))
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """`input @ other` with NumPy's rules for 1-D and batched operands."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'input' and 'other' must be Tensors")
    a, b = input._data.shape, other._data.shape
    if not a or not b:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(a)}D and {len(b)}D"
        )
    if len(a) == 1 and len(b) == 1:
        return dot(input, other)
    if len(a) == 2 and len(b) == 1:
        return mv(input, other)
    if len(a) == 1 and len(b) == 2:
        return SQUEEZE_MATMUL.apply(mm(unsqueeze(input, 0), other), 0)
    if len(a) == 2 and len(b) == 2:
        return mm(input, other)
    if len(a) >= 3 and len(b) <= 2:
        # Fold the batch into the rows: one mm (or mv) instead of a batched product.
        rows = reshape(input, (-1, a[-1]))
        if len(b) == 1:
            return unsafe_view(mv(rows, other), a[:-1])
        return unsafe_view(mm(rows, other), a[:-1] + (b[-1],))
    return _batched(input, other, a, b)


def _batched(input: Tensor, other: Tensor, a: tuple, b: tuple) -> Tensor:
    left = unsqueeze(input, 0) if len(a) == 1 else input
    right = unsqueeze(other, -1) if len(b) == 1 else other
    la, lb = left._data.shape, right._data.shape
    if la[-1] != lb[-2]:
        raise ShapeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(la[-2:])} and {_shape_text(lb[-2:])})", (a, b)
        )
    batch = broadcast_shapes(la[:-2], lb[:-2])
    n, k, m = la[-2], la[-1], lb[-1]
    count = math.prod(batch)
    left = reshape(expand(left, batch + (n, k)), (count, n, k))
    right = reshape(expand(right, batch + (k, m)), (count, k, m))
    out = unsafe_view(bmm(left, right), batch + (n, m))
    if len(a) == 1:
        out = squeeze(out, -2)
    if len(b) == 1:
        out = squeeze(out, -1)
    return out


def _reflected_matmul(input, other):
    return matmul(other, input)


bind_operators(_reflected_matmul, ("__rmatmul__",))

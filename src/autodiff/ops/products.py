"""Matrix products. `matmul` (`@`) dispatches as PyTorch does, so the graph shows its nodes:
1-D·1-D is `dot`, 2-D@1-D is `mv`, 2-D@2-D is `mm`, and batched products fold into `mm`
or `bmm` and come back through `_unsafe_view`.
"""

from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor
from .batching import matrix_product
from .registry import defop, on_arrays
from .running import ShapeError
from .spelling import PRODUCT, SUM, Spelling, infix
from .surface import bind_operators, public
from .shape import (
    PERMUTE, SQUEEZE_MATMUL, T, TRANSPOSE, UNSQUEEZE, VIEW, broadcast_shapes, expand, reshape, squeeze, unsafe_view,
    unsqueeze,
)

_NDARRAY = backend.np.ndarray
_PRODUCT = infix("@", PRODUCT, latex="")  # NumPy's @ is the same product; LaTeX writes A B


def _addmm(w, input, mat1, mat2) -> str:
    return f"{w(input, SUM)} + {w(mat1, PRODUCT)} @ {w(mat2, PRODUCT + 1)}"


MM = defop(
    "mm", lambda xp, input, mat2: input @ mat2,
    input=lambda grad, mat2: MM.apply(grad, T.apply(mat2)),
    mat2=lambda grad, input: MM.apply(T.apply(input), grad),
    spelling=_PRODUCT,
)


# MM's formulas on NumPy arrays, as a plain backward() calls them: the products themselves.
def _mm_input(grad, mat2):
    if grad.__class__ is _NDARRAY and mat2.__class__ is _NDARRAY:
        return grad @ mat2.T
    return MM.apply(grad, T.apply(mat2))


def _mm_mat2(grad, input):
    if grad.__class__ is _NDARRAY and input.__class__ is _NDARRAY:
        return input.T @ grad
    return MM.apply(T.apply(input), grad)


on_arrays(MM, input=_mm_input, mat2=_mm_mat2)
MV = defop(
    "mv", lambda xp, input, vec: input @ vec,
    input=lambda grad, vec: UNSQUEEZE.apply(grad, 1) * vec,
    vec=lambda grad, input: MV.apply(T.apply(input), grad),
    spelling=_PRODUCT,
)
DOT = defop(
    "dot", lambda xp, input, other: input @ other,
    input=lambda grad, other: grad * other,
    other=lambda grad, input: grad * input,
    spelling=_PRODUCT,
)
ADDMM = defop(  # input + mat1 @ mat2: linear()'s node, as in PyTorch (the bias broadcasts)
    "addmm", lambda xp, input, mat1, mat2: input + mat1 @ mat2,
    input=lambda grad: grad,
    mat1=lambda grad, mat2: MM.apply(grad, T.apply(mat2)),
    mat2=lambda grad, mat1: MM.apply(T.apply(mat1), grad),
    spelling=Spelling(language=_addmm, numpy=_addmm, level=SUM,
                      latex=lambda w, i, a, b: f"{w(i, SUM)} + {w(a, PRODUCT)} {w(b, PRODUCT + 1)}"),
)
BMM = defop(
    "bmm", lambda xp, input, mat2: input @ mat2,
    input=lambda grad, mat2: BMM.apply(grad, TRANSPOSE.apply(mat2, 1, 2)),
    mat2=lambda grad, input: BMM.apply(TRANSPOSE.apply(input, 1, 2), grad),
    spelling=_PRODUCT,
)


def _shape_text(shape) -> str:
    return "x".join(str(s) for s in shape)


@public(method=True, batch=matrix_product)
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-D tensors."""
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _mm(input, mat2, input._data.shape, mat2._data.shape)


def _mm(input: Tensor, mat2: Tensor, a: tuple, b: tuple) -> Tensor:
    """mm of two matrices of shapes `a` and `b` (matmul calls it without mm's wrapper)."""
    if a[1] != b[0]:
        raise ShapeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_shape_text(a)} and {_shape_text(b)})", (a, b)
        )
    return MM.apply(input, mat2)


@public(method=True, batch=matrix_product)
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product."""
    a, b = input._data.shape, vec._data.shape
    if len(a) != 2 or len(b) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a)}, {len(b)}")
    if a[1] != b[0]:
        raise ShapeError(f"size mismatch, got input ({a[0]}), mat ({_shape_text(a)}), vec ({b[0]})", (a, b))
    return MV.apply(input, vec)


@public(method=True, batch=matrix_product)
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


@public(method=True, operators=("__matmul__",), batch=matrix_product)
def matmul(input: Tensor, other: Tensor) -> Tensor:
    """`input @ other` with NumPy's rules for 1-D and batched operands."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'input' and 'other' must be Tensors")
    a, b = input._data.shape, other._data.shape
    if len(a) == 2 and len(b) == 2:  # the most common product first
        if a[1] == b[0]:
            return MM.apply(input, other)
        return _mm(input, other, a, b)  # its error
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


bind_operators(_reflected_matmul, ("__rmatmul__",), batch=matrix_product)


# -- einsum -------------------------------------------------------------------------------------------
# Built from the engine's own ops, in PyTorch's order, so that the graph and the result's node
# are PyTorch's: each operand is reduced to one dim per subscript (a diagonal for a repeated
# one) and permuted into one layout, output subscripts first (PermuteBackward0); one operand is
# then summed (SumBackward1); several are multiplied pairwise (MulBackward0) or contracted with
# bmm, and the contracted dims are viewed away at the end (ViewBackward0).

_ELLIPSIS = "."


def _einsum_error(message: str) -> RuntimeError:
    return RuntimeError(f"einsum(): {message}")


def _parse_subscripts(equation: str):
    """The operands' subscript lists ('.' for the ellipsis) and the output's (None if implicit)."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms, offset = [], 0
    for term in lhs.split(","):
        terms.append(_subscripts(term, offset))
        offset += len(term) + 1
    output = _subscripts(rhs, len(lhs) + 2) if arrow else None
    return terms, output


def _subscripts(term: str, offset: int) -> list:
    labels, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            if _ELLIPSIS in labels:
                raise _einsum_error("found '.' for operand that is not part of any ellipsis")
            labels.append(_ELLIPSIS)
            i += 3
            continue
        if not (term[i].isascii() and term[i].isalpha()):
            raise _einsum_error(
                f"invalid subscript given at index {offset + i} in the equation string, subscripts must be in [a-zA-Z]"
            )
        labels.append(term[i])
        i += 1
    return labels


def _from_sublists(args: tuple):
    """(operand, subscripts, operand, subscripts, ..., [output]) -> the equation and the operands;
    subscripts 0-25 are 'A'-'Z', 26-51 'a'-'z', and ... (Ellipsis) the ellipsis, as PyTorch's."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    equation = ",".join(_sublist_labels(sublist) for sublist in args[1::2])
    if len(args) % 2:
        return f"{equation}->{_sublist_labels(args[-1])}", args[:-1:2]
    return equation, args[::2]


def _sublist_labels(sublist) -> str:
    labels = []
    for n in sublist:
        if n is Ellipsis:
            labels.append("...")
        elif 0 <= n < 52:
            labels.append(chr(ord("A") + n) if n < 26 else chr(ord("a") + n - 26))
        else:
            raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
    return "".join(labels)


def _diagonal(operand: Tensor, labels: list):
    """Take the diagonal of each repeated subscript: (.., n, .., n, ..) -> (.., n) as a strided slice."""
    from .indexing import getitem

    while True:
        repeated = next((l for l in labels if labels.count(l) > 1), None)
        if repeated is None:
            return operand, labels
        first = labels.index(repeated)
        second = labels.index(repeated, first + 1)
        others = [d for d in range(len(labels)) if d not in (first, second)]
        shape = operand._data.shape
        n = shape[first]
        operand = PERMUTE.apply(operand, tuple(others + [first, second]))
        operand = reshape(operand, tuple(shape[d] for d in others) + (n * n,))
        operand = getitem(operand, (Ellipsis, slice(None, None, n + 1)))
        labels = [labels[d] for d in others] + [repeated]


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """sum over `sum_dims` of left * right (which share their number of dims), by bmm; the
    summed dims stay, with size 1."""
    ls, rs = left._data.shape, right._data.shape
    ndim = len(ls)
    batch = [d for d in range(ndim) if d not in sum_dims and ls[d] != 1 and rs[d] != 1]
    lonly = [d for d in range(ndim) if d not in sum_dims and d not in batch and rs[d] == 1]
    ronly = [d for d in range(ndim) if d not in sum_dims and d not in batch and d not in lonly]
    sizes = [max(ls[d], rs[d]) for d in range(ndim)]
    b, lo, ro, s = (math.prod(sizes[d] for d in dims) for dims in (batch, lonly, ronly, sum_dims))
    left = reshape(PERMUTE.apply(left, tuple(batch + lonly + sum_dims + ronly)), (b, lo, s))
    right = reshape(PERMUTE.apply(right, tuple(batch + sum_dims + ronly + lonly)), (b, s, ro))
    out = VIEW.apply(bmm(left, right), tuple(sizes[d] for d in batch + lonly + ronly) + (1,) * len(sum_dims))
    order = batch + lonly + ronly + sum_dims
    return PERMUTE.apply(out, tuple(order.index(d) for d in range(ndim)))


@public
def einsum(equation: str, *operands) -> Tensor:
    """Sums of products over the subscripts of `equation` ('ij,jk->ik'), as torch.einsum; with
    no '->' the output is the subscripts used once, in alphabetical order. The sublist form
    `einsum(a, [0, 1], b, [1, 2], [0, 2])` is the same ('AB,BC->AC')."""
    if isinstance(equation, Tensor):
        equation, operands = _from_sublists((equation, *operands))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, output = _parse_subscripts(equation)
    if len(terms) > len(operands):
        raise _einsum_error("fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise _einsum_error("more operands were provided than specified in the equation")
    ellipsis_dims = 0
    for i, (labels, operand) in enumerate(zip(terms, operands)):
        ndim = operand._data.ndim
        named = len([l for l in labels if l != _ELLIPSIS])
        if _ELLIPSIS in labels:
            if named > ndim:
                raise _einsum_error(
                    f"the number of subscripts in the equation ({named}) is more than the number of "
                    f"dimensions ({ndim}) for operand {i}"
                )
            ellipsis_dims = max(ellipsis_dims, ndim - named)
        elif named != ndim:
            raise _einsum_error(
                f"the number of subscripts in the equation ({named}) does not match the number of dimensions "
                f"({ndim}) for operand {i} and no ellipsis was given"
            )
    # Expand the ellipsis into labels of its own ('0', '1', ...: outside [a-zA-Z]).
    ell = [str(k) for k in range(ellipsis_dims)]

    def expand_ellipsis(labels, ndim):
        if _ELLIPSIS not in labels:
            return labels
        at = labels.index(_ELLIPSIS)
        here = ndim - (len(labels) - 1)
        return labels[:at] + ell[ellipsis_dims - here :] + labels[at + 1 :]

    terms = [expand_ellipsis(labels, op._data.ndim) for labels, op in zip(terms, operands)]
    counts = {}
    for labels in terms:
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
    if output is None:
        output = ell + sorted(l for l, c in counts.items() if c == 1 and l not in ell)
    else:
        for label in output:
            if label != _ELLIPSIS and label not in counts:
                raise _einsum_error(f"output subscript {label} does not appear in the equation for any input operand")
            if label != _ELLIPSIS and output.count(label) > 1:
                raise _einsum_error(f"output subscript {label} appears more than once in the output")
        output = expand_ellipsis(output, len(output) - 1 + ellipsis_dims) if _ELLIPSIS in output else output
    contracted = [l for l in ell if l not in output] + sorted(l for l in counts if l not in output and l not in ell)
    layout = output + contracted
    # Each operand: one dim per label (diagonals), permuted into the layout, size 1 where it lacks one.
    sizes = {}
    permuted = []
    for i, (labels, operand) in enumerate(zip(terms, operands)):
        shape = operand._data.shape
        for d, label in enumerate(labels):
            for e in range(d):
                if labels[e] == label and shape[e] != shape[d]:
                    raise _einsum_error(
                        f"subscript {label} is repeated for operand {i} but the sizes don't match, {shape[d]} != {shape[e]}"
                    )
        operand, labels = _diagonal(operand, labels)
        shape = operand._data.shape
        for label, size in zip(labels, shape):
            seen = sizes.get(label, 1)
            if size != 1 and seen != 1 and size != seen:
                raise _einsum_error(
                    f"subscript {label} has size {size} for operand {i} which does not broadcast with previously "
                    f"seen size {seen}"
                )
            sizes[label] = size if size != 1 else seen
        present = [label for label in layout if label in labels]
        operand = PERMUTE.apply(operand, tuple(labels.index(label) for label in present))
        full = tuple(shape[labels.index(label)] if label in labels else 1 for label in layout)
        if len(present) != len(layout):
            operand = VIEW.apply(operand, full)
        permuted.append((operand, set(labels)))
    last_use = {label: max(i for i, (_, labels) in enumerate(permuted) if label in labels) for label in contracted}
    out_size = len(output)
    result = permuted[0][0]
    from .reduction import sum as reduce_sum

    if len(permuted) == 1:
        if contracted:
            result = reduce_sum(result, tuple(range(out_size, len(layout))))
        return result
    only_first = tuple(out_size + k for k, label in enumerate(contracted) if last_use[label] == 0)
    if only_first:
        result = reduce_sum(result, only_first, True)
    for i in range(1, len(permuted)):
        operand = permuted[i][0]
        sum_dims = [out_size + k for k, label in enumerate(contracted) if last_use[label] == i]
        for d in list(sum_dims):  # a dim of size 1 on one side is summed on the other first
            if result._data.shape[d] == 1 or operand._data.shape[d] == 1:
                if result._data.shape[d] == 1:
                    operand = reduce_sum(operand, (d,), True)
                else:
                    result = reduce_sum(result, (d,), True)
                sum_dims.remove(d)
        result = result * operand if not sum_dims else _sumproduct_pair(result, operand, sum_dims)
    if contracted:
        result = VIEW.apply(result, tuple(result._data.shape[:out_size]))
    return result

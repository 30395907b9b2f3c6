"""What the linear algebra shares (ops/decompositions.py, ops/spectral.py):
PyTorch's checks and error texts, `LinAlgError`, the batching rule of functions of matrices, and
the few matrix helpers their gradients are written with.

The helpers are ops, so a gradient written with them runs on arrays (backward) and on tensors
(`create_graph=True`: derivatives of any order), and `explain`/`derive` can read it.
"""

from __future__ import annotations

import math

from .. import backend
from ..tensor import Tensor
from .batching import Batched, _result, by_example
from .registry import array_of, like
from .indexing import SLICE
from .rearrange import DIAGONAL
from .shape import TRANSPOSE, UNSQUEEZE


# What NumPy's LAPACK wrappers raise (CuPy's raise NumPy's): the cases to say in PyTorch's words.
LAPACK_ERROR = backend.np.linalg.LinAlgError


class LinAlgError(RuntimeError):
    """A matrix the factorization cannot take (singular, not positive-definite): PyTorch's
    `torch.linalg.LinAlgError`, a RuntimeError."""


# PyTorch's names of the scalar types, as its error texts write them.
_SCALAR_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int", "int64": "Long",
                 "uint8": "Byte", "bool": "Bool"}


def scalar_name(dtype) -> str:
    return _SCALAR_NAMES.get(dtype.name, dtype.name)


def check_matrices(A: Tensor, name: str, square: bool = True, floating: bool = True) -> None:
    """PyTorch's checks, in its order: at least 2 dims, square (where asked), a float dtype
    (where asked: some functions' kernels say it their own way)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if floating and not A.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {scalar_name(A.dtype)}")


def no_half(A: Tensor, kernel: str | None, name: str = "") -> None:
    """PyTorch's CPU kernels have no float16: its error, which names the kernel (or, for a few
    functions, says low precision)."""
    if A.dtype.name != "float16":
        return
    if kernel is None:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")
    raise NotImplementedError(f'"{kernel}" not implemented for \'Half\'')


def batch_prefix(shape: tuple, index: int) -> str:
    """"(Batch element 1): " for a batch of matrices, nothing for one matrix, as PyTorch."""
    return f"(Batch element {index}): " if len(shape) > 2 else ""


def matrices_of(xp, A):
    """A's matrices one after another: (batch, m, n)."""
    return A.reshape((math.prod(A.shape[:-2]),) + A.shape[-2:])


# -- batching: a batch of examples is a batch of matrices --------------------------------------------


def matrix_batches(function, args, kwargs):
    """A function of (..., m, n) matrices: the batch dimension in front is one more batch dim.
    Other batched arguments (solve's B) go example by example."""
    if not args or args[0].__class__ is not Batched or args[0].ndim < 2 or any(
            a.__class__ is Batched for a in list(args[1:]) + list(kwargs.values())):
        return by_example(function, args, kwargs)
    return _result(function(args[0].physical, *args[1:], **kwargs))


# -- helpers for gradients: ops, on arrays and tensors alike ------------------------------------------


def mT(x):
    """The transpose of the last two dims."""
    return TRANSPOSE.apply(x, -2, -1)


def column(v):
    """v (..., n) as (..., n, 1)."""
    return UNSQUEEZE.apply(v, array_of(v).ndim)


def row(v):
    """v (..., n) as (..., 1, n)."""
    return UNSQUEEZE.apply(v, array_of(v).ndim - 1)


def eye_like(x, n: int):
    """The n x n identity, of x's dtype and device, as a constant of x's kind."""
    data = array_of(x)
    return like(x, backend.array_module(data).eye(n, dtype=data.dtype))


def diag_embed(v):
    """v (..., n) as the diagonal of (..., n, n) matrices: a product with the identity."""
    return column(v) * eye_like(v, array_of(v).shape[-1])


def diag(x):
    """The main diagonals of (..., n, n) matrices, (..., n)."""
    return DIAGONAL.apply(x, 0, -2, -1)


def zeros_shaped(x, shape):
    data = array_of(x)
    return like(x, backend.array_module(data).zeros(shape, dtype=data.dtype))


def narrow(x, dim: int, start: int, stop: int):
    """x[..., start:stop, ...] along `dim` (negative dims count from the end)."""
    return SLICE.apply(x, dim % array_of(x).ndim, start, stop, 1)

"""Data types, named as PyTorch names them.

The default floating type is float64, not PyTorch's float32: autodiff is a differentiator
first, and its users compare digits.
"""

from __future__ import annotations

import numpy as np


class dtype:
    """A tensor element type: a name for users, a NumPy dtype for the arrays."""

    __slots__ = ("name", "numpy", "is_floating_point", "itemsize")

    def __init__(self, name: str, numpy_type: type, is_floating_point: bool) -> None:
        self.name = name
        self.numpy = np.dtype(numpy_type)
        self.is_floating_point = is_floating_point
        self.itemsize = self.numpy.itemsize

    def __repr__(self) -> str:
        return f"autodiff.{self.name}"

    def __reduce__(self):  # pickled by name, so that worker processes share the singletons
        return (from_name, (self.name,))


float16 = dtype("float16", np.float16, True)
float32 = dtype("float32", np.float32, True)
float64 = dtype("float64", np.float64, True)
int32 = dtype("int32", np.int32, False)
int64 = dtype("int64", np.int64, False)
uint8 = dtype("uint8", np.uint8, False)
bool_ = dtype("bool", np.bool_, False)

ALL = (float16, float32, float64, int32, int64, uint8, bool_)
_BY_NUMPY = {d.numpy: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
# PyTorch's aliases.
_BY_NAME.update(half=float16, float=float32, double=float64, int=int32, long=int64)

_default_float = float64


def from_name(name: str) -> dtype:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise TypeError(f"unknown dtype {name!r}; expected one of {', '.join(sorted(_BY_NAME))}") from None


def from_numpy(numpy_dtype) -> dtype:
    """The autodiff dtype of a NumPy (or CuPy) dtype."""
    try:
        return _BY_NUMPY[numpy_dtype]
    except KeyError:
        try:
            return _BY_NUMPY[np.dtype(numpy_dtype)]
        except (KeyError, TypeError):
            raise TypeError(f"unsupported element type {numpy_dtype}") from None


def to_numpy(d) -> np.dtype:
    """Accept an autodiff dtype, a NumPy dtype or a name; return the NumPy dtype."""
    if isinstance(d, dtype):
        return d.numpy
    if isinstance(d, str):
        return from_name(d).numpy
    return from_numpy(d).numpy


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    d = d if isinstance(d, dtype) else from_numpy(np.dtype(to_numpy(d)))
    if d not in (float16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


# -- PyTorch's type promotion of two tensors -------------------------------------------------------

def _category(d: np.dtype) -> int:
    return 0 if d.kind == "b" else 1 if d.kind in "iu" else 2


def _promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types: across kinds the higher kind's type as it is (int64 with float32 is
    float32, where NumPy widens to float64); within a kind, NumPy's (and PyTorch's) rule."""
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    return np.promote_types(a, b)


def _combine(higher, lower):
    """c10's combine_categories: a dimensioned result yields to a 0-d one only of a higher kind."""
    if _category(higher) == 2 or (_category(higher) == 1 and _category(lower) < 2):
        return higher
    return _promote_types(higher, lower)


def result_type(a, b) -> np.dtype:
    """The dtype PyTorch gives an operation of two tensors with these arrays (`a.dtype`,
    `a.ndim`): dimensioned tensors decide, a 0-d one only where it is of a higher kind
    (a 0-d float64 times float32 values is float32; a 0-d float times ints is that float)."""
    da, db = np.dtype(a.dtype), np.dtype(b.dtype)
    na, nb = np.ndim(a), np.ndim(b)
    if (na == 0) == (nb == 0):
        return _promote_types(da, db)
    dimensioned, zero_dim = (da, db) if nb == 0 else (db, da)
    return _combine(dimensioned, zero_dim)

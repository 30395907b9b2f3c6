"""Dimension arguments: negative indices, tuples of dims, and the shapes reductions leave."""

from __future__ import annotations

from ..tensor import _dim as normalize_dim

__all__ = ["normalize_dim", "normalize_dims", "kept_shape"]


def normalize_dims(dim, ndim: int) -> tuple:
    """`dim` (None, an int, or a sequence) as a sorted tuple of non-negative dims; None is all."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (normalize_dim(dim, ndim),)
    dims = tuple(normalize_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        repeated = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return tuple(sorted(dims))


def kept_shape(shape: tuple, dims: tuple) -> tuple:
    """The shape of a reduction over `dims` with keepdim=True."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


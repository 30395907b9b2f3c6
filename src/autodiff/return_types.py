"""Named results, as PyTorch's `torch.return_types`: `x.max(dim)` gives `(values, indices)`,
`linalg.eigh(A)` gives `(eigenvalues, eigenvectors)`, and sort, topk, cummax, cummin, median and
kthvalue give (values, indices)."""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

from .tensor import Tensor


class _ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor


def _make(name: str):
    def __repr__(self) -> str:
        return f"autodiff.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"

    return type(name, (_ValuesIndices,), {"__repr__": __repr__, "__slots__": ()})


max = _make("max")
min = _make("min")
sort = _make("sort")
topk = _make("topk")
cummax = _make("cummax")
cummin = _make("cummin")
median = _make("median")
kthvalue = _make("kthvalue")

PAIRS = _ValuesIndices  # every (values, indices) result: isinstance(value, PAIRS)


def _named(name: str, fields: str):
    """A named tuple printed as PyTorch prints its own (`autodiff.return_types.linalg_qr(Q=..., R=...)`)."""

    def __repr__(self) -> str:
        parts = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"autodiff.return_types.{name}(\n{parts})"

    return type(name, (namedtuple(name, fields),), {"__repr__": __repr__, "__slots__": ()})


# linear algebra's
slogdet = _named("slogdet", "sign logabsdet")
linalg_slogdet = _named("linalg_slogdet", "sign logabsdet")
linalg_eigh = _named("linalg_eigh", "eigenvalues eigenvectors")
linalg_svd = _named("linalg_svd", "U S Vh")
svd = _named("svd", "U S V")
linalg_qr = _named("linalg_qr", "Q R")
qr = _named("qr", "Q R")

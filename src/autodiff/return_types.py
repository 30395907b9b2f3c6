"""Named results, as PyTorch's `torch.return_types`: `x.max(dim)` gives `(values, indices)`."""

from __future__ import annotations

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

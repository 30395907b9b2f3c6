"""Named results, as PyTorch's `torch.return_types`: `x.max(dim)` gives `(values, indices)`,
and so do sort, topk, cummax, cummin, median and kthvalue (issue 24)."""

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
sort = _make("sort")
topk = _make("topk")
cummax = _make("cummax")
cummin = _make("cummin")
median = _make("median")
kthvalue = _make("kthvalue")

PAIRS = _ValuesIndices  # every (values, indices) result: isinstance(value, PAIRS)

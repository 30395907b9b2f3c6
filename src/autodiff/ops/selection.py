"""Choosing between values: where, clamp, maximum, minimum, and their subgradients at ties."""

from __future__ import annotations

from ..tensor import Tensor
from .registry import defop

__all__ = [  # the functions users call by name (the language finds them here)
    "clamp",
    "maximum",
    "minimum",
    "where",
]

WHERE = defop(
    "where", "WhereBackward0",
    lambda xp, condition, input, other: xp.where(condition, input, other),
    nondiff=("condition",),
    input=lambda grad, condition: WHERE.apply(condition, grad, 0.0),
    other=lambda grad, condition: WHERE.apply(condition, 0.0, grad),
)


def where(condition, input, other):
    """Elements of `input` where `condition` holds, else of `other` (each may be a number)."""
    if isinstance(condition, Tensor) and condition.dtype.name != "bool":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype.name}"
        )
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from ..creation import tensor

        input = tensor(input)
    return WHERE.apply(condition, input, other)


def _inside(input, min, max):
    if min is None:
        return input <= max
    if max is None:
        return input >= min
    return (input >= min) & (input <= max)


CLAMP = defop(
    "clamp", "ClampBackward1",
    lambda xp, input, min, max: xp.clip(input, min, max),
    input=lambda grad, input, min, max: WHERE.apply(_inside(input, min, max), grad, 0.0),
)


def clamp(input, min=None, max=None):
    """Limit every element to [min, max] (the gradient is 1 inside, boundaries included)."""
    if min is None and max is None:
        raise RuntimeError("autodiff.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        result = input
        if min is not None:
            result = maximum(result, min)
        if max is not None:
            result = minimum(result, max)
        return result
    return CLAMP.apply(input, min, max)


# At a tie each side gets half the gradient, as PyTorch does.
MAXIMUM = defop(
    "maximum", "MaximumBackward0",
    lambda xp, input, other: xp.maximum(input, other),
    input=lambda grad, input, other: WHERE.apply(input < other, 0.0, WHERE.apply(input == other, grad / 2, grad)),
    other=lambda grad, input, other: WHERE.apply(other < input, 0.0, WHERE.apply(input == other, grad / 2, grad)),
)
MINIMUM = defop(
    "minimum", "MinimumBackward0",
    lambda xp, input, other: xp.minimum(input, other),
    input=lambda grad, input, other: WHERE.apply(input > other, 0.0, WHERE.apply(input == other, grad / 2, grad)),
    other=lambda grad, input, other: WHERE.apply(other > input, 0.0, WHERE.apply(input == other, grad / 2, grad)),
)


def maximum(input, other):
    """The larger of each pair of elements."""
    return MAXIMUM.apply(input, other)


def minimum(input, other):
    """The smaller of each pair of elements."""
    return MINIMUM.apply(input, other)

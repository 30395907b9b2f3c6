"""Choosing between values: where, clamp, maximum, minimum, and their subgradients at ties."""

from __future__ import annotations

from .. import creation
from ..tensor import Tensor
from .batching import ELEMENTWISE
from .registry import binary_op, elementwise_op
from .spelling import Spelling, elementwise
from .surface import public

def _clamp_call(w, input, min, max) -> str:
    bounds = "".join(f", {name}={w(bound)}" for name, bound in (("min", min), ("max", max)) if bound is not None)
    return f"clamp({w(input)}{bounds})"


def _cases(w, condition, input, other) -> str:
    return rf"\begin{{cases}} {w(input)} & \text{{if }} {w(condition)} \\ {w(other)} & \text{{otherwise}} \end{{cases}}"


WHERE = elementwise_op(
    "where",
    lambda xp, condition, input, other: xp.where(condition, input, other),
    nondiff=("condition",),
    input=lambda grad, condition: WHERE.apply(condition, grad, 0.0),
    other=lambda grad, condition: WHERE.apply(condition, 0.0, grad),
    spelling=Spelling(numpy="np.where", build=lambda s, c, a, b: s.where(c, a, b), latex=_cases),
    why_zero="the branch of where not taken",
)


def _where_method(self, condition, other):
    """`self` where `condition` holds, else `other` (PyTorch's Tensor.where)."""
    return where(condition, self, other)


@public(method=_where_method, batch=ELEMENTWISE)
def where(condition, input, other):
    """Elements of `input` where `condition` holds, else of `other` (each may be a number)."""
    if isinstance(condition, Tensor) and condition.dtype.name != "bool":
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype.name}"
        )
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = creation.tensor(input)
    return WHERE.apply(condition, input, other)


def _inside(input, min, max):
    if min is None:
        return input <= max
    if max is None:
        return input >= min
    return (input >= min) & (input <= max)


CLAMP = elementwise_op(
    "clamp",
    lambda xp, input, min, max: xp.clip(input, min, max), grad_fn="ClampBackward1",
    input=lambda grad, input, min, max: WHERE.apply(_inside(input, min, max), grad, 0.0),
    spelling=Spelling(language=_clamp_call, numpy="np.clip"),
    why_zero="clamp outside its range",
)


@public(method=True, inplace=True, aliases=("clip",), batch=ELEMENTWISE)
def clamp(input, min=None, max=None):
    """Limit every element to [min, max] (the gradient is 1 inside, boundaries included)."""
    if min is None and max is None:
        raise RuntimeError("autodiff.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        result = input
        if min is not None:
            result = MAXIMUM.apply(result, min)
        if max is not None:
            result = MINIMUM.apply(result, max)
        return result
    return CLAMP.apply(input, min, max)


# At a tie each side gets half the gradient, as PyTorch does.
MAXIMUM = binary_op(
    "maximum",
    lambda xp, input, other: xp.maximum(input, other), doc="The larger of each pair of elements.",
    input=lambda grad, input, other: WHERE.apply(input < other, 0.0, WHERE.apply(input == other, grad / 2, grad)),
    other=lambda grad, input, other: WHERE.apply(other < input, 0.0, WHERE.apply(input == other, grad / 2, grad)),
    spelling=elementwise("np.maximum", latex=r"\max"),
    why_zero="the losing side of maximum",
)
MINIMUM = binary_op(
    "minimum",
    lambda xp, input, other: xp.minimum(input, other), doc="The smaller of each pair of elements.",
    input=lambda grad, input, other: WHERE.apply(input > other, 0.0, WHERE.apply(input == other, grad / 2, grad)),
    other=lambda grad, input, other: WHERE.apply(other > input, 0.0, WHERE.apply(input == other, grad / 2, grad)),
    spelling=elementwise("np.minimum", latex=r"\min"),
    why_zero="the losing side of minimum",
)



# -- one bound; at the bound the input keeps the gradient (as PyTorch) -------------------------
CLAMP_MIN = elementwise_op(  # clamp_min(x, 0.5)
    "clamp_min", lambda xp, input, min: xp.maximum(input, min),
    input=lambda grad, input, min: WHERE.apply(input >= min, grad, 0.0),
    spelling=Spelling(numpy="np.maximum"),
)
CLAMP_MIN_TENSOR = elementwise_op(
    "clamp_min_tensor", lambda xp, input, min: xp.maximum(input, min), grad_fn="ClampMinBackward1",
    input=lambda grad, input, min: WHERE.apply(input >= min, grad, 0.0),
    min=lambda grad, input, min: WHERE.apply(input < min, grad, 0.0),
    spelling=Spelling(build=lambda s, x, bound: s.call("clamp_min", x, bound)),
)
CLAMP_MAX = elementwise_op(  # clamp_max(x, 0.5)
    "clamp_max", lambda xp, input, max: xp.minimum(input, max),
    input=lambda grad, input, max: WHERE.apply(input <= max, grad, 0.0),
    spelling=Spelling(numpy="np.minimum"),
)
CLAMP_MAX_TENSOR = elementwise_op(
    "clamp_max_tensor", lambda xp, input, max: xp.minimum(input, max), grad_fn="ClampMaxBackward1",
    input=lambda grad, input, max: WHERE.apply(input <= max, grad, 0.0),
    max=lambda grad, input, max: WHERE.apply(input > max, grad, 0.0),
    spelling=Spelling(build=lambda s, x, bound: s.call("clamp_max", x, bound)),
)


def _bound(name: str, bound) -> None:
    if bound is None or isinstance(bound, bool) or not isinstance(bound, (int, float, Tensor)):
        raise TypeError(f"{name}(): argument '{name[6:]}' (position 2) must be Number or Tensor, not "
                        f"{type(bound).__name__}")


@public(method=True, inplace=True, batch=ELEMENTWISE)
def clamp_min(input, min):
    """max(input, min), elementwise; min is a number or a tensor. Where input == min the gradient goes to input."""
    _bound("clamp_min", min)
    return (CLAMP_MIN_TENSOR if isinstance(min, Tensor) else CLAMP_MIN).apply(input, min)


@public(method=True, inplace=True, batch=ELEMENTWISE)
def clamp_max(input, max):
    """min(input, max), elementwise; max is a number or a tensor. Where input == max the gradient goes to input."""
    _bound("clamp_max", max)
    return (CLAMP_MAX_TENSOR if isinstance(max, Tensor) else CLAMP_MAX).apply(input, max)

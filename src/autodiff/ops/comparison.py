"""Operations without a gradient: comparisons, tests, logic. Their results never require grad."""

from __future__ import annotations

from .registry import nondiff

__all__ = [  # the functions users call by name (the language finds them here)
    "all",
    "any",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "isnan",
    "isinf",
    "isfinite",
    "logical_and",
    "logical_or",
    "logical_not",
]

eq = nondiff("eq", lambda xp, input, other: xp.equal(input, other))
ne = nondiff("ne", lambda xp, input, other: xp.not_equal(input, other))
lt = nondiff("lt", lambda xp, input, other: xp.less(input, other))
le = nondiff("le", lambda xp, input, other: xp.less_equal(input, other))
gt = nondiff("gt", lambda xp, input, other: xp.greater(input, other))
ge = nondiff("ge", lambda xp, input, other: xp.greater_equal(input, other))
isnan = nondiff("isnan", lambda xp, input: xp.isnan(input))
isinf = nondiff("isinf", lambda xp, input: xp.isinf(input))
isfinite = nondiff("isfinite", lambda xp, input: xp.isfinite(input))
logical_and = nondiff("logical_and", lambda xp, input, other: xp.logical_and(input, other))
logical_or = nondiff("logical_or", lambda xp, input, other: xp.logical_or(input, other))
logical_not = nondiff("logical_not", lambda xp, input: xp.logical_not(input))
floor_divide = nondiff("floor_divide", lambda xp, input, other: xp.floor_divide(input, other))
remainder = nondiff("remainder", lambda xp, input, other: xp.remainder(input, other))
_all = nondiff("all", lambda xp, input: xp.all(input))
_any = nondiff("any", lambda xp, input: xp.any(input))


def all(input):
    """True where every element is nonzero."""
    return _all(input)


def any(input):
    """True where some element is nonzero."""
    return _any(input)


def _pick_index(reduce):
    def forward(xp, input, dim, keepdim):
        if dim is None:
            index = getattr(xp, reduce)(input)
            return xp.reshape(index, (1,) * input.ndim) if keepdim else index
        return getattr(xp, reduce)(input, axis=dim, keepdims=keepdim)

    return forward


# Indices of the extremes (dim already normalised; None means the flattened tensor).
nondiff_argmax = nondiff("argmax", _pick_index("argmax"))
nondiff_argmin = nondiff("argmin", _pick_index("argmin"))

"""Operations without a gradient: comparisons, tests, logic. Their results never require grad."""

from __future__ import annotations

from .batching import ELEMENTWISE
from .registry import elementwise_nondiff, nondiff
from .spelling import COMPARE, PRODUCT, Spelling, elementwise, infix
from .surface import bind_operators, public


def _compared(name: str):
    return lambda s, input, other: s.compare(name, input, other)


def _logical(name: str, absorbing: bool):
    """logical_and(False, c) is False and logical_and(True, c) is c (logical_or: the other way
    round), where the constant is one bool for every element."""
    def built(s, input, other):
        for constant, rest in ((input, other), (other, input)):
            value = s.uniform_bool(constant)
            if value is not None:
                if value == absorbing:
                    return s.same(s.number(constant))
                if getattr(rest, "shape", None) == s.shape and getattr(rest, "op", None) in _BOOLEAN:
                    return rest
        return None

    return built


_BOOLEAN = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "isnan", "isinf",
            "isfinite"}


eq = elementwise_nondiff(
    "eq", lambda xp, input, other: xp.equal(input, other), doc="input == other, elementwise.", operators=("__eq__",),
    spelling=infix("==", COMPARE, latex="=", build=_compared("eq")))
ne = elementwise_nondiff(
    "ne", lambda xp, input, other: xp.not_equal(input, other), doc="input != other, elementwise.",
    operators=("__ne__",),
    spelling=infix("!=", COMPARE, latex=r"\neq", build=_compared("ne")))
lt = elementwise_nondiff(
    "lt", lambda xp, input, other: xp.less(input, other), doc="input < other, elementwise.", operators=("__lt__",),
    spelling=infix("<", COMPARE, build=_compared("lt")))
le = elementwise_nondiff(
    "le", lambda xp, input, other: xp.less_equal(input, other), doc="input <= other, elementwise.",
    operators=("__le__",),
    spelling=infix("<=", COMPARE, latex=r"\leq", build=_compared("le")))
gt = elementwise_nondiff(
    "gt", lambda xp, input, other: xp.greater(input, other), doc="input > other, elementwise.", operators=("__gt__",),
    spelling=infix(">", COMPARE, build=_compared("gt")))
ge = elementwise_nondiff(
    "ge", lambda xp, input, other: xp.greater_equal(input, other), doc="input >= other, elementwise.",
    operators=("__ge__",),
    spelling=infix(">=", COMPARE, latex=r"\geq", build=_compared("ge")))
isnan = elementwise_nondiff(
    "isnan", lambda xp, input: xp.isnan(input), doc="True where input is nan.",
    spelling=elementwise("np.isnan"))
isinf = elementwise_nondiff(
    "isinf", lambda xp, input: xp.isinf(input), doc="True where input is inf or -inf.",
    spelling=elementwise("np.isinf"))
isfinite = elementwise_nondiff(
    "isfinite", lambda xp, input: xp.isfinite(input), doc="True where input is neither nan nor infinite.",
    spelling=elementwise("np.isfinite"))
logical_and = elementwise_nondiff(
    "logical_and", lambda xp, input, other: xp.logical_and(input, other), doc="True where both are nonzero.",
    operators=("__and__",),
    spelling=elementwise("np.logical_and", latex=r"\left({0} \land {1}\right)", build=_logical("and", False)))
logical_or = elementwise_nondiff(
    "logical_or", lambda xp, input, other: xp.logical_or(input, other), doc="True where either is nonzero.",
    operators=("__or__",),
    spelling=elementwise("np.logical_or", latex=r"\left({0} \lor {1}\right)", build=_logical("or", True)))
logical_not = elementwise_nondiff(
    "logical_not", lambda xp, input: xp.logical_not(input), doc="True where input is zero.",
    operators=("__invert__",),
    spelling=elementwise("np.logical_not", latex=r"\lnot {0}"))
floor_divide = elementwise_nondiff(
    "floor_divide", lambda xp, input, other: xp.floor_divide(input, other),
    doc="input // other, rounded towards minus infinity (PyTorch has no derivative for it).",
    operators=("__floordiv__",), unimplemented="aten::floor_divide",
    spelling=Spelling(infix="//", level=PRODUCT, latex=r"\left\lfloor \frac{{{0}}}{{{1}}} \right\rfloor"))
_all = nondiff("all", lambda xp, input: xp.all(input), doc="True where every element is nonzero.", method=True,
               spelling=elementwise("np.all"))
_any = nondiff("any", lambda xp, input: xp.any(input), doc="True where some element is nonzero.", method=True,
               spelling=elementwise("np.any"))


def _index_call(name: str):
    """argmax(x), argmax(x, 1), argmax(x, 1, keepdim=True): dim None is the flattened tensor."""
    def written(w, input, dim, keepdim):
        return f"{name}({w(input)}{'' if dim is None else f', {w(dim)}'}{', keepdim=True' if keepdim else ''})"

    return written


def _pick_index(reduce):
    def forward(xp, input, dim, keepdim):
        if dim is None:
            index = getattr(xp, reduce)(input)
            return xp.reshape(index, (1,) * input.ndim) if keepdim else index
        return getattr(xp, reduce)(input, axis=dim, keepdims=keepdim)

    return forward


# Indices of the extremes (dim already normalised; None means the flattened tensor).
nondiff_argmax = nondiff("argmax", _pick_index("argmax"), spelling=Spelling(
    language=_index_call("argmax"), numpy="np.argmax({0}, axis={1}, keepdims={2})"))
nondiff_argmin = nondiff("argmin", _pick_index("argmin"), spelling=Spelling(
    language=_index_call("argmin"), numpy="np.argmin({0}, axis={1}, keepdims={2})"))


def _reflected_floor_divide(input, other):
    return floor_divide(other, input)


bind_operators(_reflected_floor_divide, ("__rfloordiv__",), batch=ELEMENTWISE)


# -- closeness -------------------------------------------------------------------------------------------

_TYPE_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _close(xp, input, other, rtol, atol, equal_nan):
    """PyTorch's rule: |input - other| <= atol + rtol * |other|; infinities close only to themselves."""
    with xp.errstate(invalid="ignore", over="ignore"):
        return xp.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


_isclose = nondiff("isclose", _close, batch=ELEMENTWISE, spelling=Spelling(numpy="np.isclose"))


def _checked_pair(input, other, name: str):
    from ..tensor import Tensor

    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_TYPE_NAMES.get(input.dtype.name, input.dtype.name)} did not match "
                           f"{_TYPE_NAMES.get(other.dtype.name, other.dtype.name)}")


@public(method=True, batch=ELEMENTWISE)
def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """True where input and other are close: |input - other| <= atol + rtol * |other| (nan is
    close to nan only with equal_nan); they must have one dtype, as in PyTorch."""
    _checked_pair(input, other, "isclose")
    return _isclose(input, other, float(rtol), float(atol), bool(equal_nan))


@public(method=True)
def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether every element of input is close to other's (see isclose): a Python bool."""
    _checked_pair(input, other, "allclose")
    return bool(_all(_isclose(input, other, float(rtol), float(atol), bool(equal_nan))).item())

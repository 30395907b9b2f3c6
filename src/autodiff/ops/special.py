"""Special functions: erf, erfc, erfinv, lgamma, digamma and polygamma, each beside its derivative.

NumPy has none of them, and SciPy is not a dependency. Each value is computed element by
element, in float64, by the algorithm PyTorch's CPU kernels use, so that values agree with
PyTorch to the last bits or nearly (tests/engine/test_special.py measures it):

- erf, erfc, lgamma: the C library's, through Python's `math` (as PyTorch's `std::erf`...);
- erfinv: PyTorch's `calc_erfinv`, a rational first guess and two Newton steps on `math.erf`;
- digamma: PyTorch's (Cephes) `calc_digamma`; polygamma(1, x): its `calc_trigamma`;
  polygamma(n, x), n >= 2: (-1)^(n+1) n! zeta(n + 1, x), with Cephes' Hurwitz zeta.

On CuPy arrays erf, erfc, erfinv and lgamma are CuPy's own (`cupyx.scipy.special`, imported only
then). digamma and polygamma are computed on the host and copied back, as they are where CuPy's
special functions are missing: CuPy's are some 1e-10 off PyTorch's (measured on an H100), these
agree with the CPU to the last bits or nearly.
"""

from __future__ import annotations

import math

from .. import backend
from .batching import ELEMENTWISE
from .pointwise import EXP
from .registry import defop, unary_op
from .spelling import Spelling, carried

_ACCURATE_ON_DEVICE = {"erf", "erfc", "erfinv", "lgamma"}  # CuPy's agree with the CPU's to ~1e-15
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)


def _elementwise(xp, scalar_function, input, device_name: str, *device_args):
    """`scalar_function` on every element of `input`, as an array of its floating dtype."""
    if not backend.is_numpy(input) and hasattr(input, "shape"):  # device data
        device_special = _device_special() if device_name in _ACCURATE_ON_DEVICE else None
        if device_special is not None:
            return getattr(device_special, device_name)(*device_args, input)
        host = _elementwise(backend.np, scalar_function, input.get(), device_name, *device_args)
        return xp.asarray(host)
    np = backend.np
    array = np.asarray(input)
    dtype = array.dtype if array.dtype.kind == "f" else np.dtype(np.float64)
    values = np.frompyfunc(scalar_function, 1, 1)(array.astype(np.float64))
    return np.asarray(values, dtype=np.float64).astype(dtype, copy=False)


def _device_special():
    """cupyx.scipy.special, or None where this CuPy lacks it."""
    try:
        import cupyx.scipy.special
    except ImportError:
        return None
    return cupyx.scipy.special


# -- the scalar algorithms ------------------------------------------------------------------------------


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # the poles 0, -1, -2...; a huge x
        return math.inf


_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (3.543889200, 1.637067800)


def _erfinv(y: float) -> float:
    """PyTorch's calc_erfinv: nan outside [-1, 1], ±inf at ±1."""
    y_abs = abs(y)
    if y_abs > 1.0:
        return math.nan
    if y_abs == 1.0:
        return math.copysign(math.inf, y)
    if y != y:
        return math.nan
    a, b, c, d = _ERFINV_A, _ERFINV_B, _ERFINV_C, _ERFINV_D
    if y_abs <= 0.7:
        z = y * y
        num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0]
        dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0
        x = y * num / dem
    else:
        z = math.sqrt(-math.log((1.0 - y_abs) / 2.0))
        num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0]
        dem = (d[1] * z + d[0]) * z + 1.0
        x = math.copysign(num, y) / dem
    for _ in range(2):  # Newton's method
        x = x - (math.erf(x) - y) / (_TWO_OVER_SQRT_PI * math.exp(-x * x))
    return x


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma(x: float) -> float:
    """PyTorch's calc_digamma (Cephes): -inf at 0, nan at the negative integers."""
    if x == 0:
        return math.copysign(math.inf, -x)
    if x < 0:
        if math.isinf(x) or x == int(x):
            return math.nan
        r = math.fmod(x, 1.0)
        return _digamma(1 - x) - math.pi / math.tan(math.pi * r)
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        polynomial = _DIGAMMA_A[0]
        for coefficient in _DIGAMMA_A[1:]:
            polynomial = polynomial * z + coefficient
        y = z * polynomial
    return result + math.log(x) - (0.5 / x) - y


def _trigamma(x: float) -> float:
    """PyTorch's calc_trigamma: polygamma(1, x)."""
    sign = 1.0
    result = 0.0
    if x < 0.5:
        sign = -1.0
        sin_pi_x = math.sin(math.pi * x) if math.isfinite(x) else math.nan
        result -= (math.pi * math.pi) / (sin_pi_x * sin_pi_x) if sin_pi_x else math.inf
        x = 1 - x
    for _ in range(6):
        result += 1 / (x * x)
        x += 1
    ixx = 1 / (x * x)
    result += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return sign * result


_MACHEP = 1.11022302462515654042e-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta(x: float, q: float) -> float:
    """The Hurwitz zeta function, sum over k >= 0 of (k + q) ** -x (Cephes, as PyTorch)."""
    if x == 1:
        return math.inf
    if x < 1:
        return math.nan
    if q <= 0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    if q != q:
        return math.nan
    s = _power(q, -x)
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = _power(a, -x)
        s += b
        if -_MACHEP * s < b < _MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for coefficient in _ZETA_A:
        a *= x + k
        b /= w
        t = a * b / coefficient
        s = s + t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


def _power(base: float, exponent: float) -> float:
    try:
        return base ** exponent
    except (OverflowError, ZeroDivisionError):
        return math.inf


def _polygamma_function(n: int):
    if n == 0:
        return _digamma
    if n == 1:
        return _trigamma
    factor = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
    return lambda x: factor * _zeta(n + 1.0, x)


def _polygamma(xp, n, input):
    if isinstance(n, bool) or not isinstance(n, int) and not (hasattr(n, "is_integer") and n.is_integer()):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _elementwise(xp, _polygamma_function(n), input, "polygamma", n)


# -- how formulas write them: NumPy has none, so a derived module carries these very algorithms -------

_VECTORIZED = ("def _vectorized(function, x):\n"
               "    return np.asarray(np.frompyfunc(function, 1, 1)(np.asarray(x, dtype=np.float64)), dtype=np.float64)\n")


def _special(call: str, *names: str, latex=None) -> Spelling:
    return Spelling(numpy=call, helper=carried(globals(), *names, prelude="import math\n\n\n" + _VECTORIZED),
                    **({"latex": latex} if latex else {}))


_DIGAMMA_NAMES = ("_PSI_10", "_DIGAMMA_A", "_digamma")
_POLYGAMMA_NAMES = _DIGAMMA_NAMES + ("_trigamma", "_MACHEP", "_ZETA_A", "_zeta", "_power", "_polygamma_function")


# -- the ops -------------------------------------------------------------------------------------------


def erf_values(xp, input):
    """The error function of an array (gelu's too): the C library's, element by element."""
    return _elementwise(xp, math.erf, input, "erf")


ERF = unary_op(
    "erf", erf_values, domain=True,
    doc="The error function, 2 / sqrt(pi) times the integral of exp(-t ** 2) from 0 to input.",
    input=lambda grad, input: _TWO_OVER_SQRT_PI * EXP.apply(-(input * input)) * grad,
    spelling=_special("_vectorized(math.erf, {0})", latex=r"\operatorname{erf}"),
    floats=True,
)
ERFC = unary_op(
    "erfc", lambda xp, input: _elementwise(xp, math.erfc, input, "erfc"), domain=True,
    doc="1 - erf(input), accurate where erf is near 1.",
    input=lambda grad, input: -_TWO_OVER_SQRT_PI * EXP.apply(-(input * input)) * grad,
    spelling=_special("_vectorized(math.erfc, {0})", latex=r"\operatorname{erfc}"),
    floats=True,
)
ERFINV = unary_op(
    "erfinv", lambda xp, input: _elementwise(xp, _erfinv, input, "erfinv"), domain=True,
    doc="The inverse of erf: nan outside [-1, 1], ±inf at ±1.",
    input=lambda grad, result: _HALF_SQRT_PI * EXP.apply(result * result) * grad,
    spelling=_special("_vectorized(_erfinv, {0})", "_TWO_OVER_SQRT_PI", "_ERFINV_A", "_ERFINV_B", "_ERFINV_C",
                      "_ERFINV_D", "_erfinv"),
    floats=True,
)
LGAMMA = unary_op(
    "lgamma", lambda xp, input: _elementwise(xp, _lgamma, input, "gammaln"), domain=True,
    doc="log |gamma(input)| (inf at 0 and the negative integers).",
    input=lambda grad, input: grad * DIGAMMA.apply(input),
    spelling=_special("_vectorized(_lgamma, {0})", "_lgamma", latex=r"\ln \Gamma"),
    floats=True,
)
DIGAMMA = unary_op(
    "digamma", lambda xp, input: _elementwise(xp, _digamma, input, "digamma"), domain=True,
    doc="The derivative of lgamma (-inf at 0, nan at the negative integers).",
    input=lambda grad, input: grad * POLYGAMMA.apply(1, input),
    spelling=_special("_vectorized(_digamma, {0})", *_DIGAMMA_NAMES, latex=r"\psi"),
    floats=True,
)


def _polygamma_method(self, n):
    """polygamma(n, self)."""
    return POLYGAMMA.apply(n, self)


POLYGAMMA = defop(
    "polygamma", _polygamma, domain=True, method=_polygamma_method,
    doc="The n-th derivative of digamma (n >= 0; polygamma(0, x) is digamma(x)).",
    input=lambda grad, n, input: grad * POLYGAMMA.apply(n + 1, input),
    batch=ELEMENTWISE,
    spelling=_special("_vectorized(_polygamma_function({0}), {1})", *_POLYGAMMA_NAMES,
                      latex=lambda w, n, x: rf"\psi^{{({w(n)})}}\left({w(x)}\right)"),
)

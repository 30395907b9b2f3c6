"""Statistics and running reductions: var and std, amax and amin, cumprod,
logcumsumexp, and vector norms.

Each with PyTorch's node (`VarBackward0`, `StdBackward0`, `AmaxBackward0`, `AminBackward0`,
`CumprodBackward0`, `LogcumsumexpBackward0`, `LinalgVectorNormBackward0`) and PyTorch's
subgradients: std's gradient is 0 where the std is 0; amax and amin share the gradient equally
among ties; the 2-norm's gradient is 0 at a zero vector, the 0-norm's is 0 everywhere. Every
gradient is written with ops, exact where the input has zeros (cumprod divides by nothing).
"""

from __future__ import annotations

import math

from .. import backend
from ..backend import contiguous
from ..tensor import Tensor
from .comparison import isnan
from .dims import normalize_dim
from .indexing import SLICE
from .pointwise import ABS, EXP, LOG, SIGN
from .batching import dims
from .reduction import MEAN_DIM, SUM_DIM, _exclusive_scan, _reduction_dims, _unreduce, _with_kept_dims
from .registry import array_of, defop, like, zeros_as
from .spelling import Spelling, helped
from .rearrange import _through
from .selection import WHERE
from .shape import CAT, FLIP
from .surface import public


def _count(shape: tuple, dim: tuple) -> int:
    return math.prod(shape[d] for d in dim)


def _dims_of(input: Tensor, dim) -> tuple:
    """None, () or [] is every dim (as sum's); an int or a sequence of ints, those dims.

    `input.ndim` is an example's under vmap: the op called with these dims batches itself."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(input.ndim))
    from .dims import normalize_dims

    return () if input.ndim == 0 else normalize_dims(dim, input.ndim)


# -- var and std ------------------------------------------------------------------------------------


def _var_grad(grad, input, dim, correction, keepdim):
    """PyTorch's var_backward: 2 / (N - correction) * grad * (input - mean)."""
    shape = tuple(input.shape)
    n = _count(shape, dim)
    # 2 (an int) over the count, so that a count made of named sizes stays one under derive
    scale = 2 / (n - correction) if n != correction else math.inf
    return _unreduce(grad, shape, dim, keepdim) * scale * (input - MEAN_DIM.apply(input, dim, True))


def _std_grad(grad, input, result, dim, correction, keepdim):
    """d std = d var / (2 std), and 0 where the std is 0 (PyTorch's std_backward)."""
    return _var_grad(WHERE.apply(result == 0, 0.0, grad / (result * 2)), input, dim, correction, keepdim)


def _spread_spelling(name: str) -> Spelling:
    """var(x, dim=(0,), correction=1) in the language, np.var(x, axis=(0,), ddof=1) in NumPy."""
    def language(w, x, dim, correction, keepdim):
        return f"{name}({w(x)}, dim={w(dim)}, correction={w(correction)}{', keepdim=True' if keepdim else ''})"

    return Spelling(language=language, numpy=f"np.{name}({{0}}, axis={{1}}, ddof={{2}}, keepdims={{3}})")


VAR = defop(
    "var_correction",
    lambda xp, input, dim, correction, keepdim: contiguous(xp, xp.var(input, axis=dim, ddof=correction,
                                                                       keepdims=keepdim)),
    grad_fn="VarBackward0", domain=True, batch=dims("dim"),
    input=_var_grad,
    spelling=_spread_spelling("var"),
)
STD = defop(
    "std_correction",
    lambda xp, input, dim, correction, keepdim: contiguous(xp, xp.std(input, axis=dim, ddof=correction,
                                                                       keepdims=keepdim)),
    grad_fn="StdBackward0", domain=True, batch=dims("dim"),
    input=_std_grad,
    spelling=_spread_spelling("std"),
)


def _spread(op, name, input, dim, unbiased, keepdim, correction):
    """PyTorch's arguments of var and std: `var(x, True)` is unbiased, `correction` the rest."""
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: unbiased and correction both given")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}(): input dtype should be either floating point or complex. Got Long instead.")
    return op.apply(input, _dims_of(input, dim), correction, bool(keepdim))


@public(method=True, batch=_through)
def var(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """The variance over `dim` (every dim when None): the sum of squared deviations from the mean
    divided by N - `correction` (1 by default, Bessel's; `unbiased=False` is correction 0)."""
    return _spread(VAR, "var", input, dim, unbiased, keepdim, correction)


@public(method=True, batch=_through)
def std(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """The standard deviation over `dim`, sqrt(var(input, dim, correction=correction)); its
    gradient is 0 where it is 0."""
    return _spread(STD, "std", input, dim, unbiased, keepdim, correction)


# -- amax and amin ------------------------------------------------------------------------------------


def _ties_share(grad, input, result, dim, keepdim):
    """PyTorch's scale_grad_by_count: each element equal to the extreme gets grad / their count."""
    shape = tuple(input.shape)
    mask = input == _with_kept_dims(result, shape, dim, keepdim)
    return _unreduce(grad, shape, dim, keepdim) / SUM_DIM.apply(mask, dim, True) * mask


AMAX = defop("amax", lambda xp, input, dim, keepdim: contiguous(xp, xp.max(input, axis=dim, keepdims=keepdim)),
             batch=dims("dim"), input=_ties_share,
    spelling=Spelling(numpy="np.amax({0}, axis={1}, keepdims={2})"),
)
AMIN = defop("amin", lambda xp, input, dim, keepdim: contiguous(xp, xp.min(input, axis=dim, keepdims=keepdim)),
             batch=dims("dim"), input=_ties_share,
    spelling=Spelling(numpy="np.amin({0}, axis={1}, keepdims={2})"),
)


def _extreme(op, name, input, dim, keepdim):
    dims_ = _dims_of(input, dim)
    for d in dims_:
        if input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return op.apply(input, dims_, bool(keepdim))


@public(method=True, batch=_through)
def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """The largest value over `dim` (every dim when empty); ties share the gradient equally."""
    return _extreme(AMAX, "amax", input, dim, keepdim)


@public(method=True, batch=_through)
def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """The smallest value over `dim` (every dim when empty); ties share the gradient equally."""
    return _extreme(AMIN, "amin", input, dim, keepdim)


# -- cumprod ------------------------------------------------------------------------------------------


def _shifted(x, dim: int, step: int):
    """out[i] = x[i - step] along `dim`, zeros before the start."""
    data = array_of(x)
    shape = list(data.shape)
    n = shape[dim]
    shape[dim] = step
    zeros = like(x, backend.array_module(data).zeros(shape, dtype=data.dtype))
    return CAT.apply([zeros, SLICE.apply(x, dim, 0, n - step, 1)], dim)


def _later_terms(grad, input, dim: int):
    """S[k] = grad[k] + input[k+1] * S[k+1]: the sum over i >= k of grad[i] times
    input[k+1] * ... * input[i], as a log-depth scan of the reversed recurrence (no division)."""
    n = array_of(input).shape[dim]
    flipped = (dim,)
    factor = _shifted(FLIP.apply(input, flipped), dim, 1)  # reversed: T[m] = h[m] + c[m] * T[m - 1]
    total = FLIP.apply(grad, flipped)
    step = 1
    while step < n:
        total = total + factor * _shifted(total, dim, step)
        factor = factor * _shifted(factor, dim, step)
        step *= 2
    return FLIP.apply(total, flipped)


def _cumprod_grad(grad, input, dim):
    """d/d input[k] = sum over i >= k of grad[i] * prod(input[j], j <= i, j != k): the product
    before k times the later terms, exact where the input has zeros."""
    if not grad.ndim:
        return grad
    dim = normalize_dim(dim, grad.ndim)
    if not array_of(input).shape[dim]:
        return grad
    return _exclusive_scan(input, dim) * _later_terms(grad, input, dim)


def _cumprod(xp, input, dim):
    dim = normalize_dim(dim, input.ndim)  # PyTorch's error for a dim out of range
    return contiguous(xp, xp.cumprod(input, axis=dim)) if input.ndim else input.copy()


CUMPROD = defop(
    "cumprod", _cumprod, batch=dims("dim"), domain=True,
    doc="Running products along `dim`: out[i] = input[0] * ... * input[i].", method=True,
    input=_cumprod_grad,
    spelling=Spelling(numpy="np.cumprod({0}, axis={1})"),
)


# -- logcumsumexp -------------------------------------------------------------------------------------


def _logcumsumexp(xp, input, dim):
    """A log-depth scan of logaddexp (CuPy has no ufunc.accumulate): after the step s, out[i]
    holds the log-sum-exp of input[i - 2s + 1 .. i]."""
    dim = normalize_dim(dim, input.ndim)
    if not input.ndim:
        return input.copy()
    out = xp.moveaxis(input, dim, -1).copy()
    step = 1
    while step < out.shape[-1]:
        out[..., step:] = xp.logaddexp(out[..., step:], out[..., :-step])
        step *= 2
    return contiguous(xp, xp.moveaxis(out, -1, dim))


def _logcumsumexp_grad(grad, input, result, dim):
    """sum over i >= k of grad[i] * exp(input[k] - result[i]), in logs as PyTorch computes it: the
    positive and the negative parts of grad each through a reversed logcumsumexp."""
    if not grad.ndim:
        return grad
    flipped = (normalize_dim(dim, grad.ndim),)
    data = array_of(grad)
    lowest = float(backend.array_module(data).finfo(data.dtype).min)
    log_abs = LOG.apply(ABS.apply(grad))

    def part(where):
        logs = WHERE.apply(where, log_abs, lowest) - result
        reversed_sums = FLIP.apply(LOGCUMSUMEXP.apply(FLIP.apply(logs, flipped), dim), flipped)
        return EXP.apply(reversed_sums + input)

    return part(grad > 0) - part(grad < 0)


LOGCUMSUMEXP = defop(
    "logcumsumexp", _logcumsumexp, batch=dims("dim"), domain=True,
    doc="log(cumsum(exp(input))) along `dim`, computed without overflow.", method=True,
    input=_logcumsumexp_grad,
    spelling=Spelling(numpy="np.logaddexp.accumulate({0}, axis={1})"),
)


# -- norm ---------------------------------------------------------------------------------------------


def _vector_norm(xp, input, p, dim, keepdim):
    size = abs(input)
    if p == math.inf:
        out = xp.max(size, axis=dim, keepdims=keepdim)
    elif p == -math.inf:
        out = xp.min(size, axis=dim, keepdims=keepdim)
    elif p == 0:
        out = xp.sum(size != 0, axis=dim, keepdims=keepdim).astype(input.dtype)
    elif p == 1:
        out = xp.sum(size, axis=dim, keepdims=keepdim)
    elif p == 2:
        out = xp.sqrt(xp.sum(size * size, axis=dim, keepdims=keepdim))
    else:
        out = xp.sum(size ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)
    return contiguous(xp, xp.asarray(out, dtype=input.dtype))


def _norm_grad(grad, input, result, p, dim, keepdim):
    """PyTorch's norm_backward, case by case; 0 where the norm is 0 (for p > 1)."""
    shape = tuple(input.shape)
    if p == 0:
        return zeros_as(input)
    grad = _with_kept_dims(grad, shape, dim, keepdim)
    norm = _with_kept_dims(result, shape, dim, keepdim)
    if p == 1:
        return SIGN.apply(input) * grad
    if p == 2:
        return grad * WHERE.apply(norm == 0, 0.0, input / norm)
    size = ABS.apply(input)
    if math.isinf(p):  # amax(abs(input)): ties share, nan counts as the extreme
        mask = (size == norm) | isnan(size)
        return SIGN.apply(input) * (grad / SUM_DIM.apply(mask, dim, True) * mask)
    if p < 1:
        return SIGN.apply(input) * WHERE.apply(input == 0, 0.0, size ** (p - 1)) * grad * norm ** (1 - p)
    scale = WHERE.apply(norm == 0, 0.0, grad / norm ** (p - 1))
    if p < 2:
        return SIGN.apply(input) * size ** (p - 1) * scale
    return input * size ** (p - 2) * scale


_NORM = (
    "def _norm(x, p, dim, keepdim=False):\n"
    "    a = np.abs(x)\n"
    "    if np.isinf(p):\n"
    "        return (np.max if p > 0 else np.min)(a, axis=dim, keepdims=keepdim)\n"
    "    if p == 0:\n"
    "        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(x.dtype)\n"
    "    return np.sum(a ** p, axis=dim, keepdims=keepdim) ** (1 / p)\n")
NORM = defop("norm", _vector_norm, grad_fn="LinalgVectorNormBackward0", domain=True, batch=dims("dim"),
             input=_norm_grad,
    spelling=helped(_NORM, latex=lambda w, x, p, dim, keepdim: rf"\left\| {w(x)} \right\|_{{{w(p)}}}"),
)


@public(method=True, batch=_through)
def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """The vector p-norm over `dim` (every dim when None): (sum |x|**p) ** (1/p), with p = inf
    the largest |x|, -inf the smallest, 0 the count of non-zeros; "fro" (the default) is p = 2.
    Its gradient is 0 at a zero vector. p="nuc" is the nuclear norm of the matrices over `dim`
    (linalg.matrix_norm)."""
    if dtype is not None:
        input = input.to(dtype)
    if p is None or p == "fro":
        p = 2.0
    elif isinstance(p, str):  # PyTorch's: a matrix norm over `dim` (every dim: there must be two)
        from .spectral import linalg_matrix_norm

        return linalg_matrix_norm(input, p, tuple(range(input.ndim)) if dim is None else dim, keepdim)
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long")
    dims_ = _dims_of(input, dim)
    if p < 0 or math.isinf(p):
        for d in dims_:
            if input.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on the dimension {d}"
                                   "because this dimension is empty and the operation does not have an identity")
    return NORM.apply(input, float(p), dims_, bool(keepdim))

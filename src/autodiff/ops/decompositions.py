"""Determinants, inverses, solves, Cholesky and QR, on (..., n, n) batches of matrices.

Each op is PyTorch's node (`LinalgDetBackward0`, `LinalgSlogdetBackward0`,
`LinalgInvExBackward0`, `LinalgSolveExBackward0`, `LinalgCholeskyExBackward0`,
`CholeskyBackward0`, `LinalgQrBackward0`) with PyTorch's gradient (FunctionsManual.cpp),
written with ops. A function with several results (slogdet, qr) gives each result a node of
its own, with the same name; the gradients add up to PyTorch's, as they are linear in the
results' gradients. Singular and non-positive-definite inputs raise PyTorch's `LinAlgError`
texts, which name the batch element and the pivot (found here with LAPACK's own pivoting).

The public functions are `autodiff.linalg`'s (autodiff/linalg.py) and the top-level names
PyTorch has (`det`, `slogdet`, `logdet`, `inverse`, `cholesky`, `qr`).
"""

from __future__ import annotations

import warnings

from .. import backend, return_types
from ..tensor import Tensor
from .gathering import INDEX_SELECT
from .pointwise import ABS
from .linalg_common import (
    LAPACK_ERROR, LinAlgError, batch_prefix, check_matrices, column, eye_like, mT, matrices_of, matrix_batches, narrow,
    no_half, row, scalar_name, zeros_shaped,
)
from .rearrange import TRIL, TRIU
from .registry import array_of, defop, zeros_as
from .spelling import ATOM, Spelling, helped, linalg_call
from .selection import WHERE
from .shape import CAT, VIEW, broadcast_shapes
from .surface import public

# -- how formulas write them: linalg_<name> in the language, NumPy's own functions in a module -------

_CHOLESKY_HELPER = ("def _cholesky(x, upper):\n"
                    "    if upper:\n        return np.swapaxes(np.linalg.cholesky(np.swapaxes(x, -2, -1)), -2, -1)\n"
                    "    return np.linalg.cholesky(x)\n")
_SOLVE_HELPER = (  # PyTorch's rule for a vector B, and left=False
    "def _linalg_solve(a, b, left):\n"
    "    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])\n"
    "    b = b[..., None] if vector else b\n"
    "    if not left:\n"
    "        a, b = np.swapaxes(a, -2, -1), np.swapaxes(b, -2, -1)\n"
    "    x = np.linalg.solve(a, b)\n"
    "    x = x if left else np.swapaxes(x, -2, -1)\n"
    "    return x[..., 0] if vector else x\n")


# -- PyTorch's errors: the first zero pivot, the first leading minor that is not positive ---------------


def _zero_pivot(xp, A):
    """(batch index, k) of the first matrix whose LU factorization with partial pivoting (LAPACK's
    getrf) meets a zero pivot, k counted from 1 as LAPACK's info; None if none does."""
    mats = matrices_of(xp, A).copy()
    n = mats.shape[-1]
    for b, m in enumerate(mats):
        for k in range(n):
            p = k + int(xp.argmax(xp.abs(m[k:, k])))
            if m[p, k] == 0:
                return b, k + 1
            if p != k:
                m[[k, p]] = m[[p, k]]
            m[k + 1:, k] /= m[k, k]
            m[k + 1:, k + 1:] -= xp.outer(m[k + 1:, k], m[k, k + 1:])
    return None


def _not_positive_definite(xp, A):
    """(batch index, k) of the first matrix whose lower triangle has a leading minor of order k
    that is not positive-definite (LAPACK's potrf; nan is not positive); None if none has."""
    mats = matrices_of(xp, A)
    n = mats.shape[-1]
    for b, m in enumerate(mats):
        L = xp.zeros_like(m)
        for j in range(n):
            d = m[j, j] - L[j, :j] @ L[j, :j]
            if not d > 0:
                return b, j + 1
            L[j, j] = xp.sqrt(d)
            L[j + 1:, j] = (m[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return None


def _each_or_nan(xp, items, solve, shape, dtype):
    """`solve(*item)` for each item, or nan of `shape` where it fails on a matrix with no zero pivot
    (nan in it): PyTorch's kernels return nan there without an error."""
    outs = []
    for item in items:
        try:
            outs.append(solve(*item))
        except LAPACK_ERROR:
            outs.append(xp.full(shape, xp.nan, dtype=dtype))
    return xp.stack(outs)


# -- det, slogdet ---------------------------------------------------------------------------------------


def _det(xp, A):
    out = xp.asarray(xp.linalg.det(A))
    nan = xp.isnan(A).any(axis=(-2, -1))  # NumPy's LU skips a nan pivot; PyTorch's det is nan
    return xp.where(nan, xp.nan, out).astype(A.dtype) if nan.any() else out


def _slogdet(xp, A, part):
    sign, logabsdet = xp.linalg.slogdet(A)
    nan = xp.isnan(A).any(axis=(-2, -1))
    out = xp.asarray(logabsdet if part else sign)
    return xp.where(nan, xp.nan if part else 0.0, out).astype(A.dtype) if nan.any() else out


def _tiny(result) -> list:
    """Per matrix, whether |det| < 100 eps, PyTorch's test for the singular formula: each formula
    is right where it applies, so a derivation states which one it took (an assumption)."""
    data = array_of(result)
    xp = backend.array_module(data)
    threshold = 100 * float(xp.finfo(data.dtype).eps)
    if isinstance(result, Tensor):  # read as a decision where a tracer stands in for the result
        return xp.asarray((ABS.apply(result) < threshold)._values_read()).reshape(-1).tolist()
    return (xp.abs(data) < threshold).reshape(-1).tolist()


def _det_regular(grad, A, det):
    """grad * det * A^-T, as the solution of A^T X = grad * det * I."""
    n = array_of(A).shape[-1]
    return LINALG_SOLVE.apply(mT(A), column(column(grad * det)) * eye_like(A, n), True)


def _det_singular(grad, A):
    """The adjugate through the SVD, det A = det U det Vh prod S: the product rule of prod S needs
    no division, so it holds at singular matrices (PyTorch's formula)."""
    from .reduction import _product_of_others
    from .spectral import SVD_U, SVD_VH, SVDVALS

    U, S, Vh = SVD_U.apply(A, False), SVDVALS.apply(A), SVD_VH.apply(A, False)
    alpha = LINALG_DET.apply(U) * LINALG_DET.apply(Vh) * grad
    D = column(alpha) * _product_of_others(S, array_of(S).ndim - 1)
    return (U * row(D)) @ Vh


def _det_grad(grad, A, result):
    """PyTorch's linalg_det_backward as it computes with create_graph: the solve where |det| is not
    tiny, the SVD's product rule where it is, each matrix of a batch by its own."""
    if not array_of(A).size:
        return zeros_as(A)
    tiny = _tiny(result)
    if not any(tiny):
        return _det_regular(grad, A, result)
    if all(tiny):
        return _det_singular(grad, A)
    shape = tuple(array_of(A).shape)
    n = shape[-1]
    xp = backend.array_module(array_of(A))
    on = [i for i, t in enumerate(tiny) if t]
    off = [i for i, t in enumerate(tiny) if not t]
    flat, g, d = VIEW.apply(A, (-1, n, n)), VIEW.apply(grad, (-1,)), VIEW.apply(result, (-1,))

    def pick(x, where):
        return INDEX_SELECT.apply(x, 0, xp.asarray(where, dtype="int64"))

    parts = CAT.apply([_det_singular(pick(g, on), pick(flat, on)),
                       _det_regular(pick(g, off), pick(flat, off), pick(d, off))], 0)
    order = [0] * len(tiny)
    for position, i in enumerate(on + off):
        order[i] = position
    return VIEW.apply(pick(parts, order), shape)


LINALG_DET = defop("linalg_det", _det, domain=True, batch=matrix_batches, A=_det_grad,
                   spelling=Spelling(numpy="np.linalg.det", latex=r"\det"))


def _logabsdet_grad(grad, A):
    """grad * A^-T, as the solution of A^T X = grad * I (PyTorch's slogdet_backward; a singular
    matrix has no gradient: the solver's error)."""
    n = array_of(A).shape[-1]
    return LINALG_SOLVE.apply(mT(A), column(column(grad)) * eye_like(A, n), True)


SLOGDET_SIGN = defop("linalg_slogdet_sign", lambda xp, A: _slogdet(xp, A, 0), grad_fn="LinalgSlogdetBackward0",
                     domain=True, batch=matrix_batches, A=lambda grad, A: zeros_as(A),
    spelling=Spelling(language=linalg_call("linalg_slogdet", 0), numpy="np.linalg.slogdet({0})[0]"),
)  # the sign is locally constant
SLOGDET_LOGABSDET = defop("linalg_slogdet_logabsdet", lambda xp, A: _slogdet(xp, A, 1),
                          grad_fn="LinalgSlogdetBackward0", domain=True, batch=matrix_batches, A=_logabsdet_grad,
    spelling=Spelling(language=linalg_call("linalg_slogdet", 1), numpy="np.linalg.slogdet({0})[1]",
                      latex=r"\log\left|\det {0}\right|"),
)


def linalg_det(A: Tensor) -> Tensor:
    """The determinant of each square matrix (..., n, n). Its gradient is PyTorch's:
    det * A^-T, and, at a singular matrix, the adjugate (computed through the SVD)."""
    check_matrices(A, "linalg.det")
    no_half(A, "lu_cpu")
    return LINALG_DET.apply(A)


def _slogdet_checked(A: Tensor, kind):
    check_matrices(A, "linalg.slogdet")
    no_half(A, None, "linalg.slogdet")
    return kind(SLOGDET_SIGN.apply(A), SLOGDET_LOGABSDET.apply(A))


def linalg_slogdet(A: Tensor):
    """(sign, logabsdet): the sign of the determinant and the log of its absolute value, which
    does not overflow where det would. Only logabsdet has a gradient (sign is locally constant)."""
    return _slogdet_checked(A, return_types.linalg_slogdet)


@public(method=True, batch=matrix_batches)
def det(input: Tensor) -> Tensor:
    """The determinant of each square matrix (..., n, n): linalg.det (LinalgDetBackward0)."""
    return linalg_det(input)


@public(method=True, batch=matrix_batches)
def slogdet(input: Tensor):
    """(sign, logabsdet) of the determinant of each square matrix: linalg.slogdet."""
    return _slogdet_checked(input, return_types.slogdet)


@public(method=True, batch=matrix_batches)
def logdet(input: Tensor) -> Tensor:
    """The log of the determinant: nan where it is negative (PyTorch's `where` on slogdet,
    WhereBackward0)."""
    check_matrices(input, "logdet")
    no_half(input, None, "linalg.slogdet")
    sign, logabsdet = SLOGDET_SIGN.apply(input), SLOGDET_LOGABSDET.apply(input)
    return WHERE.apply(sign == -1.0, float("nan"), logabsdet)


# -- inv, solve -----------------------------------------------------------------------------------------


def _inv(xp, A):
    try:
        return xp.linalg.inv(A)
    except LAPACK_ERROR:
        found = _zero_pivot(xp, A)
        if found is not None:
            b, k = found
            raise LinAlgError(f"linalg.inv: {batch_prefix(A.shape, b)}The diagonal element {k} is zero, the inversion "
                              "could not be completed because the input matrix is singular.") from None
        return _each_or_nan(xp, zip(matrices_of(xp, A)), xp.linalg.inv, A.shape[-2:], A.dtype).reshape(A.shape)


LINALG_INV = defop(
    "linalg_inv", _inv, grad_fn="LinalgInvExBackward0", batch=matrix_batches,
    A=lambda grad, result: -(mT(result) @ (grad @ mT(result))),
    spelling=Spelling(numpy="np.linalg.inv", latex=lambda w, A: f"{w(A, ATOM)}^{{-1}}"),
)


def _is_vector(A_shape, B_shape) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-d or A's batch shape with n."""
    return len(B_shape) == 1 or (len(B_shape) == len(A_shape) - 1 and tuple(B_shape) == tuple(A_shape[:-1]))


def _solve(xp, A, B, left):
    vector = _is_vector(A.shape, B.shape)
    if vector:
        B = B[..., None]
    batch = xp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A_ = xp.broadcast_to(A, batch + A.shape[-2:])
    B_ = xp.broadcast_to(B, batch + B.shape[-2:])
    if not left:  # X A = B: A^T X^T = B^T
        A_, B_ = xp.swapaxes(A_, -2, -1), xp.swapaxes(B_, -2, -1)
    try:
        X = xp.linalg.solve(A_, B_)
    except LAPACK_ERROR:
        found = _zero_pivot(xp, A_)
        if found is not None:
            raise LinAlgError(f"torch.linalg.solve: {batch_prefix(A_.shape, found[0])}The solver failed because the "
                              "input matrix is singular.") from None
        pairs = zip(matrices_of(xp, A_), matrices_of(xp, B_))
        X = _each_or_nan(xp, pairs, xp.linalg.solve, B_.shape[-2:], B_.dtype).reshape(B_.shape)
    if not left:
        X = xp.swapaxes(X, -2, -1)
    return X[..., 0] if vector else xp.ascontiguousarray(X)


def _solve_B_grad(grad, A, left):
    """A^-T grad (PyTorch: the solve with A^H; for left=False, grad A^-T)."""
    return LINALG_SOLVE.apply(mT(A), grad, left)


def _solve_A_grad(grad, A, B, left, result):
    """-gB X^T (X^T gB for left=False), gB the gradient of B: PyTorch's linalg_solve_backward
    (B is not in it: taken so that explain writes the result as the call, B a constant too)."""
    gB = LINALG_SOLVE.apply(mT(A), grad, left)
    if _is_vector(array_of(A).shape, array_of(grad).shape):
        return -(column(gB) * row(result))
    return -(gB @ mT(result)) if left else -(mT(result) @ gB)


LINALG_SOLVE = defop("linalg_solve", _solve, grad_fn="LinalgSolveExBackward0", A=_solve_A_grad, B=_solve_B_grad,
                     spelling=helped(_SOLVE_HELPER, language=linalg_call("linalg_solve", left=True)))


def linalg_inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix (..., n, n); a singular one raises PyTorch's
    LinAlgError, which names the zero pivot. LinalgInvExBackward0: -A^-T grad A^-T."""
    check_matrices(A, "linalg.inv")
    no_half(A, None, "linalg.inv")
    return LINALG_INV.apply(A)


@public(method=True, batch=matrix_batches)
def inverse(input: Tensor) -> Tensor:
    """The inverse of each square matrix: linalg.inv (LinalgInvExBackward0)."""
    return linalg_inv(input)


def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A X = B (X A = B for left=False), A (..., n, n) and B (..., n, k) or a vector
    (..., n), the batch dims broadcast. LinalgSolveExBackward0: gB = A^-T gX, gA = -gB X^T."""
    check_matrices(A, "linalg.solve")
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_solve(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}")
    if B.ndim < 1 or (B.ndim < 2 and not _is_vector(A.shape, B.shape)):
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{scalar_name(A.dtype)} and B of type {scalar_name(B.dtype)} instead")
    no_half(A, "lu_cpu")
    shape = tuple(B.shape) + ((1,) if _is_vector(A.shape, B.shape) else ())
    n = A.shape[-1]
    if (shape[-2] if left else shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {equation} ({n}x{n} and "
                           f"{shape[-2]}x{shape[-1]})")
    broadcast_shapes(shape[:-2], tuple(A.shape[:-2]))  # PyTorch's error names B's batch size first
    return LINALG_SOLVE.apply(A, B, bool(left))


# -- Cholesky -------------------------------------------------------------------------------------------


def _cholesky(name):
    def forward(xp, A, upper):
        L = xp.linalg.cholesky(xp.swapaxes(A, -2, -1) if upper else A)  # the triangle it reads
        if not xp.isfinite(L).all():  # NumPy lets nan through; LAPACK's potrf stops there
            found = _not_positive_definite(xp, xp.swapaxes(A, -2, -1) if upper else A)
            if found is not None:
                _raise_not_positive_definite(name, A.shape, found)
        return xp.ascontiguousarray(xp.swapaxes(L, -2, -1)) if upper else L

    def checked(xp, A, upper):
        try:
            return forward(xp, A, upper)
        except LAPACK_ERROR:
            found = _not_positive_definite(xp, xp.swapaxes(A, -2, -1) if upper else A)
            _raise_not_positive_definite(name, A.shape, found or (0, A.shape[-1]))

    return checked


def _raise_not_positive_definite(name, shape, found):
    b, k = found
    raise LinAlgError(f"{name}: {batch_prefix(shape, b)}The factorization could not be completed because the input "
                      f"is not positive-definite (the leading minor of order {k} is not positive-definite).") from None


def _cholesky_grad(grad, upper, result):
    """PyTorch's cholesky_backward: gA = L^-H Phi(L^H gL) L^-1, Phi taking the lower triangle with
    half its diagonal and mirroring it; gA is symmetric, as A is taken to be."""
    L, gL = (mT(result), mT(grad)) if upper else (result, grad)
    gA = TRIL.apply(mT(L) @ gL, 0)
    gA = 0.5 * (gA + mT(TRIL.apply(gA, -1)))
    gA = LINALG_SOLVE.apply(mT(L), gA, True)  # L^-H gA: PyTorch's triangular solves, as general ones
    return LINALG_SOLVE.apply(L, gA, False)  # ... L^-1


LINALG_CHOLESKY = defop("linalg_cholesky", _cholesky("linalg.cholesky"), grad_fn="LinalgCholeskyExBackward0",
                        batch=matrix_batches, A=_cholesky_grad,
    spelling=helped(_CHOLESKY_HELPER, language=linalg_call("linalg_cholesky", upper=False)),
)
_TORCH_CHOLESKY = _cholesky("cholesky")
CHOLESKY = defop("cholesky", lambda xp, input, upper: _TORCH_CHOLESKY(xp, input, upper), batch=matrix_batches,
                 input=_cholesky_grad,
    spelling=helped(_CHOLESKY_HELPER),
)


def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The lower triangular L with A = L L^T (upper=True: the upper U = L^T, with A = U^T U),
    read from A's lower (upper) triangle; a matrix that is not positive-definite raises PyTorch's
    LinAlgError. The gradient is symmetric (LinalgCholeskyExBackward0)."""
    check_matrices(A, "linalg.cholesky")
    no_half(A, "cholesky_cpu")
    return LINALG_CHOLESKY.apply(A, bool(upper))


@public(method=True, batch=matrix_batches)
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky, deprecated there in favour of linalg.cholesky, and with its warning: the
    same factor, recorded as CholeskyBackward0."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                  "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\n"
                  "and\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
                  "This transform will produce equivalent results for all valid (symmetric positive definite) "
                  "inputs.", UserWarning, stacklevel=2)
    check_matrices(input, "cholesky")
    no_half(input, "cholesky_cpu")
    return CHOLESKY.apply(input, bool(upper))


# -- QR -------------------------------------------------------------------------------------------------

_QR_MODES = ("reduced", "complete", "r")


def _qr(part):
    def forward(xp, A, mode):
        if mode == "r":
            return xp.linalg.qr(A, mode="r") if part else xp.zeros((0,), dtype=A.dtype)
        return xp.ascontiguousarray(xp.linalg.qr(A, mode=mode)[part])

    return forward


def _qr_grad(grad, A, mode, result, of_q: bool):
    """PyTorch's linalg_qr_backward for the gradient of Q (of_q) or of R alone; the two add up to
    its gradient for both, being linear in them."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n = array_of(A).shape[-2:]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    Q = result if of_q else QR_Q.apply(A, mode)
    R = QR_R.apply(A, mode) if of_q else result
    gA = -(mT(Q) @ grad) if of_q else grad @ mT(R)
    if m >= n:
        upper = TRIU.apply(gA, 0)
        gA = Q @ (upper + mT(TRIU.apply(upper, 1)))  # syminvadj: X + X^T with X's own diagonal
        if of_q:
            gA = gA + grad
        return LINALG_SOLVE.apply(mT(R), gA, False)  # ... R^-T
    skew = -gA
    gA = Q @ TRIL.apply(skew - mT(skew), 0)
    gA = LINALG_SOLVE.apply(mT(narrow(R, -1, 0, m)), gA, False)
    gA = CAT.apply([gA, zeros_shaped(gA, tuple(array_of(gA).shape[:-1]) + (n - m,))], array_of(gA).ndim - 1)
    return gA if of_q else gA + Q @ grad


QR_Q = defop("linalg_qr_q", _qr(0), grad_fn="LinalgQrBackward0", batch=matrix_batches,
             A=lambda grad, A, mode, result: _qr_grad(grad, A, mode, result, True),
    spelling=Spelling(language=linalg_call("linalg_qr", 0, mode="reduced"), numpy="np.linalg.qr({0}, mode={1})[0]"),
)
QR_R = defop("linalg_qr_r", _qr(1), grad_fn="LinalgQrBackward0", batch=matrix_batches,
             A=lambda grad, A, mode, result: _qr_grad(grad, A, mode, result, False),
    spelling=Spelling(language=linalg_call("linalg_qr", 1, mode="reduced"), numpy="np.linalg.qr({0}, mode={1})[1]"),
)


def _qr_checked(A: Tensor, mode, kind):
    check_matrices(A, "linalg.qr", square=False)
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    no_half(A, "geqrf_cpu")
    if mode == "r":  # R alone; Q is empty, as PyTorch's
        from ..creation import zeros

        return kind(zeros(0, dtype=A.dtype), QR_R.apply(A, mode))
    if mode == "complete" and A.shape[-2] <= A.shape[-1]:
        mode = "reduced"  # the same factors: the reduced mode's gradient holds
    return kind(QR_Q.apply(A, mode), QR_R.apply(A, mode))


def linalg_qr(A: Tensor, mode: str = "reduced"):
    """(Q, R) with A = Q R, Q with orthonormal columns and R upper triangular (Householder's,
    as LAPACK's geqrf: the diagonal of R may be negative); mode 'reduced', 'complete' or 'r'
    (R alone, Q empty). LinalgQrBackward0; 'complete' with more rows than columns and 'r' are
    not differentiable (PyTorch's errors, at backward)."""
    return _qr_checked(A, mode, return_types.linalg_qr)


@public(method=True, batch=matrix_batches)
def qr(input: Tensor, some: bool = True):
    """torch.qr, deprecated there in favour of linalg.qr (with its warning): `some` is mode
    'reduced', otherwise 'complete'."""
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
                  "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
                  "Q, R = torch.qr(A, some)\nshould be replaced with\n"
                  "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning, stacklevel=2)
    return _qr_checked(input, "reduced" if some else "complete", return_types.qr)


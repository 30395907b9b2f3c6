"""Eigenvalues and singular values, the pseudo-inverse, the matrix exponential and matrix norms
on (..., m, n) batches of matrices.

Each op is PyTorch's node (`LinalgEighBackward0`, `LinalgSvdBackward0`, `LinalgPinvBackward0`,
`LinalgMatrixExpBackward0`) with PyTorch's gradient (FunctionsManual.cpp), written with ops.
eigh and svd give each result a node of its own, with the same name: eigenvalues alone, or
singular values alone, have PyTorch's shortcut gradient (V diag(g) V^T), which needs no
distinct eigenvalues; a loss that reads eigenvectors or singular vectors divides by their
differences, so repeated ones give nan there, as in PyTorch.

Eigenvectors and singular vectors are defined up to their signs, which LAPACK builds choose
differently (NumPy's OpenBLAS, PyTorch's MKL): the values are NumPy's, and a loss that does
not depend on the signs has PyTorch's gradient.
"""

from __future__ import annotations

import math

from .. import return_types
from ..tensor import Tensor
from .linalg_common import (
    LAPACK_ERROR, LinAlgError, check_matrices, column, eye_like, mT, matrix_batches, narrow, no_half, row, scalar_name,
    zeros_shaped,
)
from .registry import array_of, defop
from .spelling import Spelling, carried, helped, linalg_call
from .shape import CAT
from .surface import public

# -- how formulas write them: linalg_<name> in the language, NumPy's own functions in a module -------

_SVD_CALL = "def _svd_call(xp, A, **options):\n    return xp.linalg.svd(A, **options)\n"
_MATRIX_EXP_CALL = ("def _matrix_exp(A):\n"
                    "    mats = np.reshape(A, (-1,) + A.shape[-2:])\n"
                    "    return np.stack([_expm_one(np, m) for m in mats]).reshape(A.shape)\n")


# -- eigh ----------------------------------------------------------------------------------------------


def _eigh(part):
    def forward(xp, A):
        values, vectors = xp.linalg.eigh(A)  # from the lower triangle, as PyTorch's UPLO='L'
        return values if part == 0 else xp.ascontiguousarray(vectors)

    return forward


def _eigenvalues_grad(grad, A):
    """V diag(g) V^T: PyTorch's shortcut where only eigenvalues have a gradient."""
    V = EIGH_VECTORS.apply(A)
    return (V * row(grad)) @ mT(V)


def _eigenvectors_grad(grad, A, result):
    """V (skew(V^T gV) / E) V^T, E[i, j] = L[j] - L[i] off the diagonal (1 on it): PyTorch's
    linalg_eig_backward for a symmetric matrix; repeated eigenvalues divide by zero."""
    V, L = result, EIGVALSH.apply(A)
    VhgV = mT(V) @ grad
    VhgV = 0.5 * (VhgV - mT(VhgV))
    E = row(L) - column(L) + eye_like(L, array_of(L).shape[-1])
    return V @ ((VhgV / E) @ mT(V))


EIGVALSH = defop("linalg_eigvalsh", _eigh(0), grad_fn="LinalgEighBackward0", batch=matrix_batches,
                 A=_eigenvalues_grad,
    spelling=Spelling(numpy="np.linalg.eigh({0})[0]"),
)
EIGH_VECTORS = defop("linalg_eigh_eigenvectors", _eigh(1), grad_fn="LinalgEighBackward0", batch=matrix_batches,
                     A=_eigenvectors_grad,
    spelling=Spelling(language=linalg_call("linalg_eigh", 1), numpy="np.linalg.eigh({0})[1]"),
)


def _hermitian(A: Tensor, UPLO: str) -> Tensor:
    """The matrix whose lower triangle is the one UPLO names: A, or (for 'U') its transpose."""
    check_matrices(A, "linalg.eigh", floating=False)
    if not A.dtype.is_floating_point or A.dtype.name == "float16":
        raise NotImplementedError(f'"linalg_eigh_cpu" not implemented for \'{scalar_name(A.dtype)}\'')
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return mT(A) if UPLO == "U" else A


def linalg_eigh(A: Tensor, UPLO: str = "L"):
    """(eigenvalues, eigenvectors) of each symmetric matrix, read from its lower triangle (UPLO='U':
    the upper); eigenvalues ascending, eigenvectors the columns. LinalgEighBackward0; the
    gradient is symmetric, and nan where a loss reads eigenvectors of repeated eigenvalues."""
    A = _hermitian(A, UPLO)
    return return_types.linalg_eigh(EIGVALSH.apply(A), EIGH_VECTORS.apply(A))


def linalg_eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of each symmetric matrix, ascending (linalg.eigh's first result)."""
    return EIGVALSH.apply(_hermitian(A, UPLO))


# -- svd -----------------------------------------------------------------------------------------------


def _svd_call(xp, A, **options):
    try:
        return xp.linalg.svd(A, **options)
    except LAPACK_ERROR:
        cause = "contained non-finite values" if not xp.isfinite(A).all() else \
            "is ill-conditioned or has too many repeated singular values"
        raise LinAlgError(f"linalg.svd: The algorithm failed to converge because the input matrix {cause}.") from None


def _svd(part):
    def forward(xp, A, full_matrices):
        return xp.ascontiguousarray(_svd_call(xp, A, full_matrices=full_matrices)[part])

    return forward


def _reduced(A, full_matrices):
    """U, S, Vh of A with k = min(m, n) singular vectors (the first k of the full ones)."""
    m, n = array_of(A).shape[-2:]
    k = min(m, n)
    U, Vh = SVD_U.apply(A, full_matrices), SVD_VH.apply(A, full_matrices)
    if full_matrices:
        U, Vh = narrow(U, -1, 0, k), narrow(Vh, -2, 0, k)
    return U, SVDVALS.apply(A), Vh


def _gaps(S):
    """E[i, j] = S[j]^2 - S[i]^2 off the diagonal, 1 on it."""
    S2 = S * S
    return row(S2) - column(S2) + eye_like(S, array_of(S).shape[-1])


def _singular_values_grad(grad, A):
    """U diag(g) Vh: PyTorch's shortcut where only singular values have a gradient."""
    U, _, Vh = _reduced(A, False)
    m, n = array_of(A).shape[-2:]
    return U @ (column(grad) * Vh) if m >= n else (U * row(grad)) @ Vh


def _u_grad(grad, A, full_matrices, result):
    """PyTorch's svd_backward with the gradient of U alone (its first k columns)."""
    m, n = array_of(A).shape[-2:]
    k = min(m, n)
    U, gU = (narrow(result, -1, 0, k), narrow(grad, -1, 0, k)) if full_matrices else (result, grad)
    Vh = SVD_VH.apply(A, full_matrices)  # the same LAPACK call as U: the same signs
    Vh = narrow(Vh, -2, 0, k) if full_matrices else Vh
    S = SVDVALS.apply(A)
    UhgU = mT(U) @ gU
    inner = ((UhgU - mT(UhgU)) / _gaps(S)) * row(S)
    if m > n:
        gUSinv = gU / row(S)
        return (U @ inner + gUSinv - U @ (mT(U) @ gUSinv)) @ Vh
    return U @ (inner @ Vh) if m >= n else (U @ inner) @ Vh


def _vh_grad(grad, A, full_matrices, result):
    """PyTorch's svd_backward with the gradient of Vh alone (its first k rows)."""
    m, n = array_of(A).shape[-2:]
    k = min(m, n)
    Vh, gVh = (narrow(result, -2, 0, k), narrow(grad, -2, 0, k)) if full_matrices else (result, grad)
    U = SVD_U.apply(A, full_matrices)
    U = narrow(U, -1, 0, k) if full_matrices else U
    S = SVDVALS.apply(A)
    VhgV = Vh @ mT(gVh)
    inner = column(S) * ((VhgV - mT(VhgV)) / _gaps(S))
    if m < n:
        SinvgVh = gVh / column(S)
        return U @ (inner @ Vh + SinvgVh - (SinvgVh @ mT(Vh)) @ Vh)
    return U @ (inner @ Vh) if m >= n else (U @ inner) @ Vh


SVDVALS = defop("linalg_svdvals", lambda xp, A: _svd_call(xp, A, compute_uv=False), grad_fn="LinalgSvdBackward0",
                batch=matrix_batches, A=_singular_values_grad,
    spelling=Spelling(numpy="np.linalg.svd({0}, compute_uv=False)"),
)
SVD_U = defop("linalg_svd_u", _svd(0), grad_fn="LinalgSvdBackward0", batch=matrix_batches, A=_u_grad,
              spelling=Spelling(language=linalg_call("linalg_svd", 0, full_matrices=True),
                                numpy="np.linalg.svd({0}, full_matrices={1})[0]"))
SVD_VH = defop("linalg_svd_vh", _svd(2), grad_fn="LinalgSvdBackward0", batch=matrix_batches, A=_vh_grad,
               spelling=Spelling(language=linalg_call("linalg_svd", 2, full_matrices=True),
                                 numpy="np.linalg.svd({0}, full_matrices={1})[2]"))


def _svd_checked(A: Tensor, driver):
    check_matrices(A, "linalg.svd", square=False)
    no_half(A, "linalg_svd_cpu")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending; full_matrices=False keeps k = min(m, n)
    columns of U and rows of Vh. LinalgSvdBackward0: the gradient reads the first k of them; it
    is nan where a loss reads singular vectors of repeated singular values."""
    _svd_checked(A, driver)
    full_matrices = bool(full_matrices)
    return return_types.linalg_svd(SVD_U.apply(A, full_matrices), SVDVALS.apply(A), SVD_VH.apply(A, full_matrices))


def linalg_svdvals(A: Tensor, *, driver=None) -> Tensor:
    """The singular values of each matrix, descending (linalg.svd's S)."""
    _svd_checked(A, driver)
    return SVDVALS.apply(A)


@public(method=True, batch=matrix_batches)
def svd(input: Tensor, some: bool = True, compute_uv: bool = True):
    """torch.svd: (U, S, V) with V = Vh^T (TransposeBackward0); `some` keeps k = min(m, n)
    columns; compute_uv=False gives zeros for U and V."""
    from ..creation import zeros
    from .shape import transpose

    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.ndim} dimensions "
                           "instead")
    _svd_checked(input, None)
    if compute_uv:
        full = not some
        return return_types.svd(SVD_U.apply(input, full), SVDVALS.apply(input),
                                transpose(SVD_VH.apply(input, full), -2, -1))
    m, n = input.shape[-2:]
    batch = tuple(input.shape[:-2])
    return return_types.svd(zeros(batch + (m, m), dtype=input.dtype), SVDVALS.apply(input),
                            zeros(batch + (n, n), dtype=input.dtype))


# -- pinv ----------------------------------------------------------------------------------------------


def _pinv(xp, A, atol, rtol, hermitian):
    """PyTorch's algorithm: 1/S for the singular values above max(atol, rtol * the largest), 0
    for the others (eigenvalues by |value| for a symmetric matrix)."""
    m, n = A.shape[-2:]
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else float(xp.finfo(A.dtype).eps) * max(m, n)
    atol = 0.0 if atol is None else atol
    if not A.size:
        return xp.zeros(A.shape[:-2] + (n, m), dtype=A.dtype)
    if hermitian:
        S, U = xp.linalg.eigh(A)
        size = xp.abs(S)
        tol = xp.maximum(atol, rtol * size.max(axis=-1, keepdims=True))
        inverse = xp.where(size > tol, 1 / xp.where(size > tol, S, 1), 0).astype(A.dtype)
        return xp.ascontiguousarray((U * inverse[..., None, :]) @ xp.swapaxes(U, -2, -1))
    U, S, Vh = _svd_call(xp, A, full_matrices=False)
    tol = xp.maximum(atol, rtol * S[..., :1])
    inverse = xp.where(S > tol, 1 / xp.where(S > tol, S, 1), 0).astype(A.dtype)
    return xp.ascontiguousarray((xp.swapaxes(Vh, -2, -1) * inverse[..., None, :]) @ xp.swapaxes(U, -2, -1))


def _pinv_grad(grad, A, atol, rtol, hermitian, result):
    """PyTorch's pinv_backward, in the order it multiplies (the smaller matrices first); the
    tolerances are not in it (taken only so that explain writes the result as the call)."""
    m, n = array_of(A).shape[-2:]
    pinvA, pinvAh, gradh = result, mT(result), mT(grad)
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return -mT(pinvA @ K) + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gradh - K @ A)
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return -mT(K @ pinvA) + ((gradh - A @ K) @ pinvA) @ pinvAh + pinvAhK - (pinvAhK @ pinvA) @ A


LINALG_PINV = defop("linalg_pinv", _pinv, batch=matrix_batches, domain=True, A=_pinv_grad, spelling=Spelling(
    language=linalg_call("linalg_pinv", atol=None, rtol=None, hermitian=False), numpy="_pinv(np, {0}, {1}, {2}, {3})",
    helper=carried(globals(), "_pinv", prelude=_SVD_CALL)))


def _tolerance(value, name: str):
    if value is None:
        return None
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise RuntimeError(f"linalg.pinv: {name} as a tensor is taken here only as one number")
        value = value.item()
    return float(value)


def linalg_pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix, through the SVD (the eigendecomposition
    for hermitian=True), singular values at most max(atol, rtol * the largest) taken as zero
    (rtol: eps * max(m, n) when neither is given). LinalgPinvBackward0."""
    if A.ndim < 2 or not A.dtype.is_floating_point or A.dtype.name == "float16":
        raise RuntimeError(f"linalg.pinv({scalar_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    return LINALG_PINV.apply(A, _tolerance(atol, "atol"), _tolerance(rtol, "rtol"), bool(hermitian))


@public(method=True, batch=matrix_batches)
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse with singular values below rcond times the largest taken as zero:
    linalg.pinv(input, rtol=rcond) (LinalgPinvBackward0)."""
    if input.ndim < 2 or not input.dtype.is_floating_point or input.dtype.name == "float16":
        return linalg_pinv(input)  # its error
    return LINALG_PINV.apply(input, 0.0, float(rcond), False)


# -- matrix_exp ----------------------------------------------------------------------------------------

# Higham's Pade approximant of degree 13 with scaling and squaring ("The scaling and squaring
# method for the matrix exponential revisited", 2005): accurate to rounding for every norm.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_one(xp, a):
    n = a.shape[-1]
    norm = float(xp.abs(a).sum(axis=0).max()) if n else 0.0
    if not math.isfinite(norm):
        return xp.full(a.shape, xp.nan, dtype=a.dtype)
    s = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > _THETA13 else 0
    a = a / 2.0 ** s
    b = _PADE13
    eye = xp.eye(n, dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = xp.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _matrix_exp(xp, A):
    work = A.astype("float32") if A.dtype == xp.float16 else A  # NumPy's solver has no float16
    mats = work.reshape((math.prod(A.shape[:-2]),) + A.shape[-2:])
    out = xp.stack([_expm_one(xp, m) for m in mats]) if len(mats) else mats.copy()
    return out.reshape(A.shape).astype(A.dtype)


def _matrix_exp_grad(grad, A):
    """PyTorch's differential of an analytic matrix function: the top-right block of
    exp([[A^T, grad], [0, A^T]])."""
    n = array_of(A).shape[-1]
    At = mT(A)
    last = array_of(At).ndim - 1
    zeros = zeros_shaped(At, array_of(At).shape)
    block = CAT.apply([CAT.apply([At, grad], last), CAT.apply([zeros, At], last)], last - 1)
    return narrow(narrow(LINALG_MATRIX_EXP.apply(block), -2, 0, n), -1, n, 2 * n)


LINALG_MATRIX_EXP = defop("linalg_matrix_exp", _matrix_exp, batch=matrix_batches, domain=True, A=_matrix_exp_grad,
                          spelling=Spelling(numpy="_matrix_exp", latex=lambda w, A: f"e^{{{w(A)}}}", helper=carried(
                              globals(), "_PADE13", "_THETA13", "_expm_one", prelude="import math\n\n\n" + _MATRIX_EXP_CALL)))


@public(method=True, batch=matrix_batches)
def matrix_exp(A: Tensor) -> Tensor:
    """The exponential of each square matrix, sum of A^k / k! (LinalgMatrixExpBackward0)."""
    check_matrices(A, "linalg.matrix_exp")
    return LINALG_MATRIX_EXP.apply(A)


# -- matrix norms --------------------------------------------------------------------------------------


def _order_text(ord) -> str:
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def linalg_matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """A matrix norm over the two dims `dim`: 'fro' (the square root of the sum of squares, a
    vector 2-norm), 'nuc' (the sum of the singular values), 2 and -2 (the largest and smallest
    singular value), 1 and -1 (the largest and smallest column sum of |A|), inf and -inf (row
    sums). The nodes are PyTorch's: LinalgVectorNormBackward0, SumBackward1, AmaxBackward0..."""
    from .dims import normalize_dim
    from .reduction import sum as sum_
    from .shape import permute, unsqueeze
    from .statistics import amax, amin, norm

    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_order_text(ord)} not supported.")
    check_matrices(A, "linalg.matrix_norm", square=False)
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = (normalize_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or abs(ord) == 2:
        order = [d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]
        S = SVDVALS.apply(permute(A, order))
        out = sum_(S, -1, keepdim) if ord == "nuc" else (amax if ord > 0 else amin)(S, -1, keepdim)
        if keepdim:  # the two dims back in their places, of size 1
            back = [order.index(d) for d in range(A.ndim)]
            out = permute(unsqueeze(out, -1), back)
        return out
    if ord in (math.inf, -math.inf):
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    columns = norm(A, 1, (d0,), keepdim)
    return (amax if ord > 0 else amin)(columns, d1, keepdim)


def linalg_vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The vector `ord`-norm over `dim` (every dim when None), as autodiff.norm
    (LinalgVectorNormBackward0)."""
    from .statistics import norm

    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str")
    return norm(x, ord, dim, keepdim, dtype)


def linalg_norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """A matrix norm where `ord` is given and `dim` names two dims (or A is a matrix and `dim` is
    None), a vector norm otherwise (the 2-norm of every element when both are None)."""
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    if ord is not None and (isinstance(ord, str) or (dim is not None and len(dim) == 2)
                            or (dim is None and A.ndim == 2)):
        return linalg_matrix_norm(A, ord, dim if dim is not None else (0, 1), keepdim, dtype=dtype)
    return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


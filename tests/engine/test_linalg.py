"""Linear algebra against PyTorch: every result of the functions that give several
(slogdet, eigh, svd, qr), repeated eigenvalues and singular values, singular matrices, and
PyTorch's error texts. test_torch_samples.py compares each function's first result on the
sample table; eigenvectors and singular vectors are compared here through losses that do not
read their signs, which LAPACK builds choose differently. Skipped when PyTorch is not installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autodiff

from .test_torch_agreement import fails_as_pytorch

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


W = [[0.3, -0.7, 0.2], [0.5, 0.1, -0.4], [0.9, -0.2, 0.6]]
SQUARE = [[1.1, 0.3, -0.5], [0.2, 0.9, 0.4], [-0.6, 0.1, 1.3]]
SPD = [[2.0, 0.3, -0.4], [0.3, 1.5, 0.2], [-0.4, 0.2, 1.1]]
TALL = [[1.0, -0.5], [0.3, 0.8], [-0.6, 0.4]]
WIDE = np.array(TALL).T.tolist()


def _weights(lib, t, k=0):
    """Fixed weights of t's shape, so that a loss reads every element differently."""
    n = t.numel()
    return lib.tensor(np.sin(np.arange(1, n + 1) * (1.3 + k)).reshape(tuple(t.shape)))


def _results(lib, make, values):
    """The results' values and nodes, the gradient of a weighted sum of them, and its second
    derivative along fixed directions: for the outputs `make` gives (a list)."""
    A = lib.tensor(values, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = make(lib, A)
    loss = sum((o * _weights(lib, o, k)).sum() for k, o in enumerate(outs))
    (g,) = lib.autograd.grad(loss, A, create_graph=True)
    (h,) = lib.autograd.grad((g * _weights(lib, g, 7)).sum(), A)
    return ([o.detach().numpy() for o in outs], [o.grad_fn.name() if o.grad_fn is not None else None for o in outs],
            g.detach().numpy(), h.numpy())


def _symmetric(lib, A):
    return (A + A.mT) / 2


RESULTS = {  # each a list of results; eigenvectors and singular vectors squared (their signs are LAPACK's)
    "linalg.slogdet": lambda lib, A: list(lib.linalg.slogdet(A)),
    "slogdet negative": lambda lib, A: list(lib.slogdet(-A)),
    "eigh": lambda lib, A: (lambda r: [r.eigenvalues, r.eigenvectors ** 2])(lib.linalg.eigh(_symmetric(lib, A))),
    "eigh UPLO=U": lambda lib, A: (lambda r: [r[0], r[1] ** 2])(lib.linalg.eigh(A @ A.mT, UPLO="U")),
    "svd square": lambda lib, A: (lambda r: [r.U ** 2, r.S, r.Vh ** 2])(lib.linalg.svd(A)),
    "svd tall": lambda lib, A: (lambda r: [r.U ** 2, r.S, r.Vh ** 2])(lib.linalg.svd(A[:, :2], full_matrices=False)),
    "svd wide": lambda lib, A: (lambda r: [r.U ** 2, r.S, r.Vh ** 2])(lib.linalg.svd(A[:2], full_matrices=False)),
    "svd full, its first columns": lambda lib, A: (lambda r: [r.U[:, :2] ** 2, r.Vh ** 2])(lib.linalg.svd(A[:, :2])),
    "svd U S Vh": lambda lib, A: (lambda r: [(r.U * r.S) @ r.Vh, r.U[:, :1] @ r.Vh[:1]])(lib.linalg.svd(A[:2], False)),
    "torch.svd": lambda lib, A: (lambda r: [r.U ** 2, r.S, r.V ** 2])(lib.svd(A[:, :2])),
    "qr": lambda lib, A: list(lib.linalg.qr(A)),
    "qr tall": lambda lib, A: list(lib.linalg.qr(A[:, :2])),
    "qr wide": lambda lib, A: list(lib.linalg.qr(A[:2])),
    "qr complete, wide": lambda lib, A: list(lib.linalg.qr(A[:2], mode="complete")),
    "torch.qr": lambda lib, A: list(lib.qr(A[:, :2])),
    "cholesky": lambda lib, A: [lib.linalg.cholesky(A @ A.mT + lib.eye(3))],
    "torch.cholesky upper": lambda lib, A: [lib.cholesky(A @ A.mT + lib.eye(3), True)],
    "solve, batched A, vector B": lambda lib, A: [lib.linalg.solve(lib.stack([A, A.mT]), A[0])],
    "solve, left=False": lambda lib, A: [lib.linalg.solve(A, A[:2] * 2, left=False)],
    "pinv hermitian": lambda lib, A: [lib.linalg.pinv(A + A.mT, hermitian=True)],
    "matrix_exp, scaled and squared": lambda lib, A: [lib.linalg.matrix_exp(A * 4)],
    "matrix_norm nuc, keepdim": lambda lib, A: [lib.linalg.matrix_norm(lib.stack([A, A * 2]), "nuc", (0, 2), True)],
    "logdet": lambda lib, A: [lib.logdet(A), lib.logdet(-A)],
}


@pytest.mark.parametrize("case", sorted(RESULTS))
def test_every_result_is_pytorchs(case):
    ours, theirs = (_results(lib, RESULTS[case], SQUARE) for lib in (autodiff, torch))
    assert ours[1] == theirs[1], "grad_fn names"
    for what, a, b in [("values", ours[0], theirs[0]), ("gradient", [ours[2]], [theirs[2]]),
                       ("second derivative", [ours[3]], [theirs[3]])]:
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=f"{case}: {what}")


# -- repeated eigenvalues and singular values: PyTorch's nan where a loss reads the vectors -------------------


def _gradient(lib, make, values, create_graph):
    A = lib.tensor(values, requires_grad=True)
    (g,) = lib.autograd.grad(make(lib, A), A, create_graph=create_graph)
    return g.detach().numpy()


REPEATED = {
    "eigenvalues": lambda lib, A: (lib.linalg.eigh(A).eigenvalues * lib.tensor([1.0, 2.0, 3.0])).sum(),
    "eigenvectors": lambda lib, A: (lib.linalg.eigh(A).eigenvectors * lib.tensor(W)).sum(),
    "both": lambda lib, A: (lambda r: r[0].sum() + (r[1] ** 2 * lib.tensor(W)).sum())(lib.linalg.eigh(A)),
    "singular values": lambda lib, A: (lib.linalg.svdvals(A) * lib.tensor([1.0, 2.0, 3.0])).sum(),
    "U": lambda lib, A: (lib.linalg.svd(A).U * lib.tensor(W)).sum(),
    "Vh": lambda lib, A: (lib.linalg.svd(A).Vh * lib.tensor(W)).sum(),
    "U, S and Vh": lambda lib, A: (lambda r: (r.U * lib.tensor(W)).sum() + r.S.sum() + (r.Vh * lib.tensor(W)).sum())(
        lib.linalg.svd(A)),
    "nuclear norm": lambda lib, A: lib.linalg.matrix_norm(A, "nuc"),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("matrix", [np.eye(3), np.diag([1.0, 1.0, 2.0])], ids=["identity", "a repeated pair"])
@pytest.mark.parametrize("case", sorted(REPEATED))
def test_repeated_eigenvalues_and_singular_values_are_pytorchs(case, matrix, create_graph):
    ours, theirs = (_gradient(lib, REPEATED[case], matrix, create_graph) for lib in (autodiff, torch))
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15, equal_nan=True)
    assert np.isnan(ours).all() == (case in ("eigenvectors", "both", "U", "Vh", "U, S and Vh"))


# -- singular matrices ------------------------------------------------------------------------------------------

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]


@pytest.mark.parametrize("values", [SINGULAR, [SINGULAR, [[1.2, -0.4], [0.7, 0.9]]]], ids=["2x2", "a batch with one"])
def test_det_of_a_singular_matrix_has_pytorchs_gradient_of_every_order(values):
    def derivatives(lib):
        A = lib.tensor(values, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(A).sum(), A, create_graph=True)
        (h,) = lib.autograd.grad((g * _weights(lib, g)).sum(), A)
        return g.detach().numpy(), h.numpy()

    for ours, theirs in zip(derivatives(autodiff), derivatives(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_det_of_a_matrix_of_rank_n_minus_2_has_a_zero_gradient():
    # Its second derivative goes through two zero singular values, which PyTorch's LAPACK (MKL)
    # returns as exact zeros (nan there) and NumPy's as roundoff: not compared.
    A = autodiff.tensor(np.ones((3, 3)), requires_grad=True)
    autodiff.linalg.det(A).backward()
    np.testing.assert_allclose(A.grad.numpy(), np.zeros((3, 3)), atol=1e-12)


def test_where_autodiff_differs_det_has_its_adjugate_without_create_graph_too():
    # The guide's "Where autodiff differs": PyTorch's backward without create_graph solves with
    # an LU whose zero pivot it replaces by eps and multiplies by det = 0, giving zeros; autodiff
    # gives the adjugate, PyTorch's own gradient with create_graph=True.
    A, T = autodiff.tensor(SINGULAR, requires_grad=True), torch.tensor(SINGULAR, requires_grad=True)
    autodiff.linalg.det(A).backward()
    torch.linalg.det(T).backward()
    np.testing.assert_allclose(A.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], rtol=1e-12)
    assert not T.grad.any()


def test_where_autodiff_differs_slogdet_of_a_singular_matrix_has_no_gradient():
    # PyTorch's backward without create_graph gives infinities here, with create_graph its
    # solver's error; autodiff raises that error in both.
    message = "torch.linalg.solve: The solver failed because the input matrix is singular."
    for create_graph in (False, True):
        A = autodiff.tensor(SINGULAR, requires_grad=True)
        with pytest.raises(autodiff.linalg.LinAlgError, match=message):
            autodiff.autograd.grad(autodiff.linalg.slogdet(A).logabsdet, A, create_graph=create_graph)
    T = torch.tensor(SINGULAR, requires_grad=True)
    assert torch.isinf(torch.autograd.grad(torch.linalg.slogdet(T).logabsdet, T)[0]).all()


def test_the_sign_of_slogdet_has_a_zero_gradient():
    # PyTorch gives None (its node ignores the sign's gradient); here a node of its own gives zeros
    A = autodiff.tensor(SQUARE, requires_grad=True)
    (g,) = autodiff.autograd.grad(autodiff.linalg.slogdet(A).sign, A)
    assert not g.numpy().any()


# -- PyTorch's errors -------------------------------------------------------------------------------------------


def _singular(lib):
    return lib.tensor(SINGULAR)


ERRORS = {
    "inv of a singular matrix": lambda lib: lib.linalg.inv(_singular(lib)),
    "inverse of a batch with a singular matrix": lambda lib: lib.inverse(lib.stack([lib.eye(2), _singular(lib)])),
    "inv of a non-square matrix": lambda lib: lib.linalg.inv(lib.ones(2, 3)),
    "inv of a vector": lambda lib: lib.linalg.inv(lib.ones(3)),
    "inv of integers": lambda lib: lib.linalg.inv(lib.ones(2, 2, dtype=lib.int64)),
    "inv in float16": lambda lib: lib.linalg.inv(lib.eye(2, dtype=lib.float16)),
    "solve with a singular matrix": lambda lib: lib.linalg.solve(_singular(lib), lib.ones(2)),
    "solve with a batch of one": lambda lib: lib.linalg.solve(_singular(lib)[None], lib.ones(2)),
    "solve, B of the wrong size": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(3, 2)),
    "solve, left=False with a vector": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2), left=False),
    "solve, batches that do not broadcast": lambda lib: lib.linalg.solve(lib.ones(3, 2, 2), lib.ones(4, 2, 1)),
    "solve, dtypes": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float32)),
    "solve, a number for B": lambda lib: lib.linalg.solve(lib.eye(2), lib.tensor(1.0)),
    "cholesky of an indefinite matrix": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "cholesky, batch element 1": lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), -lib.eye(2)])),
    "cholesky reads the upper triangle": lambda lib: lib.linalg.cholesky(lib.tensor([[4.0, 9.0], [1.0, 3.0]]),
                                                                          upper=True),
    "cholesky of nan": lambda lib: lib.linalg.cholesky(lib.tensor([[float("nan"), 1.0], [1.0, 1.0]])),
    "torch.cholesky": lambda lib: lib.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "det of a non-square matrix": lambda lib: lib.det(lib.ones(2, 3)),
    "det in float16": lambda lib: lib.linalg.det(lib.eye(2, dtype=lib.float16)),
    "slogdet of a vector": lambda lib: lib.linalg.slogdet(lib.ones(3)),
    "logdet of a non-square matrix": lambda lib: lib.logdet(lib.ones(2, 3)),
    "eigh of integers": lambda lib: lib.linalg.eigh(lib.ones(2, 2, dtype=lib.int64)),
    "eigh, UPLO": lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X"),
    "eigvalsh of a non-square matrix": lambda lib: lib.linalg.eigvalsh(lib.ones(2, 3)),
    "vector_norm, a string order": lambda lib: lib.linalg.vector_norm(lib.ones(3), "fro"),
    "torch.svd of a vector": lambda lib: lib.svd(lib.ones(3)),
    "solve, a list for B": lambda lib: lib.linalg.solve(lib.eye(2), [1.0, 2.0]),
    "svd of nan": lambda lib: lib.linalg.svd(lib.tensor([[float("nan"), 1.0], [1.0, 1.0]])),
    "svd, driver": lambda lib: lib.linalg.svd(lib.eye(2), driver="gesvd"),
    "qr, mode": lambda lib: lib.linalg.qr(lib.eye(2), mode="full"),
    "qr, mode r is not differentiable": lambda lib: lib.linalg.qr(lib.ones(3, 2, requires_grad=True), mode="r")
    .R.sum().backward(),
    "qr, complete and tall is not differentiable": lambda lib: lib.linalg.qr(
        lib.tensor(TALL, requires_grad=True), mode="complete").Q.sum().backward(),
    "pinv of a vector": lambda lib: lib.linalg.pinv(lib.ones(3)),
    "matrix_exp of integers": lambda lib: lib.linalg.matrix_exp(lib.ones(2, 2, dtype=lib.int64)),
    "matrix_norm, order": lambda lib: lib.linalg.matrix_norm(lib.ones(2, 3), 3),
    "matrix_norm, a string order": lambda lib: lib.linalg.matrix_norm(lib.ones(2, 3), "abc"),
    "matrix_norm, dims": lambda lib: lib.linalg.matrix_norm(lib.ones(2, 2), "nuc", dim=(0, 0)),
    "norm, three dims": lambda lib: lib.linalg.norm(lib.ones(2, 2, 2), "fro"),
    "torch.norm, nuc of three dims": lambda lib: lib.norm(lib.ones(2, 2, 2), "nuc"),
    "torch.norm, an unknown order": lambda lib: lib.norm(lib.ones(2, 2), "abc"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_are_pytorchs(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fails_as_pytorch(ERRORS[case])


def test_linalg_errors_are_linalg_errors():
    with pytest.raises(autodiff.linalg.LinAlgError):
        autodiff.linalg.inv(_singular(autodiff))
    assert issubclass(autodiff.linalg.LinAlgError, RuntimeError)


# -- the named results ------------------------------------------------------------------------------------------


def test_named_results_are_pytorchs():
    A = autodiff.tensor(SPD)
    pairs = [(autodiff.linalg.eigh(A), torch.linalg.eigh(torch.tensor(SPD))),
             (autodiff.linalg.svd(A), torch.linalg.svd(torch.tensor(SPD))),
             (autodiff.linalg.qr(A), torch.linalg.qr(torch.tensor(SPD))),
             (autodiff.linalg.slogdet(A), torch.linalg.slogdet(torch.tensor(SPD))),
             (autodiff.slogdet(A), torch.slogdet(torch.tensor(SPD))),
             (autodiff.svd(A), torch.svd(torch.tensor(SPD)))]
    for ours, theirs in pairs:
        assert type(ours).__name__ == type(theirs).__name__
        assert repr(ours).startswith(f"autodiff.return_types.{type(theirs).__name__}(\n{ours._fields[0]}=tensor(")
    assert autodiff.linalg.eigh(A)._fields == ("eigenvalues", "eigenvectors")
    assert autodiff.linalg.svd(A)._fields == ("U", "S", "Vh") and autodiff.svd(A)._fields == ("U", "S", "V")


def test_the_namespace_is_torch_linalgs():
    for name in autodiff.linalg.FUNCTIONS:
        assert hasattr(torch.linalg, name), name
    for name in ("det", "slogdet", "logdet", "inverse", "matrix_exp", "pinverse", "cholesky", "qr", "svd"):
        assert hasattr(torch, name) and hasattr(torch.Tensor, name) and hasattr(autodiff.Tensor, name), name
    A = autodiff.tensor(SPD)
    assert autodiff.linalg.matmul is autodiff.matmul
    np.testing.assert_allclose(A.inverse().numpy(), np.linalg.inv(SPD), rtol=1e-12)

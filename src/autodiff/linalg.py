"""`autodiff.linalg`: PyTorch's `torch.linalg`, on NumPy's LAPACK.

    import autodiff as torch
    A = torch.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
    torch.linalg.det(A).backward()          # A.grad: det(A) * A^-T

The functions take batches of matrices (..., m, n), give PyTorch's values, nodes
(`LinalgDetBackward0`...), gradients of every order and error texts, and return PyTorch's named
tuples where it does (`slogdet` -> (sign, logabsdet), `eigh` -> (eigenvalues, eigenvectors),
`svd` -> (U, S, Vh), `qr` -> (Q, R)). They live in ops/decompositions.py and ops/spectral.py;
the expression language calls each as `linalg_<name>` (`linalg_det(A)`), ATen's name for it.
"""

from __future__ import annotations

from .ops.decompositions import linalg_cholesky as cholesky
from .ops.decompositions import linalg_det as det
from .ops.decompositions import linalg_inv as inv
from .ops.decompositions import linalg_qr as qr
from .ops.decompositions import linalg_slogdet as slogdet
from .ops.decompositions import linalg_solve as solve
from .ops.linalg_common import LinAlgError
from .ops.products import matmul
from .ops.spectral import linalg_eigh as eigh
from .ops.spectral import linalg_eigvalsh as eigvalsh
from .ops.spectral import linalg_matrix_norm as matrix_norm
from .ops.spectral import linalg_norm as norm
from .ops.spectral import linalg_pinv as pinv
from .ops.spectral import linalg_svd as svd
from .ops.spectral import linalg_svdvals as svdvals
from .ops.spectral import linalg_vector_norm as vector_norm
from .ops.spectral import matrix_exp

# name -> function, in the order of torch.linalg's documentation: the language's `linalg_<name>`
FUNCTIONS = {
    "det": det, "slogdet": slogdet, "inv": inv, "solve": solve, "cholesky": cholesky, "qr": qr, "eigh": eigh,
    "eigvalsh": eigvalsh, "svd": svd, "svdvals": svdvals, "pinv": pinv, "matrix_exp": matrix_exp,
    "matrix_norm": matrix_norm, "vector_norm": vector_norm, "norm": norm, "matmul": matmul,
}

__all__ = ["LinAlgError", *FUNCTIONS]

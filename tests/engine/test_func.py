"""autodiff.func against torch.func: the same signatures, values and gradients."""

import numpy as np
import pytest

import autodiff

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

_rng = np.random.default_rng(11)
X = _rng.uniform(0.5, 2.0, size=(3, 4))
W = _rng.uniform(-1, 1, size=(2, 4))


def both(build):
    """build(lib, func, tensor) on autodiff and on torch; the results as NumPy arrays."""
    out = []
    for lib in (autodiff, torch):
        result = build(lib, lib.func, lambda a: lib.tensor(a, dtype=lib.float64))
        flat = result if isinstance(result, (tuple, list)) else (result,)
        out.append([np.asarray(r.detach().numpy()) for r in flat])
    return out


CASES = {
    "vmap grad": lambda lib, F, t: F.vmap(F.grad(lambda x: (lib.sin(x) * x).sum()))(t(X)),
    "vmap in_dims and a shared matrix": lambda lib, F, t: F.vmap(F.grad(lambda x, w: lib.tanh(w @ x).sum()),
                                                             in_dims=(1, None))(t(X.T), t(W)),
    "vmap out_dims": lambda lib, F, t: F.vmap(lambda x: x * 2 + x.sum(), out_dims=1)(t(X)),
    "grad argnums": lambda lib, F, t: F.grad(lambda a, b: (a * b.exp()).sum(), argnums=(0, 1))(t(X[0]), t(X[1])),
    "grad_and_value": lambda lib, F, t: F.grad_and_value(lambda a: (a ** 3).sum())(t(X[0])),
    "grad has_aux": lambda lib, F, t: F.grad(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True)(t(X[0])),
    "vjp": lambda lib, F, t: F.vjp(lambda a: a.log() * 3, t(X[0]))[1](t(W[0])),
    "jacrev": lambda lib, F, t: F.jacrev(lambda a: a.softmax(0))(t(X[0])),
    "jacfwd": lambda lib, F, t: F.jacfwd(lambda a, w: w @ a, argnums=1)(t(X[0]), t(W)),
    "hessian": lambda lib, F, t: F.hessian(lambda a: (a.sin() * a.prod()).sum())(t(X[0])),
    "vmap hessian": lambda lib, F, t: F.vmap(F.hessian(lambda a: (a.exp() * a).sum()))(t(X)),
    "vmap jacrev": lambda lib, F, t: F.vmap(F.jacrev(lambda a: a.cumsum(0) * a[0]))(t(X)),
    "grad of grad": lambda lib, F, t: F.grad(lambda a: F.grad(lambda b: (b ** 4).sum())(a).sum())(t(X[0])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_func_transform_matches_torch_func(case):
    ours, theirs = both(CASES[case])
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


def test_vmap_refuses_mismatched_batch_sizes_and_control_flow_that_depends_on_the_example():
    f = autodiff.func.vmap(lambda a, b: a + b)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        f(autodiff.ones(3), autodiff.ones(4))
    branchy = autodiff.func.vmap(lambda a: a * 2 if a > 0 else -a)
    assert branchy(autodiff.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]  # every example agrees
    with pytest.raises(autodiff.func.DataDependent):
        branchy(autodiff.tensor([1.0, -2.0]))

"""Every registered op, gradient-checked automatically against central finite differences.

First order (gradcheck) runs the engine the fast way, on arrays; second order (gradgradcheck)
differentiates the backward formulas themselves, run as recorded tensor operations.
"""

import numpy as np
import pytest

import autodiff
from autodiff.autograd import gradcheck, gradgradcheck
from autodiff.ops import FUNCTIONS
from autodiff.ops.registry import REGISTRY

from devices import DEVICE_NAMES, on_each_named

from .op_samples import LINALG, SAMPLES, op_samples

FULL_JACOBIAN_LIMIT = 20  # input elements; above it, seeded random projections v^T J u
# Each column (row of Vh) is an eigen- or singular vector up to its sign, which LAPACK and
# cuSOLVER choose differently (PyTorch's CPU and CUDA results differ the same way).
DEFINED_UP_TO_SIGN = {"linalg_eigh_eigenvectors", "linalg_svd_u", "linalg_svd_vh"}

# The float64 -> float32 cast sample is checked in float32 on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:Input #1 requires gradient and is not a double")


def _cases():
    for name in sorted(set(SAMPLES) & set(REGISTRY)):
        for index, sample in enumerate(op_samples(name)):
            yield pytest.param(name, index, id=f"{name}-{index}")


def _check(name: str, index: int, checker, device: str = "cpu") -> None:
    sample = op_samples(name)[index].on(device)
    op = REGISTRY[name]
    inputs = sample.tensors

    def run(*tensors):
        if sample.wrap is not None:  # PyTorch's gradcheck wrappers: a symmetric matrix for eigh, cholesky
            tensors = [sample.wrap(t) for t in tensors]
        return op.apply(*sample.bind(tensors))

    size = sum(t.numel() for t in inputs)
    assert checker(run, inputs, fast_mode=size > FULL_JACOBIAN_LIMIT, **sample.check)


def test_every_registered_op_has_samples():
    missing = sorted(name for name in REGISTRY if name not in SAMPLES or not op_samples(name))
    assert not missing, f"ops without samples in tests/engine/op_samples.py: {missing}"


def test_no_samples_for_unknown_ops():
    """The table names only ops and public functions (autodiff.linalg's as linalg_det...), and only
    ops have samples of an op."""
    assert not sorted(set(SAMPLES) - set(REGISTRY) - set(FUNCTIONS) - set(LINALG))
    assert not sorted(name for name in set(SAMPLES) - set(REGISTRY) if op_samples(name))


# Each case runs on every device in turn (the CPU, the CuPy stand-in, a real GPU where there is
# one): a failure says which (tests/devices.py: on_each_named).
@pytest.mark.parametrize("name,index", list(_cases()))
def test_gradcheck(name, index):
    for device in DEVICE_NAMES:
        with on_each_named(device) as where:
            _check(name, index, gradcheck, where)


@pytest.mark.parametrize("name,index", list(_cases()))
def test_gradgradcheck(name, index):
    for device in DEVICE_NAMES:
        with on_each_named(device) as where:
            _check(name, index, gradgradcheck, where)


@pytest.mark.parametrize("name,index", list(_cases()))
def test_gradients_come_back_in_the_inputs_shape_and_place(name, index):
    for device in DEVICE_NAMES:
        with on_each_named(device) as where:
            sample = op_samples(name)[index].on(where)
            out = REGISTRY[name].apply(*sample.args)
            out.sum().backward()
            for t in sample.tensors:
                assert t.grad is not None
                assert t.grad.shape == t.shape
                assert t.grad.dtype == t.dtype
                assert t.grad.device == t.device


@pytest.mark.parametrize("name,index", list(_cases()))
def test_device_results_agree_with_the_cpu(name, index):
    for device in DEVICE_NAMES[1:]:
        _device_results_agree_with_the_cpu(name, index, device)


def _device_results_agree_with_the_cpu(name, index, device):
    """Forward values and gradients on a device match the CPU's to rtol 1e-12 in float64, and to
    1e-13 of the largest number in play where one is near 0 (cuSOLVER's and CuPy's algorithms are
    not LAPACK's and the C library's: where a result cancels to nearly 0, their last bits differ)."""

    def run(sample):
        out = REGISTRY[name].apply(*sample.args)
        if name in DEFINED_UP_TO_SIGN:  # a loss that does not see the signs the libraries choose
            weights = autodiff.arange(out.numel(), dtype=out.dtype, device=out.device).reshape(out.shape) ** 2 + 1
            out = out * out * weights  # weights 1, 2, 5, 10...: an orthogonal matrix's squares give no constant
        out.sum().backward()
        return [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in sample.tensors]

    original = op_samples(name)[index]  # drawn once: each call draws new random values
    expected = run(original.on("cpu"))
    with on_each_named(device) as where:
        sample = original.on(where)
        got = run(sample)
        if name != "to_device":
            assert all(t.device.type == "cuda" for t in sample.tensors)
    finite = [np.abs(want[np.isfinite(want)]) for want in expected]
    scale = max((float(np.max(a)) for a in finite if a.size), default=0.0)  # of the values and gradients together
    for want, have in zip(expected, got):
        np.testing.assert_allclose(have, want, rtol=1e-12, atol=max(1e-13 * scale, 1e-300))


def test_gradcheck_detects_a_wrong_gradient():
    wrong = autodiff.autograd.Function

    class DoubleButClaimsOne(wrong):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = autodiff.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(autodiff.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(DoubleButClaimsOne.apply, (x,))
    assert gradcheck(DoubleButClaimsOne.apply, (x,), raise_exception=False) is False
    assert gradcheck(DoubleButClaimsOne.apply, (x,), raise_exception=False, fast_mode=True) is False


def test_gradgradcheck_detects_a_wrong_second_derivative():
    class SquareWithConstantGradient(autodiff.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x.detach()  # first derivative right, second derivative lost

    x = autodiff.tensor([1.0, 2.0], requires_grad=True)
    assert gradcheck(SquareWithConstantGradient.apply, (x,))
    with pytest.raises(autodiff.autograd.GradcheckError):
        gradgradcheck(SquareWithConstantGradient.apply, (x,))


def test_third_order_through_prod_with_zeros():
    # prod's backward is built from ops, so derivatives of any order exist, even at zeros.
    x = autodiff.tensor([0.0, 2.0, 3.0], requires_grad=True)
    (g,) = autodiff.autograd.grad(x.prod(), x, create_graph=True)
    (h,) = autodiff.autograd.grad(g[1], x, create_graph=True)
    (k,) = autodiff.autograd.grad(h[2], x)
    np.testing.assert_allclose(g.detach().numpy(), [6.0, 0.0, 0.0])
    np.testing.assert_allclose(h.detach().numpy(), [3.0, 0.0, 0.0])
    np.testing.assert_allclose(k.numpy(), [1.0, 0.0, 0.0])


# -- broadcasting shapes drawn by Hypothesis -----------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

BROADCASTING_OPS = ["add", "sub", "mul", "div", "maximum", "minimum", "pow_tensor"]


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(BROADCASTING_OPS),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    seed=st.integers(0, 2**31 - 1),
)
def test_binary_ops_on_any_broadcastable_shapes(name, shapes, seed):
    rng = np.random.default_rng(seed)
    a = autodiff.tensor(rng.uniform(0.5, 2.0, shapes.input_shapes[0]), requires_grad=True)
    b = autodiff.tensor(rng.uniform(0.5, 2.0, shapes.input_shapes[1]), requires_grad=True)
    op = REGISTRY[name]
    assert gradcheck(op.apply, (a, b), fast_mode=a.numel() + b.numel() > FULL_JACOBIAN_LIMIT, seed=seed)
    out = op.apply(a, b)
    assert out.shape == shapes.result_shape
    out.sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape


@pytest.mark.parametrize("name,index", list(_cases()))
def test_backward_lean_path_agrees_with_gradcheck_path(name, index):
    """`backward()` with no targets runs most nodes on the engine's lean path (formulas straight
    on the saved arrays); gradcheck's `autograd.grad` takes the general path. Both give the same
    gradients for every op, so the finite-difference checks above vouch for the lean path too."""
    original = op_samples(name)[index]
    out = REGISTRY[name].apply(*original.args)
    seed = autodiff.tensor(np.random.default_rng(index).standard_normal(out.shape), dtype=out.dtype)
    expected = autodiff.autograd.grad(out, original.tensors, seed, allow_unused=True, retain_graph=True)
    plan = out.grad_fn._plan
    out.backward(seed)
    for t, want in zip(original.tensors, expected):
        if want is None:
            assert t.grad is None
        else:
            np.testing.assert_array_equal(t.grad.numpy(), want.numpy())
    assert plan is not None or len(REGISTRY[name].formulas) not in (1, 2) or REGISTRY[name].variadic


@pytest.mark.parametrize("program", ["a * b", "b * a", "stack([a, b, c]).sum()", "a * b + c * a"])
def test_leaves_readied_together_run_their_hooks_in_pytorchs_order(program):
    torch = pytest.importorskip("torch")
    orders = []
    for lib in (autodiff, torch):
        calls = []
        a, b, c = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (2.0, 3.0, 5.0))
        for name, leaf in (("c", c), ("b", b), ("a", a)):
            leaf.register_hook(lambda g, name=name: calls.append(name))
        if program == "a * b":
            y = a * b
        elif program == "b * a":
            y = b * a
        elif program == "a * b + c * a":
            y = a * b + c * a
        else:
            y = lib.stack([a, b, c]).sum()
        y.backward()
        orders.append(calls)
    assert orders[0] == orders[1]

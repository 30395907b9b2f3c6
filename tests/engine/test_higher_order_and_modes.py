"""Derivatives of derivatives, the functional API, and grad modes."""

import numpy as np
import pytest

import autodiff as torch
from autodiff.autograd import functional


# -- higher order -------------------------------------------------------------------------------------


def test_grad_of_grad():
    x = torch.tensor(2.0, requires_grad=True)
    (g,) = torch.autograd.grad(x**3, x, create_graph=True)
    assert g.item() == 12.0 and g.grad_fn is not None
    (h,) = torch.autograd.grad(g, x, create_graph=True)
    assert h.item() == 12.0
    (k,) = torch.autograd.grad(h, x)
    assert k.item() == 6.0


def test_create_graph_records_the_backward_pass():
    x = torch.tensor(0.5, requires_grad=True)
    y = torch.tanh(x)
    y.backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    (second,) = torch.autograd.grad(x.grad, x)
    t = np.tanh(0.5)
    assert second.item() == pytest.approx(-2 * t * (1 - t * t))


def test_fourth_derivative_of_exp_sin():
    x = torch.tensor(0.3, requires_grad=True)
    value = torch.exp(x) * torch.sin(x)
    for _ in range(4):
        (value,) = torch.autograd.grad(value, x, create_graph=True)
    # (e^x sin x)'''' = -4 e^x sin x
    assert value.item() == pytest.approx(-4 * np.exp(0.3) * np.sin(0.3))


def test_jacobian_and_hessian():
    x = torch.tensor([1.0, 2.0])
    np.testing.assert_allclose(functional.jacobian(lambda t: t**2, x).numpy(), [[2, 0], [0, 4]])
    np.testing.assert_allclose(functional.hessian(lambda t: (t**3).sum(), x).numpy(), [[6, 0], [0, 12]])
    W = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    jw, jx = functional.jacobian(lambda w, v: w @ v, (W, x))
    assert jw.shape == (2, 2, 2) and jx.shape == (2, 2)
    np.testing.assert_allclose(jx.numpy(), W.numpy())
    np.testing.assert_allclose(jw.numpy()[0], [[1, 2], [0, 0]])


def test_hessian_of_a_two_input_function():
    a, b = torch.tensor(2.0), torch.tensor(3.0)
    (haa, hab), (hba, hbb) = functional.hessian(lambda p, q: p * p * q, (a, b))
    assert (haa.item(), hab.item(), hba.item(), hbb.item()) == (6.0, 4.0, 4.0, 0.0)


def test_vjp_jvp_hvp_vhp():
    x = torch.tensor([1.0, 2.0])
    out, vjp = functional.vjp(lambda t: t**2, x, torch.ones(2))
    assert out.tolist() == [1.0, 4.0] and vjp.tolist() == [2.0, 4.0]
    out, jvp = functional.jvp(lambda t: t**2, x, torch.tensor([1.0, 10.0]))
    assert jvp.tolist() == [2.0, 40.0]
    out, hvp = functional.hvp(lambda t: (t**3).sum(), x, torch.ones(2))
    assert out.item() == 9.0 and hvp.tolist() == [6.0, 12.0]
    out, vhp = functional.vhp(lambda t: (t**3).sum(), x, torch.ones(2))
    assert vhp.tolist() == [6.0, 12.0]


def test_functional_errors():
    with pytest.raises(RuntimeError, match="should contain a single element"):
        functional.hessian(lambda t: t * 2, torch.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="returns a single Tensor with a single element"):
        functional.vjp(lambda t: t * 2, torch.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        functional.jacobian(lambda t: torch.ones(2), torch.tensor([1.0, 2.0]), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1"):
        functional.jacobian(lambda t, u: t * 2, (torch.tensor([1.0, 2.0]), torch.tensor(1.0)), strict=True)


def test_functional_does_not_touch_the_callers_tensors():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    functional.jacobian(lambda t: t * t, x)
    assert x.grad is None


# -- grad modes ---------------------------------------------------------------------------------------------


def test_no_grad_records_nothing():
    x = torch.tensor(1.0, requires_grad=True)
    with torch.no_grad():
        y = x * 2
        assert not torch.is_grad_enabled()
    assert torch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_as_decorator_with_and_without_parentheses():
    x = torch.tensor(1.0, requires_grad=True)

    @torch.no_grad()
    def double(t):
        return t * 2

    @torch.no_grad
    def triple(t):
        return t * 3

    assert not double(x).requires_grad and not triple(x).requires_grad
    assert double.__name__ == "double"


def test_enable_grad_inside_no_grad():
    x = torch.tensor(1.0, requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not z.requires_grad


def test_set_grad_enabled_as_function_and_context():
    x = torch.tensor(1.0, requires_grad=True)
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    torch.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    torch.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_inference_mode():
    x = torch.tensor(1.0, requires_grad=True)
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
        y = x * 2
    assert not y.requires_grad and not torch.is_inference_mode_enabled()

    @torch.inference_mode()
    def f(t):
        return t * 2

    assert not f(x).requires_grad


def test_sgd_step_under_no_grad_updates_leaves_in_place():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    assert w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6])
    w.grad = None
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.6, 3.2])


def test_old_style_data_update_writes_through():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    w.data -= 0.5 * w.grad.data
    np.testing.assert_allclose(w.detach().numpy(), [-0.5, 0.5])
    assert not w.data.requires_grad


def test_detach_shares_values_but_not_history():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).detach()
    assert y.is_leaf and not y.requires_grad and y.tolist() == [2.0, 4.0]

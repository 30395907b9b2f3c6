"""Tensors, the recorded graph and backward: the PyTorch autograd tutorial, point by point."""

import math
import warnings

import numpy as np
import pytest

import autodiff as torch  # the point: tutorial code runs unchanged
from autodiff.autograd.node import AccumulateGrad

NON_LEAF_WARNING = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"
SECOND_BACKWARD = "Trying to backward through the graph a second time"


def tutorial_graph():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    c = torch.tensor(5.0, requires_grad=True)
    d = torch.tensor(10.0, requires_grad=True)
    u = a * b
    t = torch.log(d)
    e = u + t * c
    return a, b, c, d, u, t, e


# -- the tutorial example ---------------------------------------------------------------------------


def test_tutorial_gradients_and_retained_intermediate():
    a, b, c, d, u, t, e = tutorial_graph()
    t.retain_grad()
    e.backward()
    assert e.item() == pytest.approx(6 + 5 * math.log(10))
    assert a.grad.item() == 3.0
    assert b.grad.item() == 2.0
    assert c.grad.item() == pytest.approx(math.log(10))
    assert d.grad.item() == pytest.approx(0.5)
    assert t.grad.item() == 5.0


def test_s_equals_two_x_minus_y_plus_z():
    x, y, z = (torch.tensor(v, requires_grad=True) for v in (1.0, 2.0, 5.0))
    s = 2 * (x - y) + z
    s.backward()
    assert s.item() == 3.0
    assert (x.grad.item(), y.grad.item(), z.grad.item()) == (2.0, -2.0, 1.0)


def test_leaves_and_requires_grad_are_contagious():
    a, b, c, d, u, t, e = tutorial_graph()
    assert a.is_leaf and a.requires_grad and a.grad_fn is None
    assert not u.is_leaf and u.requires_grad
    constant = torch.tensor(4.0)
    assert not (constant * 2).requires_grad
    assert (constant * a).requires_grad


def test_next_functions_walk_to_accumulate_grad():
    a, b, c, d, u, t, e = tutorial_graph()
    assert type(e.grad_fn).__name__ == "AddBackward0"
    left, right = e.grad_fn.next_functions
    assert type(left[0]).__name__ == "MulBackward0" and left[1] == 0
    leaves = left[0].next_functions
    assert [type(n).__name__ for n, _ in leaves] == ["AccumulateGrad", "AccumulateGrad"]
    assert leaves[0][0].variable is a and leaves[1][0].variable is b
    assert isinstance(leaves[0][0], AccumulateGrad)


def test_constants_appear_as_none_in_next_functions():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.grad_fn.next_functions[1] == (None, 0)
    assert (10 - x).grad_fn.name() == "RsubBackward1"
    assert len((10 - x).grad_fn.next_functions) == 1


def test_non_leaf_grad_is_none_and_warns_with_pytorchs_text():
    a, b, c, d, u, t, e = tutorial_graph()
    e.backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert u.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a.grad is not None  # leaves never warn


def test_retain_grad_on_a_leaf_does_nothing_and_on_a_constant_fails():
    a = torch.tensor(1.0, requires_grad=True)
    a.retain_grad()
    assert not a.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        torch.tensor(1.0).retain_grad()


# -- backward ---------------------------------------------------------------------------------------------


def test_non_scalar_backward_error_and_its_two_fixes():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
    d = x * 2
    L = 10 - d
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        L.backward(retain_graph=True)
    L.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), -2 * np.ones((3, 3)))
    x.grad = None
    L.backward(torch.ones(L.shape))
    np.testing.assert_array_equal(x.grad.numpy(), -2 * np.ones((3, 3)))


def test_backward_checks_the_gradient_shape():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        (x * 2).backward(torch.ones(2))
    assert str(info.value) == (
        "Mismatch in shape: grad_output[0] has a shape of autodiff.Size([2]) and output[0] has a "
        "shape of autodiff.Size([3])."
    )


def test_backward_on_a_tensor_without_grad():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        torch.tensor(1.0).backward()


def test_gradients_accumulate_across_calls_and_zero_resets():
    x = torch.tensor(3.0, requires_grad=True)
    (x * x).backward()
    (x * x).backward()
    assert x.grad.item() == 12.0
    held = x.grad
    x.grad.zero_()
    assert held.item() == 0.0  # zero_ acts on the same tensor object
    (x * x).backward()
    assert x.grad is held and held.item() == 6.0


def test_second_backward_raises_unless_retain_graph():
    a, b, c, d, u, t, e = tutorial_graph()
    e.backward()
    with pytest.raises(RuntimeError) as info:
        e.backward()
    assert str(info.value).startswith(SECOND_BACKWARD)
    assert "Specify retain_graph=True" in str(info.value)


def test_retain_graph_doubles_the_gradients():
    a, b, c, d, u, t, e = tutorial_graph()
    e.backward(retain_graph=True)
    e.backward()
    assert (a.grad.item(), b.grad.item(), d.grad.item()) == (6.0, 4.0, 1.0)


def test_graphs_that_save_nothing_can_be_run_twice():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x + x).sum()
    y.backward()
    y.backward()  # as in PyTorch: AddBackward0 keeps nothing that could be freed
    assert x.grad.tolist() == [4.0, 4.0]


def test_inputs_limits_which_leaves_receive_gradients():
    a, b, c, d, u, t, e = tutorial_graph()
    e.backward(inputs=[a, c])
    assert a.grad.item() == 3.0 and c.grad.item() == pytest.approx(math.log(10))
    assert b.grad is None and d.grad is None


def test_inputs_may_name_an_intermediate():
    a, b, c, d, u, t, e = tutorial_graph()
    e.backward(inputs=[u])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a populated .grad does not warn, even on a non-leaf
        assert u.grad.item() == 1.0
    assert a.grad is None


def test_empty_inputs_is_an_error():
    a, b, c, d, u, t, e = tutorial_graph()
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty."):
        e.backward(inputs=[])


def test_autograd_grad_returns_gradients_without_touching_grad():
    a, b, c, d, u, t, e = tutorial_graph()
    ga, gd = torch.autograd.grad(e, [a, d])
    assert (ga.item(), gd.item()) == (3.0, 0.5)
    assert a.grad is None and d.grad is None and b.grad is None


def test_autograd_grad_unused_input():
    x = torch.tensor(1.0, requires_grad=True)
    unused = torch.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        torch.autograd.grad(x * 3, [x, unused])
    assert str(info.value) == (
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )
    gx, gu = torch.autograd.grad(x * 3, [x, unused], allow_unused=True)
    assert gx.item() == 3.0 and gu is None
    gx, gu = torch.autograd.grad(x * 3, [x, unused], materialize_grads=True)
    assert gu.item() == 0.0


def test_autograd_grad_of_an_input_that_does_not_require_grad():
    x = torch.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        torch.autograd.grad(x * 2, [torch.tensor(1.0)])


def test_backward_through_a_leaf_itself():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.backward(torch.tensor([3.0, 4.0]))
    assert x.grad.tolist() == [3.0, 4.0]


def test_broadcast_gradients_are_summed_back_to_each_input():
    x = torch.ones(2, 3, requires_grad=True)
    b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = torch.tensor(2.0, requires_grad=True)
    ((x + b) * s).sum().backward()
    assert b.grad.tolist() == [4.0, 4.0, 4.0]
    assert s.grad.item() == pytest.approx(2 * (2 + 3 + 4))  # the sum of x + b
    assert x.grad.shape == (2, 3)


def test_diamond_graph_sums_both_paths():
    x = torch.tensor(3.0, requires_grad=True)
    y = x * x
    z = y + y * y  # y is used twice: its gradient is the sum
    z.backward()
    assert x.grad.item() == pytest.approx(2 * 3 + 4 * 27)


def test_detached_tensors_cut_the_graph():
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    z = y.detach() * x
    assert z.grad_fn.next_functions[0] == (None, 0)
    z.backward()
    assert x.grad.item() == 4.0


def test_float32_on_request_and_float64_by_default():
    assert torch.tensor(1.5).dtype is torch.float64
    assert torch.get_default_dtype() is torch.float64
    x = torch.tensor([1.0, 2.0], dtype=torch.float32, requires_grad=True)
    y = (x * 2.5).exp().sum()
    assert y.dtype is torch.float32
    y.backward()
    assert x.grad.dtype is torch.float32
    mixed = x * torch.tensor([1.0, 1.0])  # float32 * float64 -> float64, grad back in float32
    mixed.sum().backward()
    assert x.grad.dtype is torch.float32


def test_set_default_dtype():
    torch.set_default_dtype(torch.float32)
    assert torch.tensor(1.5).dtype is torch.float32
    assert torch.ones(2).dtype is torch.float32
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        torch.set_default_dtype(torch.int64)


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        torch.tensor([1, 2], requires_grad=True)
    assert torch.tensor([1, 2]).dtype is torch.int64
    assert torch.tensor([True]).dtype is torch.bool


def test_requires_grad_can_only_change_on_leaves():
    x = torch.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        (x * 2).requires_grad_(False)
    y = torch.tensor(1.0)
    y.requires_grad = True
    assert y.requires_grad and y.is_leaf


def test_conversions_follow_pytorch():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        x.item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(x)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(torch.tensor(1.0))
    assert float(torch.tensor(2.5)) == 2.5 and int(torch.tensor(3)) == 3
    assert torch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]


def test_tensor_metadata():
    x = torch.zeros(2, 3)
    assert x.shape == (2, 3) and repr(x.shape) == "autodiff.Size([2, 3])"
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3
    assert x.dim() == x.ndim == 2 and x.numel() == 6
    assert repr(x.device) == "device(type='cpu')"
    with pytest.raises(IndexError, match="Dimension out of range \\(expected to be in range of \\[-2, 1\\], but got 2\\)"):
        x.size(2)


def test_ragged_and_unsupported_data():
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1 \\(got 1\\)"):
        torch.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        torch.tensor("a")


def test_next_functions_keep_each_inputs_output_number():
    """Nodes store their inputs as nodes and output numbers apart; next_functions pairs them up
    again, so an input that is a second output of a node keeps its number."""

    class Both(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g_double, g_triple):
            return g_double * 2 + g_triple * 3

    x = torch.tensor(1.5, requires_grad=True)
    double, triple = Both.apply(x)
    y = triple * double
    (node_a, nr_a), (node_b, nr_b) = y.grad_fn.next_functions
    assert node_a is node_b is double.grad_fn
    assert (nr_a, nr_b) == (triple.output_nr, double.output_nr) == (1, 0)
    y.backward()
    assert x.grad.item() == 2 * 3 * 1.5 * 2  # d(6 x^2)/dx

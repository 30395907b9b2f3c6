"""PyTorch's own tests of the autograd API autodiff claims (test_autograd.py, test_functional.py),
run on autodiff as PyTorch wrote them: where autodiff differs on purpose, the test pins the
difference that the guide's "Where autodiff differs from PyTorch, on purpose" lists."""

from __future__ import annotations

import pytest

import autodiff as torch
from autodiff.autograd.function import once_differentiable


def graph_desc(fn) -> str:
    """test_autograd.py's picture of a graph: each node's class and, in brackets, its inputs'."""
    if fn is None:
        return "None"
    inner = ", ".join(graph_desc(next_fn) for next_fn, _ in fn.next_functions)
    return f"{type(fn).__name__}({inner})"


def _function_test(cls):
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    result = cls.apply(x, 2, y)
    go = torch.ones((), requires_grad=True)
    result.sum().backward(go, create_graph=True)
    assert torch.allclose(x.grad, y + torch.ones(5, 5)) and torch.allclose(y.grad, x + torch.ones(5, 5) * 2)
    assert x.grad.grad_fn is not None and y.grad.grad_fn is not None
    return x, y


def test_once_differentiable():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor1, pyscalar, tensor2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            assert not torch.is_grad_enabled()
            t1, t2 = ctx.saved_tensors
            return grad_output + grad_output * t2, None, grad_output * ctx.pyscalar + grad_output * t1

    x, y = _function_test(MyFunction)
    assert graph_desc(x.grad.grad_fn) == "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"
    assert graph_desc(y.grad.grad_fn) == "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"


def test_a_recorded_gradient_is_copied_into_grad_as_pytorch_accumulates_it():
    """AccumulateGrad with create_graph: `.grad` is a copy of the gradient (CopyBackwards), a
    second backward adds to it (AddBackward0)."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x ** 2).sum().backward(create_graph=True)
    first = x.grad
    assert graph_desc(first.grad_fn).startswith("CopyBackwards(None, MulBackward0(")
    (x ** 2).sum().backward(create_graph=True)
    assert type(x.grad.grad_fn).__name__ == "AddBackward0" and x.grad.tolist() == [4.0, 8.0]
    assert first.tolist() == [2.0, 4.0]  # out of place: the first gradient is as it was
    (second,) = torch.autograd.grad(first.sum(), x)
    assert second.tolist() == [2.0, 2.0]


def test_set_materialize_non_diff_grads():
    seen = []

    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out0 = x.clone()
            out1 = x.clone()
            ctx.mark_non_differentiable(out1)
            ctx._materialize_non_diff_grads = False
            return out0, out1

        @staticmethod
        def backward(ctx, g0, g1):
            seen.append(g1)
            return g0

    a = torch.tensor(1.0, requires_grad=True)
    Func.apply(a)[0].backward()
    assert seen == [None] and a.grad.item() == 1.0


def test_custom_function_mark_dirty_not_differentiable():
    class InplaceMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.mul_(2)
            ctx.mark_dirty(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            pass

    for requires_grad in (True, False):
        z = torch.tensor(1.0, requires_grad=requires_grad)
        x = z.clone()
        y = InplaceMul.apply(x)
        assert x is y and x.item() == (z * 2).item()


def test_post_accumulate_grad_hook_ordering():
    tensor = torch.tensor(1.0, requires_grad=True)

    def pre_hook(grad):
        return grad.sub(2.0)

    def acc_grad_node_pre_hook(grad_out):
        return (grad_out[0].div(5.0),)

    def post_acc_grad_hook(tensor):
        tensor.grad.add_(0.5)

    def acc_grad_node_post_hook(grad_in, grad_out):
        tensor.grad = grad_out[0].mul(10)

    acc_grad = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    tensor.register_hook(pre_hook)
    acc_grad.register_prehook(acc_grad_node_pre_hook)
    tensor.register_post_accumulate_grad_hook(post_acc_grad_hook)
    acc_grad.register_hook(acc_grad_node_post_hook)
    tensor.backward(torch.tensor(5.0))
    assert tensor.grad.item() == pytest.approx(11.0)  # (5 - 2) / 5 = 0.6, + 0.5 in place, × 10


def test_detach_base_keeps_the_views_graph_but_no_base():
    """test_detach_base: detaching the base does not detach the view. PyTorch's view also
    answers `view._base is x`; here a view shares no memory with its base, so it has no `_base`
    (the guide: memory is never shared between a view and its base)."""
    x = torch.randn(10, 10, requires_grad=True)
    view = x.narrow(0, 1, 4)
    x.detach_()
    assert not x.requires_grad and view.requires_grad and view.grad_fn is not None
    assert getattr(view, "_base", None) is None


def test_detach_of_a_view_shares_no_memory_and_detach_in_place_is_allowed():
    """Where test_detach expects `view.detach_()` to raise ("Can't detach views in-place"), and a
    detached view to write through to its base, autodiff's views are copies (the guide)."""
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 2
    y[1:].detach().zero_()
    assert y.tolist() == [2.0, 4.0, 6.0, 8.0]
    view = x.narrow(0, 1, 2)
    view.detach_()
    assert not view.requires_grad and x.requires_grad


@pytest.mark.parametrize("call", [torch.autograd.functional.vjp, torch.autograd.functional.jvp])
def test_vjp_and_jvp_size_errors_name_autodiffs_size(call):
    """test_functional's messages read `torch.Size([4])`; autodiff's shapes print as
    `autodiff.Size` (the guide), the rest of the message is PyTorch's."""
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be autodiff\.Size\(\[3\]\) but got "
                                           r"autodiff\.Size\(\[4\]\)\.$"):
        call(lambda a: a * 2, torch.ones(3), torch.ones(4))


@pytest.mark.torch
def test_the_same_graphs_and_hooks_as_pytorch():
    """The cases above, with PyTorch itself as the oracle where it is installed."""
    real = pytest.importorskip("torch")
    descs = []
    for lib in (real, torch):
        class MyFunction(lib.autograd.Function):
            @staticmethod
            def forward(ctx, tensor1, pyscalar, tensor2):
                ctx.save_for_backward(tensor1, tensor2)
                return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

            @staticmethod
            def backward(ctx, grad_output):
                var1, var2 = ctx.saved_tensors
                return grad_output + grad_output * var2, None, grad_output * 2 + grad_output * var1

        x = lib.randn(5, 5, requires_grad=True, dtype=lib.float64)
        y = lib.randn(5, 5, requires_grad=True, dtype=lib.float64)
        MyFunction.apply(x, 2, y).sum().backward(lib.ones((), requires_grad=True, dtype=lib.float64),
                                                 create_graph=True)
        descs.append((graph_desc(x.grad.grad_fn), graph_desc(y.grad.grad_fn)))
    assert descs[0] == descs[1]

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


# --- test_autograd.py's TestAutograd, ported: the test's name in PyTorch is the name here, the
# logic PyTorch's, its TestCase helpers plain asserts.

def _eq(a, b):
    return torch.allclose(torch.as_tensor(a) if not isinstance(a, torch.Tensor) else a,
                          torch.as_tensor(b) if not isinstance(b, torch.Tensor) else b)


def test_function_returns_input():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    for shape in [(1,), ()]:
        v = torch.ones(shape, requires_grad=True)
        MyFunction.apply(v).backward()
        assert _eq(v.grad, torch.full(shape, 2.0))
        with torch.no_grad():
            v.grad.zero_()
        MyFunction.apply(v.clone()).backward()
        assert _eq(v.grad, torch.full(shape, 2.0))


def test_function_returns_undefined_tensor():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return None

    x = torch.ones(1, requires_grad=True)
    MyFunction.apply(x).backward()
    assert x.grad is None
    MyFunction.apply(x ** 2).backward()
    assert x.grad is None
    MyFunction.apply(x).sum().backward()
    assert x.grad is None
    assert torch.autograd.grad(MyFunction.apply(x), x, allow_unused=True)[0] is None


def test_unused_grad_requires_grad_with_materialize():
    x = torch.ones(10, requires_grad=True)
    y = torch.ones(10, requires_grad=True)
    z = (x ** 2).sum()
    g = torch.autograd.grad(z, (x, y), allow_unused=True, materialize_grads=True, create_graph=False)
    assert not g[0].requires_grad and not g[1].requires_grad
    assert g[1].tolist() == [0.0] * 10


def test_grad_materialize_grads():
    x = torch.tensor(0.5, requires_grad=True)
    a = torch.tensor(1.0, requires_grad=True)
    y = x * a
    dydx = torch.autograd.grad(y, x, create_graph=True)
    d2ydx2_none = torch.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
    d2ydx2 = torch.autograd.grad(dydx, x, create_graph=True, allow_unused=True, materialize_grads=True)
    d3ydx3 = torch.autograd.grad(d2ydx2, x, materialize_grads=True)
    assert d2ydx2_none[0] is None
    assert d2ydx2[0].item() == 0 and d3ydx3[0].item() == 0
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when"):
        torch.autograd.grad(y, x, allow_unused=False, materialize_grads=True)


class _SimulateBackwardError(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        return input.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, input):
        raise Exception("Simulate error on backward pass")


def test_custom_function_exception():
    t1 = torch.rand((3, 3), requires_grad=True)
    t2 = torch.rand((3, 3), requires_grad=True)
    tmp = (t1 + t2) * (t1 + t2)
    t3 = _SimulateBackwardError.apply(tmp)
    with pytest.raises(Exception, match="Simulate error on backward pass"):
        t3.sum().backward()


def test_custom_function_non_tensor_inputs_outputs():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @once_differentiable
        def backward(ctx, *grads):
            assert len(grads) == 7
            assert grads[0] is None and grads[2] is None and grads[3] is None and grads[5] is None
            scale = ctx.scale
            var1, var2, var3 = ctx.saved_tensors
            return (grads[1] * scale + grads[4] * var2 * scale + grads[6],
                    grads[1] * var3 * scale + grads[4] * var1 * scale,
                    None,
                    grads[1] * var2 * scale + grads[4] * scale)

    t1 = torch.rand(10, dtype=torch.double, requires_grad=True)
    t2 = torch.rand(10, dtype=torch.double, requires_grad=True)
    t3 = torch.rand(10, dtype=torch.double)
    scale = 7
    res = MyFunction.apply(t1, t2, scale, t3)
    assert res[0] == scale and res[2] is None and res[3] is True and res[5] == "bar"
    assert _eq((t1 + t2 * t3) * scale, res[1]) and _eq((t1 * t2 + t3) * scale, res[4])
    assert _eq(t1, res[6])
    torch.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    assert t1.grad is not None and t2.grad is not None and t3.grad is None

    def foo(t1, t2, t3):
        res = MyFunction.apply(t1, t2, scale, t3)
        return res[1], res[4], res[6]

    assert torch.autograd.gradcheck(foo, (t1, t2, t3))


def test_custom_function_no_tensors():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @once_differentiable
        def backward(ctx, *args):
            return (args[0], args[1], None, args[2])

    t1, t2, t3, scale = 0.25, 0.5, 0.75, 3
    res = MyFunction.apply(t1, t2, scale, t3)
    assert res == (scale, (t1 + t2 * t3) * scale, None, True, (t1 * t2 + t3) * scale, "bar", t1)


def test_invalid_gradients():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return torch.randn(10, dtype=torch.float)

    with pytest.raises(RuntimeError, match="expected shape"):
        input = torch.randn(5, 5, dtype=torch.float, requires_grad=True)
        MyFunction.apply(input).sum().backward()


def test_unrelated_inputs():
    def my_function(x, y):
        return x * x

    x = torch.rand(10, dtype=torch.double, requires_grad=True)
    y = torch.rand(10, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(my_function, (x, y))
    assert torch.autograd.gradgradcheck(my_function, (x, y))


def test_custom_function_setup_context_simple():
    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            return gO * 2 * x

    x = torch.randn([], requires_grad=True)
    (gx,) = torch.autograd.grad(MySquare.apply(x), x)
    assert _eq(gx, 2 * x)


def test_custom_function_setup_context_multi_output():
    class MySquare(torch.autograd.Function):
        @staticmethod
        def forward(x):
            two_x = x.item() * 2
            return x ** 2, two_x

        @staticmethod
        def setup_context(ctx, inputs, output):
            _, two_x = output
            ctx.two_x = two_x

        @staticmethod
        @once_differentiable
        def backward(ctx, gO, _):
            return gO * ctx.two_x

    x = torch.randn([], requires_grad=True)
    y, _ = MySquare.apply(x)
    (gx,) = torch.autograd.grad(y, x)
    assert _eq(gx, 2 * x)


def test_custom_function_setup_context_multi_input():
    class MyReshape(torch.autograd.Function):
        @staticmethod
        def forward(x, shape, scale_forward, scale_backward):
            return x.reshape(shape) * scale_forward

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, shape, scale_forward, scale_backward = inputs
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape

        @staticmethod
        def backward(ctx, gO):
            return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    class MyReshapeRef(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, shape, scale_forward, scale_backward):
            ctx.scale_backward = scale_backward
            ctx.x_shape = x.shape
            return x.reshape(shape) * scale_forward

        @staticmethod
        def backward(ctx, gO):
            return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

    def check(x, shape, scale_forward, scale_backward):
        y = MyReshape.apply(x, shape, scale_forward, scale_backward).sum()
        (gx,) = torch.autograd.grad(y, x)
        y_expected = MyReshapeRef.apply(x, shape, scale_forward, scale_backward).sum()
        (gx_expected,) = torch.autograd.grad(y_expected, x)
        assert _eq(y_expected, y) and _eq(gx_expected, gx)

    check(torch.randn(24, requires_grad=True), (3, 8), 7, 11)
    check(torch.randn(2, 3, 4, requires_grad=True), (6, 4), -1, 2)


def test_accumulate_grad():
    grad_output = torch.ones(5, 5)

    def compute_grad(create_graph):
        x = torch.randn(5, 5, requires_grad=True)
        y = x + 2
        y.backward(grad_output, retain_graph=True)
        x_grad = x.grad
        x_grad_clone = x.grad.clone()
        y.backward(grad_output, create_graph=create_graph)
        return x_grad, x_grad_clone

    x_grad, x_grad_clone = compute_grad(create_graph=False)
    assert _eq(x_grad, x_grad_clone * 2)  # in place
    x_grad, x_grad_clone = compute_grad(create_graph=True)
    assert _eq(x_grad, x_grad_clone)  # out of place


def test_accumulate_grad_tensor_reference():
    """The dense half of PyTorch's test (autodiff has no sparse tensors)."""
    for create_graph in (False, True):
        params = torch.tensor([1.5, 1.5]).requires_grad_()
        params.grad = torch.tensor([1.5, 1.5])
        grad_saved = params.grad
        params.backward(torch.tensor([1.5, 1.5]), create_graph=create_graph)
        assert (id(grad_saved) == id(params.grad)) == (not create_graph)


def test_accumulate_grad_with_zero_numel_grad():
    a = torch.rand(4, 0, requires_grad=True)
    b = torch.rand(4, 1, requires_grad=True)
    c = a + b
    assert c.shape == (4, 0)
    c.sum().backward()
    assert _eq(b.grad, torch.zeros(4, 1)) and a.grad.shape == (4, 0)


def test_hessian_vector():
    x = torch.randn(2, 2, requires_grad=True)
    y = torch.randn(2, 2, requires_grad=True)
    z = x ** 2 + y * x + y ** 2
    z.backward(torch.ones(2, 2), create_graph=True)
    with torch.no_grad():
        x_grad = 2 * x + y
        y_grad = x + 2 * y
    assert _eq(x.grad, x_grad) and _eq(y.grad, y_grad)
    grad_sum = 2 * x.grad + y.grad
    grad_sum.backward(torch.ones(2, 2))
    assert _eq(x.grad, x_grad + torch.ones(2, 2) * 5) and _eq(y.grad, y_grad + torch.ones(2, 2) * 4)


def test_grad():
    x = torch.randn(2, 2, requires_grad=True)
    y = torch.randn(2, 2, requires_grad=True)
    z = x ** 2 + y * x + y ** 2
    z.backward(torch.ones(2, 2), create_graph=True)
    x_grad = 2 * x + y
    y_grad = x + 2 * y
    assert _eq(x.grad, x_grad) and _eq(y.grad, y_grad)
    grad_sum = 2 * x.grad + y.grad
    x_hv = torch.autograd.grad(outputs=[grad_sum], grad_outputs=[torch.ones(2, 2)], inputs=[x],
                               create_graph=True)
    assert _eq(x_hv[0], torch.ones(2, 2) * 5)
    assert _eq(x.grad, x_grad) and _eq(y.grad, y_grad)
    grad_out = torch.ones(2)
    with pytest.raises(RuntimeError) as error:
        torch.autograd.grad(outputs=[grad_sum], grad_outputs=[grad_out], inputs=[x], create_graph=True)
    assert str(error.value) == ("Mismatch in shape: grad_output[0] has a shape of " + str(grad_out.shape)
                                + " and output[0] has a shape of " + str(grad_sum.shape) + ".")


def test_grad_nonleaf():
    x_init = torch.randn(2, 2, requires_grad=True)
    x = x_init
    y = torch.randn(2, 2, requires_grad=True)
    grad_output = torch.ones(2, 2)

    def fn(x):
        return x ** 2 + y * x + y ** 2

    for _ in range(5):
        (grad_x,) = torch.autograd.grad(fn(x), x, grad_outputs=grad_output, create_graph=True)
        assert y.grad is None and x.grad is None
        assert _eq(grad_x, 2 * x + y)
        x = x + 0.05 * grad_x
    assert fn(x).sum().item() > fn(x_init).sum().item()
    x.backward(grad_output)
    assert y.grad is not None and x_init.grad is not None


def test_grad_nonleaf_many_outputs():
    x = torch.randn(4, 2, requires_grad=True)
    a, b = x.chunk(2)
    hook_called = [False]

    def hook(*grads):
        hook_called[0] = True

    x.register_hook(hook)
    go = torch.randn(2, 2)
    grad_a, grad_b = torch.autograd.grad((a + 2 * b), [a, b], grad_outputs=go, create_graph=True)
    assert _eq(grad_a, go) and _eq(grad_b, go * 2)
    assert not hook_called[0] and x.grad is None


def test_grad_nonleaf_register_hook():
    """PyTorch's test, but for one line: `unbind`'s pieces have a node each here (PyTorch: one
    UnbindBackward0 with an output per piece, the guide), so a hook on piece 0 is not called
    when backward runs from another piece, where PyTorch calls it with None."""
    x = torch.randn(5, requires_grad=True)
    x_list = x.unbind()
    x0 = x_list[0]
    hook_results = [None]
    calls = []

    def hook(grad):
        hook_results[0] = grad
        calls.append(grad)

    x0.register_hook(hook)
    x_list[0].backward()
    assert _eq(hook_results[0], torch.tensor(1.0))
    expected_grad = [1.0, 0.0, 0.0, 0.0, 0.0]
    assert x.grad.tolist() == expected_grad and x_list[0].grad is None
    for i in range(1, 5):
        x_list[i].backward()
        assert len(calls) == 1  # PyTorch: called again, with None
        expected_grad[i] = 1.0
        assert x.grad.tolist() == expected_grad and x_list[i].grad is None
    assert x_list[0].grad_fn is not x_list[1].grad_fn  # PyTorch: the same node
    assert [type(p.grad_fn).__name__ for p in x_list] == ["UnbindBackward0"] * 5


def test_post_accumulate_grad_hook_on_non_leaf():
    leaf = torch.rand(3, requires_grad=True)
    non_leaf = 2.0 * leaf
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        non_leaf.register_post_accumulate_grad_hook(lambda tensor: tensor.sub_(1.0))


def test_post_accumulate_grad_hook_multiple_hooks():
    def hook1(tensor):
        tensor.sub_(tensor.grad)

    def hook2(tensor):
        tensor.mul_(4.0)

    tensor = torch.rand(3, requires_grad=True)
    tensor_ref = tensor.detach().clone()
    tensor.register_post_accumulate_grad_hook(hook1)
    tensor.register_post_accumulate_grad_hook(hook2)
    tensor.sum().backward()
    assert _eq(4.0 * (tensor_ref - 1.0), tensor)


def test_post_accumulate_grad_hook_multiple_tensors():
    def hook(tensor):
        tensor.sub_(tensor.grad)

    tensor1 = torch.rand(3, requires_grad=True)
    tensor1_ref = tensor1.detach().clone()
    tensor2 = torch.rand(5, requires_grad=True)
    tensor2_ref = tensor2.detach().clone()
    tensor1.register_post_accumulate_grad_hook(hook)
    tensor2.register_post_accumulate_grad_hook(hook)
    tensor1.sum().backward()
    tensor2.sum().backward()
    assert _eq(tensor1_ref - 1.0, tensor1) and _eq(tensor2_ref - 1.0, tensor2)


def test_post_accumulate_grad_hook_returns_not_None():
    tensor = torch.rand(2, 3, requires_grad=True)
    tensor.register_post_accumulate_grad_hook(lambda tensor: tensor.grad)
    with pytest.raises(RuntimeError, match="hooks should return None."):
        tensor.sum().backward()


def test_tensor_grad_warnings():
    import warnings

    dummy = torch.ones(1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        dummy.requires_grad_()
        _ = dummy.grad
        assert len(w) == 0
        dummy = dummy.clone()
        _ = dummy.grad
        assert len(w) == 1
        dummy.retain_grad()
        _ = dummy.grad
        assert len(w) == 1


def test_grad_mode_class_decoration():
    import warnings

    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        @torch.no_grad()
        class Foo:
            def __init__(self):
                assert not torch.is_grad_enabled()

            def foo(self):
                assert torch.is_grad_enabled()

        Foo().foo()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")

        @torch.no_grad()
        def foo():
            assert not torch.is_grad_enabled()

        foo()

        class Foo2:
            @torch.no_grad()
            def __init__(self):
                assert not torch.is_grad_enabled()

            @torch.no_grad()
            def foo(self):
                assert not torch.is_grad_enabled()

        Foo2().foo()
    assert len(w) == 0


def test_post_accumulate_grad_hook_ordering_on_a_vector():
    """test_post_accumulate_grad_hook_ordering as PyTorch wrote it: a vector, then sum()."""
    tensor = torch.rand(3, requires_grad=True)

    def acc_grad_node_post_hook(grad_in, grad_out):
        tensor.grad = grad_out[0].mul(10)

    acc_grad = tensor.view_as(tensor).grad_fn.next_functions[0][0]
    tensor.register_hook(lambda grad: grad.sub(2.0))
    acc_grad.register_prehook(lambda grad_out: (grad_out[0].div(5.0),))
    def post_acc_grad_hook(t):
        t.grad.add_(0.5)

    tensor.register_post_accumulate_grad_hook(post_acc_grad_hook)
    acc_grad.register_hook(acc_grad_node_post_hook)
    tensor.sum().backward()
    assert _eq(torch.tensor([3.0, 3.0, 3.0]), tensor.grad)


def test_hook_with_no_name():
    class MyHookClass:
        def __call__(self, grad):
            return grad.clone()

    x = torch.randn(5, requires_grad=True).clone()
    x.register_hook(MyHookClass())
    x.sum().backward()


def test_prehook_ordering():
    log = []

    def hook1(g):
        log.append(1)
        return g * 3

    def hook2(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)

    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(hook2)
    b.register_hook(hook1)
    b.grad_fn.register_prehook(hook2)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(hook1)
    acc.register_prehook(hook2)
    a.register_hook(hook1)
    b.sum().backward(retain_graph=True)
    assert log == [1, 2, 2, 1, 1, 2]
    log.clear()
    torch.autograd.grad(b.sum(), inputs=(a,), retain_graph=True)
    assert log == [1, 2, 2, 1, 1]
    log.clear()
    b.sum().backward(inputs=(b,))
    assert log == [1, 2, 2]
    assert b.grad.item() == 3


def test_retains_grad_can_always_observe_tensor_prehook():
    def tensor_prehook(g):
        return g * 2

    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.register_hook(tensor_prehook)
    b.retain_grad()
    b.register_hook(tensor_prehook)
    b.clone().backward()
    assert b.grad.item() == 4
    a = torch.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.retain_grad()
    b.register_hook(tensor_prehook)
    b.clone().backward()
    assert b.grad.item() == 2


def test_accumulate_grad_posthooks_can_observe_tensor_prehook():
    a = torch.tensor(1.0, requires_grad=True)
    seen = []

    def posthook(gO, gI):
        assert torch.allclose(gI[0], a * 2) and len(gO) == 0
        seen.append("post")

    def prehook(gI):
        assert torch.allclose(gI[0], a * 2) and len(gI) == 1
        seen.append("pre")

    b = a.clone()
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    acc.register_prehook(prehook)
    a.register_hook(lambda g: g * 2)
    b.backward()
    assert seen == ["pre", "post"]


def test_accumulate_grad_posthooks_should_not_execute():
    def tensor_prehook(g):
        raise RuntimeError

    def posthook(gO, gI):
        raise RuntimeError

    a = torch.tensor(1.0, requires_grad=True)
    a.register_hook(tensor_prehook)
    b = torch.tensor(1.0, requires_grad=True)
    c = a.clone()
    acc = c.grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    out = a + b + c
    out.sum().backward(inputs=[b])
    assert b.grad.item() == 1.0


def test_hook_edge_case_when_called_with_grad():
    a = torch.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    counts = {"tensor": 0, "pre": 0, "post": 0}

    def tensor_prehook(g):
        counts["tensor"] += 1

    def prehook(g):
        counts["pre"] += 1

    def posthook(gI, gO):
        counts["post"] += 1

    a.register_hook(tensor_prehook)
    b.register_hook(tensor_prehook)
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(posthook)
    acc.register_prehook(prehook)
    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_prehook(prehook)

    def run_and_count(fn):
        for key in counts:
            counts[key] = 0
        fn()
        return counts["tensor"], counts["post"], counts["pre"]

    assert run_and_count(lambda: torch.autograd.grad(c, inputs=(b), retain_graph=True)) == (1, 0, 0)
    assert run_and_count(lambda: torch.autograd.grad(c, inputs=(a, b), retain_graph=True)) == (2, 1, 1)
    assert run_and_count(lambda: c.backward(retain_graph=True)) == (2, 2, 2)
    assert run_and_count(lambda: c.backward(inputs=(a, b), retain_graph=True)) == (2, 2, 2)


def test_sharded_grad():
    leaves = [torch.zeros(5, 5, requires_grad=True) for _ in range(10)]
    intermediates = [l * i + l * l for i, l in enumerate(leaves)]
    loss = sum(v * i for i, v in enumerate(intermediates)).sum()
    d_intermediates = [d_i for start in range(0, len(intermediates), 2)
                       for d_i in torch.autograd.grad(loss, intermediates[start:start + 2])]
    torch.autograd.backward(intermediates, d_intermediates)
    for i, l in enumerate(leaves):
        assert _eq(l.grad, i * i * (1 + l))


def test_backward_badcalls():
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.ones(1).backward()


def test_grad_badcalls():
    x = torch.ones(1)
    y = x ** 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(x, y)
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(y, x)
    x = torch.ones(1, requires_grad=True)
    torch.autograd.grad(x ** 2, x)


def test_grad_empty_inputs():
    """PyTorch 2.13's text; older tests read ValueError "grad requires non-empty inputs."."""
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^`inputs` argument to `grad\(\)` cannot be empty\.$"):
        torch.autograd.grad(2 * x, [], grad_outputs=torch.tensor([1.0]))


def test_grad_fn_badcalls():
    error_regex = "expected .* arguments, got .* instead"
    x = torch.ones(1, requires_grad=True)
    y = x ** 2
    with pytest.raises(TypeError, match=error_regex):
        y.grad_fn(x.detach(), x.detach())
    with pytest.raises(TypeError, match=error_regex):
        y.grad_fn()
    y.grad_fn(x.detach())


def test_grad_unreachable():
    x = torch.ones(1, requires_grad=True)
    y = torch.ones(1, requires_grad=True)
    z = x * 2
    w = y * 2
    grad_x, grad_y = torch.autograd.grad(x * 2, [x, y], allow_unused=True)
    assert _eq(grad_x, x * 2) and grad_y is None
    z = torch.ones(1, requires_grad=True)
    grad_x, grad_z = torch.autograd.grad(x * 2, [x, z], allow_unused=True)
    assert _eq(grad_x, x * 2) and grad_z is None
    with pytest.raises(RuntimeError, match="Set allow_unused=True"):
        torch.autograd.grad(x * 2, [x, y], allow_unused=False)
    del w


def test_grad_unreachable_discovery():
    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            raise AssertionError("This node should not be executed!")

    x = MyFunc.apply(torch.randn(1, requires_grad=True) * 2)
    y = torch.randn(1, requires_grad=True)
    (gY,) = torch.autograd.grad(x, (y,), allow_unused=True)
    assert gY is None
    x = MyFunc.apply(torch.randn(1, requires_grad=True) * 2)
    y = torch.randn(1, requires_grad=True)
    z = torch.randn(1, requires_grad=True)
    (gY, gZ) = torch.autograd.grad(x + z, (y, z), allow_unused=True)
    assert gY is None and gZ is not None
    x = MyFunc.apply(torch.randn(1, requires_grad=True) * 2)
    y = torch.randn(1, requires_grad=True)
    torch.autograd.backward(x, inputs=(y,))
    assert y.grad is None


def test_hooks():
    x = torch.ones(5, 5, requires_grad=True)
    y = torch.ones(5, 5) * 4
    y.requires_grad_(True)
    counter = [0]

    def bw_hook(inc, grad):
        assert isinstance(grad, torch.Tensor)
        counter[0] += inc

    z = x ** 2 + x * 2 + x * y + y
    x.register_hook(lambda *args: bw_hook(0, *args))
    test = z.register_hook(lambda *args: bw_hook(1, *args))
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert counter[0] == 1
    test2 = z.register_hook(lambda *args: bw_hook(2, *args))
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert counter[0] == 4
    test2.remove()
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert counter[0] == 5
    test.remove()
    z.register_hook(lambda grad: grad.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5), retain_graph=True)
    assert _eq(y.grad, (x + 1) * 2)
    y.register_hook(lambda grad: grad.mul(2))
    with torch.no_grad():
        y.grad.zero_()
    z.backward(torch.ones(5, 5))
    assert _eq(y.grad, (x + 1) * 4)


def _get_mul2(use_custom_function):
    if use_custom_function:
        class Mul2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, gO):
                return gO * 2

        return Mul2.apply
    return lambda x: x * 2


@pytest.mark.parametrize("use_custom_function", [True, False])
def test_grad_fn_prehooks(use_custom_function):
    mul2 = _get_mul2(use_custom_function)
    a = torch.tensor([1.0], requires_grad=True)
    b = mul2(a)
    post_counter = [0]
    pre_counter = [0]

    def posthook(grad_input, grad_output):
        assert pre_counter[0] == 3
        assert torch.allclose(grad_output[0], torch.ones(1) * 8)
        assert torch.allclose(grad_input[0], torch.ones(1) * 16)
        post_counter[0] += 1
        return grad_input

    def prehook(grad_output):
        pre_counter[0] += 1
        return (grad_output[0] * 2,)

    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda x: None)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda x: x)
    b.grad_fn.register_prehook(lambda x: None)
    b.sum().backward()
    assert post_counter[0] == 2 and pre_counter[0] == 3

    a = torch.rand(3, 3, requires_grad=True)
    b = mul2(a)

    def prehook_none(grad_output):
        pre_counter[0] += 1
        return None

    b.grad_fn.register_prehook(prehook_none)
    b.sum().backward()
    assert pre_counter[0] == 4 and torch.allclose(a.grad, torch.ones(3, 3) * 2)


def test_grad_fn_prehooks_multiple_outputs():
    """The custom Function half (var_mean is outside the claimed functions)."""
    class DoubleMul2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, a, y):
            ctx.a = a
            return a * x * 2, a, a * y * 2

        @staticmethod
        def backward(ctx, g1, _a, g2):
            return ctx.a * g1 * 2, None, ctx.a * g2 * 2

    counter = [0]

    def prehook(grad_output):
        g1, ga, g2 = grad_output
        assert ga is None
        counter[0] += 1
        return (g1 * 2, None, g2 * 2)

    a = torch.randn(3, 3, requires_grad=True)
    b = torch.randn(3, 3, requires_grad=True)
    k = 3
    c, _, d = DoubleMul2.apply(a, k, b)
    c.grad_fn.register_prehook(prehook)
    (c + d).sum().backward()
    assert counter[0] == 1
    assert torch.allclose(a.grad, torch.ones(1) * 4 * k) and torch.allclose(b.grad, torch.ones(1) * 4 * k)


@pytest.mark.parametrize("use_custom_function", [True, False])
def test_grad_fn_prehooks_remove_hooks(use_custom_function):
    mul2 = _get_mul2(use_custom_function)
    a = torch.rand(3, 3, requires_grad=True)
    b = mul2(a)
    counter = [0]

    def prehook(grad_output):
        counter[0] += 1
        return None

    handle = b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    handle.remove()
    b.sum().backward()
    assert torch.allclose(a.grad, torch.ones(3, 3) * 2) and counter[0] == 1

    a = torch.rand(3, 3, requires_grad=True)
    b = mul2(a)
    counter = [0]

    def prehook1(grad_output):
        handle2.remove()
        handle3.remove()
        return None

    def prehook2(grad_output):
        counter[0] += 1
        return None

    b.grad_fn.register_prehook(prehook1)
    handle2 = b.grad_fn.register_prehook(prehook2)
    handle3 = b.grad_fn.register_prehook(prehook2)
    handle3.remove()
    b.sum().backward()
    assert torch.allclose(a.grad, torch.ones(3, 3) * 2) and counter[0] == 1


def test_hook_none():
    class NoneGradientFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            assert ctx.needs_input_grad[0] and not ctx.needs_input_grad[1]
            return x, y

        @staticmethod
        def backward(ctx, grad_x, grad_y):
            return grad_x, None

    was_called = [False]

    def hook(grad):
        assert grad is not None
        was_called[0] = True

    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5)
    rx, ry = NoneGradientFunction.apply(x, y)
    rx.register_hook(hook)
    ry.register_hook(hook)
    sum(rx, ry).sum().backward()
    assert was_called[0]


def test_retain_grad():
    input = torch.rand(1, 3, requires_grad=True)
    h1 = input * 3
    out = (h1 * h1).sum()
    h1.retain_grad()
    h1.retain_grad()
    out.backward(retain_graph=True)
    assert _eq(h1 * 2, h1.grad)
    out.backward(retain_graph=True)
    assert _eq(h1 * 4, h1.grad)
    with torch.no_grad():
        input.grad.zero_()
    input.retain_grad()
    input.retain_grad()
    out.backward()
    assert _eq(input * 18, input.grad)


def test_retain_grad_inplace():
    a = torch.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    assert a.grad.tolist() == [1.0]
    a = torch.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    assert a.grad.tolist() == [1.0]
    x = torch.tensor([1.0], requires_grad=True).clone()
    x.retain_grad()
    x_view = x[:]
    x_view *= 2
    x *= 2
    x.sum().backward()
    assert x.grad.tolist() == [1.0]
    x = torch.zeros(4)
    y = x.view(2, 2)
    y.add_(torch.randn(2, 2, requires_grad=True))


def test_retains_grad_inplace_multiple_outputs():
    """The custom Function half (var_mean is outside the claimed functions)."""
    class DoubleMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    b = torch.rand(3, 3, requires_grad=True)
    var, mean = DoubleMul.apply(b)
    var.retain_grad()
    mean.retain_grad()
    var.mul_(2)
    (var + mean).sum().backward()
    gvar, gmean = var.grad, mean.grad
    a = b.detach().requires_grad_(True)
    var, mean = DoubleMul.apply(a)
    var.mul_(2)
    gvar_expected, gmean_expected = torch.autograd.grad((var + mean).sum(), inputs=(var, mean))
    assert torch.allclose(gvar, gvar_expected) and torch.allclose(gmean, gmean_expected)


def test_tensor_hooks_inplace():
    count1 = [0]
    count2 = [0]

    def fn1(grad):
        count1[0] += 1
        assert grad.tolist() == [4.0]
        return grad * 2

    def fn2(grad):
        count2[0] += 1
        assert grad.tolist() == [1.0]
        return grad * 2

    a = torch.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(fn1)
    b.mul_(2)
    b.register_hook(fn2)
    b.sum().backward()
    assert count1[0] == 1 and count2[0] == 1 and a.grad.tolist() == [8.0]

    count3 = [0]

    def fn3(grad):
        count3[0] += 1
        assert grad.tolist() == [4.0]
        return grad * 2

    a = torch.tensor([1.0], requires_grad=True)
    b = a.clone()
    b.register_hook(fn3)
    b.mul_(2)
    b.mul_(2)
    b.sum().backward()
    assert count3[0] == 1 and a.grad.tolist() == [8.0]


def test_tensor_hooks_inplace_multiple_outputs():
    """The custom Function half (var_mean is outside the claimed functions)."""
    class DoubleMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    counts = [0, 0, 0]
    b = torch.rand(3, 3, requires_grad=True)
    out1, out2 = DoubleMul.apply(b)

    def fn0(grad):
        counts[0] += 1
        assert _eq(grad, torch.ones_like(out1) * 2)

    def fn1(grad):
        counts[1] += 1
        assert _eq(grad, torch.ones_like(out1) * 3)

    def fn2(grad):
        counts[2] += 1
        assert _eq(grad, torch.ones_like(out1))

    out1.register_hook(fn0)
    out2.register_hook(fn1)
    out1.mul_(2)
    out1.register_hook(fn2)
    (out1 + out2 * 3).sum().backward()
    assert counts == [1, 1, 1]


def test_backward():
    v = torch.randn(5, 5, requires_grad=True)
    x = torch.randn(5, 5, requires_grad=True)
    y = (torch.rand(5, 5) + 0.1).requires_grad_(True)
    z = torch.randn(5, 5, requires_grad=True)
    grad_output = torch.randn(5, 5)
    v.backward(grad_output)
    assert _eq(v.grad, grad_output)
    a = x + (y * z) + 4 * z ** 2 * x / y
    a.backward(grad_output)
    x_grad = 4 * z.pow(2) / y + 1
    y_grad = z - 4 * x * z.pow(2) / y.pow(2)
    z_grad = 8 * x * z / y + y
    assert _eq(x.grad, x_grad * grad_output)
    assert _eq(y.grad, y_grad * grad_output)
    assert _eq(z.grad, z_grad * grad_output)


def test_multi_backward():
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    q = torch.randn(5, 5, requires_grad=True)
    a = torch.randn(5, 5, requires_grad=True)
    b = torch.randn(5, 5, requires_grad=True)
    q2 = q * 2
    z = x + y + q2
    c = a * b + q2
    grad_z = torch.randn(5, 5)
    grad_c = torch.randn(5, 5)
    torch.autograd.backward([z, c], [grad_z, grad_c])
    assert _eq(x.grad, grad_z) and _eq(y.grad, grad_z)
    assert _eq(a.grad, grad_c * b) and _eq(b.grad, grad_c * a)
    assert _eq(q.grad, (grad_c + grad_z) * 2)


def test_multi_backward_no_grad():
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=False)
    z = x + y
    q = y * 2
    with pytest.raises(RuntimeError):
        torch.autograd.backward([z, q], [torch.ones(5, 5), torch.ones(5, 5)])


def test_backward_with_inputs():
    x = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    y = torch.randn(2, 2, dtype=torch.double, requires_grad=True)

    def fn():
        return x ** 2 + y * x + y ** 2

    gradient = torch.ones(2, 2)
    x_grad_expected = 2 * x + y
    y_grad_expected = x + 2 * y

    @torch.no_grad()
    def reset_grad():
        x.grad.zero_()
        y.grad.zero_()

    torch.autograd.backward(fn(), gradient, inputs=[x, y])
    assert _eq(x.grad, x_grad_expected) and _eq(y.grad, y_grad_expected)
    reset_grad()
    torch.autograd.backward(fn(), gradient, inputs=[x])
    assert _eq(x.grad, x_grad_expected) and _eq(y.grad, torch.zeros(2, 2))
    reset_grad()
    torch.autograd.backward(fn(), gradient, inputs=[y])
    assert _eq(y.grad, y_grad_expected) and _eq(x.grad, torch.zeros(2, 2))
    reset_grad()
    torch.autograd.backward(fn(), gradient, inputs=y)
    assert _eq(y.grad, y_grad_expected) and _eq(x.grad, torch.zeros(2, 2))
    reset_grad()
    with pytest.raises(RuntimeError, match="cannot be empty"):
        torch.autograd.backward(fn(), gradient, inputs=[])


def test_backward_with_scalar_input():
    x = torch.randn([], dtype=torch.double, requires_grad=True)
    out = x ** 2
    out.backward(inputs=x)
    assert _eq(x.grad, 2 * x)


def test_backward_with_nonleaf_inputs():
    x = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    x_nonleaf = x * 1
    y = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    z = torch.randn(2, 2, dtype=torch.double, requires_grad=True)
    out = x_nonleaf ** 2 + y * x_nonleaf + y ** 2
    out.backward(torch.ones(2, 2, dtype=torch.double), create_graph=True, inputs=[x, y, x_nonleaf])
    assert _eq(y.grad, x + 2 * y) and _eq(x.grad, 2 * x + y)
    assert _eq(x_nonleaf.grad, 2 * x_nonleaf + y)
    out.backward(torch.ones(2, 2, dtype=torch.double), create_graph=True, inputs=[z])
    assert z.grad is None


def test_dependent_backward():
    x = torch.randn(10, requires_grad=True)
    y = x ** 2
    z = y ** 3
    go_y = torch.randn(10)
    go_z = torch.randn(10)
    torch.autograd.backward([y, z], [go_y, go_z])
    assert _eq(x.grad, 2 * x * go_y + 6 * x.pow(5) * go_z)


def test_save_output_nr():
    x = torch.randn(10, requires_grad=True)
    seen = []

    class MultiOutputFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:5], x[5:]

        @staticmethod
        def backward(ctx, *grad):
            return torch.cat(grad)

    a, b = MultiOutputFn.apply(x)
    assert b.output_nr == 1

    class TestFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, b):
            ctx.save_for_backward(b)
            return b * 2

        @staticmethod
        def backward(ctx, grad_b):
            (b,) = ctx.saved_tensors
            seen.append(b.output_nr)

    TestFn.apply(b).sum().backward()
    assert seen == [1]


def test_free_deep_graph_pyfunction():
    """PyTorch's depth is 150000; 5000 already overflows a recursive teardown."""
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, tensor1, tensor2):
            return tensor1 + tensor2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output

    def scope():
        x = torch.randn(1, requires_grad=True)
        y = x.clone()
        for _ in range(5000):
            y = MyOp.apply(y, y)

    scope()


def test_free_deep_graph():
    def scope():
        x = torch.randn(1, requires_grad=True)
        y = x.clone()
        for _ in range(5000):
            y = y + y * 0.000001

    scope()


def test_no_unnecessary_save():
    mu = torch.ones(1, requires_grad=True)
    x = torch.zeros(1)
    loss = 0
    for i in range(3):
        x.detach_()
        x.copy_(mu + i)
        ft = torch.tensor([float(i)])
        multiplied = x * ft
        s = multiplied.sum()
        loss += s
    loss.backward()
    assert mu.grad.tolist() == [3.0]


def test_no_grad():
    x = torch.ones(5, 5, requires_grad=True)
    y = torch.ones(5, 5) * 4
    with torch.no_grad():
        w = x + y

    def adder(x, y):
        return x + y

    for adder in [torch.no_grad()(adder), torch.no_grad(adder)]:
        z = adder(x, y)
        assert not w.requires_grad and w.grad_fn is None
        with pytest.raises(RuntimeError):
            w.backward(torch.ones(5, 5))
        assert not z.requires_grad and z.grad_fn is None
        with pytest.raises(RuntimeError):
            z.backward(torch.ones(5, 5))
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        w = adder(x, y)
        assert not torch.is_grad_enabled()


def test_enable_grad_decorator_no_paren():
    x = torch.ones(1, requires_grad=True)

    @torch.enable_grad
    def doubler(x):
        return x * 2

    with torch.no_grad():
        z = doubler(x)
    assert z.requires_grad


def test_set_grad_generator_functions():
    @torch.no_grad()
    def gen_no_grad():
        for i in range(10):
            assert torch.is_grad_enabled() is False
            yield i

    with torch.enable_grad():
        for _ in gen_no_grad():
            assert torch.is_grad_enabled() is True

    @torch.enable_grad()
    def gen_enable_grad():
        for i in range(10):
            assert torch.is_grad_enabled() is True
            yield i

    with torch.no_grad():
        for _ in gen_enable_grad():
            assert torch.is_grad_enabled() is False


def test_set_grad_generator_functions_recursive():
    @torch.enable_grad()
    def enable_grad_decorator_recursive(depth):
        assert torch.is_grad_enabled()
        if depth > 0:
            no_grad_decorator_recursive(depth - 1)
            assert torch.is_grad_enabled()

    @torch.no_grad()
    def no_grad_decorator_recursive(depth):
        assert not torch.is_grad_enabled()
        if depth > 0:
            enable_grad_decorator_recursive(depth - 1)
            assert not torch.is_grad_enabled()

    def enable_grad_context_manager_recursive(depth):
        with torch.enable_grad():
            assert torch.is_grad_enabled()
            if depth > 0:
                no_grad_context_manager_recursive(depth - 1)
                assert torch.is_grad_enabled()

    def no_grad_context_manager_recursive(depth):
        with torch.no_grad():
            assert not torch.is_grad_enabled()
            if depth > 0:
                enable_grad_context_manager_recursive(depth - 1)
                assert not torch.is_grad_enabled()

    for mode, expected in ((torch.enable_grad, True), (torch.no_grad, False)):
        with mode():
            assert torch.is_grad_enabled() is expected
            enable_grad_decorator_recursive(10)
            assert torch.is_grad_enabled() is expected
            enable_grad_context_manager_recursive(10)
            assert torch.is_grad_enabled() is expected


def test_set_grad_coroutines():
    @torch.no_grad()
    def coro_no_grad(n=10):
        assert not torch.is_grad_enabled()
        for i in range(n):
            assert not torch.is_grad_enabled()
            r = yield i
            assert not torch.is_grad_enabled() and i == r
        assert not torch.is_grad_enabled()

    @torch.enable_grad()
    def coro_enable_grad(n=10):
        assert torch.is_grad_enabled()
        for i in range(n):
            assert torch.is_grad_enabled()
            r = yield i
            assert torch.is_grad_enabled() and i == r
        assert torch.is_grad_enabled()

    for mode, coro_fn, outside in ((torch.enable_grad, coro_no_grad, True),
                                   (torch.no_grad, coro_enable_grad, False)):
        with mode():
            coro, r = coro_fn(), None
            with pytest.raises(StopIteration):
                while True:
                    assert torch.is_grad_enabled() is outside
                    r = coro.send(r)
                    assert torch.is_grad_enabled() is outside


def test_set_grad_coroutines_benign_exceptions():
    class RecoverableException(Exception):
        pass

    def make(mode, expected):
        @mode()
        def coro(n=10):
            has_raised = False
            for i in range(n):
                try:
                    assert torch.is_grad_enabled() is expected
                    yield (-i if has_raised else i)
                except RecoverableException:
                    assert torch.is_grad_enabled() is expected
                    has_raised = True
        return coro

    for outer, inner, expected in ((torch.enable_grad, torch.no_grad, False),
                                   (torch.no_grad, torch.enable_grad, True)):
        with outer():
            coro = make(inner, expected)()
            assert next(coro) == 0
            with pytest.raises(StopIteration):
                while True:
                    assert coro.throw(RecoverableException) < 0


def test_set_grad_coroutines_critical_exceptions():
    class UnrecoverableException(Exception):
        pass

    class SecondaryException(Exception):
        pass

    def make(mode, expected):
        @mode()
        def coro(n=10):
            for i in range(n):
                try:
                    assert torch.is_grad_enabled() is expected
                    yield i
                except UnrecoverableException:
                    assert torch.is_grad_enabled() is expected
                    raise SecondaryException from None
        return coro

    for outer, inner, expected in ((torch.enable_grad, torch.no_grad, False),
                                   (torch.no_grad, torch.enable_grad, True)):
        with outer():
            coro = make(inner, expected)()
            assert next(coro) == 0
            with pytest.raises(SecondaryException):
                coro.throw(UnrecoverableException)


def test_set_grad_coroutines_exit():
    def make(mode, expected):
        @mode()
        def coro(state):
            for i in range(10):
                try:
                    assert torch.is_grad_enabled() is expected
                    yield i
                except GeneratorExit:
                    assert torch.is_grad_enabled() is expected
                    state.add("GeneratorExit")
                    raise
        return coro

    for outer, inner, expected in ((torch.enable_grad, torch.no_grad, False),
                                   (torch.no_grad, torch.enable_grad, True)):
        state = set()
        with outer():
            coro = make(inner, expected)(state)
            for _ in range(5):
                next(coro)
            coro.close()
        assert "GeneratorExit" in state


def test_no_grad_python_function():
    x = torch.ones(5, 5, requires_grad=True)

    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(self, x):
            return x + 1

        @staticmethod
        def backward(self, dy):
            return dy

    with torch.no_grad():
        y = MyOp.apply(x)
    assert not y.requires_grad


def _check_index(x, y, idx):
    if y.grad is not None:
        with torch.no_grad():
            y.grad.zero_()
    indexed_tensor = x[idx]
    indexed_var = y[idx]
    assert _eq(indexed_tensor, indexed_var.data)
    indexed_var.sum().backward()
    expected_grad = torch.zeros(x.size())
    expected_grad[idx] = 1
    assert _eq(y.grad, expected_grad), idx


def test_indexing():
    x = torch.arange(1.0, 17).view(4, 4)
    y = x.clone().requires_grad_(True)
    for idx in [1, (1, 1), slice(1, None), slice(None, 2), (slice(None, 2), 2), (slice(1, 2), 2),
                (1, slice(2, None)), (slice(None, None), slice(2, None)), torch.tensor([0, 2]),
                torch.rand(4, 4) > 0.5, (Ellipsis, slice(2, None)), ([0], [0]), ([1, 2, 3], [0]),
                ([1, 2], [2, 1]), ([[1, 2], [3, 0]], [[0, 1], [2, 3]]), (slice(None), [2, 3]),
                ([2, 3], slice(None)), [0], ([0],)]:
        _check_index(x, y, idx)
    x = torch.arange(1.0, 49).view(4, 3, 4)
    y = x.clone().requires_grad_(True)
    for idx in [(slice(None), [0], [0]), ([0], [0], slice(None)), (slice(None), [0, 1, 2], [0]),
                ([0, 1, 2], [0], slice(None)), (slice(None), [1, 2], [2, 1]), ([1, 2], [2, 1], slice(None)),
                (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]), ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)),
                (slice(None), slice(None), [2, 1]), (slice(None), [2, 1], slice(None)),
                ([2, 1], slice(None), slice(None)), ([0],), ([0], slice(None)), ([0], Ellipsis),
                ([1, 2], [0, 1]), ([1, 2], [0, 1], Ellipsis), (Ellipsis, [1, 2], [0, 1]),
                (torch.tensor([0, 1]), Ellipsis)]:
        _check_index(x, y, idx)


def test_indexing_duplicates():
    y = torch.arange(1.0, 17).view(4, 4).requires_grad_(True)
    idx = torch.tensor([1, 1, 3, 2, 1, 2])
    y[idx].sum().backward()
    expected_grad = torch.zeros(4, 4)
    for i in idx.tolist():
        expected_grad[i] += 1
    assert _eq(y.grad, expected_grad)

    y = torch.arange(1.0, 17).view(4, 4).requires_grad_(True)
    y[[1, 1, 3, 2, 1, 2], [0]].sum().backward()
    expected_grad = torch.zeros(4, 4)
    for i in [1, 1, 3, 2, 1, 2]:
        expected_grad[i, 0] += 1  # PyTorch's `expected_grad[i][0] += 1` writes into a copy here (the guide)
    assert _eq(y.grad, expected_grad)

    y = torch.arange(1.0, 17).view(4, 4).requires_grad_(True)
    y[[[1, 2], [0, 0]], [[0, 1], [1, 1]]].sum().backward()
    assert y.grad.tolist() == [[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0],
                               [0.0, 0.0, 0.0, 0.0]]

    y = torch.arange(1.0, 65).view(4, 4, 4).requires_grad_(True)
    y[[1, 1, 1], slice(None), slice(None)].sum().backward()
    expected_grad = torch.zeros(4, 4, 4)
    expected_grad[1] = 3  # PyTorch's `expected_grad[1].fill_(3)` fills a copy here (the guide)
    assert _eq(y.grad, expected_grad)


def test_index_backward_does_not_save_tensor():
    a = torch.tensor([1.0, 0, 0])
    b = torch.zeros(3, requires_grad=True)
    tensor = b + 0
    tensor[a != 0] = tensor[a != 0]
    tensor.backward(torch.zeros_like(tensor))


def test_requires_grad():
    x = torch.randn(5, 5)
    y = torch.randn(5, 5)
    z = torch.randn(5, 5, requires_grad=True)
    a = x + y
    assert not a.requires_grad
    b = a + z
    assert b.requires_grad
    b.backward(torch.ones(5, 5))
    assert x.grad is None and y.grad is None and a.grad is None


def test_requires_grad_():
    x = torch.randn(5, 5)
    y = torch.randn(5, 5, requires_grad=True)
    assert x is x.requires_grad_() and x.requires_grad
    assert y is y.requires_grad_() and y.requires_grad
    assert x is x.requires_grad_(True) and x.requires_grad
    assert y is y.requires_grad_(True) and y.requires_grad
    z = x * y
    with pytest.raises(RuntimeError):
        z.requires_grad_(False)
    assert z is z.requires_grad_() and z.requires_grad
    assert z is z.requires_grad_(True) and z.requires_grad
    assert x is x.requires_grad_(False) and not x.requires_grad
    assert y is y.requires_grad_(False) and not y.requires_grad


def test_requires_grad_inplace():
    a = torch.randn(5, 5)
    b = torch.randn(5, 5, requires_grad=True)
    a += b
    assert a.requires_grad
    a = torch.randn(5, 5) + 0
    b = torch.randn(5, 5, requires_grad=True)
    a += b
    assert a.requires_grad


def test_no_requires_grad_inplace():
    """PyTorch's test; its last check (`b = a[:]` made before `a` requires grad, then
    `b.add_(5)` refused) does not hold here: `b` is a tensor of its own (the guide)."""
    a = torch.randn(2, 3)
    a.add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert _eq(a.grad, torch.ones(2, 3))
    a = torch.randn(2, 3)
    b = a[:]
    b.add_(5)
    a.requires_grad = True
    a.sum().backward()
    assert _eq(a.grad, torch.ones(2, 3))
    a = torch.randn(2, 3)
    b = a[:]
    a.requires_grad = True
    with pytest.raises(RuntimeError):
        a.add_(5)
    before = a.tolist()
    b.add_(5)  # PyTorch: RuntimeError (a view of a leaf that requires grad)
    assert a.tolist() == before


def test_duplicate_backward_root():
    a = torch.randn(5, 5, requires_grad=True)
    b = torch.randn(5, 5, requires_grad=True)
    x = a * b
    grad_output = torch.randn_like(x)
    torch.autograd.backward([x, x], [grad_output, grad_output])
    assert _eq(a.grad, b * grad_output * 2) and _eq(b.grad, a * grad_output * 2)


def test_backward_no_grad():
    a = torch.randn(5, 5, requires_grad=True)
    b = a + 2
    with pytest.raises(RuntimeError):
        torch.autograd.backward([b], [None])


def test_backward_twice_with_saved_values():
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = torch.zeros(3, dtype=torch.double)
    c[[1, 2]] = b[[1, 1]]
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        c.backward(torch.tensor([1, 1, 1], dtype=torch.double))


def test_backward_twice_retained_graph_with_saved_values():
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = torch.zeros(3, dtype=torch.double)
    c[[1, 2]] = b[[1, 1]]
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double), retain_graph=True)
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
    assert b.grad.tolist() == [0.0, 4.0, 0.0]


def test_backward_twice_without_saved_values():
    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = b + 1
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
    c.backward(torch.tensor([1, 1, 1], dtype=torch.double))
    assert b.grad.tolist() == [2.0, 2.0, 2.0]


def test_backward_create_graph_does_not_warn_the_cycle_is_collected():
    """test_backward_create_graph_warns expects "Using backward() with create_graph=True will
    create a reference cycle ... memory leak": here the cycle between a tensor and its `.grad`
    is Python objects, which the garbage collector frees, so there is no leak to warn of."""
    import gc
    import warnings
    import weakref

    b = torch.randn(3, requires_grad=True, dtype=torch.double)
    c = b * b
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        c.backward(torch.ones_like(c), create_graph=True)
        torch.autograd.grad(c, b, torch.ones_like(c), create_graph=True)
    assert not any("create_graph=True" in str(w.message) for w in ws)
    assert b.grad.grad_fn is not None
    ref = weakref.ref(b)
    del b, c
    gc.collect()
    assert ref() is None


def test_next_functions():
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    a = x + y
    assert a.grad_fn is not None
    next_functions = a.grad_fn.next_functions
    assert len(next_functions) == 2
    assert type(next_functions[0][0]).__name__ == "AccumulateGrad" and next_functions[0][1] == 0
    assert type(next_functions[1][0]).__name__ == "AccumulateGrad" and next_functions[1][1] == 0
    b = a + 5
    next_functions = b.grad_fn.next_functions
    assert len(next_functions) == 2
    assert next_functions[0][0] is a.grad_fn and next_functions[1][0] is None


def test_inplace():
    x = torch.ones(5, 5, requires_grad=True)
    y = (torch.ones(5, 5) * 4).requires_grad_(True)
    z = x * y
    q = z + y
    w = z * y
    z.add_(2)
    q.backward(torch.ones(5, 5), retain_graph=True)
    with pytest.raises(RuntimeError):
        w.backward(torch.ones(5, 5))

    z = x * y
    q = z * y
    r = z + y
    w = z.add_(y)
    w.backward(torch.ones(5, 5), retain_graph=True)
    r.backward(torch.ones(5, 5), retain_graph=True)
    with pytest.raises(RuntimeError):
        q.backward(torch.ones(5, 5))

    with torch.no_grad():
        x.grad.zero_()
    m = x / 2
    z = m + y / 8
    q = z * y
    r = z + y
    prev_version = z._version
    w = z.exp_()
    assert z._version != prev_version
    r.backward(torch.ones(5, 5), retain_graph=True)
    assert _eq(x.grad, torch.ones(5, 5) / 2)
    w.backward(torch.ones(5, 5), retain_graph=True)
    assert _eq(x.grad, torch.full((5, 5), (1 + 2.718281828459045) / 2))
    with pytest.raises(RuntimeError):
        q.backward(torch.ones(5, 5))

    leaf = torch.ones(5, 5, requires_grad=True)
    x = leaf.clone()
    x.add_(10)
    assert _eq(x, torch.ones(5, 5) * 11)
    y = x + 2
    y.backward(torch.ones(5, 5))
    assert _eq(leaf.grad, torch.ones(5, 5))
    z = x * y
    x.add_(2)
    with pytest.raises(RuntimeError):
        z.backward(torch.ones(5, 5))


def test_mark_non_differentiable():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            output = input > 0
            ctx.mark_non_differentiable(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            return (grad_output * 0).to(torch.double)

    x = torch.randn(5, 5, requires_grad=True)
    mask = MyFunction.apply(x)
    assert not mask.requires_grad
    y = x.masked_fill(mask, 0)
    y.sum().backward()
    assert _eq(x.grad, (~mask).double())


def test_mark_non_differentiable_mixed():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            a = input + 1
            b = input + 2
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            assert (grad_a == 0).all() and (grad_b == 1).all()
            return grad_b

    x = torch.randn(5, 5, requires_grad=True)
    a, b = MyFunction.apply(x)
    assert not a.requires_grad and b.requires_grad
    b.sum().backward()
    assert _eq(x.grad, torch.ones(5, 5))


def test_mark_non_differentiable_none():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            output = input.clone()
            ctx.mark_non_differentiable(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            return None

    x = torch.randn(5, 5, requires_grad=True)
    r = MyFunction.apply(x * x)
    (r * x).sum().backward()
    assert _eq(x.grad, r)


def test_return_duplicate():
    class DoubleDuplicate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            output = x * 2
            return output, output

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def fn(x):
        a, b = DoubleDuplicate.apply(x)
        assert a is b
        return a + b

    x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(fn, [x]) and torch.autograd.gradgradcheck(fn, [x])


def test_return_duplicate_inplace():
    class DoubleInplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x, x

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def inplace_fn(x):
        a, b = DoubleInplace.apply(x.clone())
        assert a is b
        return a + b

    x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(inplace_fn, [x]) and torch.autograd.gradgradcheck(inplace_fn, [x])
    with pytest.raises(RuntimeError):  # a leaf that requires grad, changed in place
        DoubleInplace.apply(x)


def _setitem(size, index):
    x = torch.ones(*size, requires_grad=True)
    y = x + 2
    y_version = y._version
    y[index] = 2
    assert y._version != y_version
    y.backward(torch.ones(*size))
    expected_grad = torch.ones(*size)
    expected_grad[index] = 0
    assert _eq(x.grad, expected_grad), index


def _setitem_tensor(size, index):
    x = torch.ones(*size, requires_grad=True)
    y = x + 2
    y_version = y._version
    value = torch.full(x[index].size(), 7.0)
    value.requires_grad = True
    y[index] = value
    assert y._version != y_version
    y.backward(torch.ones(*size))
    expected_grad_input = torch.ones(*size)
    expected_grad_input[index] = 0
    assert _eq(x.grad, expected_grad_input) and _eq(value.grad, torch.ones_like(value)), index
    x = torch.randn(4, requires_grad=True)
    y = torch.zeros(2, 3, 4)
    y[1] = x
    y.backward(torch.randn(2, 3, 4))
    assert x.size() == x.grad.size()


def test_setitem():
    for size, index in [((5, 5), 1), ((5,), 1), ((1,), 0), ((10,), [0, 4, 2]), ((5, 5), ([0, 4], [2, 2])),
                        ((5, 5, 5), (slice(None), slice(None), [1, 3])),
                        ((5, 5, 5), (slice(None), [1, 3], slice(None))),
                        ((5, 5, 5), ([1, 3], slice(None), slice(None))),
                        ((5, 5, 5), (slice(None), [2, 4], [1, 3])), ((5, 5, 5), ([1, 3], [2, 4], slice(None)))]:
        _setitem(size, index)
    for size, index in [((5, 5), 3), ((5, 5), ([0, 1], [1, 0])), ((5,), 3), ((5,), torch.tensor([3]).sum()),
                        ((5,), [[0, 1, 2, 3]]), ((5, 5, 5), (slice(None), slice(None), [1, 3])),
                        ((5, 5, 5), (slice(None), [1, 3], slice(None))),
                        ((5, 5, 5), ([1, 3], slice(None), slice(None))),
                        ((5, 5, 5), (slice(None), [2, 4], [1, 3])), ((5, 5, 5), ([1, 3], [2, 4], slice(None))),
                        ((5, 5, 5), (torch.tensor([1, 3]), [2, 4], slice(None)))]:
        _setitem_tensor(size, index)


def test_setitem_mask():
    mask = torch.rand(5, 5) > 0.5
    _setitem((5, 5), mask)
    _setitem((5,), mask[0])
    _setitem((1,), mask[0, 0:1])
    _setitem_tensor((5, 5), mask)
    _setitem_tensor((5,), mask[0])


def test_select_sum():
    x = torch.randn(10, dtype=torch.double, requires_grad=True)

    def func(x):
        return x.select(0, 1).sum()

    assert torch.autograd.gradcheck(func, [x]) and torch.autograd.gradgradcheck(func, [x])


def test_diagonal_expanded_v():
    value = torch.rand([])
    v_expanded = value.clone().expand(10)
    a = torch.rand(10, 10, dtype=torch.double, requires_grad=True)
    (result,) = torch.autograd.grad(a.diagonal(), a, v_expanded)
    assert _eq(result, torch.eye(10, dtype=torch.double) * value)


def test_select_expanded_v():
    v_expanded = torch.rand(10).expand(10, 10)
    a = torch.rand(10, 10, 10, requires_grad=True)
    (result,) = torch.autograd.grad(a[0], a, v_expanded)
    expected = torch.zeros(10, 10, 10)
    expected[0] = v_expanded
    assert _eq(result, expected)


def test_slice_expanded_v():
    v_expanded = torch.rand(10, 1).expand(2, 10, 10)
    a = torch.rand(10, 10, 10, requires_grad=True)
    (result,) = torch.autograd.grad(a[3:5], a, v_expanded)
    expected = torch.zeros(10, 10, 10)
    expected[3:5] = v_expanded
    assert _eq(result, expected)


def test_unused_output():
    x = torch.randn(10, 10, requires_grad=True)
    outputs = x.chunk(5)
    o = outputs[2]
    o = o * 4 + 2
    o.sum().backward()
    expected_grad = torch.zeros(10, 10)
    expected_grad[4:6] = 4
    assert _eq(x.grad, expected_grad)
    with torch.no_grad():
        x.grad.zero_()
    grad_output = torch.randn(2, 10)
    outputs = x.chunk(5)
    outputs[0].backward(grad_output)
    expected_grad = torch.zeros(10, 10)
    expected_grad[:2] = grad_output
    assert _eq(x.grad, expected_grad)


def test_naughty_autograd_function_attribute_access():
    """The part about the Function's own surface (THPFunction's accessors are CPython internals)."""
    class Id(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad_x):
            return grad_x

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Id()
    assert isinstance(f, Id)
    x = torch.zeros(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-static forward method is deprecated"):
        f(x)
    assert Id.apply(x).grad_fn.name() == "IdBackward"


def test_naughty_autograd_function_stashing_ctx():
    """PyTorch's test expects `saved_tensors` of a ctx kept past its retained graph (`del loss`)
    to raise; PyTorch 2.13, the oracle, gives the saved tensors there, as autodiff does (run side
    by side). A backward without retain_graph frees them, and then the ctx raises PyTorch's error."""
    saved_ctx = []

    class Id(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad_x):
            saved_ctx.append(ctx)
            return ctx.saved_tensors

    p = torch.zeros(1, requires_grad=True)
    loss = Id.apply(p)
    loss.backward(retain_graph=True)
    del loss
    assert saved_ctx[0].saved_tensors[0].tolist() == [0.0]
    Id.apply(p).backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        saved_ctx[1].saved_tensors


def test_custom_autograd_repeated_grad_grad():
    def mult1(x):
        return x.prod(dim=-1).prod(dim=-1)

    class Mult(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = mult1(x)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return (grad_output * y)[:, None, None] / x

    def check_gradgrad_repeated(x, y):
        (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
        (ggy_1,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
        (ggy_2,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
        assert _eq(ggy_1[0, 0, 1], ggy_2[0, 0, 1])

    x = torch.ones(2, 4, 4).requires_grad_()
    check_gradgrad_repeated(x, mult1(x))
    check_gradgrad_repeated(x, Mult.apply(x))


def test_custom_autograd_no_early_free():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x ** 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x, _ = ctx.saved_tensors
            return grad_output * 2 * x

    class Double2(Double):
        @staticmethod
        def backward(ctx, grad_output):
            x, y = ctx.saved_tensors
            return grad_output * 2 * y / x

    x = torch.tensor(2).double().requires_grad_()
    for fn in (Double.apply, Double2.apply):
        assert torch.autograd.gradcheck(fn, x) and torch.autograd.gradgradcheck(fn, x)
        y = fn(x)
        torch.autograd.grad(y, x, create_graph=True)
        torch.autograd.grad(y, x)


def test_detach():
    """All but its last line, `view.detach_()` refused: see
    test_detach_of_a_view_shares_no_memory_and_detach_in_place_is_allowed."""
    x = torch.randn(10, 10, requires_grad=True)
    y = (x + 2).detach()
    z = y * 4 + 2
    assert not y.requires_grad and not z.requires_grad
    x = torch.randn(10, 10, requires_grad=True)
    y = (x * 2).detach()
    assert not y.requires_grad and y.grad_fn is None
    z = x + y
    z.sum().backward()
    assert _eq(x.grad, torch.ones(10, 10))
    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=True)
    a = x * 2
    (y + a).sum().backward(retain_graph=True)
    a.detach_()
    assert not a.requires_grad
    (y + a).sum().backward()
    assert _eq(x.grad, torch.ones(10, 10) * 2) and _eq(y.grad, torch.ones(10, 10) * 2)


def test_detach_then_inplace_raises_in_autograd():
    """PyTorch's `x.detach()` shares memory and a version counter with `x`, so zeroing it makes
    backward raise "has been modified by an inplace operation". Here `detach()` shares no memory
    (the guide: `x` keeps its value) but the version counter, as PyTorch's: backward raises."""
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 2
    z = x.detach()
    z.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert x.item() == 3.0 and z.item() == 0.0


def test_isolated_node():
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    a = x + y
    b = torch.max(a, 1, True)[1].repeat(1, 5).double()
    o = (b + a).sum()
    o.backward()
    assert _eq(x.grad, torch.ones(5, 5))


def test_shape():
    x = torch.randn(3, 4)
    assert len(x.shape) == 2 and x.shape[0] == 3 and x.shape[1] == 4


def test_numpy_requires_grad():
    x = torch.randn(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. "
                                           r"Use tensor.detach\(\).numpy\(\) instead."):
        x.numpy()
    with torch.no_grad():
        x.numpy()
    x = torch.randn(2, 2)
    x.numpy()
    with torch.no_grad():
        x.numpy()


def test_return_leaf():
    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a, a + b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a + grad_b, grad_b

    hook_called = [False]
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5, 5, requires_grad=True)
    q, p = Identity.apply(x, y)

    def hook(grad):
        hook_called[0] = True
        assert _eq(grad, torch.ones(5, 5))

    q.register_hook(hook)
    (q + p + x).sum().backward()
    assert _eq(x.grad, torch.ones(5, 5) * 3) and _eq(y.grad, torch.ones(5, 5)) and hook_called[0]


def test_leaf_assignment():
    x = torch.randn(5, 5)
    y = torch.randn(5, requires_grad=True)
    z = torch.randn(5, requires_grad=True)
    x[0] = y
    x[1] = 2 * z
    assert x.requires_grad and x.grad_fn is not None
    x.sum().backward()
    assert _eq(y.grad, torch.ones(5)) and _eq(z.grad, torch.ones(5) * 2)


def test_no_grad_assignment():
    x = torch.randn(5, 5, requires_grad=True)
    y = torch.randn(5)
    with torch.no_grad():
        x[0] = y
    assert x.requires_grad and x.grad_fn is None


def test_no_grad_modifies_version():
    x = torch.randn(5, requires_grad=True)
    y = torch.randn(5, requires_grad=True)
    z = (x * y).sum()
    with torch.no_grad():
        x *= 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_no_grad_input():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(self, x):
            return x

        @staticmethod
        def backward(self, grad_output):
            return grad_output

    x = torch.randn(5, requires_grad=True)
    with torch.no_grad():
        y = MyFunction.apply(x)
    assert x.requires_grad and y.grad_fn is None


def test_backward_copy():
    x = torch.ones(5, 5, requires_grad=True)
    y = torch.ones(5, 5, requires_grad=True)
    a = x + 2
    b = y + 2
    c = x + 2
    add1 = a + b
    add2 = add1 + c
    for _ in range(4):
        a = a * 2
        b = b * 2
        c = c * 2
    branch = a + b + c
    out = add2 + branch
    out.backward(torch.ones(5, 5))
    assert _eq(x.grad, torch.ones(5, 5) * 34) and _eq(y.grad, torch.ones(5, 5) * 17)


def test_save_none_for_backward():
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(None, input, None)
            return input * input

        @staticmethod
        def backward(ctx, grad_output):
            n1, input, n2 = ctx.saved_tensors
            assert n1 is None and n2 is None
            return 2 * input * grad_output

    x = torch.randn(5, 5, requires_grad=True)
    MyFn.apply(x).sum().backward()
    assert _eq(x.grad, 2 * x)


def test_too_many_grads():
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            return input

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None, None

    x = torch.randn(5, 5, requires_grad=True)
    MyFn.apply(x).sum().backward()
    assert _eq(x.grad, torch.ones_like(x))


def test_pickle():
    import pickle

    x = torch.randn(10, 10, requires_grad=True)
    y = torch.randn(10, 10, requires_grad=False)
    for dump in [pickle.dumps([x, y], protocol=p) for p in range(3)]:
        xc, yc = pickle.loads(dump)
        assert _eq(xc, x) and xc.requires_grad == x.requires_grad
        assert _eq(yc, y) and yc.requires_grad == y.requires_grad


def test_dep_nograd():
    class F1(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            out = torch.randn(input.size())
            ctx.mark_non_differentiable(out)
            return input, out

        @staticmethod
        def backward(ctx, grad_output, ignored):
            return grad_output

    class F2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input, ignored):
            return input

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    x = torch.randn(5, requires_grad=True)
    a, b = F1.apply(x)
    b = b + 1
    assert a.requires_grad and not b.requires_grad
    c = F2.apply(a, b)
    c.backward(torch.ones(c.size()))
    assert _eq(x.grad, torch.ones(x.size()))


def test_set_grad_enabled():
    x = torch.tensor([1.0], requires_grad=True)
    with torch.set_grad_enabled(False):
        y = x * 2
    assert not y.requires_grad
    with torch.set_grad_enabled(True):
        y = x * 2
    assert y.requires_grad
    with torch.set_grad_enabled(False):
        torch.set_grad_enabled(True)
        y = x * 2
    assert y.requires_grad


def test_set_grad_enabled_wraps():
    for decorator in [True, False]:
        with torch.enable_grad():
            assert torch.is_grad_enabled()
            if decorator:
                @torch.set_grad_enabled(False)
                def inner_func(x):
                    return x.sin()
            else:
                def inner_func(x):
                    return x.sin()

                obj = torch.set_grad_enabled(False)
                assert not torch.is_grad_enabled()
                inner_func = obj(inner_func)
                assert torch.is_grad_enabled()
            assert torch.is_grad_enabled()
            x = torch.zeros(1, requires_grad=True)
            assert not inner_func(x).requires_grad


def test_simple_reentrant():
    y_data = torch.randn(2, 2)

    class Reenter(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.enable_grad():
                ctx.x = x.detach().requires_grad_(True)
                ctx.y = y_data.detach().requires_grad_(True)
                ctx.output_var = ctx.x * ctx.y
            return ctx.output_var.detach()

        @staticmethod
        def backward(ctx, grad_output):
            with torch.enable_grad():
                ctx.output_var.sum().backward()
            return ctx.x.grad * grad_output

    x = torch.randn(2, 2, requires_grad=True)
    Reenter.apply(x).sum().backward()
    assert _eq(x.grad, y_data)


def test_reentrant_child_error():
    a = torch.rand(3, 3, requires_grad=True)
    c = a * a
    b = torch.rand(3, 3, requires_grad=True)
    e = b * b
    f = _SimulateBackwardError.apply(e)
    reentrant_root = f.sum()

    class ReentrantFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, grad):
            reentrant_root.backward()
            return grad

    d = ReentrantFunc.apply(c)
    with pytest.raises(Exception, match="Simulate error"):
        d.sum().backward()


def test_variable_traverse():
    import gc

    def get_out_and_unrefed_cycle():
        inp = torch.randn(10, requires_grad=True)
        tmp = inp.view(10, 1)
        out = tmp.view(10)
        my_list = [tmp]
        my_list.append(my_list)
        return out

    out = get_out_and_unrefed_cycle()
    gc.collect()
    out.backward(torch.randn(out.size()))


def test_pow_zero_tensor_gradient():
    def run_test(input_size, exponent):
        input = torch.zeros(*input_size, requires_grad=True)
        input.pow(exponent).sum().backward()
        assert input.grad.abs().sum().item() == 0

    run_test((10,), torch.zeros(10))
    run_test((10, 10), torch.zeros(10, 10))
    run_test((10,), 0)


def _hook_order(lib):
    """test_backward_hook_relative_ordering's graph without its nn.Module (and so without the
    module's BackwardHookFunction nodes): F.linear, every node's pre and post hooks, and the
    leaves' tensor and post-accumulate hooks."""
    order = []
    x = lib.randn(10, 10, requires_grad=True)
    weight = lib.randn(10, 10, requires_grad=True)
    bias = lib.randn(10, requires_grad=True)
    count = 0

    def register_hooks_on_all_nodes(nodes):
        nonlocal count
        for node, _ in nodes:
            if node is None:
                continue
            count += 1
            id = f"{node.name()}_{count}"
            node.register_prehook(lambda _, id=id: order.append(f"pre_hook_{id}"))
            node.register_hook(lambda _1, _2, id=id: order.append(f"post_hook_{id}"))
            register_hooks_on_all_nodes(node.next_functions)

    loss = lib.nn.functional.linear(x, weight, bias).sum()
    register_hooks_on_all_nodes(((loss.grad_fn, None),))
    for name, t in (("x", x), ("weight", weight), ("bias", bias)):
        t.register_hook(lambda _, name=name: order.append(f"tensor_pre_hook_{name}"))
    for name, t in (("x", x), ("weight", weight), ("bias", bias)):
        t.register_post_accumulate_grad_hook(lambda _, name=name: order.append(f"post_acc_grad_hook_{name}"))
    loss.backward()
    return order


def test_backward_hook_relative_ordering():
    assert _hook_order(torch) == [
        "pre_hook_SumBackward0_1", "post_hook_SumBackward0_1",
        "pre_hook_AddmmBackward0_2", "post_hook_AddmmBackward0_2",
        "tensor_pre_hook_bias", "pre_hook_torch::autograd::AccumulateGrad_3", "post_acc_grad_hook_bias",
        "post_hook_torch::autograd::AccumulateGrad_3",
        "tensor_pre_hook_x", "pre_hook_torch::autograd::AccumulateGrad_4", "post_acc_grad_hook_x",
        "post_hook_torch::autograd::AccumulateGrad_4",
        "pre_hook_TBackward0_5", "post_hook_TBackward0_5",
        "tensor_pre_hook_weight", "pre_hook_torch::autograd::AccumulateGrad_6", "post_acc_grad_hook_weight",
        "post_hook_torch::autograd::AccumulateGrad_6",
    ]


@pytest.mark.torch
def test_backward_hook_relative_ordering_as_pytorch():
    real = pytest.importorskip("torch")
    assert _hook_order(torch) == _hook_order(real)


# --- test/autograd/test_functional.py's TestAutogradFunctional, ported (its base_tensor cases;
# the LoggingTensor ones test a tensor subclass). `v has invalid size: should be torch.Size`
# reads autodiff.Size here: test_vjp_and_jvp_size_errors_name_autodiffs_size above.

autogradF = torch.autograd.functional


def _assert_same_struct(res, base):
    if isinstance(base, torch.Tensor):
        assert isinstance(res, torch.Tensor) and base.size() == res.size()
    else:
        assert isinstance(base, tuple) and isinstance(res, tuple) and len(base) == len(res)
        for el_base, el_res in zip(base, res):
            assert isinstance(el_res, torch.Tensor) and el_base.size() == el_res.size()


def _assert_interleaved_struct(res, base1, base2):
    t = torch.Tensor
    if isinstance(base1, t) and isinstance(base2, t):
        assert isinstance(res, t) and res.size() == base1.size() + base2.size()
    elif isinstance(base1, tuple) and isinstance(base2, t):
        assert isinstance(res, tuple) and len(res) == len(base1)
        for el_res, el_base1 in zip(res, base1):
            assert isinstance(el_res, t) and el_res.size() == el_base1.size() + base2.size()
    elif isinstance(base1, t) and isinstance(base2, tuple):
        assert isinstance(res, tuple) and len(res) == len(base2)
        for el_res, el_base2 in zip(res, base2):
            assert isinstance(el_res, t) and el_res.size() == base1.size() + el_base2.size()
    else:
        assert isinstance(res, tuple) and len(res) == len(base1)
        for el_res, el_base1 in zip(res, base1):
            assert isinstance(el_res, tuple) and len(el_res) == len(base2)
            for el_el_res, el_base2 in zip(el_res, base2):
                assert el_el_res.size() == el_base1.size() + el_base2.size()


def test_vjp_err_check():
    def foo(a):
        return 3 * a.narrow(0, 0, 3)

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    inp = torch.rand(4)
    v = torch.ones(3)
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor"):
        autogradF.vjp(foo, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vjp must"):
        autogradF.vjp(bar, inp, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns"):
        autogradF.vjp(foo, inp)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        autogradF.vjp(foo, inp, (torch.ones_like(inp), torch.ones_like(inp)))
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be autodiff\.Size"):
        autogradF.vjp(foo, inp, v[:2])
    _assert_same_struct(autogradF.vjp(foo, inp, v)[1], inp)


@pytest.mark.parametrize("call", ["vjp", "jvp"])
def test_vjp_err_check_strict(call):
    """test_vjp_err_check_strict and test_jvp_err_check_strict."""
    fn = getattr(autogradF, call)

    def foo(a):
        return a.detach()

    def bar(a):
        return a.long().float().requires_grad_().clone()

    inp = torch.rand(4)
    v = torch.rand(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        fn(foo, inp, v, strict=True)
    res = fn(foo, inp, v, strict=False)
    _assert_same_struct(res[1], inp)
    assert res[1].abs().sum().item() == 0.0
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        fn(bar, inp, v, strict=True)
    res = fn(bar, inp, v, strict=False)
    _assert_same_struct(res[1], inp)
    assert res[1].abs().sum().item() == 0.0

    def foo(a):
        return a.clone()

    inp.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        fn(foo, inp, v, create_graph=True, strict=True)
    res = fn(foo, inp, v, create_graph=True, strict=False)
    _assert_same_struct(res[1], inp)
    assert _eq(res[1], v)


def test_vjp_no_grad():
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(4, 4)
    v = torch.ones(4)
    with torch.no_grad():
        res = autogradF.vjp(reducer, inputs, v)
    assert res[0].grad_fn is None and res[1].grad_fn is None
    assert not _eq(res[1], torch.zeros(4, 4))
    inputs.requires_grad_()
    v.requires_grad_()
    with torch.no_grad():
        res = autogradF.vjp(reducer, inputs, v, create_graph=True)
    assert res[0].grad_fn is not None and res[1].grad_fn is not None
    assert not _eq(res[1], torch.zeros(4, 4))


def test_vjp_output():
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(4, 4)
    res = autogradF.vjp(reducer, inputs, torch.ones(4))
    _assert_same_struct(res[1], inputs)
    assert res[0].grad_fn is None and res[1].grad_fn is None

    def adder(x, y):
        return 2 * x + 3 * y

    inputs = (torch.rand(2), torch.rand(2))
    out, vjp_val = autogradF.vjp(adder, inputs, torch.ones(2))
    _assert_same_struct(vjp_val, inputs)
    assert out.grad_fn is None and vjp_val[0].grad_fn is None and vjp_val[1].grad_fn is None

    def adder2(x, y):
        return 2 * x + 3 * y, x + y

    inputs = (torch.rand(2), torch.rand(2))
    v = (torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0]))
    out, vjp_val = autogradF.vjp(adder2, inputs, v)
    _assert_same_struct(vjp_val, inputs)
    assert out[0].grad_fn is None and out[1].grad_fn is None
    assert vjp_val[0].grad_fn is None and vjp_val[1].grad_fn is None


def test_vjp_scalar():
    def reducer(x):
        return x.sum()

    inputs = torch.rand(4, 4)
    v = torch.ones([])
    res = autogradF.vjp(reducer, inputs, v)
    _assert_same_struct(res[0], v)
    _assert_same_struct(res[1], inputs)
    res = autogradF.vjp(reducer, inputs)
    _assert_same_struct(res[0], v)
    _assert_same_struct(res[1], inputs)

    def expander(x):
        return x.unsqueeze(0).repeat(4)

    inputs = torch.rand([])
    v = torch.ones(4)
    res = autogradF.vjp(expander, inputs, v)
    _assert_same_struct(res[0], v)
    _assert_same_struct(res[1], inputs)


def test_vjp_create_graph():
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(2, 2, dtype=torch.double)
    v = torch.ones(2, dtype=torch.double)
    inputs.requires_grad_()
    v.requires_grad_()
    res = autogradF.vjp(reducer, inputs, v, create_graph=True)
    _assert_same_struct(res[1], inputs)
    assert res[0].grad_fn is not None and res[1].grad_fn is not None
    assert torch.autograd.gradcheck(lambda inp, v: autogradF.vjp(reducer, inputs, v, create_graph=True), (inputs, v))
    assert torch.autograd.gradgradcheck(lambda inp, v: autogradF.vjp(reducer, inputs, v, create_graph=True),
                                        (inputs, v))

    def adder(x, y):
        return 2 * x + 3 * y, x * y

    inputs = (torch.rand(2, dtype=torch.double, requires_grad=True),
              torch.rand(2, dtype=torch.double, requires_grad=True))
    v = (torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True),
         torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True))
    assert torch.autograd.gradcheck(
        lambda *args: autogradF.vjp(adder, args[:2], args[2:], create_graph=True)[1], inputs + v)
    assert torch.autograd.gradgradcheck(
        lambda *args: autogradF.vjp(adder, args[:2], args[2:], create_graph=True)[1], inputs + v)

    def foo(*args):
        x, y = args[:2]
        v = args[2:]
        x = x.cos()
        val, grad = autogradF.vjp(adder, (x, y), v, create_graph=True)
        return val[0].exp() + val[1].exp() + grad[0].exp() + grad[1].exp() + x.exp() + y.exp()

    assert torch.autograd.gradcheck(foo, inputs + v) and torch.autograd.gradgradcheck(foo, inputs + v)


def test_jvp_err_check():
    def foo(a):
        return 3 * a.narrow(0, 0, 3)

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    inp = torch.rand(4)
    v = torch.rand(4)
    with pytest.raises(TypeError, match="The inputs given to jvp must be either a Tensor"):
        autogradF.jvp(foo, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jvp must"):
        autogradF.jvp(bar, inp, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function"):
        autogradF.jvp(foo, inp)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        autogradF.jvp(foo, inp, (v, v))
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be autodiff\.Size"):
        autogradF.jvp(foo, inp, v[:2])
    _assert_same_struct(autogradF.jvp(foo, inp, v)[1], foo(inp))


def test_jvp_no_grad():
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(4, 4)
    v = torch.ones(4, 4)
    with torch.no_grad():
        res = autogradF.jvp(reducer, inputs, v)
    assert res[0].grad_fn is None and res[1].grad_fn is None
    assert res[1].abs().sum().item() > 0
    inputs.requires_grad_()
    v.requires_grad_()
    with torch.no_grad():
        res = autogradF.jvp(reducer, inputs, v, create_graph=True)
    assert res[0].grad_fn is not None and res[1].grad_fn is not None
    assert res[1].abs().sum().item() > 0


def test_jvp_output():
    def reducer(x):
        return x.sum(dim=1)

    res = autogradF.jvp(reducer, torch.rand(4, 4), torch.ones(4, 4))
    _assert_same_struct(res[1], res[0])
    assert res[0].grad_fn is None and res[1].grad_fn is None

    def adder(x, y):
        return 2 * x + 3 * y

    out, jvp_val = autogradF.jvp(adder, (torch.rand(2), torch.rand(2)), (torch.ones(2), torch.ones(2)))
    _assert_same_struct(jvp_val, out)
    assert out.grad_fn is None and jvp_val.grad_fn is None

    def adder2(x, y):
        return 2 * x + 3 * y, x + y

    v = (torch.tensor([1.0, 0.0]), torch.tensor([1.0, 0.0]))
    out, jvp_val = autogradF.jvp(adder2, (torch.rand(2), torch.rand(2)), v)
    _assert_same_struct(jvp_val, out)
    assert out[0].grad_fn is None and out[1].grad_fn is None
    assert jvp_val[0].grad_fn is None and jvp_val[1].grad_fn is None


def test_jvp_scalar():
    def reducer(x):
        return x.sum()

    res = autogradF.jvp(reducer, torch.rand(4, 4), torch.ones(4, 4))
    _assert_same_struct(res[0], torch.zeros([]))
    _assert_same_struct(res[1], res[0])

    def expander(x):
        return x.unsqueeze(0).repeat(4)

    inputs = torch.rand([])
    for res in (autogradF.jvp(expander, inputs, torch.ones([])), autogradF.jvp(expander, inputs)):
        _assert_same_struct(res[0], torch.zeros(4))
        _assert_same_struct(res[1], res[0])


def test_jvp_create_graph():
    def reducer(x):
        return x.sum(dim=1)

    inputs = torch.rand(2, 2, dtype=torch.double)
    v = torch.ones(2, 2, dtype=torch.double)
    inputs.requires_grad_()
    v.requires_grad_()
    res = autogradF.jvp(reducer, inputs, v, create_graph=True)
    _assert_same_struct(res[1], res[0])
    assert res[0].grad_fn is not None and res[1].grad_fn is not None
    assert torch.autograd.gradcheck(lambda inp, v: autogradF.jvp(reducer, inp, v, create_graph=True), (inputs, v))
    assert torch.autograd.gradgradcheck(lambda inp, v: autogradF.jvp(reducer, inp, v, create_graph=True),
                                        (inputs, v))

    def adder(x, y):
        return 2 * x + 3 * y, x * y

    inputs = (torch.rand(2, dtype=torch.double, requires_grad=True),
              torch.rand(2, dtype=torch.double, requires_grad=True))
    v = (torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True),
         torch.tensor([1.0, 0.0], dtype=torch.double, requires_grad=True))
    assert torch.autograd.gradcheck(
        lambda *args: autogradF.jvp(adder, args[:2], args[2:], create_graph=True)[1], inputs + v)
    assert torch.autograd.gradgradcheck(
        lambda *args: autogradF.jvp(adder, args[:2], args[2:], create_graph=True)[1], inputs + v)

    def foo(*args):
        x, y = args[:2]
        v = args[2:]
        x = x.cos()
        val, grad = autogradF.jvp(adder, (x, y), v, create_graph=True)
        return val[0].exp() + val[1].exp() + grad[0].exp() + grad[1].exp() + x.exp() + y.exp()

    assert torch.autograd.gradcheck(foo, inputs + v) and torch.autograd.gradgradcheck(foo, inputs + v)


@pytest.mark.parametrize("api", ["jacobian", "hessian"])
def test_jacobian_vectorize_raises_no_warnings(api):
    """test_jacobian_vectorize_raises_no_warnings and test_hessian_vectorize_raises_no_warnings."""
    import warnings

    with warnings.catch_warnings(record=True) as wa:
        warnings.simplefilter("always")
        getattr(autogradF, api)(lambda a: (a ** 2).sum(), torch.randn(3), vectorize=True)
    assert len(wa) == 0


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_err_check(vectorize):
    def foo(a):
        return 3 * a.narrow(0, 0, 3)

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    inp = torch.rand(4)
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor"):
        autogradF.jacobian(foo, (inp, 2), vectorize=vectorize)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jacobian must"):
        autogradF.jacobian(bar, inp, vectorize=vectorize)
    _assert_interleaved_struct(autogradF.jacobian(foo, inp, vectorize=vectorize), foo(inp), inp)

    def foo2(a, b):
        return b, 3 * a.narrow(0, 0, 3)

    inp = (torch.rand(4), torch.rand(5))
    _assert_interleaved_struct(autogradF.jacobian(foo2, inp, vectorize=vectorize), foo2(*inp), inp)


def test_jacobian_err_check_strict():
    def foo(a):
        return a.detach()

    def bar(a):
        return a.long().float().requires_grad_().clone()

    inp = torch.rand(4)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        autogradF.jacobian(foo, inp, strict=True)
    res = autogradF.jacobian(foo, inp, strict=False)
    _assert_interleaved_struct(res, foo(inp), inp)
    assert res.abs().sum().item() == 0.0
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 0."):
        autogradF.jacobian(bar, inp, strict=True)
    res = autogradF.jacobian(bar, inp, strict=False)
    _assert_interleaved_struct(res, foo(inp), inp)
    assert res.abs().sum().item() == 0.0

    def foo2(a):
        return a.clone()

    inp.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        autogradF.jacobian(foo2, inp, create_graph=True, strict=True)
    res = autogradF.jacobian(foo2, inp, create_graph=True, strict=False)
    _assert_interleaved_struct(res, inp, inp)
    assert _eq(res, torch.eye(4))


def test_jacobian_err_check_strict_vectorize():
    with pytest.raises(RuntimeError, match="not supported together"):
        autogradF.jacobian(lambda x: x, torch.rand(4), strict=True, vectorize=True)


def test_jacobian_no_grad():
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = torch.rand(4, 4)
    with torch.no_grad():
        res = autogradF.jacobian(exp_reducer, inputs)
    assert res.grad_fn is None and res.abs().sum().item() > 0
    with torch.no_grad():
        res = autogradF.jacobian(exp_reducer, inputs, create_graph=True)
    assert res.grad_fn is not None and res.abs().sum().item() > 0


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_output(vectorize):
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = torch.rand(4, 4)
    res = autogradF.jacobian(exp_reducer, inputs, vectorize=vectorize)
    _assert_interleaved_struct(res, exp_reducer(inputs), inputs)
    assert res.grad_fn is None

    def identity(x):
        return x.clone()

    inputs = torch.rand(4)
    res = autogradF.jacobian(identity, inputs, vectorize=vectorize)
    _assert_interleaved_struct(res, identity(inputs), inputs)
    assert res.grad_fn is None and _eq(res, torch.eye(4))

    def add_exp_reducer(x, y):
        return (x + y.exp()).sum(dim=1)

    inputs = (torch.rand(4, 4), torch.rand(4, 4))
    res = autogradF.jacobian(add_exp_reducer, inputs, vectorize=vectorize)
    _assert_interleaved_struct(res, add_exp_reducer(*inputs), inputs)
    assert res[0].grad_fn is None and res[1].grad_fn is None


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_scalar(vectorize):
    inputs = torch.rand(4, 4)
    _assert_same_struct(autogradF.jacobian(lambda x: x.sum(), inputs, vectorize=vectorize), inputs)
    res = autogradF.jacobian(lambda x: x.unsqueeze(0).repeat(4), torch.rand([]), vectorize=vectorize)
    _assert_same_struct(res, torch.zeros(4))


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_create_graph(vectorize):
    """PyTorch's inputs are 4 x 4; 2 x 3 keeps the file fast, and stays non-square."""
    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = torch.rand(2, 3, dtype=torch.double, requires_grad=True)
    res = autogradF.jacobian(exp_reducer, inputs, create_graph=True, vectorize=vectorize)
    _assert_interleaved_struct(res, exp_reducer(inputs), inputs)
    assert res.grad_fn is not None
    jac = lambda inp: autogradF.jacobian(exp_reducer, inp, create_graph=True, vectorize=vectorize)  # noqa: E731
    assert torch.autograd.gradcheck(jac, inputs) and torch.autograd.gradgradcheck(jac, inputs)

    def add_exp_reducer(x, y):
        return (x + y).exp().sum(dim=1)

    inputs = (torch.rand(2, 3, dtype=torch.double, requires_grad=True),
              torch.rand(2, 3, dtype=torch.double, requires_grad=True))
    res = autogradF.jacobian(add_exp_reducer, inputs, create_graph=True, vectorize=vectorize)
    _assert_interleaved_struct(res, add_exp_reducer(*inputs), inputs)
    assert res[0].grad_fn is not None and res[1].grad_fn is not None
    jac2 = lambda *inp: autogradF.jacobian(add_exp_reducer, inp, create_graph=True, vectorize=vectorize)  # noqa: E731
    assert torch.autograd.gradcheck(jac2, inputs) and torch.autograd.gradgradcheck(jac2, inputs)

    def foo(x, y):
        x = x.cos()
        val, jac = autogradF.jacobian(add_exp_reducer, (x, y), create_graph=True, vectorize=vectorize)
        res = val[0].exp().sum() + val[1].exp().sum() + jac[0].exp().sum()
        return res + jac[1].exp().sum() + x.exp().sum() + y.exp().sum()

    assert torch.autograd.gradcheck(foo, inputs) and torch.autograd.gradgradcheck(foo, inputs)


def _check_jacobian_vectorize_correctness(f, inputs, test_forward_ad=True):
    expected = autogradF.jacobian(f, inputs, vectorize=False)
    _assert_close_structs(autogradF.jacobian(f, inputs, vectorize=True), expected)
    if test_forward_ad:
        _assert_close_structs(autogradF.jacobian(f, inputs, strategy="forward-mode", vectorize=True), expected)


def _assert_close_structs(a, b):
    if isinstance(b, torch.Tensor):
        assert isinstance(a, torch.Tensor) and a.shape == b.shape and torch.allclose(a, b.to(a.dtype))
    else:
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_close_structs(x, y)


def test_jacobian_vectorize_correctness():
    """test_jacobian_vectorize_correctness_simple, _multi_input, _multi_input_multi_output,
    _unrelated_outputs, _zero_dim and _different_dtype."""
    _check_jacobian_vectorize_correctness(lambda x: 3 * x ** 2, torch.randn(2, 3, 5))
    _check_jacobian_vectorize_correctness(lambda x, y: (x.cos() * x) @ y.sin(), (torch.randn(2, 3), torch.randn(3, 5)))
    _check_jacobian_vectorize_correctness(lambda x, y: ((x * x) @ y, x @ (x.sum(1) * y), y.sum()),
                                          (torch.randn(5, 3), torch.randn(3, 5)))
    _check_jacobian_vectorize_correctness(lambda x, y: (x, y, x, y), (torch.randn(2), torch.randn(3)))
    _check_jacobian_vectorize_correctness(lambda x, y: (x.sum(), y.sum(), x * y), (torch.randn(3), torch.randn(3)))
    _check_jacobian_vectorize_correctness(lambda x: torch.stack([x, x, x]), torch.randn([]))
    _check_jacobian_vectorize_correctness(lambda x, y: (y.sum(), x * y), (torch.randn([]), torch.randn(1)))
    _check_jacobian_vectorize_correctness(lambda x, y: ((x * y).float(), (x * y).double()),
                                          (torch.randn(3), torch.randn(3)), test_forward_ad=False)


def _check_hessian_vectorize_correctness(f, inputs):
    expected = autogradF.hessian(f, inputs, vectorize=False)
    _assert_close_structs(autogradF.hessian(f, inputs, vectorize=True), expected)
    _assert_close_structs(autogradF.hessian(f, inputs, outer_jacobian_strategy="forward-mode", vectorize=True),
                          expected)


def test_hessian_vectorize_correctness():
    """test_hessian_vectorize_correctness_simple, _multi_input and _unrelated_outputs."""
    _check_hessian_vectorize_correctness(lambda x: (3 * x ** 2).sum(), torch.randn(2, 3, 5))
    _check_hessian_vectorize_correctness(lambda x, y, z: ((x.relu() * x) @ y.sin() @ z).sum(),
                                         (torch.randn(2, 3), torch.randn(3, 5), torch.randn(5, 5)))
    _check_hessian_vectorize_correctness(lambda x, y: (x ** 2).sum(), (torch.randn(2), torch.randn(3)))
    _check_hessian_vectorize_correctness(lambda x, y: torch.ones([]), (torch.randn(2), torch.randn(3)))


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_err_check(vectorize):
    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    def bar2(a):
        return 3 * a.narrow(0, 0, 3)

    def bar3(a):
        return 3 * a.narrow(0, 0, 3), 3 * a.narrow(0, 0, 3)

    inp = torch.rand(4)
    with pytest.raises(TypeError, match="The inputs given to hessian must be either a Tensor"):
        autogradF.hessian(foo, (inp, 2), vectorize=vectorize)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to hessian must"):
        autogradF.hessian(bar, inp, vectorize=vectorize)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a "
                                           "single element"):
        autogradF.hessian(bar2, inp, vectorize=vectorize)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        autogradF.hessian(bar3, inp, vectorize=vectorize)
    _assert_interleaved_struct(autogradF.hessian(foo, inp, vectorize=vectorize), inp, inp)

    def foo2(a, b):
        return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()

    inp = (torch.rand(4), torch.rand(5))
    _assert_interleaved_struct(autogradF.hessian(foo2, inp, vectorize=vectorize), inp, inp)


def test_hessian_err_check_strict():
    def foo(a):
        return a.detach().sum()

    def bar(a):
        return a.long().float().requires_grad_().clone().sum()

    def bar2(a):
        return (3 * a).sum()

    inp = torch.rand(4)
    for fn, message in ((foo, "Output 0 of the user-provided function does not require gradients."),
                        (bar, "jacobian of the user-provided function with respect to input 0"),
                        (bar2, "jacobian of the user-provided function with respect to input 0 is")):
        with pytest.raises(RuntimeError, match=message):
            autogradF.hessian(fn, inp, strict=True)
        res = autogradF.hessian(fn, inp, strict=False)
        _assert_interleaved_struct(res, inp, inp)
        assert res.abs().sum().item() == 0.0


def test_hessian_err_check_strict_vectorize():
    with pytest.raises(RuntimeError, match="not supported together"):
        autogradF.hessian(lambda x: (x ** 3).sum(), torch.rand(4), strict=True, vectorize=True)


def test_hessian_no_grad():
    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = torch.rand(2, 2)
    with torch.no_grad():
        res = autogradF.hessian(pow_reducer, inputs)
    assert all(res[i][j].grad_fn is None for i in range(2) for j in range(2))
    assert res.abs().sum().item() > 0
    with torch.no_grad():
        res = autogradF.hessian(pow_reducer, inputs, create_graph=True)
    assert all(res[i][j].grad_fn is not None for i in range(2) for j in range(2))
    assert res.abs().sum().item() > 0


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_output(vectorize):
    inputs = torch.rand(2, 2)
    res = autogradF.hessian(lambda x: x.pow(3).sum(), inputs, vectorize=vectorize)
    _assert_interleaved_struct(res, inputs, inputs)
    assert res.grad_fn is None
    inputs = (torch.rand(2, 2), torch.rand(2, 2))
    res = autogradF.hessian(lambda x, y: (x + y).pow(3).sum(), inputs, vectorize=vectorize)
    _assert_interleaved_struct(res, inputs, inputs)
    assert all(res[i][j].grad_fn is None for i in range(2) for j in range(2))


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_scalar(vectorize):
    def reducer(x):
        return x.sum()

    inputs = torch.rand(4, 4)
    _assert_interleaved_struct(autogradF.hessian(reducer, inputs, vectorize=vectorize), inputs, inputs)
    inputs = torch.rand([])
    _assert_same_struct(autogradF.hessian(reducer, inputs, vectorize=vectorize), inputs)
    inputs = torch.rand(4, 4)
    res = autogradF.hessian(lambda x: x.sum().view(1, 1, 1), inputs, vectorize=vectorize)
    _assert_interleaved_struct(res, inputs, inputs)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_create_graph(vectorize):
    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = torch.rand(2, 2, dtype=torch.double, requires_grad=True)
    res = autogradF.hessian(pow_reducer, inputs, create_graph=True, vectorize=vectorize)
    _assert_interleaved_struct(res, inputs, inputs)
    assert res.grad_fn is not None
    hess = lambda inp: autogradF.hessian(pow_reducer, inp, create_graph=True, vectorize=vectorize)  # noqa: E731
    assert torch.autograd.gradcheck(hess, inputs) and torch.autograd.gradgradcheck(hess, inputs)

    def add_pow_reducer(x, y):
        return (x + y).pow(3).sum()

    inputs = (torch.rand(2, 2, dtype=torch.double, requires_grad=True),
              torch.rand(2, 2, dtype=torch.double, requires_grad=True))
    res = autogradF.hessian(add_pow_reducer, inputs, create_graph=True, vectorize=vectorize)
    _assert_interleaved_struct(res, inputs, inputs)
    assert all(res[i][j].grad_fn is not None for i in range(2) for j in range(2))

    def flat(*inp):
        return tuple(b for a in autogradF.hessian(add_pow_reducer, inp, create_graph=True, vectorize=vectorize)
                     for b in a)

    assert torch.autograd.gradcheck(flat, inputs)
    if not vectorize:
        assert torch.autograd.gradgradcheck(flat, inputs)

    def foo(x, y):
        x = x.cos()
        val, hess = autogradF.hessian(add_pow_reducer, (x, y), create_graph=True, vectorize=vectorize)
        res = val[0].cos().sum() + val[1].cos().sum() + hess[0].cos().sum()
        return res + hess[1].cos().sum() + x.cos().sum() + y.cos().sum()

    assert torch.autograd.gradcheck(foo, inputs)
    if not vectorize:  # the fourth derivatives once (vectorize=True computes the same numbers)
        assert torch.autograd.gradgradcheck(foo, inputs)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_err_check(api):
    """test_vhp_err_check and test_hvp_err_check."""
    fn = getattr(autogradF, api)

    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    def bar(a):
        return 3 * a.narrow(0, 0, 3), "bar"

    def bar2(a):
        return 3 * a.narrow(0, 0, 3)

    inp = torch.rand(4)
    v = torch.rand(4)
    with pytest.raises(TypeError, match=f"The inputs given to {api} must be either a Tensor"):
        fn(foo, (inp, 2), v)
    with pytest.raises(TypeError, match=f"The outputs of the user-provided function given to {api} must"):
        fn(bar, inp, v)
    with pytest.raises(RuntimeError, match=f"The Tensor returned by the function given to {api} should contain a "
                                           "single element"):
        fn(bar2, inp, v)
    with pytest.raises(RuntimeError, match="v has invalid size:"):
        fn(foo, inp, torch.rand(5))
    with pytest.raises(TypeError, match=f"The v given to {api} must be either a Tensor or a tuple of Tensors"):
        fn(foo, inp, (v, 2))
    _assert_same_struct(fn(foo, inp, v)[1], inp)

    def foo2(a, b):
        return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()

    inp = (torch.rand(4), torch.rand(5))
    _assert_same_struct(fn(foo2, inp, (torch.rand(4), torch.rand(5)))[1], inp)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_err_check_strict(api):
    """test_vhp_err_check_strict and test_hvp_err_check_strict."""
    fn = getattr(autogradF, api)

    def foo(a):
        return a.detach().sum()

    def bar(a):
        return a.long().float().requires_grad_().clone().sum()

    def bar2(a):
        return (3 * a).sum()

    inp = torch.rand(4)
    v = torch.rand(4)
    for f, message in ((foo, "Output 0 of the user-provided function does not require gradients."),
                       (bar, "The output of the user-provided function is independent of input 0"),
                       (bar2, "jacobian of the user-provided function with respect to input 0 is")):
        with pytest.raises(RuntimeError, match=message):
            fn(f, inp, v, strict=True)
        res = fn(f, inp, v, strict=False)
        _assert_same_struct(res[1], inp)
        assert res[1].abs().sum().item() == 0.0


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_no_grad(api):
    """test_vhp_no_grad and test_hvp_no_grad."""
    fn = getattr(autogradF, api)

    def reducer(x):
        return x.exp().sum()

    inputs = torch.rand(4, 4)
    v = torch.ones(4, 4)
    with torch.no_grad():
        res = fn(reducer, inputs, v)
    assert res[0].grad_fn is None and res[1].grad_fn is None and res[1].abs().sum().item() > 0
    with torch.no_grad():
        res = fn(reducer, inputs, v, create_graph=True)
    assert res[0].grad_fn is not None and res[1].grad_fn is not None and res[1].abs().sum().item() > 0


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_output(api):
    """test_vhp_output and test_hvp_output."""
    fn = getattr(autogradF, api)
    inputs = torch.rand(4, 4)
    res = fn(lambda a: 3 * a.narrow(0, 0, 3).exp().sum(), inputs, torch.ones(4, 4))
    _assert_same_struct(res[1], inputs)
    assert res[0].grad_fn is None and res[1].grad_fn is None

    def bar(a, b):
        return (a + 3 * b.narrow(0, 0, 3)).exp().sum()

    inputs = (torch.rand(3), torch.rand(4))
    out, val = fn(bar, inputs, (torch.ones(3), torch.ones(4)))
    _assert_same_struct(val, inputs)
    assert out.grad_fn is None and val[0].grad_fn is None and val[1].grad_fn is None


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_scalar(api):
    """test_vhp_scalar and test_hvp_scalar."""
    fn = getattr(autogradF, api)

    def reducer(x):
        return x.exp().sum()

    inputs = torch.rand(4, 4)
    _assert_same_struct(fn(reducer, inputs, torch.ones(4, 4))[1], inputs)
    inputs = torch.rand([])
    _assert_same_struct(fn(reducer, inputs, torch.rand([]))[1], inputs)
    _assert_same_struct(fn(reducer, inputs)[1], inputs)
    inputs = torch.rand(4, 4)
    _assert_same_struct(fn(lambda x: x.exp().sum().view(1, 1, 1), inputs, torch.rand(4, 4))[1], inputs)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_create_graph(api):
    """test_vhp_create_graph and test_hvp_create_graph (PyTorch's 4 x 4 input is 3 x 2 here)."""
    fn = getattr(autogradF, api)

    def foo(a):
        return 3 * a.narrow(0, 0, 2).exp().sum()

    inputs = torch.rand(3, 2, dtype=torch.double, requires_grad=True)
    v = torch.ones(3, 2, dtype=torch.double, requires_grad=True)
    res = fn(foo, inputs, v, create_graph=True)
    _assert_same_struct(res[1], inputs)
    assert res[0].grad_fn is not None and res[1].grad_fn is not None
    assert torch.autograd.gradcheck(lambda inp, v: fn(foo, inp, v, create_graph=True), (inputs, v))
    assert torch.autograd.gradgradcheck(lambda inp, v: fn(foo, inp, v, create_graph=True), (inputs, v))

    def bar(a, b):
        return (a + 3 * b.narrow(0, 0, 3)).exp().sum()

    inputs = (torch.rand(3, dtype=torch.double, requires_grad=True),
              torch.rand(4, dtype=torch.double, requires_grad=True))
    v = (torch.ones(3, dtype=torch.double, requires_grad=True),
         torch.ones(4, dtype=torch.double, requires_grad=True))
    out, val = fn(bar, inputs, v, create_graph=True)
    _assert_same_struct(val, inputs)
    assert out.grad_fn is not None and val[0].grad_fn is not None and val[1].grad_fn is not None
    assert torch.autograd.gradcheck(lambda *args: fn(bar, args[:2], args[2:], create_graph=True)[1], inputs + v)
    assert torch.autograd.gradgradcheck(lambda *args: fn(bar, args[:2], args[2:], create_graph=True)[1], inputs + v)

    def foo2(*args):
        x, y = args[:2]
        v = args[2:]
        x = x.cos()
        val, grad = fn(bar, (x, y), v, create_graph=True)
        return val.cos() + grad[0].cos().sum() + grad[1].cos() + x.cos().sum() + y.cos()

    assert torch.autograd.gradcheck(foo2, inputs + v)


def test_jacobian_match_vjp_jvp():
    def foo(x):
        return x ** 3 + x.sum()

    inputs = torch.rand(4)
    v = torch.rand(4)
    jac = autogradF.jacobian(foo, inputs)
    jvp = autogradF.jvp(foo, inputs, v)[1]
    vjp = autogradF.vjp(foo, inputs, v)[1]
    assert _eq(jvp, torch.mm(jac, v.unsqueeze(1)).squeeze(1))
    assert _eq(vjp, torch.mm(v.unsqueeze(0), jac).squeeze(0))


def test_hessian_match_vhp_hvp():
    def foo(a):
        return 3 * a.narrow(0, 0, 3).exp().sum()

    inputs = torch.rand(4)
    v = torch.rand(4)
    hes = autogradF.hessian(foo, inputs)
    hvp = autogradF.hvp(foo, inputs, v)[1]
    vhp = autogradF.vhp(foo, inputs, v)[1]
    assert _eq(hvp, torch.mm(hes, v.unsqueeze(1)).squeeze(1))
    assert _eq(vhp, torch.mm(v.unsqueeze(0), hes).squeeze(0))


# --- test_autograd.py again: views, anomaly mode.

def test_inplace_on_view_leaf_errors():
    x = torch.zeros(1, requires_grad=True)
    y = x.view_as(x)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        y.add_(1)


def test_inplace_on_view_weak_grad_fn():
    import gc

    a = torch.arange(10.0, requires_grad=True)
    b = a.narrow(0, 0, 2).clone().view(-1)
    b.relu_()
    c = b.clone()
    del b
    gc.collect()
    s = c.sum()
    s.backward()
    assert s.item() == 1.0
    a = torch.rand(10, requires_grad=True).narrow(0, 0, 10)
    with pytest.raises(RuntimeError):
        a.relu_()


def test_anomaly_detect_nan():
    import warnings

    size = 10

    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, gO):
            gI = gO.clone().expand(size)
            gI[0] = 0
            gI[0] /= 0
            if ctx.fail_0th:
                return gI, None, None
            return None, gI, None

    inp = torch.rand(size, requires_grad=True)
    MyFunc.apply(inp, inp, True).backward()
    inp = torch.rand(size, requires_grad=True)
    out = MyFunc.apply(inp, inp, True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'MyFuncBackward' returned nan values in its 0th output."):
            with torch.autograd.detect_anomaly():
                out.backward()
    assert any("No forward pass information" in str(x.message) for x in w)
    inp = torch.rand(size, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'MyFuncBackward' returned nan values in its 1th output."):
            with torch.autograd.detect_anomaly():
                MyFunc.apply(inp, inp, False).backward()
    assert any("MyFunc.apply" in str(x.message) for x in w)


def test_nested_anomaly_detect_nan():
    import warnings

    size = 10

    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, fail_0th):
            ctx.fail_0th = fail_0th
            ctx.save_for_backward(inp1)
            return inp1.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, gO):
            (inp,) = ctx.saved_tensors
            g = gO.clone().expand(size)
            return MyFunc2.apply(g * inp, g + inp, ctx.fail_0th), None

    class MyFunc2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp1, inp2, fail_0th):
            ctx.fail_0th = fail_0th
            return inp1 * 2.0 + inp2

        @staticmethod
        def backward(ctx, gO):
            g1 = gO.clone()
            g2 = gO.clone()
            g1[0] = 0
            g2[0] = 0
            if ctx.fail_0th:
                g1[0] /= 0
            else:
                g2[0] /= 0
            return g1, g2, None

    inp = torch.rand(size, requires_grad=True)
    (ginp,) = torch.autograd.grad(MyFunc.apply(inp, True), (inp,), create_graph=True)
    ginp.sum().backward()

    inp = torch.rand(size, requires_grad=True)
    (ginp,) = torch.autograd.grad(MyFunc.apply(inp, True), (inp,), create_graph=True)
    gsum = ginp.sum()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'MyFunc2Backward' returned nan values in its 0th output."):
            with torch.autograd.detect_anomaly():
                gsum.backward()
    assert "No forward pass information" in str(w[1].message)

    inp = torch.rand(size, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Function 'MyFunc2Backward' returned nan values in its 1th output."):
            with torch.autograd.detect_anomaly():
                out = MyFunc.apply(inp, False)
                (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
                ginp.sum().backward()
    assert "MyFunc2.apply" in str(w[1].message) and "MyFunc.apply" in str(w[2].message)


def test_anomaly_grad_warnings():
    import io
    import sys
    import warnings

    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with torch.autograd.detect_anomaly():
                a = torch.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                torch.autograd.grad(d2.sum(), a)
    assert len(w) == 2
    assert "Anomaly Detection has been enabled" in str(w[0].message)
    assert "Error detected in PowBackward0" in str(w[1].message)

    stderr_orig, captured = sys.stderr, io.StringIO()
    try:
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                with torch.autograd.detect_anomaly():
                    warnings.simplefilter("error")
                    sys.stderr = captured
                    a = torch.randn(5, requires_grad=True)
                    d1 = a + 1
                    d2 = d1 ** 2
                    d1 += 1
                    torch.autograd.grad(d2.sum(), a)
    finally:
        sys.stderr = stderr_orig
    assert len(w) == 1 and "Anomaly Detection has been enabled" in str(w[0].message)
    assert "Error detected in PowBackward0" in captured.getvalue()


def test_anomaly_assign_parent_cleanup():
    def get_ref():
        import weakref

        x = torch.randn(2, 2, requires_grad=True)
        t = x.exp()
        with torch.autograd.detect_anomaly():
            torch.autograd.grad(t, x, torch.ones_like(t), create_graph=True)

        class Foo:
            pass

        my_obj = Foo()
        t.grad_fn.metadata[0] = my_obj
        return t, weakref.ref(my_obj)

    t, ref = get_ref()
    assert ref() is not None
    del t
    assert ref() is None


def test_nested_anomaly_printstack_cleanup():
    import warnings
    import weakref

    def get_ref():
        class MyFunc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                return MyFunc2.apply(x)

        class MyFunc2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, gO):
                return gO + float("NaN")

        inp = torch.rand(1, requires_grad=True)
        out = MyFunc.apply(inp)
        (ginp,) = torch.autograd.grad(out, (inp,), create_graph=True)
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="Function 'MyFunc2Backward' returned nan values in its 0th output."):
                with torch.autograd.detect_anomaly():
                    ginp.backward()

        class Foo:
            pass

        my_obj = Foo()
        out.grad_fn.metadata[0] = my_obj
        return out, weakref.ref(my_obj)

    t, ref = get_ref()
    assert ref() is not None
    del t
    import gc

    gc.collect()
    assert ref() is None


def test_anomaly_mode_no_check_nan():
    import warnings

    class MyFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, gO):
            return torch.tensor(float("nan")).expand(10, 10)

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly(check_nan=False):
            inp = torch.rand(10, 10, requires_grad=True)
            out = MyFunc.apply(inp).sum()
            out.backward(retain_graph=True)
            with torch.autograd.detect_anomaly(check_nan=True):
                with pytest.raises(RuntimeError, match="Function 'MyFuncBackward' returned nan values in its 0th output."):
                    out.backward(retain_graph=True)
            out.backward()


# --- gradcheck (test_autograd.py)

@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_single_input(fast_mode):
    def f(inp):
        return inp.mul(5)

    assert torch.autograd.gradcheck(f, torch.rand(10, dtype=torch.float64, requires_grad=True), fast_mode=fast_mode)
    assert torch.autograd.gradgradcheck(f, torch.rand(10, dtype=torch.float64, requires_grad=True),
                                        fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_nondeterministic(fast_mode):
    class NonDetFunc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx._jitter = jitter
            return x

        @staticmethod
        def backward(ctx, grad_out):
            return NonDetFunc.apply(grad_out, ctx._jitter) * (1 + torch.rand_like(grad_out) * ctx._jitter), None

    gradcheck, gradgradcheck = torch.autograd.gradcheck, torch.autograd.gradgradcheck
    inp = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, check_batched_grad=False, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, check_batched_grad=False, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, check_batched_grad=False, fast_mode=fast_mode)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, nondet_tol=1e-5, check_batched_grad=False,
                     fast_mode=fast_mode)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, nondet_tol=1e-5, check_batched_grad=False,
                     fast_mode=fast_mode)
    assert gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, nondet_tol=1e-5, check_batched_grad=False,
                         fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_validates_inputs(fast_mode):
    """The dense half (autodiff has no sparse tensors)."""
    gradcheck = torch.autograd.gradcheck
    x = torch.rand(10, requires_grad=False)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x, (x,), raise_exception=False, fast_mode=fast_mode)
    x = torch.ones(1, dtype=torch.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        assert gradcheck(lambda x: x, (x,), atol=1e-1, fast_mode=fast_mode)
    # PyTorch refuses an expanded input ("The 0th input has a dimension with stride 0"): its
    # elements share memory, so perturbing one moves the others. Here `expand` makes a tensor of
    # its own (the guide), each element is perturbed alone, and gradcheck checks it.
    x = torch.ones(1, dtype=torch.float64, requires_grad=True).expand((2, 2))
    assert gradcheck(lambda x: x * x, (x,), fast_mode=fast_mode)

    class WrongSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # 2 * g * x is right

    assert not gradcheck(WrongSquare.apply, (x,), raise_exception=False, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_check_no_differentiable_outputs(fast_mode):
    gradcheck = torch.autograd.gradcheck
    x = torch.ones((1,), requires_grad=True)
    with pytest.raises(RuntimeError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda x: torch.tensor([x]), x)
    assert not gradcheck(lambda x: torch.tensor([x]), x, raise_exception=False, fast_mode=fast_mode)
    assert gradcheck(lambda x: (), (x,), fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_backward_mul_by_grad_output(fast_mode):
    """The dense case (autodiff has no sparse tensors)."""
    gradcheck = torch.autograd.gradcheck

    def fn2(x):
        y = x.clone()
        y.register_hook(lambda x: x + 1e-2)
        return y

    x = torch.ones(1, dtype=torch.double, requires_grad=True)
    with pytest.raises(RuntimeError, match="backward not multiplied by grad_output"):
        gradcheck(fn2, (x,), atol=1e-1, fast_mode=fast_mode)
    assert not gradcheck(fn2, (x,), atol=1e-1, raise_exception=False, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_undefined_grad(fast_mode):
    gradcheck = torch.autograd.gradcheck

    def fn(x):
        def hook(x):
            if x is None:
                raise RuntimeError("x is undefined")

        y = x.clone()
        y.register_hook(hook)
        return y

    x = torch.ones(1, dtype=torch.double, requires_grad=True)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking feature"):
        with pytest.raises(RuntimeError, match="Expected backward function to handle undefined output grads"):
            gradcheck(fn, (x,), fast_mode=fast_mode)
        assert not gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_jacobian_mismatch(fast_mode):
    """The real case (autodiff has no complex tensors)."""
    gradcheck = torch.autograd.gradcheck

    def fn(x):
        y = x.clone()
        y.register_hook(lambda x: x + 1e-2)
        return y

    x = torch.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(fn, (x,), fast_mode=fast_mode)
    assert not gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_output_shape_or_dtype_depend_on_values(fast_mode):
    gradcheck = torch.autograd.gradcheck

    def fn(x):
        if torch.all(x >= 1):
            return torch.cat([x, x])
        return x

    a = torch.ones(1, dtype=torch.double, requires_grad=True)
    with pytest.raises(AssertionError, match="return outputs with the same shape when inputs are perturbed"):
        gradcheck(fn, (a,), fast_mode=fast_mode)

    def fn2(x):
        if torch.all(x >= 1):
            return x.to(torch.float32)
        return x

    with pytest.raises(AssertionError, match="return outputs with the same dtype when inputs are perturbed"):
        gradcheck(fn2, (a,), fast_mode=fast_mode)


def _hooks_called_with_none(lib):
    log = []

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, a, b):
            return (a if a is not None else 0) + (b if b is not None else 0)

    class NoneBack(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    x = lib.ones(2, requires_grad=True)
    a, b = Two.apply(x)
    b.register_hook(lambda g: log.append(("b", g is None)))
    a.sum().backward()
    y = x * 2
    y.register_hook(lambda g: log.append(("y", g is None)))
    z = NoneBack.apply(y)
    z.register_hook(lambda g: log.append(("z", g is None)))
    (z.sum() + (x * 3).sum()).backward()
    return log


def test_a_tensor_hook_is_called_with_none_where_its_gradient_is_undefined():
    """What test_gradcheck_undefined_grad and test_grad_nonleaf_register_hook rely on: an unused
    output of a node that runs, and a tensor whose consumer's backward returned None."""
    assert _hooks_called_with_none(torch) == [("b", True), ("z", False), ("y", True)]


@pytest.mark.torch
def test_a_tensor_hook_is_called_with_none_as_in_pytorch():
    real = pytest.importorskip("torch")
    assert _hooks_called_with_none(torch) == _hooks_called_with_none(real)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_custom_error(fast_mode):
    from autodiff.autograd.gradcheck import GradcheckError

    gradcheck = torch.autograd.gradcheck

    def fn(x):
        y = x.clone()
        y.register_hook(lambda x: x + 1e-2)
        return y

    x = torch.ones(2, 2, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(fn, (x,), fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(fn, (x,), fast_mode=fast_mode)
    assert not gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode)

    def fn2(x):
        raise RuntimeError("Not a GradcheckError!")

    with pytest.raises(RuntimeError, match="Not a GradcheckError!"):
        gradcheck(fn2, (x,), fast_mode=fast_mode, raise_exception=False)


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_forward_ad(fast_mode):
    """The real case (autodiff has no complex tensors); `fwAD._current_level >= 0` is
    `fwAD.unpack_dual(y).tangent is not None` here."""
    fwAD = torch.autograd.forward_ad

    def fn(x, y):
        return x + y, y

    def bad_fn(x, y):
        y_p, y_d = fwAD.unpack_dual(y)
        if y_d is not None:
            y = fwAD.make_dual(y_p, y_d * 1.1)
        return x + y, y

    x = torch.rand(2, dtype=torch.double, requires_grad=True)
    y = torch.rand(2, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for output 0 with respect "
                                           "to input 1"):
        torch.autograd.gradcheck(bad_fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)


def test_gradcheck_check_forward_or_backward_only():
    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo, fwd_bad, bwd_bad):
            ctx.fwd_bad = fwd_bad
            ctx.bwd_bad = bwd_bad
            return foo * 2

        @staticmethod
        def vjp(ctx, gO):
            if ctx.bwd_bad:
                raise RuntimeError("FAIL BWD")
            return 2 * gO, None, None

        @staticmethod
        def jvp(ctx, gI, _1, _2):
            if ctx.fwd_bad:
                raise RuntimeError("FAIL FWD")
            return 2 * gI

    import itertools

    for fast_mode, check_forward_ad, check_backward_ad, fwd_bad, bwd_bad in itertools.product((True, False),
                                                                                            repeat=5):
        x = torch.rand(2, dtype=torch.double, requires_grad=True)

        def run():
            return torch.autograd.gradcheck(UserFn.apply, (x, fwd_bad, bwd_bad), check_forward_ad=check_forward_ad,
                                            check_backward_ad=check_backward_ad,
                                            check_undefined_grad=check_backward_ad,
                                            check_batched_grad=check_backward_ad, fast_mode=fast_mode)

        if not check_forward_ad and not check_backward_ad:
            with pytest.raises(AssertionError, match="Expected at least one of"):
                run()
            continue
        fwd_should_fail = fwd_bad and check_forward_ad
        bwd_should_fail = bwd_bad and check_backward_ad
        if not fwd_should_fail and not bwd_should_fail:
            assert run()
        else:
            with pytest.raises(RuntimeError, match="FAIL BWD" if bwd_should_fail else "FAIL FWD"):
                run()


def test_version_counter():
    """PyTorch's test, but for its views: `x[:]` shares x's version counter there, here it is a
    tensor of its own (the guide), which counts its own changes."""
    x = torch.randn(1, 2)
    x_saved_version = x._version
    x.add_(1).add_(1)
    assert x._version > x_saved_version
    xz = x[:]
    xz.add_(1)
    assert xz._version == 1 and x._version == 2  # PyTorch: both 3, one counter
    x_saved_version = x._version
    x.data = torch.randn(2, 3)
    assert x._version == x_saved_version
    x.add_(1)
    assert x._version > x_saved_version


def test_gradcheck_is_callable_after_importing_its_module_first():
    """test_gradcheck_custom_error imports GradcheckError from `torch.autograd.gradcheck` and then
    calls `torch.autograd.gradcheck(...)`: in a fresh interpreter, that order must work too."""
    import subprocess
    import sys

    code = ("from autodiff.autograd.gradcheck import GradcheckError\n"
            "import autodiff\n"
            "x = autodiff.rand(3, requires_grad=True)\n"
            "assert autodiff.autograd.gradcheck(lambda x: x * x, (x,))\n"
            "assert issubclass(GradcheckError, RuntimeError)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_gradcheck_forward_ad_runs_with_no_requires_grad():
    """Its first call (the others check batched and undefined tangents, which autodiff's
    gradcheck does not: it checks forward-mode values against finite differences)."""
    seen = []

    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            seen.append((x.requires_grad, y.requires_grad))
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, y_t

    x = torch.rand(2, dtype=torch.double, requires_grad=True)
    y = torch.rand(2, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(UserFn.apply, (x, y), check_forward_ad=True, check_undefined_grad=False,
                                    check_backward_ad=False, check_batched_grad=False)
    dual_calls = [s for s in seen if s == (False, False)]
    assert len(dual_calls) == 4  # each element of each input, its inputs made dual and detached


def test_gradcheck_forward_ad_respects_requires_grad():
    """Its first count: the jvp runs once per input (numel 1) with neither undefined nor batched
    tangents checked."""
    jvp_count = [0]

    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            jvp_count[0] += 1
            return x_t, y_t

    x = torch.rand(1, dtype=torch.double, requires_grad=True)
    y = torch.rand(1, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(UserFn.apply, (x, y), check_forward_ad=True, check_undefined_grad=False,
                                    check_backward_ad=False, check_batched_grad=False)
    assert jvp_count[0] == 2


def test_custom_function_vjp_is_backward_and_not_both():
    """PyTorch's `vjp` alias (test_gradcheck_check_forward_or_backward_only defines vjp), and its
    error for a Function that defines both."""
    class Both(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp' for a custom Function is not "
                                           "allowed. You should only implement one of them."):
        Both.apply(x).sum().backward()


def test_set_data_self_requires_grad():
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(2.0)
    c = torch.tensor(3, dtype=torch.int64)
    a.data = b
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        a.data = c


class _DeepReentrant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():
            ctx.x = x.detach().requires_grad_(True)
            ctx.x = ctx.x - 1
        return ctx.x.detach()

    @staticmethod
    def backward(ctx, x):
        if ctx.x < 0:
            return x
        with torch.enable_grad():
            _DeepReentrant.apply(ctx.x).sum().backward()
        return x


def test_deep_reentrant():
    v = torch.tensor(2000.0, requires_grad=True)
    _DeepReentrant.apply(v).sum().backward()
    v2 = torch.tensor(200.0, requires_grad=True)
    _DeepReentrant.apply(v2).sum().backward()


def test_reentrant_priority():
    order = []

    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            order.append("MyFunction")
            return x

    class Reentrant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with torch.enable_grad():
                ctx.x = x.detach().requires_grad_(True)
                ctx.x = ctx.x - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, x):
            order.append("Reentrant")
            if ctx.x < 0:
                return x
            with torch.enable_grad():
                Reentrant.apply(ctx.x).backward()
            return x

    a = MyFunction.apply(torch.tensor(6.0, requires_grad=True))
    b = Reentrant.apply(torch.tensor(9.0, requires_grad=True))
    (a * b).backward()
    assert len(order) == 11 and order.count("Reentrant") == 10 and order[-1] == "MyFunction"


def test_reentrant_with_leaf_variable_hook():
    handle = None
    param = torch.rand(10, requires_grad=True)

    def add_gradient_penalty_to_grad(grad):
        handle.remove()
        old_param_grad = grad
        param.grad = None
        with torch.enable_grad():
            g = grad.detach().requires_grad_()
            new_param = param.detach().requires_grad_()
            out = ((g * 2) + new_param).sum()
            out.backward()
        res = g.grad + grad
        param.grad = old_param_grad
        return res

    handle = param.register_hook(add_gradient_penalty_to_grad)
    (param * param).sum().backward()
    assert _eq(param.grad, 4 * param + 2)  # the hook set .grad to 2 param, then 2 param + 2 accumulates (PyTorch 2.13 too)


def test_reentrant_with_non_leaf_variable_hook():
    handle = None
    param = torch.rand(10, requires_grad=True)

    def manual_increase_gradient(grad):
        handle.remove()
        with torch.enable_grad():
            g = grad.detach().requires_grad_()
            out = ((g * 2) + 5).sum()
            out.backward()
        return g.grad + grad

    tmp = param * param
    handle = tmp.register_hook(manual_increase_gradient)
    tmp.sum().backward()
    assert _eq(param.grad, 6 * param)


def test_custom_function_saved_tensors():
    """The part about `saved_tensors` (SavedTensor objects and their hooks are not claimed)."""
    def get_fn(save=True):
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        return MyFn

    a = torch.randn(5, requires_grad=True)
    y = get_fn(True).apply(a)
    saved = y.grad_fn.saved_tensors
    assert len(saved) == 2 and saved[0] is not None and _eq(saved[0], a) and saved[1] is None
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn.saved_tensors
    y = get_fn(False).apply(a)
    assert y.grad_fn.saved_tensors == ()


def test_autograd_views_codegen():
    """view_as and unbind, changed in place. PyTorch 2.13 names the node `Unbind` in this message
    (newer tests read UnbindBackward0). The views made under no_grad of a tensor that requires
    grad are PyTorch's error ("A view was created in no_grad mode ..."); here they are tensors
    of their own, and changing them is allowed (the guide)."""
    def run_test(grad_mode, requires_grad, should_raise):
        found = []
        for make in (lambda i: (i.view_as(i),), lambda i: i.unbind()):
            inp = torch.rand(2, requires_grad=requires_grad).clone()
            with torch.set_grad_enabled(grad_mode):
                outs = make(inp)
            for out in outs:
                try:
                    out.add_(1)
                    found.append(None)
                except RuntimeError as error:
                    found.append(str(error))
        assert len(found) == len(should_raise)
        for got, expected in zip(found, should_raise):
            assert (got is None and expected is None) or (expected is not None and got.startswith(expected)), got

    run_test(True, False, (None, None, None))
    run_test(True, True, (None, "Output 0 of Unbind is a view and is being modified inplace.",
                          "Output 1 of Unbind is a view and is being modified inplace."))
    run_test(False, True, (None, None, None))  # PyTorch: "A view was created in no_grad mode" three times
    run_test(False, False, (None, None, None))


def test_autograd_print_tensor():
    """The reprs (the `grad_fn=<Invalid>` case is a view made under no_grad, which is no view here)."""
    a = torch.ones(1, requires_grad=True)
    assert repr(a) == "tensor([1.], requires_grad=True)"
    assert repr(a.clone()) == "tensor([1.], grad_fn=<CloneBackward0>)"

    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, x):
            return x

    assert repr(Func.apply(a)) == "tensor([1.], grad_fn=<FuncBackward>)"


def test_autograd_python_custom_function_inplace():
    import warnings

    bw_called = [0]

    class MyAdder(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, grad):
            bw_called[0] += 1
            return grad, grad

    a = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    for make in (lambda: a.clone(), lambda: a.clone().view_as(a)):
        bw_called[0] = 0
        MyAdder.apply(make(), b).sum().backward()
        assert bw_called[0] == 1
    bw_called[0] = 0
    c = MyAdder.apply(a.clone(), b)
    c += 2
    c.sum().backward()
    assert bw_called[0] == 1

    class MyAdderBad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            c = 3 * a
            c.add_(b)
            ctx.mark_dirty(c)
            return c

        @staticmethod
        def backward(ctx, grad):
            grad = 3 * grad
            return grad, grad

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        MyAdderBad.apply(a.clone(), b)
    assert len(w) == 1

    class MyBadAdder(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            bw_called[0] += 1
            return ga + gab, ga + gab

    bw_called[0] = 0
    c, d = MyBadAdder.apply(a.clone(), b)
    (c * d).sum().backward()
    assert bw_called[0] == 1
    bw_called[0] = 0
    c, d = MyBadAdder.apply(a.clone(), b)
    c += 2
    (c * d).sum().backward()
    assert bw_called[0] == 1

    class MyOutPlaceAdder(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a.clone(), a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, ga + 2 * gab

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not "
                                           "returned as output."):
        c, d = MyOutPlaceAdder.apply(a.clone().view_as(a), b)


@pytest.mark.parametrize("jvp_err", [True, False])
def test_custom_function_mark_dirty_not_differentiable_in_forward_mode(jvp_err):
    """test_custom_function_mark_dirty_not_differentiable's forward-mode half."""
    fwAD = torch.autograd.forward_ad

    class InplaceMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.mul_(2)
            ctx.mark_dirty(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            pass

        @staticmethod
        def jvp(ctx, x_t):
            return x_t if jvp_err else x_t.mul_(2)

    x = torch.tensor(1.0).clone()
    with fwAD.dual_level():
        x_tangent = torch.ones_like(x)
        x_dual = fwAD.make_dual(x, x_tangent)
        if jvp_err:
            with pytest.raises(RuntimeError, match="jvp function must modify the corresponding gradient inplace"):
                InplaceMul.apply(x_dual)
        else:
            out_dual = InplaceMul.apply(x_dual)
            _, out_tangent = fwAD.unpack_dual(out_dual)
            assert out_dual is x_dual and out_tangent is x_tangent


def test_custom_function_mark_output_view_of_intermediate():
    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            out = inp.clone().view_as(inp)
            ctx.mark_dirty(out)
            return out

        @staticmethod
        def backward(ctx, gO):
            pass

    a = torch.tensor([1.0], requires_grad=True)
    # PyTorch raises here, the view of an intermediate being one it would have to rebase; a tensor
    # made in forward (recording nothing) is no view here, so this is the warning PyTorch gives
    # for a new tensor marked dirty (the guide).
    with pytest.warns(UserWarning, match="received a tensor that was not an input."):
        Func.apply(a.clone())


class _AddOneInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        inp.add_(1)
        ctx.mark_dirty(inp)
        return inp

    @staticmethod
    def backward(ctx, gO):
        pass


def test_custom_function_inplace_on_non_default_view():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b, c = a.split([1, 1], dim=0)  # PyTorch's test calls split_with_sizes, which split with a list is
    with pytest.raises(RuntimeError, match="output of a function that returns multiple view"):
        _AddOneInPlace.apply(b)


def test_custom_function_inplace_on_view_of_leaf():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        _AddOneInPlace.apply(a.view_as(a))


def test_custom_function_saving_mutated_view_no_leak():
    import gc
    import weakref

    class Test(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            pass

    def scope():
        x = torch.tensor(1.0, requires_grad=True).clone()
        x = x.view_as(x)
        Test.apply(x)
        return weakref.ref(x)

    ref = scope()
    gc.collect()
    assert ref() is None


def test_grad_mode_restored_reentrant():
    class MyFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, go):
            original = torch.is_grad_enabled()
            with torch.enable_grad():
                assert torch.is_grad_enabled()
                foo = torch.rand(go.size(), requires_grad=True)
                (grad,) = torch.autograd.grad(foo ** 3, foo, grad_outputs=go)
                assert torch.is_grad_enabled()
            assert torch.is_grad_enabled() == original
            return grad

    inp = torch.rand(3, requires_grad=True)
    MyFunction.apply(inp).sum().backward()
    MyFunction.apply(inp).sum().backward(create_graph=True)


def test_power_function():
    a = torch.tensor([0.0, 0.0, 0.0])
    b = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    torch.sum(a ** b).backward()
    assert b.grad.tolist() == [float("-inf"), 0.0, 0.0]
    b = torch.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    torch.sum(0 ** b).backward()
    assert b.grad.tolist() == [float("-inf"), 0.0, 0.0]


def test_custom_function_error():
    fwAD = torch.autograd.forward_ad

    class BadFw(torch.autograd.Function):
        @staticmethod
        def backward(ctx, foo):
            return foo

    class BadBw(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

    class BadBw2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

        @staticmethod
        def backward(ctx, foo):
            return foo

        @staticmethod
        def vjp(ctx, foo):
            return foo

    class BadJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            return foo.clone()

    inp = torch.rand(1, requires_grad=True)
    with pytest.raises(NotImplementedError, match="must implement the forward"):
        BadFw.apply(inp)
    with pytest.raises(RuntimeError, match="must implement either the backward"):
        BadBw.apply(inp).sum().backward()
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        BadBw2.apply(inp).sum().backward()
    with pytest.raises(RuntimeError, match="must implement the jvp function"):
        with fwAD.dual_level():
            BadJvp.apply(fwAD.make_dual(inp, torch.rand_like(inp)))


def test_custom_function_forward_mode_inplace_checks():
    class InplaceFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.mark_dirty(foo)
            ctx.flag = flag
            foo.mul_(2)
            return foo

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            if ctx.flag:
                return 2 * gI
            gI.mul_(2)
            return gI

    inp = torch.rand(4, 4, dtype=torch.double, requires_grad=True)

    def test_fn(inp, flag):
        return InplaceFn.apply(inp.clone(), flag)

    assert torch.autograd.gradcheck(test_fn, (inp, False), check_forward_ad=True)
    with pytest.raises(RuntimeError, match="inplace custom Function is not modifying the forward mode gradients "
                                           "inplace"):
        torch.autograd.gradcheck(test_fn, (inp, True), check_forward_ad=True)


def test_custom_function_forward_mode_wrong_formula():
    class UserFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, foo, should_fail):
            ctx.should_fail = should_fail
            return foo * 2

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            return 3 * gI if ctx.should_fail else 2 * gI

    inp = torch.rand(10, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(UserFn.apply, (inp, False), check_forward_ad=True)
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for output 0"):
        torch.autograd.gradcheck(UserFn.apply, (inp, True), check_forward_ad=True)


def test_custom_function_forward_mode_non_tensor_before_tensor_args():
    fwAD = torch.autograd.forward_ad
    seen = []

    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, nt, x, nt2, y):
            return x * 2 + y * 3

        @staticmethod
        def jvp(ctx, nt, x_t, nt2, y_t):
            seen.append((nt, nt2))
            return x_t * 2 + y_t * 3

    x = torch.tensor(1.0, dtype=torch.double)
    t = torch.tensor(1.0, dtype=torch.double)
    y = torch.tensor(1.0, dtype=torch.double)
    with fwAD.dual_level():
        MyFn.apply(1, fwAD.make_dual(x, t), 1, y)
    assert seen == [(None, None)]
    assert torch.autograd.gradcheck(MyFn.apply, (1, x.requires_grad_(True), 1, y.requires_grad_(True)),
                                    check_forward_ad=True, check_backward_ad=False, check_batched_grad=False)


def test_custom_function_save_for_forward():
    fwAD = torch.autograd.forward_ad

    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.z = z
            ctx.prod = x * y
            return z * ctx.prod

        @staticmethod
        def jvp(ctx, x_t, y_t, _):
            x_p, y_p = ctx.saved_tensors
            return ctx.z * (y_p * x_t + x_p * y_t)

        @staticmethod
        def vjp(ctx, grad_out):
            x, y = ctx.saved_tensors
            return ctx.z * grad_out * y, ctx.z * grad_out * x, None

    a = torch.tensor(1.0, requires_grad=True, dtype=torch.double)
    t = torch.tensor(1.0, dtype=torch.double)
    b = torch.tensor(2.0, requires_grad=True, dtype=torch.double)
    with fwAD.dual_level():
        out = Func.apply(fwAD.make_dual(a, t), b, 4)
        assert fwAD.unpack_dual(out).tangent.item() == 8.0
        out.backward()
    assert torch.autograd.gradcheck(Func.apply, (a, b, 4), check_forward_ad=True)

    class Func2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def jvp(ctx, x_t):
            assert len(ctx.saved_tensors) == 0
            return x_t

        @staticmethod
        def vjp(ctx, grad_out):
            assert len(ctx.saved_tensors) == 1
            return grad_out

    with fwAD.dual_level():
        Func2.apply(fwAD.make_dual(a, t)).backward()
    assert torch.autograd.gradcheck(Func2.apply, (a,), check_forward_ad=True)


def test_custom_function_forward_mode_non_differentiable():
    fwAD = torch.autograd.forward_ad

    class Func(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            return x_tangent, None

    x = torch.tensor(2.0)
    x_tangent = torch.tensor(1.0)
    y = torch.tensor(3.0)
    with fwAD.dual_level():
        _, out2_dual = Func.apply(fwAD.make_dual(x, x_tangent), y)
        assert fwAD.unpack_dual(out2_dual).tangent is None

    y = torch.tensor(3)

    class Func2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            assert y_tangent is None
            return x_tangent, None

    with fwAD.dual_level():
        _, out2_dual = Func2.apply(fwAD.make_dual(x, x_tangent), y)
        assert fwAD.unpack_dual(out2_dual).tangent is None

    class FuncWrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_tangent, y_tangent):
            return x_tangent, x_tangent.clone()

    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="You should return None at that position instead"):
            FuncWrong.apply(fwAD.make_dual(x, x_tangent), y)

    class Func3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), object(), x.clone()

        @staticmethod
        def jvp(ctx, x_tangent):
            return x_tangent, None, x_tangent

    with fwAD.dual_level():
        out_dual, _, out2_dual = Func3.apply(fwAD.make_dual(x, x_tangent))
        assert fwAD.unpack_dual(out_dual).tangent.item() == 1.0
        assert fwAD.unpack_dual(out2_dual).tangent.item() == 1.0


def test_custom_function_local_inplace():
    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp, inplace):
            view = inp.clone()[:3]
            if inplace:
                view += 2
            return view

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    base = torch.rand(10, requires_grad=True)
    assert MyFn.apply(base, False).grad_fn.__class__.__name__ == "MyFnBackward"
    assert MyFn.apply(base, True).grad_fn.__class__.__name__ == "MyFnBackward"


def test_integer_outputs():
    """argmax, argmin and argsort (the claimed ones of PyTorch's list)."""
    inp = torch.rand(4, requires_grad=True)
    for out in (inp.argmax(), inp.argmin(), inp.argsort()):
        assert not out.dtype.is_floating_point and not out.requires_grad


def test_custom_function_cycle():
    import gc
    import weakref

    class MyFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, metadata):
            x = x.clone()
            ctx.meta = metadata
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            assert x.item() == pytest.approx(3.14) and ctx.meta["foo"].item() == pytest.approx(3.14)
            return gO * x, None

    def get_refs(with_backward):
        a = torch.tensor(3.14, requires_grad=True)
        metadata = {}
        out = MyFn.apply(a, metadata)
        metadata["foo"] = out
        if with_backward:
            out.sum().backward()
            assert _eq(a.grad, a)
        return weakref.ref(out)

    for with_backward in (False, True):
        gc.disable()
        try:
            ref = get_refs(with_backward)
            assert ref() is not None  # a cycle: out -> its node -> metadata -> out
        finally:
            gc.enable()
        gc.collect()
        assert ref() is None


@pytest.mark.parametrize("use_custom_function", [True, False])
@pytest.mark.parametrize("use_tensor_hook", [True, False])
def test_hook_closure_cycle(use_custom_function, use_tensor_hook):
    import gc
    import weakref

    class Function(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    class Test:
        pass

    count = [0]

    def scope():
        a = torch.tensor(1.0, requires_grad=True)
        b = Function.apply(a) if use_custom_function else a.clone()
        grad_fn_b = b.grad_fn
        obj = Test()

        def hook(*args):
            grad_fn_b
            obj
            count[0] += 1

        if use_tensor_hook:
            b.register_hook(hook)
        else:
            b.grad_fn.register_hook(hook)
        c = b.clone()
        return c, weakref.ref(obj)

    gc.disable()
    try:
        out, ref = scope()
        out.backward(retain_graph=True)
        gc.collect()
        out.backward(retain_graph=True)
        assert count[0] == 2 and ref() is not None
        del out
        gc.collect()
        assert ref() is None
    finally:
        gc.enable()


def test_saved_variable_saved_original_inplace_detach():
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached"):
        b.backward()
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = a.exp()
    a.detach_()
    b.backward()


def test_pynode_destruction_deadlock():
    """PyTorch runs its script in a subprocess to catch a deadlock; the error it expects is the
    point here: the newest branch's node runs first and finds its saved tensor changed."""
    class Foo(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

    def get_out():
        inp = torch.rand(2, requires_grad=True)
        right = Foo.apply(inp)
        left1 = inp.clone()
        left2 = left1 ** 2
        left1 += 1
        return left2 + right

    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation"):
        get_out().sum().backward()


def test_setup_context_when_forward_has_default_args():
    class PowFunction(torch.autograd.Function):
        @staticmethod
        def forward(x, y=3):
            return torch.pow(x, y)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        @staticmethod
        def backward(ctx, gO):
            (x,) = ctx.saved_tensors
            return gO * ctx.y * torch.pow(x, ctx.y - 1), None

    class PowFunctionWithClassmethod(torch.autograd.Function):
        @classmethod
        def forward(cls, x, y=3):
            return torch.pow(x, y)

        @classmethod
        def setup_context(cls, ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        @classmethod
        def backward(cls, ctx, gO):
            (x,) = ctx.saved_tensors
            return gO * ctx.y * torch.pow(x, ctx.y - 1), None

    x = torch.tensor(2.0, requires_grad=True)
    for fn in (PowFunction, PowFunctionWithClassmethod):
        y = fn.apply(x)
        (g,) = torch.autograd.grad(y, x)
        assert y.item() == 8.0 and g.item() == 12.0


def test_grad_thread_safety():
    import threading
    import weakref
    from concurrent.futures import ThreadPoolExecutor

    for _ in range(3):
        tensor = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (tensor ** 2).sum().backward()
        barrier = threading.Barrier(4)

        def access_grad(tensor, barrier):
            barrier.wait()
            return weakref.ref(tensor.grad)

        with ThreadPoolExecutor(max_workers=4) as executor:
            futures = [executor.submit(access_grad, tensor, barrier) for _ in range(4)]
            for future in futures:
                assert future.result()() is tensor.grad


# --- test_autograd.py's TestAutogradForwardMode: the level and dual-tensor API.

def test_forward_level_cleanup():
    import weakref

    fwAD = torch.autograd.forward_ad
    foo = torch.rand(2)
    with fwAD.dual_level():
        tangent = torch.rand(2, requires_grad=True)
        tangent_ref = weakref.ref(tangent)
        dual = fwAD.make_dual(foo, tangent)
        assert fwAD.unpack_dual(dual)[1] is tangent
        del tangent
        assert tangent_ref() is not None
        del dual
        assert tangent_ref() is None


def test_size_check():
    fwAD = torch.autograd.forward_ad
    foo = torch.rand(2)
    tangent = torch.rand(3)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Trying to set a forward gradient that has a different size"):
            fwAD.make_dual(foo, tangent)
        fwAD.make_dual(foo, tangent[1:])


def test_default_level():
    fwAD = torch.autograd.forward_ad
    foo = torch.rand(2)
    bar = torch.rand(2)
    with fwAD.dual_level():
        baz = fwAD.make_dual(foo, bar)
        baz_primal, baz_tangent = fwAD.unpack_dual(baz)
    assert _eq(baz_primal, foo) and baz_tangent is bar
    baz_primal, baz_tangent = fwAD.unpack_dual(baz)
    assert _eq(baz_primal, foo) and baz_tangent is None


def test_nested_level():
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level() as level:
        assert level == 0
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
            fwAD.enter_dual_level()


def test_set_fw_grad_having_own_fw_grad_at_same_level():
    fwAD = torch.autograd.forward_ad
    foo, bar, baz = torch.rand(2), torch.rand(2), torch.rand(2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        with pytest.raises(RuntimeError, match="has a forward gradient at the same level"):
            fwAD.make_dual(baz, dual)


# --- test/autograd/test_autograd_inference_mode's TestAutogradInferenceMode (run with
# test_autograd.py). autodiff has no inference tensors (the guide): `torch.is_inference` and
# the errors about inference tensors are left out; the modes themselves are PyTorch's.

def test_inference_mode_context_manager():
    assert not torch.is_inference_mode_enabled()
    with torch.inference_mode():
        assert torch.is_inference_mode_enabled()
        with torch.inference_mode(False):
            assert not torch.is_inference_mode_enabled()
        assert torch.is_inference_mode_enabled()
    assert not torch.is_inference_mode_enabled()


def test_inference_mode_false_records_even_under_no_grad():
    """What PyTorch's InferenceMode(false) does (run side by side with PyTorch 2.13): it turns
    recording on, inside inference_mode and inside no_grad alike."""
    x = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        with torch.inference_mode(False):
            assert torch.is_grad_enabled() and (x * 2).requires_grad
        assert not torch.is_grad_enabled()
    with torch.no_grad():
        with torch.inference_mode(False):
            assert torch.is_grad_enabled() and (x * 2).requires_grad
        assert not torch.is_grad_enabled()


def test_inference_mode_decorator():
    @torch.inference_mode()
    def func(x):
        assert torch.is_inference_mode_enabled()
        return x * x

    for requires_grad in (True, False):
        d = func(torch.ones(1, 2, 3, requires_grad=requires_grad))
        assert not d.requires_grad


def test_inference_mode_existing_autograd_session():
    s = torch.ones(1, 2, 3, requires_grad=True)
    a = s.clone()
    out = a * a
    with torch.inference_mode():
        a.add_(2)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        out.backward(torch.ones_like(out))


def test_inference_mode_inf_tensor_in_inf_mode_functional_op():
    with torch.inference_mode():
        for requires_grad in (True, False):
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
            assert not (c * c).requires_grad
            assert not c.view(-1).requires_grad  # test_inference_mode_inf_tensor_in_inf_mode_view_op


def test_mix_inference_and_normal_tensor_functional_op():
    """Its first half; `c * s` is refused in PyTorch ("Inference tensors cannot be saved for
    backward"), and computes here (the guide: no inference tensors)."""
    for requires_grad in (True, False):
        s = torch.ones(1, 2, 3, requires_grad=requires_grad)
        with torch.inference_mode():
            c = torch.ones(1, 2, 3, requires_grad=requires_grad)
        out = c.add(s)
        assert out.requires_grad == requires_grad
        if requires_grad:
            out.backward(torch.ones_like(out))
            assert _eq(c.grad, torch.ones_like(c))
            assert (c * s).requires_grad  # PyTorch: RuntimeError


def test_make_dual_forbid_integral_dtype():
    fwAD = torch.autograd.forward_ad
    primal_f = torch.ones(2, 2, dtype=torch.float)
    primal_l = torch.ones(2, 2, dtype=torch.long)
    tangent_f = torch.ones(2, 2, dtype=torch.float)
    tangent_l = torch.ones(2, 2, dtype=torch.long)
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex"):
            fwAD.make_dual(primal_f, tangent_l)
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(primal_l, tangent_l)
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(primal_l, tangent_f)


def test_print():
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        a = torch.rand(3)
        assert "tangent=" not in str(a)
        b = fwAD.make_dual(a, torch.rand(3))
        assert "tangent=" not in str(a) and "tangent=" in str(b)
        b_primal, b_tangent = fwAD.unpack_dual(b)
        assert "tangent=" not in str(b_primal) and "tangent=" not in str(b_tangent)


def test_basic_packing_unpacking():
    fwAD = torch.autograd.forward_ad
    foo = torch.rand(2)
    bar = torch.rand(2)
    with fwAD.dual_level():
        baz = fwAD.make_dual(foo, bar)
        baz_primal, baz_tangent = fwAD.unpack_dual(baz)
        assert _eq(baz_primal, foo) and baz_tangent is bar
        assert baz_primal is not fwAD.unpack_dual(baz).primal and _eq(baz_primal, fwAD.unpack_dual(baz).primal)
        assert baz_tangent is fwAD.unpack_dual(baz).tangent
        foo_primal, foo_tangent = fwAD.unpack_dual(foo)
        assert _eq(foo_primal, foo) and foo_tangent is None


def test_advanced_packing_unpacking():
    """Its backward-mode half (the first half checks shared memory and version counters)."""
    fwAD = torch.autograd.forward_ad
    foo = torch.rand(2)
    bar = torch.ones(2)
    with fwAD.dual_level():
        foo.requires_grad_()
        bar.requires_grad_()
        dual = fwAD.make_dual(foo, bar)
        p, t = fwAD.unpack_dual(dual)
        gfoo, gbar = torch.autograd.grad(p.sum(), (foo, bar), retain_graph=True, allow_unused=True)
        assert _eq(gfoo, torch.ones_like(foo)) and gbar is None
        gfoo, gbar = torch.autograd.grad(t.sum(), (foo, bar), retain_graph=True, allow_unused=True)
        assert gfoo is None and _eq(gbar, torch.ones_like(bar))
        p, t = fwAD.unpack_dual(dual.detach() * 2)
        assert not p.requires_grad and _eq(p, foo * 2) and t is None
        with torch.no_grad():
            out = dual * 3
        p, t = fwAD.unpack_dual(out)
        assert not p.requires_grad and not t.requires_grad
        assert _eq(p, foo * 3) and _eq(t, bar * 3)
        dual = dual.clone()
        dual.detach_()
        p, t = fwAD.unpack_dual(dual * 2)
        assert not p.requires_grad and _eq(p, foo * 2) and t is None


def test_grad_cleanup():
    fwAD = torch.autograd.forward_ad
    foo, bar, baz = torch.rand(2), torch.rand(2), torch.rand(2)
    with fwAD.dual_level():
        dual = fwAD.make_dual(foo, bar)
        assert fwAD.unpack_dual(foo)[1] is None and fwAD.unpack_dual(dual)[1] is bar
    assert fwAD.unpack_dual(dual)[1] is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(foo)[1] is None
        new_dual = fwAD.make_dual(foo, baz)
        dual_primal, dual_tangent = fwAD.unpack_dual(dual)
        new_dual_primal, new_dual_tangent = fwAD.unpack_dual(new_dual)
        assert _eq(dual_primal, new_dual_primal) and dual_tangent is None and _eq(new_dual_tangent, baz)


def test_non_differentiable():
    fwAD = torch.autograd.forward_ad
    with fwAD.dual_level():
        foo = fwAD.make_dual(torch.rand(2), torch.rand(2))
        bar = torch.rand(2)
        eq = foo == bar
        assert fwAD.unpack_dual(eq).tangent is None


def test_backward_graph_destruction():
    fwAD = torch.autograd.forward_ad

    def fn():
        a = torch.rand(10, requires_grad=True)
        da = fwAD.make_dual(torch.rand_like(a), a)
        da.exp()

    with fwAD.dual_level():
        fn()


# --- test_autograd.py's TestAutogradDeviceType, on the CPU.

def test_min_max_median_backprops_to_all_values():
    """min, max and median (nanmedian is not claimed)."""
    for f in [torch.min, torch.max, torch.median]:
        x1 = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], requires_grad=True)
        x2 = torch.tensor([float("nan"), float("nan"), float("nan")], requires_grad=True)
        for x in [x1, x2]:
            f(x).backward()
            assert x.grad.sum().item() == pytest.approx(1.0)
            assert (x.grad == 1 / 3).sum().item() == 3


def test_pyscalar_conversions():
    import math
    import sys

    l = torch.zeros(1, 1, 1, dtype=torch.long)
    l[0] = -12345
    assert int(l) == -12345
    f = torch.randn(1, 1, dtype=torch.double)
    f[0] = -12345.1
    assert float(f) == -12345.1
    f[0] = float("nan")
    assert math.isnan(float(f))
    f[0] = float("inf")
    assert float(f) == float("inf")
    f[0] = float("-inf")
    assert float(f) == float("-inf")
    pyscalar = 1234567890123456789
    assert pyscalar != int(float(pyscalar))
    l[0] = pyscalar
    assert float(l) == float(pyscalar)
    f[0] = float("nan")
    with pytest.raises(ValueError):
        int(f[0])
    f[0] = float("inf")
    with pytest.raises(OverflowError):
        int(f[0])
    f[0] = float("-inf")
    with pytest.raises(OverflowError):
        int(f[0])
    f[0] = sys.float_info.max
    assert int(f) == sys.float_info.max
    for tensor, value, expected in [(l, 0, False), (l, -2, True), (f, 0.0, False), (f, sys.float_info.min, True),
                                    (f, float("nan"), True), (f, float("inf"), True), (f, float("-inf"), True)]:
        tensor[0] = value
        assert bool(tensor) is expected


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_set_requires_grad_only_for_floats(dtype):
    """PyTorch's dtypes but int8 and int16, which autodiff does not have."""
    dtype = getattr(torch, dtype)

    def f1():
        torch.ones(1, dtype=dtype).requires_grad_()

    def f2():
        a = torch.ones(1, dtype=dtype)
        a.requires_grad = True

    def f3():
        torch.ones(1, dtype=dtype, requires_grad=True)

    a = torch.ones(1, dtype=dtype)
    a.requires_grad = False
    a.requires_grad_(False)
    for f in [f1, f2, f3]:
        if dtype.is_floating_point:
            f()
        else:
            with pytest.raises(RuntimeError, match="floating point"):
                f()


def _mask_not_all_zeros(shape):
    while True:
        result = torch.randn(shape) > 0
        if result.any():
            return result


def test_where_functional():
    x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    y = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    cond = _mask_not_all_zeros((5, 5))

    def where(cond, x, y):
        return torch.where(cond, x, y)

    assert torch.autograd.gradcheck(where, [cond, x, y], raise_exception=True)
    assert torch.autograd.gradgradcheck(where, [cond, x, y], [torch.randn(5, 5)])
    x = torch.randn(5, 1, 5, dtype=torch.double, requires_grad=True)
    y = torch.randn(5, 5, 1, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(where, [cond, x, y], raise_exception=True)
    assert torch.autograd.gradgradcheck(where, [cond, x, y], [torch.randn(5, 5, 5)])


def test_where_scalar():
    x = torch.randn(5, 5, dtype=torch.double, requires_grad=True)
    cond = _mask_not_all_zeros((5, 5))
    for fn in (lambda cond, x: torch.where(cond, 4.0, x), lambda cond, x: torch.where(cond, x, 4.0)):
        assert torch.autograd.gradcheck(fn, (cond, x)) and torch.autograd.gradgradcheck(fn, (cond, x))


def test_grad_assignment():
    x = torch.randn(5, 5)
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = 0
    with pytest.raises(RuntimeError):
        x.grad = torch.randn(2, 2)
    with pytest.raises(RuntimeError):
        x.grad = torch.randn(5, 5).long()
    with pytest.raises(RuntimeError):
        x.grad = x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_requires_grad_factory(dtype):
    dtype = getattr(torch, dtype)
    x = torch.randn(2, 3, dtype=dtype)
    for fn in [torch.ones_like, torch.randn_like]:
        for requires_grad in [True, False]:
            output = fn(x, dtype=dtype, device="cpu", requires_grad=requires_grad)
            assert output.requires_grad == requires_grad and output.dtype is dtype
            assert str(x.device) == "cpu"


def test_copy_forward_ad_broadcasting():
    fwAD = torch.autograd.forward_ad
    primal = torch.rand(3, 3)
    tangent = torch.rand(3, 3)
    non_dual = torch.rand(1, 3, 3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(primal, tangent)
        with pytest.raises(RuntimeError):
            non_dual.copy_(dual)  # a tensor without a tangent changed in place by a dual one (the guide)


def test_inplace_on_view_backprop_base():
    """PyTorch's `v1 = x.narrow(0, 0, 1); v1.mul_(2)` changes x, so x's gradient doubles in the
    first row; here the view is a tensor of its own (the guide) and x is unchanged."""
    root = torch.randn(2, 2, requires_grad=True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v1.mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]  # PyTorch: [[2, 2], [1, 1]]
    assert _eq(x, root)


def test_inplace_on_view_multiple_outputs():
    root = torch.arange(9.0, dtype=torch.double).reshape(3, 3).requires_grad_()
    x = root.clone()
    v1 = x.unbind()
    with pytest.raises(RuntimeError):
        v1[0].mul_(2)

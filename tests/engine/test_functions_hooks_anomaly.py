"""Custom autograd.Functions, hooks, anomaly detection and in-place updates."""

import math

import pytest

import autodiff as torch
from autodiff.autograd import Function


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * result


class ScaledMul(Function):
    """Two tensor inputs and a number; backward returns one gradient per input."""

    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        return a * b * scale

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return grad * b * ctx.scale, grad * a * ctx.scale, None


def test_custom_function_forward_backward_and_node_name():
    x = torch.tensor(1.5, requires_grad=True)
    y = Exp.apply(x)
    assert type(y.grad_fn).__name__ == "ExpBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.backward()
    assert x.grad.item() == pytest.approx(math.exp(1.5))


def test_custom_function_with_several_inputs_and_needs_input_grad():
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(3.0)
    out = ScaledMul.apply(a, b, 10.0)
    assert out.grad_fn.needs_input_grad == (True, False, False)
    out.backward()
    assert a.grad.item() == 30.0


def test_custom_function_is_twice_differentiable_when_its_backward_is():
    x = torch.tensor(0.5, requires_grad=True)
    (g,) = torch.autograd.grad(Exp.apply(x), x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    assert h.item() == pytest.approx(math.exp(0.5))
    assert torch.autograd.gradgradcheck(Exp.apply, (torch.tensor([0.3, -0.2], requires_grad=True),))


def test_custom_function_saved_tensors_are_freed():
    x = torch.tensor(1.0, requires_grad=True)
    y = Exp.apply(x)
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_custom_function_setup_context_style():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = torch.tensor(3.0, requires_grad=True)
    Square.apply(x).backward()
    assert x.grad.item() == 6.0


def test_custom_function_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad

    a, b = torch.tensor(1.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients \\(expected 2, got 1\\)"):
        Bad.apply(a, b).backward()


def test_custom_function_without_grad_returns_plain_outputs():
    with torch.no_grad():
        y = Exp.apply(torch.tensor(1.0, requires_grad=True))
    assert y.grad_fn is None


# -- hooks --------------------------------------------------------------------------------------------------


def test_hook_on_an_intermediate_can_replace_its_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    y.sum().backward()
    assert seen == [[1.0, 1.0]]
    assert y.grad.tolist() == [10.0, 10.0]  # retained after the hook, as PyTorch does
    assert x.grad.tolist() == [20.0, 20.0]


def test_hook_on_a_leaf_and_removing_it():
    x = torch.tensor(2.0, requires_grad=True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(g.item()))
    (x * 3).backward()
    handle.remove()
    (x * 3).backward()
    assert calls == [3.0] and x.grad.item() == 6.0


def test_hooks_need_requires_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        torch.tensor(1.0).register_hook(lambda g: g)


def test_node_pre_and_post_hooks():
    x = torch.tensor(2.0, requires_grad=True)
    y = x * 3
    log = []
    y.grad_fn.register_prehook(lambda grads: log.append(("pre", grads[0].item())))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append(("post", grad_inputs[0].item())))
    y.backward()
    assert log == [("pre", 1.0), ("post", 3.0)]


def test_calling_a_grad_fn_directly():
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    grads = y.grad_fn(torch.tensor(1.0))
    assert [g.item() for g in grads] == [2.0, 2.0]


# -- anomaly detection -------------------------------------------------------------------------------------


def test_anomaly_mode_names_the_node_that_produced_nan():
    with torch.autograd.set_detect_anomaly(True):
        z = torch.tensor(0.0, requires_grad=True)
        w = torch.sqrt(z) * 0  # the forward line the warning must show
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0") as warned:
            with pytest.raises(RuntimeError) as info:
                w.backward()
    assert str(info.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    message = str(warned[0].message)
    assert "Traceback of forward call that caused the error" in message
    assert "w = torch.sqrt(z) * 0  # the forward line the warning must show" in message
    assert not torch.autograd.is_anomaly_enabled()


def test_anomaly_mode_keeps_the_forward_line_of_an_op_of_two_leaves():
    # the record that starts a new tape (both inputs leaves) takes anomaly mode's path too
    with torch.autograd.set_detect_anomaly(True):
        x = torch.tensor(1.0, requires_grad=True)
        y = torch.tensor(0.0, requires_grad=True)
        w = x * y  # the line of the product of leaves
        with pytest.warns(UserWarning, match="Error detected in MulBackward0") as warned:
            with pytest.raises(RuntimeError, match="MulBackward0"):
                (w * math.inf).backward()
    (message,) = [str(w.message) for w in warned if "Error detected" in str(w.message)]
    assert "w = x * y  # the line of the product of leaves" in message


class _NanBack(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        return grad * math.nan


@pytest.mark.parametrize("case", ["unary op of a leaf", "op of a record", "custom Function"])
def test_the_forward_trace_ends_at_the_users_line(case):
    # each op records itself through a different depth of autodiff's own calls; none of them is shown
    with torch.autograd.set_detect_anomaly(True):
        x = torch.tensor(0.0, requires_grad=True)
        if case == "unary op of a leaf":
            w = torch.sqrt(x) * 0  # the user's line
        elif case == "op of a record":
            w = (x * 1).sqrt() * 0  # the user's line
        else:
            w = _NanBack.apply(x)  # the user's line
        with pytest.warns(UserWarning, match="Error detected") as warned:
            with pytest.raises(RuntimeError):
                w.backward()
    (message,) = [str(w.message) for w in warned if "Error detected" in str(w.message)]
    assert message.rstrip().splitlines()[-1].strip().endswith("# the user's line")


def test_anomaly_mode_is_off_by_default_and_nan_passes_silently():
    z = torch.tensor(0.0, requires_grad=True)
    (torch.sqrt(z) * 0).backward()
    assert math.isnan(z.grad.item())


def test_detect_anomaly_warns_when_enabled():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with torch.autograd.detect_anomaly():
            assert torch.autograd.is_anomaly_enabled()


# -- in-place updates ---------------------------------------------------------------------------------------


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    for update in (lambda: x.add_(1), lambda: x.__iadd__(1), lambda: x.zero_()):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
            update()


def test_in_place_on_a_non_leaf_is_recorded():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    y += 1
    assert y.grad_fn.name() == "AddBackward0"
    y.mul_(y * 1)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert a.grad.tolist() == [12.0, 20.0]  # d/da (2a+1)^2 = 4(2a+1)


def test_multiplying_a_tensor_in_place_by_itself_is_detected_as_pytorch_does():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    y += 1
    y.mul_(y)  # the saved factor is the tensor being changed
    with pytest.raises(RuntimeError, match="which is output 0 of Mul, is at version 2; expected version 1 instead"):
        y.sum().backward()


def test_modifying_a_saved_tensor_in_place_is_detected():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    z = a * 2
    zz = z * z
    z.add_(1)
    with pytest.raises(RuntimeError) as info:
        zz.sum().backward()
    message = str(info.value)
    assert message.startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[autodiff.DoubleTensor [2]], which is output 0 of Add, is at version 1; expected version 0 instead."
    )


def test_retain_grad_survives_an_in_place_update():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.add_(1)
    assert y.retains_grad
    y.sum().backward()
    assert y.grad.tolist() == [1.0, 1.0]


def test_in_place_broadcast_that_would_change_the_shape_is_refused():
    x = torch.zeros(3)
    with pytest.raises(RuntimeError, match="output with shape \\[3\\] doesn't match the broadcast shape \\[2, 3\\]"):
        x += torch.ones(2, 3)


def test_setting_grad_checks_the_shape():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient of size '\\[2\\]' to a tensor of size '\\[3\\]'"):
        x.grad = torch.ones(2)

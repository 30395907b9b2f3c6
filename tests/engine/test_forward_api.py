"""Forward mode's API (autograd.forward_ad, Function.jvp, func.jvp/jacfwd/hessian,
autograd.functional.jvp/hvp) and the graph API (register_post_accumulate_grad_hook,
isclose, allclose): PyTorch's behaviour and error texts, each held here."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff
from autodiff import func
from autodiff.autograd import Function, forward_ad as fw
from autodiff.autograd import functional

torch = pytest.importorskip("torch")


def _t(values, **kw):
    return autodiff.tensor(values, dtype=autodiff.float64, **kw)


def test_a_dual_tensor_carries_its_tangent_through_a_program():
    with fw.dual_level():
        x = fw.make_dual(_t([1.5, 2.0]), _t([1.0, 0.5]))
        y = (x * x).sin()
        primal, tangent = fw.unpack_dual(y)
        assert repr(y).endswith(f", tangent={tangent!r})")
    np.testing.assert_allclose(primal.numpy(), np.sin([2.25, 4.0]))
    np.testing.assert_allclose(tangent.numpy(), np.cos([2.25, 4.0]) * 2 * np.array([1.5, 2.0]) * [1.0, 0.5])
    assert fw.unpack_dual(y).tangent is None  # the level is closed: the tangent is gone
    assert fw.unpack_dual(y) == (y, None) and "tangent" not in repr(y)


def test_make_dual_refuses_what_pytorch_refuses_with_its_words():
    x = _t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fw.make_dual(x, x)
    with fw.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given forward gradient is of "
                                                 r"size \[3\]\."):
            fw.make_dual(x, _t([1.0, 2.0, 3.0]))
        with pytest.raises(ValueError, match="Expected tangent to be floating point or complex, but got: "):
            fw.make_dual(x, autodiff.tensor([1, 2]))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fw.make_dual(autodiff.tensor([1, 2]), x)
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level 0"):
            fw.make_dual(fw.make_dual(x, x), x)
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at the moment$"):
            fw.enter_dual_level()


def test_a_dual_of_a_tensor_that_requires_grad_is_its_view_and_gradients_reach_it():
    x = _t([1.0, 2.0], requires_grad=True)
    with fw.dual_level():
        d = fw.make_dual(x, _t([1.0, 1.0]))
        assert d.grad_fn.name() == "ViewBackward0" and d.requires_grad and not d.is_leaf
        (d ** 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])


def test_what_drops_a_tangent_and_what_keeps_it_as_pytorch():
    x = _t([1.5, 2.0])
    with fw.dual_level():
        d = fw.make_dual(x, _t([1.0, 1.0]))
        assert fw.unpack_dual(d.detach()).tangent is None
        assert fw.unpack_dual(d.data).tangent is None
        assert fw.unpack_dual(d > 1).tangent is None  # not floating point
        assert fw.unpack_dual(d.floor()).tangent.tolist() == [0.0, 0.0]
        with autodiff.no_grad():  # forward mode does not need grad mode
            assert fw.unpack_dual(d * 2).tangent.tolist() == [2.0, 2.0]
        values, indices = d.max(0)
        assert fw.unpack_dual(values).tangent.item() == 1.0 and fw.unpack_dual(indices).tangent is None


def test_in_place_operations_change_the_tangent_with_the_value():
    with fw.dual_level():
        e = fw.make_dual(_t([1.0, 2.0]), _t([1.0, 1.0]))
        e.mul_(3)
        assert fw.unpack_dual(e).tangent.tolist() == [3.0, 3.0]
        for change in (lambda t: t.zero_(), lambda t: t.fill_(2.0), lambda t: t.copy_(_t([3.0, 4.0]))):
            f = fw.make_dual(_t([1.0, 2.0]), _t([1.0, 1.0]))
            change(f)
            assert fw.unpack_dual(f).tangent.tolist() == [0.0, 0.0]  # PyTorch's: a constant has no tangent
        g = fw.make_dual(_t([1.0, 2.0]), _t([1.0, 1.0]))
        g.copy_(e)
        assert fw.unpack_dual(g).tangent.tolist() == [3.0, 3.0]
        plain = _t([0.0, 0.0])
        with pytest.raises(RuntimeError, match="cannot give a forward-mode tangent to a tensor without one"):
            plain.add_(e)  # PyTorch makes plain dual; autodiff refuses (the README's differences)


class _Scale(Function):
    @staticmethod
    def forward(x, y):
        return x * y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("backward is not used by forward mode")

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        return tx * y + x * ty


class _NoJvp(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_a_custom_function_pushes_tangents_with_its_jvp():
    x, y = _t([1.0, 2.0]), _t([3.0, 4.0])
    with fw.dual_level():
        out = _Scale.apply(fw.make_dual(x, _t([1.0, 1.0])), y)  # y has no tangent: jvp gets zeros for it
        assert fw.unpack_dual(out).tangent.tolist() == [3.0, 4.0]
        with pytest.raises(NotImplementedError, match="You must implement the jvp function for custom "
                                                      "autograd.Function to use it with forward mode AD."):
            _NoJvp.apply(fw.make_dual(x, _t([1.0, 1.0])))
        assert _NoJvp.apply(x).tolist() == [2.0, 4.0]  # no dual input: no jvp needed
    # jacfwd is forward mode: a Function whose backward fails still has a Jacobian
    jacobian = func.jacfwd(lambda a: _Scale.apply(a, y))(x)
    assert jacobian.tolist() == [[3.0, 0.0], [0.0, 4.0]]


def _both(name, *args, **kwargs):
    ours = getattr(func, name) if name in ("jvp", "jacfwd", "hessian") else getattr(functional, name)
    theirs = getattr(torch.func, name) if name in ("jvp", "jacfwd", "hessian") else getattr(
        torch.autograd.functional, name)
    return ours, theirs


def _torch(value):
    if isinstance(value, tuple):
        return tuple(_torch(v) for v in value)
    return torch.tensor(value.numpy())


def _same(ours, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-12)


def _f(lib):
    return lambda a, b: (lib.tanh(a * b).sum() * a, (a * b.exp()).sum())


def test_func_jvp_jacfwd_and_hessian_agree_with_pytorch():
    a, b = _t([0.3, -0.7, 1.1]), _t([0.5, 0.2, -0.4])
    ta, tb = _t([1.0, -2.0, 0.5]), _t([0.25, 1.0, -1.0])
    _same(func.jvp(_f(autodiff), (a, b), (ta, tb)), torch.func.jvp(_f(torch), _torch((a, b)), _torch((ta, tb))))
    g = lambda lib: (lambda a, b: lib.sin(a) * b.exp() + (a ** 2).sum())  # noqa: E731
    for argnums in (0, 1, (0, 1)):
        _same(func.jacfwd(g(autodiff), argnums)(a, b), torch.func.jacfwd(g(torch), argnums)(*_torch((a, b))))
    h = lambda lib: (lambda a: (lib.tanh(a) ** 3).sum() * a[0])  # noqa: E731
    _same(func.hessian(h(autodiff))(a), torch.func.hessian(h(torch))(_torch(a)))
    _same(func.jacfwd(func.jacrev(h(autodiff)))(a), torch.func.jacfwd(torch.func.jacrev(h(torch)))(_torch(a)))


def test_func_jvp_refuses_with_pytorchs_words():
    x = _t([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"^jvp\(f, primals, tangents\): Expected primals to be a tuple"):
        func.jvp(autodiff.sin, x, (x,))
    with pytest.raises(RuntimeError, match=r"same python structure.*Got primals with structure \(\*,\) and "
                                           r"tangents with structure \(\*, \*\)$"):
        func.jvp(autodiff.sin, (x,), (x, x))  # PyTorch spells the structures as TreeSpecs (the guide)


def test_an_unpacked_primal_stands_where_its_dual_stands():
    """The guide's difference: PyTorch shows a view node for the primal; autodiff the dual's own."""
    x = _t([1.0, 2.0], requires_grad=True)
    with fw.dual_level():
        y = fw.make_dual(x, _t([1.0, 1.0])).sin()
        primal = fw.unpack_dual(y).primal
        assert primal.grad_fn is y.grad_fn and primal.grad_fn.name() == "SinBackward0"


def test_jvp_under_vmap_and_inside_a_level_gives_the_same_numbers():
    X = _t([[1.0, 2.0], [3.0, 4.0]])
    pushed = func.vmap(lambda x, t: func.jvp(autodiff.sin, (x,), (t,))[1])(X, X)
    np.testing.assert_allclose(pushed.numpy(), np.cos(X.numpy()) * X.numpy())
    with fw.dual_level():
        d = fw.make_dual(_t([1.0, 2.0]), _t([1.0, 1.0]))
        _, inner = func.jvp(lambda a: a * d, (_t([3.0, 4.0]),), (_t([1.0, 1.0]),))
        assert inner.tolist() == [1.0, 2.0]


def test_functional_jvp_and_hvp_agree_with_pytorch():
    x = _t([0.3, -0.7, 1.1])
    v = _t([1.0, -2.0, 0.5])
    f = lambda lib: (lambda a: (lib.tanh(a) * a.exp(), a.sum() * a))  # noqa: E731
    _same(functional.jvp(f(autodiff), x, v), torch.autograd.functional.jvp(f(torch), _torch(x), _torch(v)))
    s = lambda lib: (lambda a: (lib.sigmoid(a) ** 2).sum() * a.prod())  # noqa: E731
    _same(functional.hvp(s(autodiff), x, v), torch.autograd.functional.hvp(s(torch), _torch(x), _torch(v)))
    output, product = functional.hvp(s(autodiff), x.requires_grad_(True), v, create_graph=True)
    assert output.grad_fn.name() == "MulBackward0" and product.requires_grad  # differentiable further
    with pytest.raises(RuntimeError, match="found that the jacobian of the user-provided function with respect to "
                                           "input 0 is independent of the input. This is not allowed in strict mode"):
        functional.hvp(lambda a: (2 * a).sum(), x, v, strict=True)


def test_a_tangent_can_be_differentiated_in_reverse_mode():
    """Reverse over forward: the jvp's result is a function of the point, differentiable."""
    x = _t([0.3, -0.7], requires_grad=True)
    with fw.dual_level():
        d = fw.make_dual(x, _t([1.0, 0.0]))
        tangent = fw.unpack_dual((autodiff.sin(d) * d).sum()).tangent
    (gradient,) = autodiff.autograd.grad(tangent, x)
    # tangent = d/dx0 sum(sin(x) x) = cos(x0) x0 + sin(x0); its gradient: (-sin(x0) x0 + 2 cos(x0), 0)
    np.testing.assert_allclose(gradient.numpy(), [-np.sin(0.3) * 0.3 + 2 * np.cos(0.3), 0.0])


def test_a_post_accumulate_grad_hook_runs_after_the_gradient_is_in_grad():
    w = _t([1.0, 2.0], requires_grad=True)

    def step(p):  # the optimizer-in-backward pattern of PyTorch's tutorials
        with autodiff.no_grad():
            p.sub_(0.1 * p.grad)
        p.grad = None

    handle = w.register_post_accumulate_grad_hook(step)
    import gc

    gc.collect()  # the hook outlives a collection: the tensor holds it
    (w * w).sum().backward()
    assert w.tolist() == pytest.approx([0.8, 1.6]) and w.grad is None
    autodiff.autograd.grad((w * w).sum(), w)  # no .grad set: the hook does not run
    assert w.tolist() == pytest.approx([0.8, 1.6])
    handle.remove()
    (w * w).sum().backward()
    assert w.grad is not None
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (w * 2).register_post_accumulate_grad_hook(step)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        _t([1.0]).register_post_accumulate_grad_hook(step)
    w.register_post_accumulate_grad_hook(lambda p: 5)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        (w * w).sum().backward()


def test_allclose_and_isclose_refuse_two_dtypes_as_pytorch():
    with pytest.raises(RuntimeError, match="^Double did not match Long$"):
        autodiff.allclose(_t([1.0, 2.0]), autodiff.tensor([1, 2]))
    assert autodiff.allclose(_t([1.0, 2.0]), _t([1.0, 2.000001])) is True


def test_derive_inside_a_dual_level_leaves_the_levels_hooks_in_force():
    """The tracer's hooks are pushed over forward mode's and popped on the way out (ops/hooks.py):
    forward mode goes on working after a derive inside its level, and a thread of its own sees
    none of them."""
    import threading

    from autodiff.ops import hooks

    x = autodiff.tensor(2.0)
    with fw.dual_level():
        dual = fw.make_dual(x, autodiff.tensor(1.0))
        in_force = hooks.current()
        seen = []
        thread = threading.Thread(target=lambda: seen.append(hooks.current()))
        thread.start()
        thread.join()
        autodiff.derive("y = sin(a) * a", {"a": 0.5})
        assert hooks.current() == in_force and in_force.forward is not None
        tangent = fw.unpack_dual(dual.exp() * dual).tangent
    assert seen == [hooks.Hooks()]
    assert abs(float(tangent) - 3 * np.exp(2.0)) < 1e-12
    assert hooks.current() == hooks.Hooks()

"""APIs users reach for that PyTorch's tutorials use: each snippet runs with autodiff and with
PyTorch, and what it returns (values, gradients, grad_fn names, versions, error texts) must
match, as in test_torch_oracle.py."""

import pytest

import autodiff

from .test_torch_oracle import assert_same, name, outcome

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

SNIPPETS = {}


def snippet(fn):
    SNIPPETS[fn.__name__] = fn
    return fn


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


# -- copies, dtypes, views ------------------------------------------------------------------------


@snippet
def clone_is_a_differentiable_copy(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    z = lib.clone(x)
    (y * 3 + z).sum().backward()
    y.detach().zero_()
    return [name(y), name(z), y.requires_grad, y.is_leaf, x.grad, x]


@snippet
def double_and_float(lib):
    x = lib.tensor([1.5, 2.0], requires_grad=True)
    f = x.float()
    d = f.double()
    (d * d).sum().backward()
    return [str(f.dtype), str(d.dtype), name(f), name(d), x.grad, lib.double is lib.float64,
            lib.float is lib.float32, str(lib.zeros(2, dtype=lib.double).dtype), x.to(lib.float).dtype == lib.float32,
            str(x.double().dtype), x.double() is x]


@snippet
def tensor_pow(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = lib.tensor([2.0, 0.5, 1.0], requires_grad=True)
    a, b, c = x.pow(2), x.pow(y), lib.pow(2, x)
    (a + b + c).sum().backward()
    return [a, b, c, name(a), name(b), name(c), x.grad, y.grad]


@snippet
def view_as_and_narrow(lib):
    x = lib.arange(6.0).requires_grad_()
    v = x.view_as(lib.zeros(2, 3))
    n = v.narrow(1, 1, 2)
    (n * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return [v, n, name(v), name(n), x.grad]


# -- random ---------------------------------------------------------------------------------------


def test_rand_like_keeps_shape_and_dtype_and_is_seeded():
    x = autodiff.ones(2, 3, dtype=autodiff.float32)
    autodiff.manual_seed(5)
    a = autodiff.rand_like(x)
    autodiff.manual_seed(5)
    b = autodiff.rand_like(x, requires_grad=True)
    assert a.shape == (2, 3) and a.dtype == autodiff.float32 and not a.requires_grad and a.is_leaf
    assert b.requires_grad and b.is_leaf and a.tolist() == b.tolist()
    assert ((a >= 0) & (a < 1)).all()
    assert autodiff.rand_like(x, dtype=autodiff.float64).dtype == autodiff.float64
    assert autodiff.randn_like(x).shape == (2, 3)
    t = torch.rand_like(torch.ones(2, 3, dtype=torch.float32), requires_grad=True)  # the same signature
    assert t.requires_grad and t.dtype == torch.float32


# -- in place ---------------------------------------------------------------------------------------


@snippet
def inplace_methods_bump_the_version(lib):
    x = lib.tensor([0.5, 1.0, 2.0])
    versions = [x._version]
    for step in (lambda: x.mul_(2), lambda: x.add_(1), lambda: x.sub_(0.5), lambda: x.div_(2),
                 lambda: x.pow_(2), lambda: x.clamp_(max=3.0), lambda: x.exp_(), lambda: x.add_(x, alpha=2)):
        assert step() is x
        versions.append(x._version)
    return [x, versions]


@snippet
def inplace_on_a_non_leaf_records(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * 1
    y.mul_(3)
    y.add_(1)
    y.exp_()
    y.sum().backward()
    return [y, name(y), y._version, a.grad]


@snippet
def inplace_on_a_leaf_that_requires_grad(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.mul_(2)


@snippet
def inplace_on_a_saved_tensor(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    z = y * y
    y.add_(1)
    z.sum().backward()


@snippet
def inplace_under_no_grad_updates_a_leaf(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with lib.no_grad():
        w.sub_(0.1 * w.grad)
    w.grad.zero_()
    return [w, w.grad, w._version, w.requires_grad, w.is_leaf]


# -- custom functions and node hooks -------------------------------------------------------------------


def _cube(lib):
    from_lib = lib.autograd.function

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @from_lib.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2

    return Cube


@snippet
def once_differentiable_backward_works(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = _cube(lib).apply(x)
    y.sum().backward()
    return [y, name(y), x.grad]


@snippet
def once_differentiable_records_nothing_when_no_gradient_requires_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = _cube(lib).apply(x)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()


@snippet
def once_differentiable_records_an_error_node_for_create_graph(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = _cube(lib).apply(x)
    v = lib.ones(2, requires_grad=True)
    (g,) = lib.autograd.grad(y, x, v, create_graph=True)
    result = [g, name(g), g.requires_grad]
    try:
        g.sum().backward()
    except RuntimeError as error:
        result.append(str(error))
    return result


@snippet
def node_hooks_see_and_replace_gradients(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append([list(grad_inputs), list(grad_outputs)])
        return (grad_inputs[0] * 10, grad_inputs[1])

    handle = y.grad_fn.register_hook(hook)
    y.sum().backward(retain_graph=True)
    first = [x.grad.clone(), w.grad.clone()]
    handle.remove()
    x.grad = None
    y.sum().backward()
    return [seen, first, x.grad]


@snippet
def node_prehook_replaces_the_incoming_gradient(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_prehook(lambda grad_outputs: (grad_outputs[0] * 2,))
    y.sum().backward()
    return x.grad


@pytest.mark.parametrize("key", sorted(SNIPPETS))
def test_snippet_matches_pytorch(key):
    assert_same(outcome(SNIPPETS[key], autodiff), outcome(SNIPPETS[key], torch))

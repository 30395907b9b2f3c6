"""The same snippets run with PyTorch and with autodiff must print the same things.

Values, gradients, grad_fn names, reprs and error texts are compared; the only difference
allowed in text is the module name (`torch.float32` vs `autodiff.float32`). PyTorch runs with
float64 as its default dtype, as autodiff has. Skipped when PyTorch is not installed.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import autodiff

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


def normalized(value):
    """Something comparable across the two libraries."""
    if isinstance(value, (torch.Tensor, autodiff.Tensor)):
        array = value.detach().numpy() if isinstance(value, torch.Tensor) else value.detach().numpy()
        return ("tensor", np.asarray(array, dtype=np.float64) if array.dtype.kind == "f" else np.asarray(array))
    if isinstance(value, str):
        return value.replace("torch.", "autodiff.")
    if isinstance(value, (list, tuple)):
        return [normalized(v) for v in value]
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items()}
    return value


def outcome(snippet, lib):
    try:
        return normalized(snippet(lib))
    except Exception as exc:  # the error is part of what must match, up to its builtin family
        family = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        return ("error", family.__name__, normalized(str(exc)))


def assert_same(ours, theirs, path="result"):
    if isinstance(theirs, tuple) and theirs and theirs[0] == "tensor":
        assert isinstance(ours, tuple) and ours[0] == "tensor", f"{path}: {ours!r} is not a tensor"
        assert ours[1].shape == theirs[1].shape, f"{path}: shape {ours[1].shape} != {theirs[1].shape}"
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-14, equal_nan=True, err_msg=path)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), f"{path}: {ours!r} != {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), f"{path}: keys differ"
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{path}.{key}")
    else:
        assert ours == theirs, f"{path}: autodiff gave {ours!r}, PyTorch {theirs!r}"


SNIPPETS = {}


def snippet(fn):
    SNIPPETS[fn.__name__] = fn
    return fn


def name(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


# -- the tutorials -----------------------------------------------------------------------------------


@snippet
def tutorial_expression(lib):
    a, b, c, d = (lib.tensor(v, requires_grad=True) for v in (2.0, 3.0, 5.0, 10.0))
    u = a * b
    t = lib.log(d)
    t.retain_grad()
    e = u + t * c
    e.backward()
    return [repr(e), a.grad, b.grad, c.grad, d.grad, t.grad, repr(d.grad), name(e), name(u), name(t)]


@snippet
def a_change_through_data_after_use_is_what_backward_sees(lib):
    # Backward reads a saved input as it is then: `.data` changes show (no version bump), in
    # the formulas' lean path and on the general path (a target given) alike.
    x, w, v = (lib.tensor(value, requires_grad=True) for value in (2.0, 3.0, [1.0, 2.0]))
    y, z = x * w, (x * v).sum()
    w.data.mul_(10)
    v.data = lib.tensor([5.0, 7.0])
    y.backward()
    lean = x.grad.clone()
    (through_target,) = lib.autograd.grad(z, [x])
    return [lean, through_target]


@snippet
def non_scalar_output_and_fixes(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
    L = 10 - x * 2
    try:
        L.backward(retain_graph=True)
        error = None
    except RuntimeError as exc:
        error = str(exc)
    L.sum().backward(retain_graph=True)
    first = x.grad.clone()
    L.backward(lib.ones(L.shape))
    return [error, first, x.grad, repr(L)]


@snippet
def cumsum_values_gradients_and_node(lib):
    x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
    y = x.cumsum(1) * lib.tensor([1.0, 2.0, 3.0])
    z = lib.cumsum(x, dim=-2)
    (y.sum() + (z * z).sum()).backward()
    s = lib.tensor(2.0, requires_grad=True)
    return [y, z, x.grad, type(y.grad_fn.next_functions[0][0]).__name__, name(z), lib.cumsum(s, 0)]


@snippet
def backward_of_roots_that_depend_on_each_other(lib):
    x = lib.ones(3, requires_grad=True)
    y = x**2
    z = y**3
    lib.autograd.backward([y, z], [lib.ones(3), lib.ones(3)])
    first = x.grad.clone()
    x.grad = None
    y = x**2
    y.retain_grad()
    z = y**3
    lib.autograd.backward([z, y, z], [lib.ones(3), 2 * lib.ones(3), lib.ones(3)], inputs=[x, y])
    w = x * 3
    v = w * w
    grads = lib.autograd.grad([v.sum(), w.sum()], [x, w])
    return [first, x.grad, y.grad, *grads]


@snippet
def narrow_from_the_end(lib):
    x = lib.arange(5.0, requires_grad=True)
    y = lib.narrow(x, 0, -3, 2)
    z = x.narrow(0, 5, 0)
    (y * y).sum().backward()
    return [y, z, x.grad, name(y)]


@snippet
def remainder_and_its_gradient(lib):
    a = lib.tensor([5.0, -7.0, 3.5, 0.25], requires_grad=True)
    b = lib.tensor([2.0, 3.0, -1.5, -2.0], requires_grad=True)
    r = a % b
    s = a % 2.5
    (r * r).sum().backward(retain_graph=True)
    s.sum().backward()
    return [r, s, a.grad, b.grad, name(r), name(s), name(a // 2), name(7 // a), name(2 % a)]


@snippet
def mixed_advanced_indexing_in_pytorchs_order(lib):
    x = lib.arange(120.0).reshape(5, 6, 4).requires_grad_(True)
    keys = [(3, slice(2, None), [1, 3]), ([0, 1], slice(2, None), 3), (slice(None), [0, 1], None, 3),
            (Ellipsis, [0, 2]), ([4, 0], Ellipsis, 1), (slice(2, None), 1, [0, 3]), (None, [1, 2], 0)]
    outs = [x[key] for key in keys]
    sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
    return [*outs, x.grad]


@snippet
def full_slices_and_same_shape_expand_are_new_nodes(lib):
    x = lib.ones(2, 2, requires_grad=True)
    h = x[:, :]
    h.retain_grad()
    e = x.expand(2, 2)
    e.retain_grad()
    (h * 3 + e * 5).sum().backward()
    return [name(h), name(x[...]), name(x[:]), name(e), h.grad, e.grad, x.grad, h is x]


@snippet
def no_grad_on_a_generator_runs_each_resumption_without_grad(lib):
    x = lib.ones(2, requires_grad=True)

    @lib.no_grad()
    def generate():
        yield lib.is_grad_enabled()
        yield (x * 2).requires_grad
        return "done"

    seen = []
    for value in generate():
        seen.append([value, lib.is_grad_enabled()])
    return seen


@snippet
def set_grad_enabled_as_a_decorator_switches_only_inside(lib):
    x = lib.ones(2, requires_grad=True)

    @lib.set_grad_enabled(False)
    def double(t):
        return t * 2

    after_decorating = lib.is_grad_enabled()
    inside = double(x).requires_grad
    return [after_decorating, inside, lib.is_grad_enabled()]


@snippet
def numpy_of_a_tensor_that_requires_grad_inside_no_grad(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        return x.numpy().tolist()


@snippet
def gradcheck_perturbs_the_given_tensors_in_place(lib):
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    seen = set()

    def f(t):
        seen.add(float(a.detach().sum()))  # the closure sees the perturbed values
        return (t * t).sum()

    return [lib.autograd.gradcheck(f, (a,)), len(seen) > 1, a]


@snippet
def gradcheck_with_no_differentiable_output(lib):
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    return lib.autograd.gradcheck(lambda t: (t * 0).detach(), (a,))


@snippet
def reshape_names_its_view_of_a_non_contiguous_tensor(lib):
    x = lib.ones(2, 3, 4, requires_grad=True)
    cases = [x.reshape(6, 4), x.transpose(0, 1).reshape(3, 8), x[:, :, ::2].reshape(2, 3, 2), x[:, 1].reshape(8),
             x[:, 1].reshape(2, 2, 2), x.permute(2, 0, 1).reshape(4, 6), x.transpose(1, 2).reshape(2, 4, 3)]
    sum(c.sum() for c in cases).backward()
    return [*[name(c) for c in cases], x.grad]


@snippet
def backward_twice(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


@snippet
def retain_graph_doubles(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


@snippet
def second_and_third_derivatives(lib):
    x = lib.tensor(0.7, requires_grad=True)
    y = lib.sin(x) * x**3
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    (h,) = lib.autograd.grad(g, x, create_graph=True)
    (k,) = lib.autograd.grad(h, x)
    return [g, h, k, name(g), name(h)]


@snippet
def functional_api(lib):
    f = lambda t: (t.sin() * t).sum()  # noqa: E731
    x = lib.tensor([0.5, -1.0, 2.0])
    F = lib.autograd.functional
    return [
        F.jacobian(lambda t: t.exp() * t, x),
        F.hessian(f, x),
        F.vjp(lambda t: t**2, x, lib.tensor([1.0, 2.0, 3.0])),
        F.jvp(lambda t: t**2, x, lib.tensor([1.0, 2.0, 3.0])),
        F.hvp(f, x, lib.tensor([1.0, 0.0, -1.0])),
    ]


@snippet
def grad_modes(lib):
    x = lib.tensor(2.0, requires_grad=True)
    with lib.no_grad():
        y = x * 2
    z = x.detach() * x
    return [y.requires_grad, y.grad_fn is None, z.requires_grad, name(z), z.grad_fn.next_functions[0][0] is None]


@snippet
def hooks_and_retain_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    return [x.grad, y.grad, y.retains_grad]


@snippet
def custom_function(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

    x = lib.tensor([0.5, 1.0], requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward()
    return [repr(y), x.grad, type(y.grad_fn).__name__]


@snippet
def subgradients_at_kinks(lib):
    z = lib.tensor([0.0, 0.0], requires_grad=True)
    (z.abs().sum() + z.relu().sum()).backward()
    m = lib.tensor([1.0, 3.0, 3.0], requires_grad=True)
    m.max().backward()
    m2 = lib.tensor([[1.0, 3.0, 3.0]], requires_grad=True)
    m2.max(1).values.sum().backward()
    c = lib.tensor([0.0, 1.0, 2.0], requires_grad=True)
    lib.clamp(c, 1, 2).sum().backward()
    p, q = lib.tensor([1.0, 1.0], requires_grad=True), lib.tensor([1.0, 1.0], requires_grad=True)
    lib.maximum(p, q).sum().backward()
    s = lib.tensor([0.0, 2.0, 3.0], requires_grad=True)
    s.prod().backward()
    return [z.grad, m.grad, m2.grad, c.grad, p.grad, q.grad, s.grad]


@snippet
def pow_at_zero(lib):
    z = lib.tensor([0.0, 1.0], requires_grad=True)
    (z**0).sum().backward()
    g1 = z.grad.clone()
    z.grad = None
    (z**0.5).sum().backward()
    e = lib.tensor([0.0, 2.0], requires_grad=True)
    (lib.tensor(0.0) ** e).sum().backward()
    return [g1, z.grad, e.grad]


@snippet
def reductions_along_dims(lib):
    M = lib.tensor(np.linspace(-2, 3, 24).reshape(2, 3, 4), requires_grad=True)
    parts = [
        M.sum(1), M.mean((0, 2)), M.prod(2), M.max(1).values, M.min(0).values, lib.logsumexp(M, 1),
        lib.softmax(M, 2), lib.log_softmax(M, 0), M.sum(1, keepdim=True),
    ]
    total = sum((p * (i + 1)).sum() for i, p in enumerate(parts))
    total.backward()
    return [*parts, M.grad, [name(p) for p in parts]]


@snippet
def small_network(lib):
    rng = np.random.default_rng(3)
    X = lib.tensor(rng.standard_normal((5, 4)))
    W1 = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b1 = lib.tensor(rng.standard_normal(3), requires_grad=True)
    W2 = lib.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    loss = lib.sum(lib.tanh(X @ W1 + b1) @ W2)
    loss.backward()
    return [loss, W1.grad, b1.grad, W2.grad, repr(loss)]


@snippet
def indexing_and_joins(lib):
    M = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    parts = [M[0], M[:, 1], M[1:3, ::2], M[[0, 2, 2]], M[M > 5], M[None, 1], lib.cat([M, M * 2], 1), lib.stack([M, M])]
    sum((p * (i + 1)).sum() for i, p in enumerate(parts)).backward()
    return [*parts, M.grad, [name(p) for p in parts]]


@snippet
def matmul_shapes(lib):
    rng = np.random.default_rng(4)
    A = lib.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    B = lib.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    v = lib.tensor(rng.standard_normal(4), requires_grad=True)
    C = lib.tensor(rng.standard_normal((1, 4, 2)), requires_grad=True)
    parts = [A @ B, A @ v, v @ B, A @ C, v @ v, B.t() @ v]
    sum(p.sum() for p in parts).backward()
    return [*parts, A.grad, B.grad, v.grad, C.grad, [name(p) for p in parts]]


@snippet
def in_place_rules(lib):
    results = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    try:
        x.add_(1)
    except RuntimeError as exc:
        results.append(str(exc))
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    z = a * 2
    zz = z * z
    z.add_(1)
    try:
        zz.sum().backward()
    except RuntimeError as exc:
        results.append(str(exc))
    y = a * 2
    y += 1
    y.mul_(y * 1)
    y.sum().backward()
    results.append(a.grad)
    return results


def _twice_after_setitem(lib):
    y = lib.ones(3, requires_grad=True)
    z = y * 2
    z[0] = 5.0
    total = z.sum()
    total.backward()
    total.backward()


def _legacy(lib):
    class Legacy(lib.autograd.Function):
        def forward(self, t):
            return t * 2

    return Legacy


ERROR_SNIPPETS = {
    "data_set_to_integers": lambda lib: setattr(lib.ones(2, requires_grad=True), "data", lib.tensor([1, 2])),
    "backward_twice_after_indexed_assignment": lambda lib: _twice_after_setitem(lib),
    "jacobian_strict_and_vectorize": lambda lib: lib.autograd.functional.jacobian(
        lambda t: t * 2, lib.ones(2), strict=True, vectorize=True),
    "hessian_strict_and_vectorize": lambda lib: lib.autograd.functional.hessian(
        lambda t: (t * t).sum(), lib.ones(2), strict=True, vectorize=True),
    "legacy_function": lambda lib: _legacy(lib)()(lib.ones(2, requires_grad=True)),
    "gradcheck_numerical_expected_zero": lambda lib: lib.autograd.gradcheck(
        lambda t: (t * 2).detach(), (lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True),)),
    "narrow_past_the_end": lambda lib: lib.narrow(lib.arange(4.0), 0, 3, 2),
    "narrow_start_out_of_range": lambda lib: lib.narrow(lib.arange(4.0), 0, -5, 1),
    "narrow_negative_length": lambda lib: lib.arange(4.0).narrow(0, 0, -1),
    "floor_divide_backward": lambda lib: (lib.ones(2, requires_grad=True) // 2).sum().backward(),
    "number_remainder_backward": lambda lib: (2 % lib.ones(2, requires_grad=True)).sum().backward(),
    "cumsum_dim": lambda lib: lib.ones(2, 3).cumsum(2),
    "broadcast": lambda lib: lib.ones(2, 3) + lib.ones(4),
    "mm": lambda lib: lib.ones(2, 3) @ lib.ones(4, 5),
    "mv": lambda lib: lib.ones(2, 3) @ lib.ones(4),
    "dot": lambda lib: lib.ones(3) @ lib.ones(4),
    "matmul_0d": lambda lib: lib.ones(()) @ lib.ones(4),
    "view": lambda lib: lib.ones(3, 4).t().view(12),
    "reshape": lambda lib: lib.ones(3).reshape(2, 2),
    "index": lambda lib: lib.ones(3)[5],
    "index_2d": lambda lib: lib.ones(3, 4)[1, 7],
    "too_many_indices": lambda lib: lib.ones(3)[0, 0],
    "dim_range": lambda lib: lib.ones(3).sum(3),
    "cat": lambda lib: lib.cat([lib.ones(2, 3), lib.ones(3, 4)]),
    "stack": lambda lib: lib.stack([lib.ones(2, 3), lib.ones(3, 4)]),
    "t_3d": lambda lib: lib.ones(2, 3, 4).t(),
    "max_empty": lambda lib: lib.ones(0).max(),
    "mean_int": lambda lib: lib.tensor([1, 2]).mean(),
    "requires_grad_int": lambda lib: lib.tensor([1, 2], requires_grad=True),
    "ragged": lambda lib: lib.tensor([[1, 2], [3]]),
    "numpy_requires_grad": lambda lib: lib.ones(2, requires_grad=True).numpy(),
    "item": lambda lib: lib.ones(3).item(),
    "retain_constant": lambda lib: lib.ones(2).retain_grad(),
    "non_leaf_requires_grad": lambda lib: (lib.ones(2, requires_grad=True) * 2).requires_grad_(False),
    "no_grad_backward": lambda lib: lib.ones(()).backward(),
    "grad_shape": lambda lib: (lib.ones(3, requires_grad=True) * 2).backward(lib.ones(2)),
    "unused": lambda lib: lib.autograd.grad(lib.ones(2, requires_grad=True).sum(), [lib.ones(1, requires_grad=True)]),
    "set_grad_shape": lambda lib: setattr(lib.ones(3, requires_grad=True), "grad", lib.ones(2)),
}


@pytest.mark.parametrize("key", sorted(SNIPPETS))
def test_snippet_matches_pytorch(key):
    assert_same(outcome(SNIPPETS[key], autodiff), outcome(SNIPPETS[key], torch))


@pytest.mark.parametrize("key", sorted(ERROR_SNIPPETS))
def test_error_text_matches_pytorch(key):
    theirs = outcome(ERROR_SNIPPETS[key], torch)
    assert theirs[0] == "error", "the snippet must fail in PyTorch"
    assert_same(outcome(ERROR_SNIPPETS[key], autodiff), theirs)


REPRS = [
    lambda lib: lib.tensor([1e-10, 1.0]),
    lambda lib: lib.tensor([123456789.0]),
    lambda lib: lib.tensor([0.1, 1234.5]),
    lambda lib: lib.tensor(np.linspace(-5, 5, 37).reshape(37, 1)),
    lambda lib: lib.tensor(np.linspace(0, 1, 3000).reshape(3, 10, 100)),
    lambda lib: lib.arange(10).reshape(2, 5),
    lambda lib: lib.tensor([[1.0, 2.0]], dtype=lib.float32, requires_grad=True) * 3,
    lambda lib: lib.tensor(np.arange(30.0).reshape(2, 3, 5), requires_grad=True).exp(),
    lambda lib: lib.zeros(2, 0, 3),
    lambda lib: lib.tensor([1e20, -1e-20, 0.0]),
]


@pytest.mark.parametrize("index", range(len(REPRS)))
def test_repr_matches_pytorch(index):
    assert normalized(repr(REPRS[index](autodiff))) == normalized(repr(REPRS[index](torch)))


# -- every elementwise op at the edge values ------------------------------------------------------------

EDGE = [0.0, 1.0, -1.0, math.pi, -math.pi, 50.0, -50.0, 1e300, -1e300, math.inf, -math.inf, math.nan]
ELEMENTWISE = ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "abs", "log1p", "expm1",
               "square", "reciprocal", "neg", "sign"]


@pytest.mark.parametrize("op", ELEMENTWISE)
def test_values_and_gradients_at_edge_values_match_pytorch(op):
    def run(lib):
        x = lib.tensor(EDGE, requires_grad=True)
        y = getattr(lib, op)(x)
        y.sum().backward()
        return [y, x.grad]

    assert_same(outcome(run, autodiff), outcome(run, torch))


# -- broadcasting, drawn by Hypothesis ----------------------------------------------------------------------

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a.abs() ** b,
    "maximum": lambda a, b, lib=None: a.maximum(b),
    "where": lambda a, b: (a > b).logical_not() * a + (a > b) * b,
}


@settings(max_examples=60, deadline=None)
@given(
    op=st.sampled_from(sorted(BINARY)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    seed=st.integers(0, 2**31 - 1),
)
def test_broadcasting_values_and_gradients_match_pytorch(op, shapes, seed):
    rng = np.random.default_rng(seed)
    a_values = rng.uniform(0.5, 2.0, shapes.input_shapes[0])
    b_values = rng.uniform(0.5, 2.0, shapes.input_shapes[1])

    def run(lib):
        a = lib.tensor(a_values, requires_grad=True)
        b = lib.tensor(b_values, requires_grad=True)
        out = BINARY[op](a, b)
        (out * out).sum().backward()
        return [out, a.grad, b.grad]

    assert_same(outcome(run, autodiff), outcome(run, torch))

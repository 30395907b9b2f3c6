"""Forward mode (autograd/forward_ad.py) on every sample of the one table (op_samples.py),
against PyTorch: the tangent of a function's result along a random direction of its inputs
(J·t, against torch.autograd.functional.jvp), and forward over reverse (the tangent of a
gradient, H·v, against torch.autograd.functional.hvp). A function added with its samples is
checked here with nothing more to write. Skipped when PyTorch is not installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autodiff
from autodiff.autograd import forward_ad as fw

from .op_samples import function_samples
from .test_torch_samples import CASES, SPACES, _array, _first_tensor, _same, _to_torch

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


def _slots(args) -> list:
    """(position, index in a list or None) of every tensor that requires grad."""
    found = []
    for i, a in enumerate(args):
        if isinstance(a, (autodiff.Tensor, torch.Tensor)) and a.requires_grad:
            found.append((i, None))
        elif isinstance(a, list):
            found.extend((i, j) for j, t in enumerate(a) if isinstance(t, (autodiff.Tensor, torch.Tensor))
                         and t.requires_grad)
    return found


def _put(args, slots, values) -> list:
    args = list(args)
    for (i, j), v in zip(slots, values):
        if j is None:
            args[i] = v
        else:
            args[i] = list(args[i])
            args[i][j] = v
    return args


def _directions(leaves, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, size=tuple(leaf.shape)) for leaf in leaves]


def _case(space, name, index):
    sample = function_samples(name)[index]
    slots = _slots(sample.args)
    if not slots:
        pytest.skip("no tensor to differentiate")
    ours_space, theirs_space = SPACES[space]
    return sample, slots, ours_space[name], getattr(theirs_space, name)


def _theirs(function, sample, slots, kind_args):
    args = _to_torch(sample.args)
    kwargs = {k: _to_torch(v) for k, v in sample.kwargs.items()}
    leaves = [args[i] if j is None else args[i][j] for i, j in slots]

    def f(*values):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _first_tensor(function(*_put(args, slots, values), **kwargs), torch.Tensor)

    return f, [leaf.detach() for leaf in leaves]


def _prepared(space, name, index):
    """The case's sample, slots and our function; PyTorch's function of the slots, its leaves and
    its result; and our values in the slots. Skipped where the result is not floating point."""
    sample, slots, ours, theirs = _case(space, name, index)
    f, leaves = _theirs(theirs, sample, slots, torch.Tensor)
    out = f(*leaves)
    if out is None or not out.is_floating_point():
        pytest.skip("no floating-point result")
    values = [sample.args[i] if j is None else sample.args[i][j] for i, j in slots]
    return sample, slots, ours, f, leaves, out, values


def _ours_at(ours, sample, slots, duals):
    """Our function's first tensor result with `duals` in the slots, its warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _first_tensor(ours(*_put(sample.args, slots, duals), **sample.kwargs), autodiff.Tensor)


@pytest.mark.parametrize("space, name, index", CASES, ids=[f"{n}-{i}" for _, n, i in CASES])
def test_a_function_pushes_a_tangent_as_pytorch(space, name, index):
    sample, slots, ours, f, leaves, out, values = _prepared(space, name, index)
    directions = _directions(leaves, 11 + index)
    _, expected = torch.autograd.functional.jvp(f, tuple(leaves), tuple(torch.tensor(d) for d in directions))
    with fw.dual_level():
        duals = [fw.make_dual(v.detach(), autodiff.tensor(d)) for v, d in zip(values, directions)]
        primal, tangent = fw.unpack_dual(_ours_at(ours, sample, slots, duals))
    _same(_array(primal), _array(out), f"{name} value")
    _same(None if tangent is None else _array(tangent), _array(expected), f"{name} tangent")


@pytest.mark.parametrize("space, name, index", CASES, ids=[f"{n}-{i}" for _, n, i in CASES])
def test_a_gradient_carries_a_tangent_as_pytorch(space, name, index):
    """Forward over reverse: the gradient of <f(x), c>, computed inside a level, has H·v as its tangent."""
    sample, slots, ours, f, leaves, out, values = _prepared(space, name, index)
    rng = np.random.default_rng(5 + index)
    cotangent = rng.uniform(-1, 1, size=tuple(out.shape))
    directions = _directions(leaves, 13 + index)
    _, expected = torch.autograd.functional.hvp(lambda *xs: (f(*xs) * torch.tensor(cotangent)).sum(), tuple(leaves),
                                                tuple(torch.tensor(d) for d in directions))
    with fw.dual_level():
        duals = [fw.make_dual(v.detach().requires_grad_(True), autodiff.tensor(d)) for v, d in zip(values, directions)]
        result = _ours_at(ours, sample, slots, duals)
        if not result.requires_grad:
            pytest.skip("no gradient")
        grads = autodiff.autograd.grad((result * autodiff.tensor(cotangent)).sum(), duals, allow_unused=True)
        tangents = [None if g is None else fw.unpack_dual(g).tangent for g in grads]
    for i, (t, e) in enumerate(zip(tangents, expected)):
        _same(None if t is None else _array(t), _array(e), f"{name} H·v[{i}]")


@pytest.mark.parametrize("space, name, index", CASES, ids=[f"{n}-{i}" for _, n, i in CASES])
def test_a_tangent_is_differentiated_as_pytorch(space, name, index):
    """Reverse over forward: the gradient, with respect to the point, of <J·t, c>."""
    sample, slots, ours, f, leaves, out, values = _prepared(space, name, index)
    rng = np.random.default_rng(17 + index)
    cotangent = rng.uniform(-1, 1, size=tuple(out.shape))
    directions = _directions(leaves, 19 + index)
    points = [leaf.clone().requires_grad_(True) for leaf in leaves]
    _, pushed = torch.autograd.functional.jvp(f, tuple(points), tuple(torch.tensor(d) for d in directions),
                                              create_graph=True)
    along = (pushed * torch.tensor(cotangent)).sum()
    expected = torch.autograd.grad(along, points, allow_unused=True) if along.requires_grad else [None] * len(points)
    ours_points = [v.detach().requires_grad_(True) for v in values]
    with fw.dual_level():
        duals = [fw.make_dual(p, autodiff.tensor(d)) for p, d in zip(ours_points, directions)]
        tangent = fw.unpack_dual(_ours_at(ours, sample, slots, duals)).tangent
    if tangent is None or not tangent.requires_grad:
        assert all(e is None or not e.any() for e in expected), f"{name}: no second derivative, PyTorch has one"
        return
    grads = autodiff.autograd.grad((tangent * autodiff.tensor(cotangent)).sum(), ours_points, allow_unused=True)
    for i, (g, e) in enumerate(zip(grads, expected)):
        _same(None if g is None else _array(g), None if e is None else _array(e), f"{name} d<J·t, c>[{i}]")

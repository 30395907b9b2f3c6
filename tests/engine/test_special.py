"""The elementwise and special functions at their edges, and the special functions' accuracy, against PyTorch.
Skipped when PyTorch is not installed."""

from __future__ import annotations

import numpy as np
import pytest

import autodiff

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

NAN, INF = float("nan"), float("inf")
EDGES = {  # function -> inputs (one list per argument) at its poles, kinks and ties
    "asin": [[1.0, -1.0, 0.0, 1.5]], "acos": [[1.0, -1.0, 0.0]], "acosh": [[0.5, -2.0, 1.0, 2.0]],
    "atanh": [[1.0, -1.0, 0.5]], "sinc": [[0.0, 1.0, -2.5]], "rsqrt": [[0.0, -1.0, 4.0]],
    "round": [[0.5, 1.5, 2.5, -0.5]], "trunc": [[-1.5, 2.0]], "frac": [[-1.5, 2.0]],
    "xlogy": [[0.0, 0.0, 0.0, 1.0, 0.5], [0.0, 1.0, -1.0, 0.0, NAN]],
    "atan2": [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0]], "hypot": [[0.0, 3.0], [0.0, 4.0]],
    "logaddexp": [[INF, -INF, 1.0], [INF, -INF, 1.0]],
    "clamp_min": [[1.0, 2.0, NAN], [1.0, 3.0, 0.0]], "clamp_max": [[1.0, 2.0], [1.0, 1.0]],
    "erfinv": [[1.0, -1.0, 0.0, 1.5]], "lgamma": [[0.0, -1.0, -0.5, INF]], "digamma": [[0.0, -1.0, -0.5, INF]],
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edges_agree_with_pytorch(name, torch_in_float64):
    ours = [autodiff.tensor(v, requires_grad=True) for v in EDGES[name]]
    theirs = [torch.tensor(v, requires_grad=True) for v in EDGES[name]]
    a, t = getattr(autodiff, name)(*ours), getattr(torch, name)(*theirs)
    assert a.grad_fn.name() == t.grad_fn.name()
    np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-12, equal_nan=True)
    for g, h in zip(autodiff.autograd.grad(a.sum(), ours), torch.autograd.grad(t.sum(), theirs)):
        np.testing.assert_allclose(g.numpy(), h.numpy(), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name, low, high", [("erf", -6, 6), ("erfc", -6, 27), ("erfinv", -0.999, 0.999),
                                             ("lgamma", -20, 50), ("digamma", -20, 50)])
def test_special_functions_agree_with_pytorch(name, low, high, torch_in_float64):
    x = np.random.default_rng(0).uniform(low, high, 5000)
    ours = getattr(autodiff, name)(autodiff.tensor(x)).numpy()
    np.testing.assert_allclose(ours, getattr(torch, name)(torch.tensor(x)).numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_polygamma_agrees_with_pytorch(n, torch_in_float64):
    x = np.random.default_rng(n).uniform(-10, 30, 3000)
    ours = autodiff.polygamma(n, autodiff.tensor(x)).numpy()
    np.testing.assert_allclose(ours, torch.polygamma(n, torch.tensor(x)).numpy(), rtol=1e-10)


def test_float32_stays_float32():
    x = autodiff.tensor([0.5, 0.25], dtype=autodiff.float32)
    for name in ("asin", "exp2", "sinc", "erf", "erfinv", "lgamma", "digamma", "deg2rad", "frac"):
        assert getattr(autodiff, name)(x).dtype == autodiff.float32, name
    assert autodiff.xlogy(x, 2.0).dtype == autodiff.xlogy(2.0, x).dtype == autodiff.clamp_min(x, 0.3).dtype \
        == autodiff.atan2(x, x).dtype == autodiff.float32


def test_polygamma_refuses_a_negative_order():
    with pytest.raises(RuntimeError, match="does not support negative n"):
        autodiff.polygamma(-1, autodiff.tensor([1.0]))


@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp"])
def test_a_number_on_either_side_is_a_zero_dimensional_tensor(name):
    # PyTorch raises a TypeError for a number here; autodiff takes it, as it does for maximum
    # (docs/guide.md, "Where autodiff differs")
    function = getattr(autodiff, name)
    x = autodiff.tensor([0.5, -1.5], requires_grad=True)
    assert function(x, 2.0).tolist() == function(x, autodiff.tensor(2.0)).tolist()
    assert function(2.0, x).tolist() == function(autodiff.tensor(2.0), x).tolist()


def test_masked_fill_gives_a_value_that_requires_grad_its_gradient():
    # PyTorch records MaskedFillBackward1; autodiff a where, with the same gradients
    # (docs/guide.md, "Where autodiff differs")
    x = autodiff.tensor([1.0, 2.0, 3.0], requires_grad=True)
    value = autodiff.tensor(5.0, requires_grad=True)
    y = x.masked_fill(autodiff.tensor([True, False, True]), value)
    y.sum().backward()
    assert y.tolist() == [5.0, 2.0, 5.0]
    assert x.grad.tolist() == [0.0, 1.0, 0.0] and value.grad.item() == 2.0


def test_each_piece_of_a_split_has_a_node_of_its_own():
    # PyTorch records one SplitBackward0 with an output per piece (docs/guide.md, "Where autodiff differs")
    x = autodiff.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = autodiff.split(x, 2)
    assert a.grad_fn is not b.grad_fn and a.grad_fn.name() == b.grad_fn.name() == "SplitBackward0"
    (a.sum() * 2 + b.sum() * 3).backward()
    assert x.grad.tolist() == [2.0, 2.0, 3.0, 3.0]


def test_scatter_from_a_larger_src_gives_its_unused_places_a_zero_gradient():
    # PyTorch's backward fails here ("returned an invalid gradient"); autodiff pads the
    # gathered gradient with zeros to src's shape (docs/guide.md, "Where autodiff differs")
    x = autodiff.zeros(3, requires_grad=True)
    src = autodiff.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = autodiff.scatter(x * 1, 0, autodiff.tensor([2, 0]), src)
    y.sum().backward()
    assert y.tolist() == [2.0, 0.0, 1.0]
    assert src.grad.tolist() == [1.0, 1.0, 0.0, 0.0] and x.grad.tolist() == [0.0, 1.0, 0.0]


def test_sort_takes_dim_by_position_with_stable():
    # PyTorch's sort.stable overload wants dim and descending by keyword once stable= is given (a
    # TypeError); autodiff takes them either way (docs/guide.md, "Where autodiff differs")
    x = autodiff.tensor([[2.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    assert autodiff.sort(x, 0, True, stable=True).indices.tolist() == [[0, 0], [2, 1], [1, 2]]
    assert x.argsort(0, stable=True).tolist() == autodiff.argsort(x, dim=0, stable=True).tolist()


def test_a_second_derivative_through_sort_records_a_scatter_add():
    # PyTorch's SortBackward0 scatters into zeros (ScatterBackward0 in a second derivative's graph);
    # autodiff adds into zeros (ScatterAddBackward0): the indices are distinct, the values the same
    # (docs/guide.md, "Where autodiff differs")
    x = autodiff.tensor([3.0, 1.0, 2.0], requires_grad=True)
    (g,) = autodiff.autograd.grad((autodiff.sort(x).values ** 2 * autodiff.tensor([1.0, 2.0, 3.0])).sum(), [x],
                                  create_graph=True)
    assert g.tolist() == [18.0, 2.0, 8.0] and g.grad_fn.name() == "ScatterAddBackward0"


def test_cross_without_dim_warns_in_its_own_words():
    # PyTorch warns once per process, pointing to torch.linalg.cross; autodiff warns as Python's
    # warnings do (once per place by default) and has no linalg.cross to point to
    # (docs/guide.md, "Where autodiff differs")
    x = autodiff.tensor([1.0, 0.0, 0.0])
    with pytest.warns(UserWarning, match=r"Using autodiff\.cross without specifying the dim arg is deprecated\."
                                         r"\nPlease pass the dim explicitly\.") as caught:
        autodiff.cross(x, x)
    assert "torch.linalg.cross" not in str(caught[0].message)

"""Operations: PyTorch's grad_fn names, subgradients at kinks, edge values and error texts."""

import math

import numpy as np
import pytest

import autodiff as torch

x = None  # each test builds its own tensors


def leaf(values):
    return torch.tensor(values, requires_grad=True)


NAMES = [
    ("x + y", lambda x, y, M, B, s: x + y, "AddBackward0"),
    ("x + 2", lambda x, y, M, B, s: x + 2, "AddBackward0"),
    ("2 + x", lambda x, y, M, B, s: 2 + x, "AddBackward0"),
    ("x - y", lambda x, y, M, B, s: x - y, "SubBackward0"),
    ("10 - x", lambda x, y, M, B, s: 10 - x, "RsubBackward1"),
    ("x * y", lambda x, y, M, B, s: x * y, "MulBackward0"),
    ("x / y", lambda x, y, M, B, s: x / y, "DivBackward0"),
    ("2 / x", lambda x, y, M, B, s: 2 / x, "MulBackward0"),
    ("x ** 2", lambda x, y, M, B, s: x**2, "PowBackward0"),
    ("x ** y", lambda x, y, M, B, s: x**y, "PowBackward1"),
    ("2 ** x", lambda x, y, M, B, s: 2**x, "PowBackward2"),
    ("x ** s", lambda x, y, M, B, s: x**s, "PowBackward1"),
    ("-x", lambda x, y, M, B, s: -x, "NegBackward0"),
    ("exp", lambda x, y, M, B, s: torch.exp(x), "ExpBackward0"),
    ("log", lambda x, y, M, B, s: torch.log(x), "LogBackward0"),
    ("sqrt", lambda x, y, M, B, s: torch.sqrt(x), "SqrtBackward0"),
    ("sin", lambda x, y, M, B, s: torch.sin(x), "SinBackward0"),
    ("cos", lambda x, y, M, B, s: torch.cos(x), "CosBackward0"),
    ("tan", lambda x, y, M, B, s: torch.tan(x), "TanBackward0"),
    ("tanh", lambda x, y, M, B, s: torch.tanh(x), "TanhBackward0"),
    ("sigmoid", lambda x, y, M, B, s: torch.sigmoid(x), "SigmoidBackward0"),
    ("relu", lambda x, y, M, B, s: torch.relu(x), "ReluBackward0"),
    ("abs", lambda x, y, M, B, s: torch.abs(x), "AbsBackward0"),
    ("log1p", lambda x, y, M, B, s: torch.log1p(x), "Log1PBackward0"),
    ("expm1", lambda x, y, M, B, s: torch.expm1(x), "Expm1Backward0"),
    ("square", lambda x, y, M, B, s: torch.square(x), "PowBackward0"),
    ("sum()", lambda x, y, M, B, s: x.sum(), "SumBackward0"),
    ("sum(0)", lambda x, y, M, B, s: M.sum(0), "SumBackward1"),
    ("mean()", lambda x, y, M, B, s: x.mean(), "MeanBackward0"),
    ("mean(1)", lambda x, y, M, B, s: M.mean(1), "MeanBackward1"),
    ("max()", lambda x, y, M, B, s: x.max(), "MaxBackward1"),
    ("max(0)", lambda x, y, M, B, s: M.max(0).values, "MaxBackward0"),
    ("min()", lambda x, y, M, B, s: x.min(), "MinBackward1"),
    ("min(1)", lambda x, y, M, B, s: M.min(1).values, "MinBackward0"),
    ("prod()", lambda x, y, M, B, s: x.prod(), "ProdBackward0"),
    ("prod(0)", lambda x, y, M, B, s: M.prod(0), "ProdBackward1"),
    ("softmax", lambda x, y, M, B, s: torch.softmax(x, 0), "SoftmaxBackward0"),
    ("log_softmax", lambda x, y, M, B, s: torch.log_softmax(x, 0), "LogSoftmaxBackward0"),
    ("logsumexp", lambda x, y, M, B, s: torch.logsumexp(x, 0), "LogsumexpBackward0"),
    ("M @ M", lambda x, y, M, B, s: M @ M, "MmBackward0"),
    ("x @ y", lambda x, y, M, B, s: x @ y, "DotBackward0"),
    ("M @ x", lambda x, y, M, B, s: M @ x, "MvBackward0"),
    ("B @ B", lambda x, y, M, B, s: B @ B, "UnsafeViewBackward0"),
    ("B @ M", lambda x, y, M, B, s: B @ M, "UnsafeViewBackward0"),
    ("mm", lambda x, y, M, B, s: torch.mm(M, M), "MmBackward0"),
    ("t()", lambda x, y, M, B, s: M.t(), "TBackward0"),
    ("T", lambda x, y, M, B, s: M.T, "PermuteBackward0"),
    ("transpose", lambda x, y, M, B, s: M.transpose(0, 1), "TransposeBackward0"),
    ("reshape", lambda x, y, M, B, s: M.reshape(9), "ViewBackward0"),
    ("view", lambda x, y, M, B, s: M.view(9), "ViewBackward0"),
    ("reshape of t()", lambda x, y, M, B, s: M.t().reshape(9), "UnsafeViewBackward0"),
    ("x[0]", lambda x, y, M, B, s: x[0], "SelectBackward0"),
    ("x[0:2]", lambda x, y, M, B, s: x[0:2], "SliceBackward0"),
    ("M[:, 1]", lambda x, y, M, B, s: M[:, 1], "SelectBackward0"),
    ("M[0:2, 1]", lambda x, y, M, B, s: M[0:2, 1], "SelectBackward0"),
    ("x[[0, 2]]", lambda x, y, M, B, s: x[[0, 2]], "IndexBackward0"),
    ("x[x > 1]", lambda x, y, M, B, s: x[x > 1], "IndexBackward0"),
    ("M[None]", lambda x, y, M, B, s: M[None], "UnsqueezeBackward0"),
    ("M[..., 0]", lambda x, y, M, B, s: M[..., 0], "SelectBackward0"),
    ("M[:]", lambda x, y, M, B, s: M[:], "SliceBackward0"),
    ("cat", lambda x, y, M, B, s: torch.cat([x, y]), "CatBackward0"),
    ("stack", lambda x, y, M, B, s: torch.stack([x, y]), "StackBackward0"),
    ("where", lambda x, y, M, B, s: torch.where(x > 1, x, y), "WhereBackward0"),
    ("clamp", lambda x, y, M, B, s: torch.clamp(x, 0, 2), "ClampBackward1"),
    ("maximum", lambda x, y, M, B, s: torch.maximum(x, y), "MaximumBackward0"),
    ("minimum", lambda x, y, M, B, s: torch.minimum(x, y), "MinimumBackward0"),
    ("max(a, b)", lambda x, y, M, B, s: torch.max(x, y), "MaximumBackward0"),
    ("expand", lambda x, y, M, B, s: x.expand(2, 3), "ExpandBackward0"),
    ("unsqueeze", lambda x, y, M, B, s: x.unsqueeze(0), "UnsqueezeBackward0"),
    ("squeeze(0)", lambda x, y, M, B, s: x.reshape(1, 3).squeeze(0), "SqueezeBackward1"),
    ("flatten", lambda x, y, M, B, s: B.flatten(), "ViewBackward0"),
    ("permute", lambda x, y, M, B, s: B.permute(2, 0, 1), "PermuteBackward0"),
    ("to float32", lambda x, y, M, B, s: x.to(torch.float32), "ToCopyBackward0"),
    ("clone", lambda x, y, M, B, s: x.clone(), "CloneBackward0"),
    ("reciprocal", lambda x, y, M, B, s: x.reciprocal(), "ReciprocalBackward0"),
    ("sign", lambda x, y, M, B, s: x.sign(), "SignBackward0"),
]


@pytest.mark.parametrize("label,build,expected", NAMES, ids=[n[0] for n in NAMES])
def test_grad_fn_names_are_pytorchs(label, build, expected):
    x = leaf([1.0, 2.0, 3.0])
    y = leaf([4.0, 5.0, 6.0])
    M = leaf(np.arange(9.0).reshape(3, 3) / 10)
    B = leaf(np.arange(18.0).reshape(2, 3, 3) / 10)
    s = leaf(2.0)
    assert build(x, y, M, B, s).grad_fn.name() == expected


def test_unary_plus_is_the_same_tensor():
    x = leaf([1.0])
    assert (+x) is x


# -- kinks ---------------------------------------------------------------------------------------------------


def test_abs_and_relu_have_gradient_zero_at_zero():
    z = leaf([0.0, 0.0])
    (z.abs().sum() + z.relu().sum()).backward()
    assert z.grad.tolist() == [0.0, 0.0]


def test_full_max_shares_the_gradient_between_ties():
    m = leaf([1.0, 3.0, 3.0])
    m.max().backward()
    assert m.grad.tolist() == [0.0, 0.5, 0.5]


def test_max_along_a_dim_gives_the_gradient_to_the_returned_index():
    m = leaf([[1.0, 3.0, 3.0]])
    values, indices = m.max(1)
    assert indices.tolist() == [1]
    values.sum().backward()
    assert m.grad.tolist() == [[0.0, 1.0, 0.0]]


def test_maximum_and_minimum_split_ties():
    p, q = leaf([1.0, 2.0]), leaf([1.0, 1.0])
    (torch.maximum(p, q).sum() + torch.minimum(p, q).sum()).backward()
    assert p.grad.tolist() == [1.0, 1.0] and q.grad.tolist() == [1.0, 1.0]
    p, q = leaf([1.0]), leaf([1.0])
    torch.maximum(p, q).backward()
    assert (p.grad.item(), q.grad.item()) == (0.5, 0.5)


def test_clamp_passes_the_gradient_at_its_bounds():
    c = leaf([0.0, 1.0, 2.0, 3.0])
    torch.clamp(c, 1, 2).sum().backward()
    assert c.grad.tolist() == [0.0, 1.0, 1.0, 0.0]


def test_pow_gradients_at_zero_base_and_zero_exponent():
    z = leaf([0.0, 1.0])
    (z**0).sum().backward()
    assert z.grad.tolist() == [0.0, 0.0]
    e = leaf([0.0, 2.0])
    (torch.tensor(0.0) ** e).sum().backward()
    assert e.grad.tolist() == [0.0, 0.0]
    base, exponent = leaf([0.0, 0.0]), leaf([0.0, 2.0])
    (base**exponent).sum().backward()
    assert base.grad.tolist() == [0.0, 0.0] and exponent.grad.tolist() == [0.0, 0.0]
    e = leaf([0.0, 2.0])
    (0**e).sum().backward()
    assert e.grad.tolist() == [0.0, 0.0]


def test_pow_half_at_zero_is_infinite_as_in_real_analysis():
    z = leaf([0.0, 1.0])
    (z**0.5).sum().backward()
    assert z.grad.tolist() == [math.inf, 0.5]


def test_prod_with_zeros():
    s = leaf([0.0, 2.0, 3.0])
    s.prod().backward()
    assert s.grad.tolist() == [6.0, 0.0, 0.0]
    s = leaf([0.0, 2.0, 0.0])
    s.prod().backward()
    assert s.grad.tolist() == [0.0, 0.0, 0.0]


# -- edge values ----------------------------------------------------------------------------------------------

EDGE = [0.0, 1.0, -1.0, math.pi, -math.pi, 1e300, -1e300, math.inf, -math.inf, math.nan]
NUMPY_REFERENCE = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "tanh": np.tanh, "abs": np.abs, "log1p": np.log1p, "expm1": np.expm1,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "relu": lambda v: np.maximum(v, 0),
}


@pytest.mark.parametrize("name", sorted(NUMPY_REFERENCE))
def test_edge_values_follow_numpy_and_raise_no_warnings(name, recwarn):
    with np.errstate(all="ignore"):
        expected = NUMPY_REFERENCE[name](np.array(EDGE))
    got = getattr(torch, name)(torch.tensor(EDGE)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-15)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_log_of_a_negative_number_is_nan_silently(recwarn):
    x = leaf(-1.0)
    y = torch.log(x)
    assert math.isnan(y.item())
    y.backward()
    assert x.grad.item() == -1.0
    assert not recwarn.list


# -- errors ------------------------------------------------------------------------------------------------------

ERRORS = [
    (lambda: torch.ones(2, 3) + torch.ones(4), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    (lambda: torch.ones(3) * torch.ones(4), RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
    (lambda: torch.ones(2, 3) @ torch.ones(4, 5), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda: torch.ones(2, 3) @ torch.ones(4), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda: torch.ones(3) @ torch.ones(4), RuntimeError,
     "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively"),
    (lambda: torch.ones(()) @ torch.ones(4), RuntimeError,
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (lambda: torch.ones(3, 4).t().view(12), RuntimeError,
     "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."),
    (lambda: torch.ones(3).reshape(2, 2), RuntimeError, "shape '[2, 2]' is invalid for input of size 3"),
    (lambda: torch.ones(3)[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: torch.ones(3, 4)[1, 7], IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
    (lambda: torch.ones(3)[0, 0], IndexError, "too many indices for tensor of dimension 1"),
    (lambda: torch.ones(3).sum(3), IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 3)"),
    (lambda: torch.ones(2, 3).transpose(0, 2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: torch.cat([torch.ones(2, 3), torch.ones(3, 4)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number 1 in the list."),
    (lambda: torch.stack([torch.ones(2, 3), torch.ones(3, 4)]), RuntimeError,
     "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 4] at entry 1"),
    (lambda: torch.ones(2, 3, 4).t(), RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: torch.ones(0).max(), RuntimeError,
     "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."),
    (lambda: torch.clamp(torch.ones(2)), RuntimeError, "autodiff.clamp: At least one of 'min' or 'max' must not be None"),
    (lambda: torch.tensor([1, 2]).mean(), RuntimeError,
     "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"),
    (lambda: torch.where(torch.tensor([True]), torch.ones(2), torch.ones(3)), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
]


@pytest.mark.parametrize("build,error,message", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_error_texts(build, error, message):
    with pytest.raises(error) as info:
        build()
    assert str(info.value) == message


def test_shape_errors_carry_both_shapes():
    with pytest.raises(torch.ShapeError) as info:
        torch.ones(2, 3) + torch.ones(4)
    assert info.value.shapes == ((2, 3), (4,))


# -- indexing and joins ----------------------------------------------------------------------------------------


def test_indexing_gradients():
    M = leaf(np.arange(12.0).reshape(3, 4))
    (M[0, 1] + M[:, 2].sum() * 2 + M[[0, 0, 2], 3].sum() * 10 + M[M > 10].sum() * 100).backward()
    expected = np.zeros((3, 4))
    expected[0, 1] += 1
    expected[:, 2] += 2
    expected[0, 3] += 20
    expected[2, 3] += 10 + 100
    np.testing.assert_array_equal(M.grad.numpy(), expected)


def test_setitem_records_copy_slices_on_a_non_leaf():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf(10.0)
    y = x * 1
    y[1] = v * 2
    assert y.tolist() == [1.0, 20.0, 3.0] and type(y.grad_fn).__name__ == "CopySlices"
    assert y.grad_fn.name() == "torch::autograd::CopySlices"  # PyTorch's name(), as its C++ spells it
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0] and v.grad.item() == 2.0


def test_cat_and_stack_gradients():
    a, b = leaf([1.0, 2.0]), leaf([3.0])
    (torch.cat([a, b]) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0] and b.grad.tolist() == [3.0]
    p, q = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (torch.stack([p, q], 1) * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert p.grad.tolist() == [1.0, 3.0] and q.grad.tolist() == [2.0, 4.0]


def test_batched_matmul_gradients_match_a_loop():
    rng = np.random.default_rng(0)
    A = leaf(rng.standard_normal((2, 3, 4)))
    B = leaf(rng.standard_normal((4, 5)))
    (A @ B).sum().backward()
    ga = np.ones((2, 3, 5)) @ B.detach().numpy().T
    gb = sum(A.detach().numpy()[i].T @ np.ones((3, 5)) for i in range(2))
    np.testing.assert_allclose(A.grad.numpy(), ga)
    np.testing.assert_allclose(B.grad.numpy(), gb)
    v = leaf(rng.standard_normal(4))
    (v @ B).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), B.detach().numpy().sum(1))


def test_max_and_min_return_values_and_indices():
    result = torch.tensor([[1.0, 5.0], [3.0, 2.0]]).max(0)
    assert result.values.tolist() == [3.0, 5.0] and result.indices.tolist() == [1, 0]
    values, indices = torch.tensor([[1.0, 5.0], [3.0, 2.0]]).min(dim=1, keepdim=True)
    assert values.tolist() == [[1.0], [2.0]] and indices.tolist() == [[0], [1]]


def test_lists_and_numbers_as_operands():
    x = leaf([1.0, 2.0])
    y = x + [3.0, 4.0]
    z = [10.0, 20.0] * x
    (y.sum() + z.sum() + (2 - x).sum()).backward()
    assert y.tolist() == [4.0, 6.0] and z.tolist() == [10.0, 40.0]
    assert x.grad.tolist() == [10.0, 20.0]
    assert y.grad_fn.next_functions[1] == (None, 0)


def test_negating_a_bool_tensor_is_refused_as_in_pytorch():
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
        -torch.tensor([True])

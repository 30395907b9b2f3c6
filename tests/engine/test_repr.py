"""print(t) looks like PyTorch's (with float64 as the default dtype, as autodiff has)."""

import math

import numpy as np
import pytest

import autodiff as torch

CASES = [
    (lambda: torch.tensor(17.512925464970227, requires_grad=True) * 1, "tensor(17.5129, grad_fn=<MulBackward0>)"),
    (lambda: torch.tensor(2.5, requires_grad=True), "tensor(2.5000, requires_grad=True)"),
    (lambda: torch.tensor(17.512925464970227), "tensor(17.5129)"),
    (lambda: torch.tensor([1.5, 2.0]), "tensor([1.5000, 2.0000])"),
    (lambda: torch.tensor(3), "tensor(3)"),
    (lambda: torch.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([1e-5, 1e5]), "tensor([1.0000e-05, 1.0000e+05])"),
    (lambda: torch.tensor([1.0, math.nan, math.inf]), "tensor([1., nan, inf])"),
    (lambda: torch.tensor(math.nan), "tensor(nan)"),
    (lambda: torch.tensor([math.inf, -1.0]), "tensor([inf, -1.])"),
    (lambda: torch.tensor([[1, 2], [3, 40000]]), "tensor([[    1,     2],\n        [    3, 40000]])"),
    (lambda: torch.tensor([0.001, 100.0]), "tensor([1.0000e-03, 1.0000e+02])"),
    (lambda: torch.tensor([123.456, 7.0]), "tensor([123.4560,   7.0000])"),
    (lambda: torch.tensor([-1.5, 2.25]), "tensor([-1.5000,  2.2500])"),
    (lambda: torch.tensor([-0.0]), "tensor([-0.])"),
    (lambda: torch.zeros(2, 3, dtype=torch.float32), "tensor([[0., 0., 0.],\n        [0., 0., 0.]], dtype=autodiff.float32)"),
    (lambda: torch.tensor([1.0, 2.0], dtype=torch.float32, requires_grad=True) * 2,
     "tensor([2., 4.], dtype=autodiff.float32, grad_fn=<MulBackward0>)"),
    (lambda: torch.zeros(0), "tensor([])"),
    (lambda: torch.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: torch.tensor([[True, False]]), "tensor([[ True, False]])"),
    (lambda: torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).t(),
     "tensor([[1., 3.],\n        [2., 4.]], grad_fn=<TBackward0>)"),
]


@pytest.mark.parametrize("build,expected", CASES, ids=[c[1][:30] for c in CASES])
def test_repr_matches_pytorch(build, expected):
    assert repr(build()) == expected
    assert str(build()) == expected


def test_large_tensors_are_summarised():
    expected = (
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
        "         9.9900e+02],\n"
        "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
        "         1.9990e+03]])"
    )
    assert repr(torch.arange(2000.0).reshape(2, 1000)) == expected


def test_long_rows_wrap_at_80_columns():
    text = repr(torch.tensor(np.linspace(0, 1, 20)))
    assert all(len(line) <= 80 for line in text.splitlines())
    assert text.count("\n") == 2


def test_format_of_a_scalar_tensor():
    assert f"{torch.tensor(2.5):.2f}" == "2.50"


def test_grad_fn_repr():
    y = torch.tensor(1.0, requires_grad=True) * 2
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")
    assert repr(y.grad_fn.next_functions[0][0]).startswith("<AccumulateGrad object at 0x")

"""A function of real numbers computes bools and integers in the default float dtype, as
PyTorch does (NumPy would compute a bool in float16: cos(True) 0.54052734375). Found by the
language's fuzz tests against Python: `cos(a >= a)` is cos(1.0)."""

import pytest

import autodiff
from autodiff.ops.registry import REGISTRY

FLOATING = sorted(name for name, op in REGISTRY.items() if op.floats)


@pytest.mark.torch
@pytest.mark.parametrize("name", FLOATING)
@pytest.mark.parametrize("values, dtype", [([True, False], "bool"), ([1, 2], "int64"), ([3, 1], "int32")])
def test_bools_and_integers_compute_in_the_default_float_dtype(name, values, dtype):
    torch = pytest.importorskip("torch")
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # autodiff's default
    try:
        want = getattr(torch, name)(torch.tensor(values, dtype=getattr(torch, dtype)))
    finally:
        torch.set_default_dtype(previous)
    got = getattr(autodiff, name)(autodiff.tensor(values, dtype=getattr(autodiff, dtype)))
    assert got.dtype == autodiff.float64
    assert got.tolist() == pytest.approx(want.tolist(), rel=1e-12, nan_ok=True)


def test_every_real_function_is_marked():
    assert {"exp", "log", "cos", "sigmoid", "sqrt", "erf", "lgamma", "reciprocal"} <= set(FLOATING)
    assert "abs" not in FLOATING and "floor" not in FLOATING  # integers stay integers there


DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
SHAPES = [((), ()), ((3,), (3,)), ((), (3,)), ((3,), ())]


@pytest.mark.torch
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{len(s[0])}d-{len(s[1])}d")
@pytest.mark.parametrize("first", DTYPES)
def test_two_tensors_of_different_dtypes_compute_in_pytorch_s_dtype(first, shapes):
    """PyTorch's promotion, not NumPy's: int64 with float32 is float32, and a 0-d tensor yields to
    dimensioned ones of its kind (a 0-d float64 times float32 values is float32)."""
    torch = pytest.importorskip("torch")
    import numpy as np

    for second in DTYPES:
        a = np.array([3, 1, 2], dtype=first)[: 3 if shapes[0] else 1].reshape(shapes[0] or ())
        b = np.array([2, 1, 1], dtype=second)[: 3 if shapes[1] else 1].reshape(shapes[1] or ())
        for name in ("add", "mul"):
            if name == "add" and first == second == "bool":
                continue
            want = getattr(torch, name)(torch.from_numpy(np.array(a)), torch.from_numpy(np.array(b)))
            got = getattr(autodiff, name)(autodiff.tensor(a), autodiff.tensor(b))
            assert got.dtype.name == str(want.dtype).replace("torch.", ""), (name, first, second, shapes)
            assert got.tolist() == want.tolist()


@pytest.mark.torch
def test_each_input_gets_its_gradient_in_its_own_dtype():
    torch = pytest.importorskip("torch")
    x = autodiff.tensor(2.0, dtype=autodiff.float64, requires_grad=True)
    w = autodiff.tensor([1.0, 2.0], dtype=autodiff.float32, requires_grad=True)
    y = (x * w).sum()
    y.backward()
    tx = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    tw = torch.tensor([1.0, 2.0], dtype=torch.float32, requires_grad=True)
    (tx * tw).sum().backward()
    assert (y.dtype, x.grad.dtype, w.grad.dtype) == (autodiff.float32, autodiff.float64, autodiff.float32)
    assert x.grad.item() == tx.grad.item() and w.grad.tolist() == tw.grad.tolist()

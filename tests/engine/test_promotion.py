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

"""An op's `scalar=` forward (registry.defop) is the op's own forward on 0-d float64 values,
called without the array module on the engine's 0-d float64 path: it must give the very same
value, bit for bit, of the same type, for every float64 (infinities, nan and -0.0 too)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from autodiff.ops.registry import REGISTRY, defop

SCALAR_OPS = sorted(name for name, op in REGISTRY.items() if op.scalar is not None)
VALUES = [np.float64(v) for v in (0.0, -0.0, 1.0, -2.5, 1e-300, 3e300, -7.25e-5, math.pi, 40.0, math.inf,
                                  -math.inf, math.nan)]


def same(a, b) -> bool:
    return type(a) is type(b) and (a == b and math.copysign(1, a) == math.copysign(1, b) or (a != a and b != b))


def test_the_hot_scalar_ops_declare_one():
    assert {"add", "sub", "mul", "tanh"} <= set(SCALAR_OPS)


@pytest.mark.parametrize("name", SCALAR_OPS)
def test_a_scalar_forward_gives_the_forward_s_values(name):
    op = REGISTRY[name]
    with np.errstate(all="ignore"):
        for args in itertools.product(VALUES, repeat=len(op.arg_names)):
            assert same(op.scalar(*args), op.forward(np, *args)), (name, args)


def test_an_op_that_makes_nan_of_finite_values_may_not_declare_one():
    with pytest.raises(TypeError, match="scalar forward"):
        defop("scalar_forward_with_a_domain", lambda xp, input: xp.log(input), domain=True, scalar=np.log,
              input=lambda grad, input: grad / input)

"""Expressions (symbolic/expr.py, build.py) keep what they stand for: whether they depend on a
symbol, their shape, and the parameters of the ops they call."""

from __future__ import annotations

import numpy as np

from autodiff.symbolic import expr as E
from autodiff.symbolic.build import Slice, build
from autodiff.symbolic.printing import to_text


def test_a_call_on_a_list_of_symbols_depends_on_them():
    """cat([x, x]) is symbolic: an op on it is not folded into the constant of its value."""
    x = E.symbol("x", (2,))
    joined = build("cat", [(x, x), 0], (4,))
    assert joined.symbolic
    assert build("flip", [joined, (0,)], (4,)).symbolic


def test_a_product_has_the_shape_of_its_exponents():
    """2 * 3 ** x for a vector x is a vector: the product node itself, not a number expanded."""
    x = E.symbol("x", (2,))
    product = E.mul(E.const(2.0), E.power(E.const(3.0), x))
    assert product.op == "mul" and product.shape == (2,)


def test_an_index_key_is_a_parameter():
    """x[[0, 2, 2]] and x[1:3]: arrays and slices in a key (slices are not hashable before 3.12)."""
    x = E.symbol("x", (4, 3))
    rows = build("index", [x, (np.array([0, 2, 2]),)], (3, 3))
    assert to_text(rows) == "index(x, ([0, 2, 2],))"
    assert build("index", [x, (np.array([0, 2, 2]),)], (3, 3)) is rows  # one node per structure
    part = build("zero_region", [x, (slice(1, 3),)], (4, 3))
    assert to_text(part) == "zero_region(x, (1:3,))" and part.args[1][0].as_slice() == slice(1, 3)
    assert Slice(1, 3, None) == Slice(1, 3, None) and hash(Slice(1, 3, None)) == hash(Slice(1, 3, None))

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
    assert to_text(rows) == "x[[0, 2, 2]]"
    assert build("index", [x, (np.array([0, 2, 2]),)], (3, 3)) is rows  # one node per structure
    part = build("index", [x, (slice(1, 3), np.array([0, 2]))], (2, 2))
    assert to_text(part) == "x[1:3, [0, 2]]" and part.args[1][0].as_slice() == slice(1, 3)
    assert Slice(1, 3, None) == Slice(1, 3, None) and hash(Slice(1, 3, None)) == hash(Slice(1, 3, None))


def _pool(shape: tuple) -> list:
    """Nodes of every kind a sum or a product meets: symbols, numbers, calls, powers, short
    and long products and sums (longer than expr.FLATTEN), with coefficients of each sign."""
    x, y, z = (E.symbol(n, shape) for n in "xyz")
    t = E.call("tanh", (x,), shape)
    long_product = E.mul(*(E.symbol(f"p{i}", shape) for i in range(E.FLATTEN + 2)))
    long_sum = E.add(*(E.symbol(f"s{i}", shape) for i in range(E.FLATTEN + 2)))
    return [x, y, t, E.const(2.0, shape), E.const(0.0, shape), E.power(x, 2.0), E.power(t, z), E.mul(x, y),
            E.mul(E.const(-3.0), x, t), E.neg(x), E.neg(E.power(y, 3.0)), E.add(x, y), E.add(E.const(1.0), x),
            E.add(E.mul(E.const(2.0), x), E.neg(t)), long_product, long_sum, E.mul(x, long_sum)]


def test_the_fast_paths_of_sums_and_products_build_what_the_general_path_builds():
    """add(a, b), mul(a, b) and neg(a) take shortcuts for the commonest pairs of a derivative;
    with a third, neutral part the general path runs: the two must give the very same node."""
    for shape in ((), (2,)):
        pool = _pool(shape)
        zero, one = E.const(0.0), E.const(1.0)
        for a in pool:
            negated = E.neg(a)
            assert negated is E.mul(E.const(-1.0), a, one), to_text(a)
            assert negated.symbolic == bool(E.symbols_of(negated))
            for b in pool:
                for made, general in ((E.add(a, b), E.add(a, b, zero)), (E.mul(a, b), E.mul(a, b, one))):
                    assert made is general, (to_text(a), to_text(b))
                    assert made.symbolic == bool(E.symbols_of(made)) and made.shape == shape

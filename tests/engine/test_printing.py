"""The printers say what an expression means: random expressions, written in the expression
language and in NumPy, read back (by the language, by NumPy) give what the expression is worth
by a numeric interpreter of its own (tests/engine/test_formulas.py). Powers of powers with
symbolic exponents, negative numbers in products, sums and products kept whole, comparisons
inside comparisons: each once printed ambiguously passes every other test."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from autodiff.language import Source, evaluate, parse
from autodiff.symbolic import expr as E
from autodiff.symbolic.build import build
from autodiff.symbolic.printing import LatexPrinter, NumpyPrinter, Printer

from .test_formulas import evaluate as interpret

VALUES = {"x": 0.7, "y": 1.3, "z": -0.4}


def _random_expression(rng: random.Random, depth: int) -> E.Expr:
    """A random scalar expression over x, y, z whose value is finite at VALUES."""
    if depth == 0 or rng.random() < 0.15:
        return E.symbol(rng.choice("xyz")) if rng.random() < 0.8 else E.const(rng.choice((2.0, -3.0, 0.5, -1.0)))
    a = _random_expression(rng, depth - 1)
    kind = rng.randrange(12)
    if kind == 0:
        return a + _random_expression(rng, depth - 1)
    if kind == 1:
        return a - _random_expression(rng, depth - 1) * rng.choice((1.0, -2.0, 0.5))
    if kind == 2:
        return a * _random_expression(rng, depth - 1)
    if kind == 3:
        return a / (_random_expression(rng, depth - 1) ** 2 + 1.0)
    if kind == 4:  # a power whose exponent is an expression, its base kept positive
        return E.power(a * a + 0.5, build("tanh", [_random_expression(rng, depth - 1)], ()))
    if kind == 5:  # a power of a power
        inner = E.power(a * a + 0.5, rng.choice((1.5, -0.5, 3.0)))
        return E.power(inner, rng.choice((2.0, -1.0)) if rng.random() < 0.5 else build("sin", [a], ()))
    if kind == 6:
        return -a
    if kind == 7:  # more factors than a product flattens: a product kept whole, with its own number
        factors = [build("exp", [E.symbol(n)], ()) for n in "xyz"] + [a, a + 1.0]
        return E.mul(E.const(rng.choice((-2.0, 3.0))), *factors) * rng.choice((2.0, -0.5))
    if kind == 8:  # more terms than a sum flattens
        return E.add(*[a * k for k in (1.0, -2.0)] + [E.symbol(n) for n in "xyz"] + [E.const(1.5)]) * 2.0
    if kind == 9:
        return build(rng.choice(("sin", "cos", "tanh", "exp")), [a], ())
    if kind == 10:  # a comparison used as a number, inside a where
        condition = build(rng.choice(("gt", "le", "eq")), [a, _random_expression(rng, depth - 1)], ())
        return build("where", [condition, a, _random_expression(rng, depth - 1)], ())
    return build("log", [a * a + 1.0], ())


def _language_value(text: str) -> float:
    program = f"v = {text}\n"
    source = Source(program, "<printed>")
    value = evaluate(parse(source), source, at={n: v for n, v in VALUES.items() if n in text}).variables["v"]
    return float(value.detach().numpy() if hasattr(value, "detach") else value)


def _numpy_value(text: str) -> float:
    return float(eval(text, {"np": np}, dict(VALUES)))  # noqa: S307 - our own printer's output


@pytest.mark.parametrize("seed", range(60))
def test_a_printed_expression_reads_back_as_itself(seed):
    rng = random.Random(seed)
    for _ in range(5):
        e = _random_expression(rng, 4)
        want = float(interpret(e, {n: np.asarray(v) for n, v in VALUES.items()}))
        if not math.isfinite(want):
            continue
        text = Printer().text(e)
        assert math.isclose(_language_value(text), want, rel_tol=1e-9, abs_tol=1e-12), text
        code = NumpyPrinter().text(e)
        assert math.isclose(_numpy_value(code), want, rel_tol=1e-9, abs_tol=1e-12), code
        assert LatexPrinter().text(e)


def test_a_power_of_a_power_with_a_symbolic_exponent_keeps_its_parentheses():
    x, y = E.symbol("x"), E.symbol("y")
    assert Printer().text(build("sin", [E.power(E.power(x, y), 2.0)], ())) == "sin((x ** y) ** 2)"
    assert Printer().text(E.power(x, E.power(y, 2.0))) == "x ** y ** 2"


def test_a_comparison_inside_a_comparison_keeps_its_parentheses():
    x, y = E.symbol("x"), E.symbol("y")
    inner = build("lt", [x, y], ())
    assert Printer().text(build("eq", [inner, E.const(1.0)], ())) == "(x < y) == 1"

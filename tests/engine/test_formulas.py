"""Every op's local derivative, as `explain` writes it, is traced from the op's own `defop`
formula (symbolic/formulas.py), and that formula, evaluated, is the engine's backward.

The test walks the registry: each op with derivatives has samples (op_samples.py), and at
each sample each differentiable input has a formula. Evaluated here by a small numeric
interpreter of expressions (independent of the tracing), at the sample's values and a random
gradient g, it equals the engine's vector-Jacobian product; so does g times its elementwise
factor, where the formula is written as one.
"""

from __future__ import annotations

import numpy as np
import pytest

import autodiff
from autodiff import autograd
from autodiff.ops.registry import NONDIFF, REGISTRY
from autodiff.symbolic import expr as E
from autodiff.symbolic.build import Slice
from autodiff.symbolic.formulas import SEED, local_formula

from .op_samples import op_samples

# Ops whose formula cannot be traced into an expression, each with the reason. Empty: every
# registry op's derivative traces. An op that stops tracing must be listed here, with why.
UNTRACED: dict = {}

DIFFERENTIABLE = sorted(name for name, op in REGISTRY.items() if op.formulas)


# -- a numeric interpreter of expressions -------------------------------------------------------------


def evaluate(root: E.Expr, values: dict):
    """The value of `root` with each symbol's value from `values` (name -> array)."""
    computed: dict = {}

    def arg(a):
        if isinstance(a, E.Expr):
            return computed[id(a)]
        if isinstance(a, tuple):
            return tuple(arg(x) for x in a)
        if isinstance(a, Slice):
            return a.as_slice()
        return a

    def power(base, exponent):
        exponent = computed[id(exponent)] if isinstance(exponent, E.Expr) else exponent
        return np.power(np.asarray(base, dtype=float), exponent)

    for e in E.postorder([root]):
        op, args = e.op, e.args
        if op == "sym":
            value = np.asarray(values[args[0]])
        elif op == "const":
            value = np.full(e.shape, args[0])
        elif op == "tensor":
            value = args[0].array
        elif op == "add":
            value = args[0] + sum(k * computed[id(t)] for t, k in args[1])
        elif op == "mul":
            value = args[0]
            for base, exponent in args[1]:
                value = value * power(computed[id(base)], exponent)
        elif op == "pow":
            value = power(computed[id(args[0])], args[1])
        elif op == "reshape":
            value = np.reshape(computed[id(args[0])], args[1])
        elif op == "narrow":  # slice's spelling in the language (symbolic/build.py)
            x, dim, start, length = computed[id(args[0])], args[1], args[2], args[3]
            value = np.take(x, np.arange(start, start + length), axis=dim)
        elif op == "eye":  # an identity a formula makes (trace's), written by its size
            value = np.eye(*args)
        elif op in REGISTRY:
            value = REGISTRY[op].forward(np, *(arg(a) for a in args))
        elif op in NONDIFF:
            value = NONDIFF[op]._forward(np, *(arg(a) for a in args))
        else:
            raise AssertionError(f"the interpreter does not know {op!r}")
        computed[id(e)] = np.broadcast_to(value, e.shape)
    return computed[id(root)]


def test_the_interpreter_reads_expressions_as_written():
    x, y = E.symbol("x", (2,)), E.symbol("y")
    e = E.call("exp", (x,), (2,)) * y + x ** 2 / y - 3
    values = {"x": np.array([0.5, -1.0]), "y": np.array(2.0)}
    np.testing.assert_allclose(evaluate(e, values), np.exp([0.5, -1.0]) * 2 + np.array([0.25, 1.0]) / 2 - 3)


# -- the registry --------------------------------------------------------------------------------------


def _inputs(op, sample) -> list:
    """(argument name, index in a list argument, the tensor) for each differentiable input."""
    found = []
    for position in op.diff_positions:
        name, value = op.arg_names[position], sample.args[position]
        if isinstance(value, list):
            found += [(name, k, t) for k, t in enumerate(value) if isinstance(t, autodiff.Tensor) and t.requires_grad]
        elif isinstance(value, autodiff.Tensor) and value.requires_grad:
            found.append((name, 0, value))
    return found


def _symbol_values(op, sample, out) -> dict:
    values = {"result": out.detach().numpy()}
    for name, value in zip(op.arg_names, sample.args):
        if isinstance(value, autodiff.Tensor):
            values[name] = value.detach().numpy()
        elif isinstance(value, (int, float)):
            values[name] = np.asarray(value)
    return values


def test_every_op_with_derivatives_has_samples():
    assert all(op_samples(name) for name in DIFFERENTIABLE), [n for n in DIFFERENTIABLE if not op_samples(n)]
    assert set(UNTRACED) <= set(DIFFERENTIABLE)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_each_formula_evaluated_is_the_engines_backward(name):
    op = REGISTRY[name]
    if name in UNTRACED:
        sample = op_samples(name)[0]
        with pytest.raises(Exception):
            for argument, index, _ in _inputs(op, sample):
                local_formula(name, argument, sample.args, index)
        return
    rng = np.random.default_rng(7)
    checked = 0
    for sample in op_samples(name):
        inputs = _inputs(op, sample)
        out = op.apply(*sample.args)
        out = out[0] if isinstance(out, tuple) else out
        g = rng.standard_normal(tuple(out.shape)).astype(out.detach().numpy().dtype)
        engine = autograd.grad([out], [t for _, _, t in inputs], grad_outputs=[autodiff.tensor(g)],
                               allow_unused=True)
        values = _symbol_values(op, sample, out)
        values[SEED] = g
        for (argument, index, tensor), expected in zip(inputs, engine):
            formula = local_formula(name, argument, sample.args, index)
            where = f"{name} by {argument} at {sample!r}: {formula}"
            assert formula is not None, where
            assert formula.input == argument and formula.op == name
            expected = np.zeros(tuple(tensor.shape)) if expected is None else expected.numpy()
            actual = evaluate(formula.expr, values)
            assert actual.shape == expected.shape, where
            np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12, err_msg=where)
            if formula.factor is not None:  # written as F: g times F is the same product
                product = np.broadcast_to(g * evaluate(formula.factor, values), expected.shape)
                np.testing.assert_allclose(product, expected, rtol=1e-9, atol=1e-12, err_msg=where)
            checked += 1
    assert checked, f"{name}: no sample has an input that requires grad"


def test_formulas_read_as_the_ops_derivatives():
    """A few, as `explain` prints them: elementwise ones as the factor of g, the others as maps."""
    x, y = autodiff.tensor([0.5, 1.5], requires_grad=True), autodiff.tensor([2.0, 3.0], requires_grad=True)
    matrix = autodiff.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert local_formula("sin", "input", (x,)).text() == "cos(input)"
    assert local_formula("mul", "other", (x, y)).text() == "input"
    assert local_formula("div", "other", (x, y)).text() == "-input / other ** 2"
    assert local_formula("tanh", "input", (x,)).text({"input": "a + b"}) == "1 - tanh(a + b) ** 2"
    assert local_formula("mul", "input", (x, y)).text({"other": "a + b"}) == "a + b"
    assert local_formula("div", "input", (x, y)).text({"other": "a + b"}) == "1 / (a + b)"
    assert local_formula("mm", "input", (matrix, matrix)).text() == "g ↦ g @ mat2.T"
    assert local_formula("sum", "input", (x,)).text() == "1"  # for each element: g broadcast
    broadcast = local_formula("mul", "input", (autodiff.tensor([[1.0], [2.0]], requires_grad=True), y))
    # the engine's reduction to the input's shape is part of it (factors print in the order made)
    assert broadcast.text() in ("g ↦ sum_to(g * other, (2, 1))", "g ↦ sum_to(other * g, (2, 1))")

"""Every differentiable function of the language derives, and its derivative prints in every
format; the python module and the `expr` program, run at a second point, give the engine's
gradient there. Walked from the registry's samples (tests/engine/op_samples.py), so a function
added with a sample is checked here without a line of its own.

A function is written by the spelling its op declares (ops/spelling.py): a function whose op has
none, or a wrong one, fails here, named.
"""

from __future__ import annotations

import inspect
import json
import math
import types

import numpy as np
import pytest

import autodiff
from autodiff.language.builtins import FUNCTIONS, WORD_ARGUMENTS
from autodiff.program import derive as D
from autodiff.program import differentiate
from autodiff.program.errors import GradientProblem

from engine.op_samples import ALIASES, SAMPLES, function_samples
from latex import assert_compiles, balanced

from .test_derive import run_derived

# PyTorch's deprecation warnings, which some samples call for (torch.cholesky, cross without dim)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

# Functions of the language that are not the catalogue's, with calls of their own.
# Functions of the language whose samples are the op's arguments rather than the language's (the
# losses take `reduction` as a word), or that have none: calls of their own.
_LOGITS = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]
_PROBABILITIES = [[0.25, 0.5, 0.875], [0.125, 0.625, 0.375]]
EXTRA_CALLS = {
    "cross_entropy": [("cross_entropy(a0, [2, 0])", {"a0": _LOGITS})],
    "l1_loss": [("l1_loss(a0, [0.25, -2.0, 1.0])", {"a0": [0.5, -1.0, 2.0]})],
    "linear": [("linear(a0, a1, a2)", {"a0": [[0.5, -1.0, 2.0]], "a1": [[1.0, 0.5, -0.25], [0.3, 2.0, 1.0]],
                                        "a2": [0.1, -0.2]})],
    "mse_loss": [("mse_loss(a0, a1)", {"a0": _LOGITS, "a1": _PROBABILITIES}),
                 ("mse_loss(a0, a1, reduction=none)", {"a0": _LOGITS, "a1": _PROBABILITIES})],
    "nll_loss": [("nll_loss(a0, [2, 0])", {"a0": _LOGITS}),
                 ("nll_loss(a0, [1, 2], reduction=sum)", {"a0": _LOGITS})],
    "binary_cross_entropy": [("binary_cross_entropy(a0, a1)", {"a0": _PROBABILITIES, "a1": [[0.0, 1.0, 0.5]] * 2}),
                             ("binary_cross_entropy(a0, [1.0, 0.0, 1.0], reduction=none)",
                              {"a0": _PROBABILITIES})],
    "binary_cross_entropy_with_logits": [
        ("binary_cross_entropy_with_logits(a0, a1)", {"a0": _LOGITS, "a1": _PROBABILITIES}),
        ("binary_cross_entropy_with_logits(a0, [1.0, 0.0, 1.0], reduction=sum)", {"a0": _LOGITS})],
}
# Samples of a function the language cannot call as they are (a Python value it has no literal for).
WRITTEN_SAMPLES_PER_FUNCTION = 2
SECOND_POINT_STEP = 1e-3  # relative: small enough to stay on the sample's path (its ties, its branches)
FORMATS = {
    "expr": D.expr_program, "python": D.python_module, "latex": D.latex, "markdown": D.markdown,
    "json": lambda d: json.dumps(D.for_json(d)), "plain": lambda d: "\n".join(f"{a} = {b}" for a, b in D.readable_lines(d)),
}


def _literal(value) -> str | None:
    """A constant argument in the language: numbers, tuples, None, words; tensors as literals."""
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, tuple):
        inner = [_literal(v) for v in value]
        return None if None in inner else "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    if isinstance(value, autodiff.Tensor):
        array = value.detach().numpy()
        if array.dtype == bool:
            return f"({array.astype(float).tolist()!r} != 0)"
        return repr(array.tolist())
    return None


class _SampleProgram:
    """A sample written as a program: `y = sum(f(a0, ...) * weights)`, inputs `a0...` at `at`."""

    def __init__(self, name: str, sample) -> None:
        self.at: dict = {}
        args, kwargs = list(sample.args), dict(sample.kwargs)
        if any(isinstance(a, str) for a in args):  # a word given by position: written by its keyword
            bound = inspect.signature(FUNCTIONS[name]).bind(*args, **kwargs)
            positional = [p for p in bound.signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
            first = next(i for i, a in enumerate(args) if isinstance(a, str))
            for parameter, value in zip(positional[first:], args[first:]):
                kwargs[parameter.name] = value
            args = args[:first]
        parts = [self._argument(a) for a in args]
        for key, value in kwargs.items():
            words = WORD_ARGUMENTS.get(key)
            if isinstance(value, str) and words is not None and value in words[0]:
                parts.append(f"{key}={value}")
            else:
                parts.append(None if self._argument(value) is None else f"{key}={self._argument(value)}")
        self.call = None if None in parts else f"{name}({', '.join(parts)})"

    def _argument(self, value):
        if isinstance(value, autodiff.Tensor) and value.requires_grad:
            name = f"a{len(self.at)}"
            self.at[name] = value.detach().numpy().tolist()
            return name
        if isinstance(value, list) and all(isinstance(t, autodiff.Tensor) for t in value):
            names = [self._argument(t) for t in value]
            return None if None in names else "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
        return _literal(value)


def _programs(name: str):
    """(text, at) for the first calls of `name` the language can write, each summed with weights."""
    calls = list(EXTRA_CALLS.get(name, ()))
    if name in SAMPLES:
        for sample in function_samples(ALIASES.get(name, name)):
            try:
                program = _SampleProgram(name, sample)
            except TypeError:  # the op's arguments, which the function does not take
                continue
            if program.call is not None and program.at:
                calls.append((program.call, program.at))
    return calls[:WRITTEN_SAMPLES_PER_FUNCTION]


def _weighted(call: str, at: dict):
    """The program text, or None where the call gives no float tensor that requires grad."""
    from autodiff.language import Source, evaluate, parse

    text = f"r = {call}"
    source = Source(text, "<sample>")
    try:
        result = evaluate(parse(source), source, at=at).variables["r"]
    except Exception:
        return None
    if isinstance(result, tuple):
        result, call = result[0], f"{call}[0]"
    if not isinstance(result, autodiff.Tensor) or not result.requires_grad or not result.dtype.is_floating_point:
        return None
    try:
        result.sum().backward()
    except RuntimeError:  # recorded without a derivative, as PyTorch records floor_divide
        return None
    rng = np.random.default_rng(len(call))
    weights = np.round(rng.uniform(0.5, 1.5, tuple(result.shape)), 3).tolist()
    return f"r = {call}\ny = sum(r * {weights!r})" if result.ndim else f"r = {call}\ny = r * 1.25"


def _elsewhere(at: dict) -> dict:
    rng = np.random.default_rng(11)
    return {n: (np.asarray(v) * (1 + SECOND_POINT_STEP * rng.uniform(-1, 1, np.shape(v)))).tolist()
            for n, v in at.items()}


def _module(d) -> types.ModuleType:
    module = types.ModuleType("derived")
    exec(compile(D.python_module(d), "<derived module>", "exec"), module.__dict__)  # noqa: S102 - our own output
    return module


DIFFERENTIABLE = sorted(n for n in FUNCTIONS if n in SAMPLES or n in ALIASES or n in EXTRA_CALLS)


def _cases():
    for name in DIFFERENTIABLE:
        if name in ALIASES:  # the same function as its name: checked there
            continue
        yield name


@pytest.mark.parametrize("name", list(_cases()))
def test_every_differentiable_function_derives_prints_and_holds_at_a_second_point(name):
    programs = [(text, at) for text, at in ((_weighted(call, at), at) for call, at in _programs(name)) if text]
    if not programs:
        pytest.skip(f"{name} has no derivative (or no sample the language can call)")
    for text, at in programs:
        where = f"{name}: {text!r} at {at}"
        try:
            d = D.derive(text, at)
        except GradientProblem as exc:
            pytest.fail(f"{where}: {exc}")
        for form, write in FORMATS.items():  # every format prints
            assert write(d), (where, form)
        module = _module(d)
        for point in (at, _elsewhere(at)):
            run = differentiate(text, point)
            try:
                value, grads = module.value_and_grad(**point)
            except ValueError as exc:  # another path at the second point: refused, never wrong
                assert point is not at and "derived assuming" in str(exc), (where, exc)
                continue
            assert np.allclose(value, run.output.value, rtol=1e-9, atol=1e-12, equal_nan=True), where
            derived = run_derived(d, point)
            for x in d.derivatives:
                want = run.grads[x.wrt[0]]
                want = np.zeros(x.shape) if want is None else np.asarray(want, dtype=float)
                np.testing.assert_allclose(grads[x.wrt[0]], want, rtol=1e-8, atol=1e-11, equal_nan=True,
                                           err_msg=f"{where}: python, {x.name} at {point}")
                np.testing.assert_allclose(derived[x.name], want, rtol=1e-8, atol=1e-11, equal_nan=True,
                                           err_msg=f"{where}: expr, {x.name} at {point}")


# The functions of the language that give nothing to derive: comparisons and tests (bool results),
# creation and random numbers (no input), indices (argmax, argsort), detach (no derivative by
# design), floor_divide (recorded without a derivative, as PyTorch records it), and einsum, whose
# equation is a string the language has no literal for.
NOT_DERIVED = {
    "all", "allclose", "any", "eq", "ge", "gt", "isclose", "isfinite", "isinf", "isnan", "le", "logical_and",
    "logical_not", "logical_or", "lt", "ne",
    "arange", "eye", "full", "full_like", "linspace", "ones", "ones_like", "rand", "rand_like", "randn", "randn_like",
    "zeros", "zeros_like", "broadcast_shapes",
    "argmax", "argmin", "argsort", "detach", "floor_divide", "einsum",
}


def test_every_differentiable_function_derives_in_every_format():
    """Each function of the language derives unless it is one of NOT_DERIVED, by name: a function
    whose sample stops deriving fails here, named, rather than lowering a count."""
    written = {n for n in _cases() if any(_weighted(call, at) for call, at in _programs(n))}
    assert set(_cases()) - written == NOT_DERIVED


def test_the_latex_of_every_function_compiles(tmp_path):
    """Each function's derivative in LaTeX, one document: pdflatex compiles it where installed;
    elsewhere every block's braces balance (escaped ones aside)."""
    blocks = []
    for name in _cases():
        programs = [(text, at) for text, at in ((_weighted(call, at), at) for call, at in _programs(name)) if text]
        if programs:
            text, at = programs[0]
            blocks.append((name, D.latex(D.derive(text, at))))
    assert {name for name, _ in blocks} == set(_cases()) - NOT_DERIVED  # each function, by name
    for name, latex in blocks:
        assert balanced(latex), name
    assert_compiles(tmp_path, "\n".join(f"% {name}\n\\noindent\n{latex}" for name, latex in blocks), "every")

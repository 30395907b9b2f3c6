"""`derive --steps`: every step of random scalar programs is true (SymPy's diff and the engine's
gradients), no step skips a level, the last step is derive's formula; every function of the
language with a scalar sample has its step (walked from the registry's samples)."""

from __future__ import annotations

import random

import pytest

from autodiff.language import ProgramError
from autodiff.ops.spelling import SPELLINGS
from autodiff.program import derive as D
from autodiff.program import steps as S
from autodiff.program.errors import GradientProblem, UsageProblem

from differential.scalar import scalar_program
from differential.symbolic_programs import straight_program

from .steps_check import check_levels, check_with_engine, check_with_sympy, nearby

pytest.importorskip("sympy")

RANDOM_PROGRAMS = 40  # bench/steps.py runs 200


def _random_program(seed: int) -> tuple:
    rng = random.Random(seed)
    if seed % 2:
        text, at = straight_program(rng, rng.randint(2, 6))
        return text, at
    program = scalar_program(rng, statements=rng.randint(1, 4))
    return program.text, program.inputs


def check_program(text: str, at: dict, seed: int) -> list | None:
    """Problems with the steps of `text` at `at`; None where derive refuses the program."""
    try:
        d = S.derive_steps(text, at)
    except (ProgramError, GradientProblem, UsageProblem):
        return None
    problems = check_levels(d)
    problems += check_with_sympy(d, nearby(at, 2, seed))
    problems += check_with_engine(d, at)
    for block in d.inputs:
        last = block.steps[-1]
        if last.rule != S.SIMPLIFY or last.result != (d.derived.formula(block.wrt),):
            problems.append(f"the last step of ∂/∂{block.wrt} is not derive's formula: {last}")
    return problems


@pytest.mark.parametrize("seed", range(RANDOM_PROGRAMS))
def test_every_step_of_random_scalar_programs_is_true_and_one_level_deep(seed):
    text, at = _random_program(seed)
    problems = check_program(text, at, seed)
    if problems is None:
        pytest.skip("derive refuses this program")
    assert not problems, f"{text}\nat {at}:\n" + "\n".join(problems)


def test_the_checks_find_a_wrong_step_and_a_skipped_level():
    d = S.derive_steps("y = x ** 2 * sin(x)", {"x": 0.75})
    assert check_levels(d) == [] and check_with_engine(d, {"x": 0.75}) == []
    assert check_with_sympy(d, nearby({"x": 0.75}, 2, 0)) == []
    power = d.inputs[0].steps[1]
    assert (power.rule, power.of, power.result) == ("power", "x ** 2", ("2 * x",))
    power.result = ("3 * x",)
    assert len(check_with_sympy(d, nearby({"x": 0.75}, 2, 0))) == 3  # at each of the three points
    assert len(check_with_engine(d, {"x": 0.75})) == 1
    power.result = ("2 * x",)
    d = S.derive_steps("u = sin(x ** 2)\ny = u * 3", {"x": 0.5})
    steps = d.inputs[0].steps
    assert [s.rule for s in steps] == ["constant multiple", "chain", "chain", "power", "simplify"]
    assert check_levels(d) == []
    steps[0].result = ("3 * ", steps[3].id)  # ∂/∂x [3 * u] written with ∂/∂x [x ** 2]: two levels down
    assert check_levels(d) == [f"∂/∂x step 1 (constant multiple) of '3 * u' uses step 4 of 'x ** 2', which is not "
                               "one of its operands"]


def _scalar_calls():
    """(function, call, at) for each function of the language with a sample of numbers only."""
    from .test_every_function_derives import DIFFERENTIABLE, _programs

    for name in DIFFERENTIABLE:
        for call, at in _programs(name):
            if at and all(isinstance(v, float) for v in at.values()):
                yield name, call, at
                break


SCALAR_CALLS = list(_scalar_calls())


@pytest.mark.parametrize("name,call,at", SCALAR_CALLS, ids=[c[0] for c in SCALAR_CALLS])
def test_every_function_of_numbers_has_its_step_and_it_is_true(name, call, at):
    """Walked from the registry's samples: a function added with a sample of numbers has its step
    (from its op's own formula), or this names it."""
    text = f"y = {call} * 1.25"
    try:
        reference = D.derive(text, at)
    except GradientProblem:
        pytest.skip(f"{name} has no derivative here")
    try:
        d = S.derive_steps(text, at)
    except UsageProblem as exc:
        assert "works on" in str(exc)
        pytest.skip(f"{name} makes a tensor of its number")
    rules = {(s.rule, s.function) for block in d.inputs for s in block.steps}
    named = any(name in (rule, function) for rule, function in rules)  # a step named after the function
    spelling = SPELLINGS.get(name)
    if spelling is not None and spelling.build is not None:  # or the algebra writes it: sqrt(x) is x ** 0.5
        named = named or {rule for rule, _ in rules} <= set(S.ALGEBRA) | {S.SIMPLIFY}
    assert named, (name, rules)
    assert check_with_engine(d, at) == []
    assert [b.steps[-1].result[0] for b in d.inputs] == [reference.formula(b.wrt) for b in d.inputs]


def test_explains_page_shows_the_steps_with_their_values_at_the_point():
    from autodiff.program.page import build

    page = build(open("examples/tutorial.expr").read(), {"a": 2, "b": 3, "c": 5, "d": 10})
    formula = page.data()["formula"]
    shown = [(s["rule"], s["text"], s["value"], s["where"]) for s in formula["inputs"]["d"]]
    assert shown == [("sum rule", "∂/∂d [u + c * t] = ∂/∂d [c * t]", 0.5, None),
                     ("constant multiple rule", "∂/∂d [c * t] = c * ∂t/∂d", 0.5, None),
                     ("chain rule", "∂t/∂d = ∂/∂d [log(d)]", 0.1, "(line 4)"),
                     ("log", "∂/∂d [log(d)] = 1 / d", 0.1, None),
                     ("simplify", "∂e/∂d = c / d", 0.5, None)]
    assert 'id="formula-section"' in page.html()
    tensors = build("y = sum(x * x)", {"x": [1.0, 2.0]}).data()["formula"]
    assert tensors == {"refused": "the steps are written for numbers; x has shape [2]"}

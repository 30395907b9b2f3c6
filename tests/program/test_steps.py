"""`derive --steps`: every step of random scalar programs is true (SymPy's diff and the engine's
gradients), no step skips a level, the last step is derive's formula; every function of the
language with a scalar sample has its step (walked from the registry's samples)."""

from __future__ import annotations

import random

import pytest

from autodiff.language import ProgramError
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

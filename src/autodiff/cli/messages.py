"""How a problem reads on standard error: located ones as `file:line:col: kind: ...` with the
line and a caret, the others — and those in an option's value, as `--at x` — as `autodiff: ...`, so that every
line says who wrote it."""

from __future__ import annotations

from ..language import ProgramError


def line_for(problem: ProgramError) -> str:
    text = problem.render()
    in_a_file = problem.source is not None and not problem.source.name.startswith("--")
    return text if in_a_file else f"autodiff: {text}"

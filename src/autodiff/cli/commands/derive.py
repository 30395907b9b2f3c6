"""`autodiff derive`: a program's derivatives as formulas (program/derive.py), in any format."""

from __future__ import annotations

from typing import List, Optional

from ..declare import Option
from ..exit_codes import ExitCode
from ..options import OUTPUT, reads_program
from ..render import emit, format_choices

DeriveFormat = format_choices("derivation", "DeriveFormat")

EXAMPLES = """[bold]Examples[/]

  autodiff derive -e "sin(x) * x"

  autodiff derive -e "x**3 * y" --wrt x

  autodiff derive -e "y = x ** 2 * sin(x)" --steps

  autodiff derive examples/tutorial.expr --format json

  autodiff derive -e "sum(W @ x)" --at 'W=[[1,2],[3,4]]' --at 'x=[1,1]'

  autodiff derive examples/mlp.expr --format python > mlp_grad.py

  autodiff derive -e "x**3 * y" --order 2 --check

  autodiff derive -e "x @ A @ x" --shape x=n --shape A=n,n --wrt x"""


@reads_program
def derive(
    program=None,  # FILE, -e, --at (see options.reads_program)
    wrt: Optional[str] = Option(None, "--wrt", metavar="a,b", help="Derive with respect to these inputs only."),
    shape: Optional[List[str]] = Option(None, "--shape", metavar="NAME=n,m",
                                        help="An input's shape by named sizes (repeatable): the formulas hold "
                                             "for every size."),
    output: Optional[str] = OUTPUT,
    order: int = Option(1, "--order", metavar="1|2", help="2 also derives the second derivatives."),
    steps: bool = Option(False, "--steps", help="Show the derivation rule by rule, as on paper (numbers only; "
                                                "rich, plain, json, latex or markdown)."),
    check: bool = Option(False, "--check", help="Run the derived program against the engine's gradients at the "
                                                "--at point, or at random points (exit 1 if one differs)."),
    format: DeriveFormat = Option(DeriveFormat.auto, "--format", "-f",
                                  help="rich, plain, json, latex, markdown, expr (a program autodiff eval runs) or "
                                       "python (a module that needs only NumPy); auto is rich on a terminal."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see options.runs_programs)
) -> None:
    """Derive the output's derivatives as formulas: simplified, shared parts computed once."""
    from ...program import derive as derivation
    from ..console import say, say_warnings
    from ..program_input import parse_names, parse_shapes
    from ..render.derive import check_lines

    source, values = program
    if steps:
        return _steps(source, values, wrt, shape, output, order, check, format, options)
    result = derivation.derive(source, values, wrt=parse_names(wrt, "--wrt"), output=output, order=order,
                               options=options, shapes=parse_shapes(shape))
    if check:
        result.check = derivation.check(result, source, values, output=output, options=options)
    say_warnings(result.warnings)
    if format.value not in ("auto", "rich", "plain", "json"):  # standard output holds the result alone
        for line in check_lines(result):
            say(line)
    emit("derivation", result, format, warnings=False)
    if result.check is not None and not result.check.passed:
        return ExitCode.CHECK_FAILED


def _steps(source, values, wrt, shape, output, order, check, format, options) -> None:
    """derive --steps: the steps of each derivative, in the formats that show them."""
    from ...program.errors import UsageProblem
    from ...program.steps import derive_steps
    from ..program_input import parse_names

    for given, what in ((shape, "--shape"), (order != 1, "--order 2"), (check, "--check")):
        if given:
            raise UsageProblem(f"--steps derives first derivatives of numbers; it does not take {what}")
    if format.value not in ("auto", "rich", "plain", "json", "latex", "markdown"):
        raise UsageProblem(f"--steps writes rich, plain, json, latex or markdown, not {format.value}")
    result = derive_steps(source, values, wrt=parse_names(wrt, "--wrt"), output=output, options=options)
    emit("steps", result, format)

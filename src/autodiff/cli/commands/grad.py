"""`autodiff grad` and `autodiff eval`: a program run at one point (or, with --points, at many)."""

from __future__ import annotations

from typing import Optional

from ..declare import Option
from ..exit_codes import ExitCode
from ..options import OUTPUT, Mode, check_tolerances, reads_points, reads_program, table_format
from ..render import emit
from .gradients import show_gradients
from .points_loop import run_points

GradFormat, GRAD_FORMAT = table_format("grad", "GradFormat")
EvalFormat, EVAL_FORMAT = table_format("evaluation", "EvalFormat")

GRAD_EXAMPLES = """[bold]Examples[/]

  autodiff grad examples/tutorial.expr --at a=2,b=3,c=5,d=10

  autodiff grad examples/tutorial.expr --at a=2,b=3,c=5,d=10 --tree --retain all

  autodiff grad -e "sum(W @ x)" --at 'W=[[1,2],[3,4]]' --at 'x=[1,1]' --format json | jq .grads

  echo 'x**2' | autodiff grad --at x=3

  autodiff grad examples/matrix.expr --output L --grad-output ones

  autodiff grad examples/linear.expr --at x=1,y=2,z=5 --check

  autodiff grad -e "x**3 * y" --at x=2,y=3 --order 2

  autodiff grad examples/tutorial.expr --points points.csv > gradients.csv"""

EVAL_EXAMPLES = """[bold]Examples[/]

  autodiff eval examples/tutorial.expr --at a=2,b=3,c=5,d=10

  autodiff eval -e "softmax([1, 2, 3])" --format json"""


@reads_program
@reads_points
def grad(
    program=None,  # FILE, -e, --at (see options.reads_program)
    wrt: Optional[str] = Option(None, "--wrt", metavar="a,b",
                                help="Only these inputs require grad; the others are constants."),
    retain: Optional[str] = Option(None, "--retain", metavar="NAMES|all",
                                   help="Keep the gradients of these variables (retain_grad); all: every intermediate. "
                                        "The output itself has gradient 1, as in PyTorch."),
    output: Optional[str] = OUTPUT,
    grad_output: Optional[str] = Option(None, "--grad-output", metavar="ones|VALUE",
                                        help="The gradient to start backward from, for a non-scalar output."),
    tree: bool = Option(False, "--tree", help="Show the grad_fn graph as a tree."),
    check: bool = Option(False, "--check",
                         help="Compare every gradient with central finite differences (exit 1 if one differs)."),
    order: int = Option(1, "--order", metavar="1|2", help="2 also computes the Hessian of a scalar output."),
    mode: Mode = Option(Mode.reverse, "--mode", case_sensitive=False,
                        help="reverse: one backward pass; forward: one forward pass per input element (dual "
                             "tensors), which pays for few input numbers and a large output."),
    atol: float = Option(1e-5, "--atol", min=0.0, metavar="TOL",
                         help="Absolute tolerance of --check. Finite differences are approximate, so the default "
                              "is looser than autodiff test's (1e-12), which compares with exact records."),
    rtol: float = Option(1e-3, "--rtol", min=0.0, metavar="TOL",
                         help="Relative tolerance of --check (autodiff test's: 1e-9, for the same reason)."),
    eps: Optional[float] = Option(None, "--eps", metavar="STEP",
                                  help="The step of --check, relative to each value: x moves by STEP * |x| "
                                       "where |x| < 1, by STEP from 1 up, never less than its rounding "
                                       "resolves. Default 1e-6 (1e-3 in float32)."),
    format: GradFormat = GRAD_FORMAT,
    points=None,  # --points, --in, --out, --flatten, --no-header, --on-error (see options.reads_points)
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see options.runs_programs)
) -> None:
    """Run a program forward and backward; show its output and the gradient of every input."""
    from ..program_input import parse_names

    if check:
        check_tolerances(atol, rtol)
    elif eps is not None:
        from ...program.errors import UsageProblem

        raise UsageProblem("--eps is the step of --check: add --check")
    source, values = program
    if points.points is not None:
        _refuse_one_point_options(retain=retain, grad_output=grad_output, tree=tree, check=check,
                                  order=order, mode=mode)
        return run_points(source, values, points, format, wrt=parse_names(wrt, "--wrt"), output=output,
                          gradients=True, options=options)
    result = show_gradients(source, values, wrt=wrt, retain=retain, output=output, grad_output=grad_output,
                            tree=tree, check=check, order=order, atol=atol, rtol=rtol, chosen=format, options=options,
                            mode=mode.value, eps=eps)
    if result.check is not None and not result.check.passed:
        return ExitCode.CHECK_FAILED



def _refuse_one_point_options(*, retain, grad_output, tree, check, order, mode) -> None:
    """--points writes each point's value and gradients, vectorised: the options that show more of
    one run are refused by name, not ignored."""
    from ...program.errors import UsageProblem

    given = [name for name, asked in (("--retain", retain is not None), ("--grad-output", grad_output is not None),
                                      ("--tree", tree), ("--check", check), ("--order 2", order != 1),
                                      ("--mode forward", mode is Mode.forward)) if asked]
    if given:
        raise UsageProblem(f"--points runs every point at once, in reverse mode, and writes values and gradients: "
                           f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for one point (--at)")


@reads_program
@reads_points
def evaluate(
    program=None,  # FILE, -e, --at (see options.reads_program)
    output: Optional[str] = OUTPUT,
    format: EvalFormat = EVAL_FORMAT,
    points=None,  # --points, --in, --out, --flatten, --no-header, --on-error (see options.reads_points)
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see options.runs_programs)
) -> None:
    """Run a program forward only (nothing recorded); show its output and named values."""
    from ...program import forward

    source, values = program
    if points.points is not None:
        return run_points(source, values, points, format, wrt=None, output=output, gradients=False,
                          options=options)
    emit("evaluation", forward(source, values, output=output, options=options), format)


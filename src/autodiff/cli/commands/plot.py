"""`autodiff plot`: the output and its derivative along one input, drawn or as samples."""

from __future__ import annotations

from typing import Optional

from ..declare import Option

from ..console import say, say_warnings
from ..options import OUTPUT, reads_program
from ..render import emit, format_choices

PlotFormat = format_choices("plot", "PlotFormat")

EXAMPLES = """[bold]Examples[/]

  autodiff plot -e "y = x ** 3 - 3 * x" --wrt x --range -2:2

  autodiff plot examples/tutorial.expr --wrt d --range 1:10 --at a=2,b=3,c=5 -o tutorial-plot.svg

  autodiff plot -e "tanh(w * x)" --wrt x --range -3:3 --at w=2 -o tanh.png

  autodiff plot -e "sin(x) * x" --wrt x --range -6:6 --samples 25 --format json | jq '.points[0]'"""


@reads_program(at=Option([], "--at", metavar="NAME=VALUE,...", help="The other inputs' values, held fixed."))
def plot(
    program=None,  # FILE, -e, --at (see options.reads_program)
    wrt: str = Option(..., "--wrt", metavar="NAME", help="The input to vary along the x axis."),
    range_: str = Option(..., "--range", metavar="LOW:HIGH", help="Its range, e.g. -3:3."),
    output: Optional[str] = OUTPUT,
    samples: int = Option(201, "--samples", metavar="N", help="How many evenly spaced points (2 to 100,000)."),
    to: Optional[str] = Option(None, "-o", "--to", metavar="FILE.svg|FILE.png",
                               help="Write a picture: SVG (needs nothing) or PNG (needs matplotlib)."),
    format: PlotFormat = Option(PlotFormat.auto, "--format", "-f",
                                help="rich (drawn in the terminal), plain (tab-separated samples), json or "
                                     "svg; auto is rich on a terminal."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see options.runs_programs)
) -> None:
    """Plot the output and its derivative along one input: the picture that checks a derivative by eye.

    All the points run through the program at once, as one vectorised run (like --points)."""
    from ...program.errors import UsageProblem
    from ...program.plot import parse_range, sample

    low, high = parse_range(range_)
    suffix = to.rsplit(".", 1)[-1].lower() if to else None
    if to is not None and suffix not in ("svg", "png"):
        raise UsageProblem(f"-o {to}: write a .svg or a .png file")
    source, values = program
    result = sample(source, wrt, low, high, points=samples, at=values, output=output, options=options)
    _plot_warnings(result)
    if result.errors:
        index = min(result.errors)
        say(f"autodiff: warning: {len(result.errors)} point(s) failed and are left out; the first, at "
              f"{wrt}={result.xs[index]:g}: {result.errors[index]}")
    if to is not None:
        from ..render import plot as render

        try:
            if suffix == "png":
                render.save_png(result, to)
            else:
                with open(to, "w", encoding="utf-8") as file_:
                    file_.write(render.svg(result))
        except OSError as error:
            raise UsageProblem(f"-o {to}: {error.strerror or error}") from None
        return
    emit("plot", result, format, warnings=False)  # said above, with -o too


def _plot_warnings(result) -> None:
    """What plot says on standard error besides its failures: its notes, the language's warnings,
    and the points where the output or its derivative is nan or infinite (the first run alone)."""
    for note in result.notes:
        say(f"autodiff: note: {note}")
    say_warnings(result.warnings)
    if result.not_finite:
        x = result.xs[result.first_not_finite]
        alone = result.not_finite_warnings
        say(f"autodiff: warning: {result.output} or d{result.output}/d{result.wrt} is nan or infinite at "
            f"{result.not_finite} of {len(result.xs)} point(s) (a picture leaves them out); the first, at "
            f"{result.wrt}={x:g}{', run alone, says:' if alone else ''}")
        say_warnings(alone)

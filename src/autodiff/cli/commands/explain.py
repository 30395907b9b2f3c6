"""`autodiff explain`: the chain rule made visible (program/explain.py), in any format."""

from __future__ import annotations

from typing import Optional

from ..declare import Option

from ..options import OUTPUT, reads_program
from ..render import emit, format_choices

ExplainFormat = format_choices("explanation", "ExplainFormat")

EXAMPLES = """[bold]Examples[/]

  autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --wrt d

  autodiff explain examples/explain.expr --why b

  autodiff explain -e "x = a; x = x * a + x; x = x * a + x" --at a=2 --limit 3

  autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format json | jq .inputs.d.paths

  autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format svg > explained.svg

  autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format html > explained.html"""


@reads_program
def explain(
    program=None,  # FILE, -e, --at (see options.reads_program)
    wrt: Optional[str] = Option(None, "--wrt", metavar="a,b",
                                help="Explain only these inputs (the others are constants)."),
    why: Optional[str] = Option(None, "--why", metavar="NAME",
                                help="Say why this input's gradient is what it is (None or zero)."),
    output: Optional[str] = OUTPUT,
    grad_output: Optional[str] = Option(None, "--grad-output", metavar="ones|VALUE",
                                        help="The gradient to start backward from, for a non-scalar output."),
    limit: int = Option(10, "--limit", metavar="N", min=1,
                        help="Show the N largest paths per input (graph's --limit counts nodes, 500 by default)."),
    format: ExplainFormat = Option(ExplainFormat.auto, "--format", "-f",
                                   help="rich, plain, json, markdown, latex, svg (the graph with each "
                                        "edge's local derivative, each node's value and gradient), or html "
                                        "(one page to click through: the graph, each input's paths, the "
                                        "backward pass step by step); auto is rich on a terminal."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see options.runs_programs)
) -> None:
    """The chain rule, made visible: each gradient as a sum over paths, and backward step by step."""
    from ...program.explain import explain as explain_program
    from ..program_input import parse_names

    source, values = program
    if format is ExplainFormat.svg:
        return _explain_svg(source, values, wrt=parse_names(wrt, "--wrt"), output=output, grad_output=grad_output,
                            options=options)
    if format is ExplainFormat.html:
        return _explain_html(source, values, wrt=parse_names(wrt, "--wrt"), why=why, output=output,
                             grad_output=grad_output, options=options, limit=limit)
    result = explain_program(source, values, wrt=parse_names(wrt, "--wrt"), why=why, output=output,
                             grad_output=grad_output, options=options, limit=limit)
    emit("explanation", result, format)


def _explain_svg(source, values, *, wrt, output, grad_output, options) -> None:
    """explain --format svg: the graph run backward, each edge labelled with its local derivative."""
    from ...program import record

    result = record(source, values, wrt=wrt, output=output, backward=True, grad_output=grad_output,
                    options=options, edge_labels=True)
    emit("graph", result, "svg")


def _explain_html(source, values, **how) -> None:
    """explain --format html: one self-contained page of the graph, the paths and the steps."""
    from ...program.page import build

    emit("page", build(source, values, **how), "html")

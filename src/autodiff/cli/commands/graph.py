"""`autodiff graph`: the recorded graph, as a tree, DOT, Mermaid, JSON, SVG, PNG or PDF."""

from __future__ import annotations

from typing import Optional

from ..declare import Option

from ..options import OUTPUT, EdgeLabels, reads_program
from ..render import emit, format_choices

GraphFormat = format_choices("graph", "GraphFormat")

EXAMPLES = """[bold]Examples[/]

  autodiff graph examples/tutorial.expr --at a=2,b=3,c=5,d=10

  autodiff graph examples/tutorial.expr --at a=2,b=3,c=5,d=10 --backward --format dot | dot -Tsvg > graph.svg

  autodiff graph examples/mlp.expr --format mermaid

  autodiff graph examples/tutorial.expr --at a=2,b=3,c=5,d=10 --backward --edges local --format svg > graph.svg

  autodiff graph examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format html > graph.html"""


@reads_program
def graph(
    program=None,  # FILE, -e, --at (see options.reads_program)
    wrt: Optional[str] = Option(None, "--wrt", metavar="a,b", help="Only these inputs require grad."),
    output: Optional[str] = OUTPUT,
    backward: bool = Option(False, "--backward", help="Run backward too, and label nodes with gradients."),
    grad_output: Optional[str] = Option(None, "--grad-output", metavar="ones|VALUE",
                                        help="With --backward: the gradient of a non-scalar output."),
    limit: int = Option(500, "--limit", metavar="N", min=1,
                        help="Show at most N nodes (explain's --limit counts paths, 10 by default)."),
    edges: EdgeLabels = Option(EdgeLabels.none, "--edges",
                               help="local: write each edge's local derivative on it (in every format: beside "
                                    "the node it leads to in the tree, a fourth field of plain's edge lines, "
                                    "edge_labels in JSON)."),
    format: GraphFormat = Option(GraphFormat.auto, "--format", "-f",
                                 help="rich (a tree), dot (Graphviz), mermaid, json, plain, svg (drawn "
                                      "with nothing installed), png or pdf (need Graphviz's dot), or html "
                                      "(explain's page: the graph as svg draws it, with every input's paths "
                                      "and the backward pass, step by step)."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see options.runs_programs)
) -> None:
    """Show the recorded graph: PyTorch's node names, with the variables and lines they come from."""
    from ...program import record
    from ..program_input import parse_names

    source, values = program
    if format is GraphFormat.html:  # the page runs backward and labels the edges itself
        from ...program.page import build

        return emit("page", build(source, values, wrt=parse_names(wrt, "--wrt"), output=output,
                                  grad_output=grad_output, options=options, nodes=limit), "html")
    result = record(source, values, wrt=parse_names(wrt, "--wrt"), output=output, backward=backward,
                    grad_output=grad_output, options=options, limit=limit, edge_labels=edges is EdgeLabels.local)
    emit("graph", result, format)

"""The chain rule you can click: a run's explanation and its graph as one self-contained HTML page.

    from autodiff.program.page import build
    page = build(text, {"a": 2, "b": 3, "c": 5, "d": 10})
    page.html()          # the whole page, one string: no file beside it, no network
    page.data()          # what the page embeds, as JSON-ready data

The program runs once: its graph is drawn by program/svg.py exactly as `graph --format svg`
draws it (the same model, the same layout), and explained by program/explain.py exactly as
`explain --format json` writes it. The page embeds that JSON as it is (but a large tensor
summarised: for_page), with the graph's nodes
(their values, as `graph --format json` gives them) and, for each path and each backward step,
which drawn nodes and edges it runs through, so its script only shows numbers, never works one
out. The page itself is page.html, page.css and page.js beside this file (write.py puts them
together); nothing here is imported until a page is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...chain_rule import LIMIT, Explanation, grad_label, seed_text, seeded
from ..explain import explain_run
from ..graph import GraphModel, build_graph
from ..run import differentiate
from ..svg import graph_svg
from ..values import for_json

NODES = 2_000  # graph nodes drawn on explain's page (graph's page draws its --limit)
STEPS_NODES = 200  # a graph larger than this has no Formula part (derive --steps writes it)
STEP_VALUES = 150  # steps whose values the page works out (each a run of the engine); beyond, none
# A tensor of more numbers than this is summarised on the page: its shape, its corners (the first
# and last EDGE_ITEMS along each axis, as NumPy prints a large array) and statistics, never every
# number (`explain --format json` has them all): a page of a 2000 × 2000 input stays small.
SUMMARISED = 10_000
EDGE_ITEMS = 3


def for_page(value):
    """A value as the page embeds it: as `explain --format json` writes it, but a tensor of more
    than SUMMARISED numbers as {"summary": true, "shape", "size", "corner", "min", "max", "mean",
    "not_finite"} (the statistics over its finite numbers; None where it has none)."""
    import numpy as np

    if value is None or isinstance(value, (bool, int, float)):
        return for_json(value)
    array = np.asarray(value)
    if array.size <= SUMMARISED:
        return for_json(array)
    corner = array
    for axis, length in enumerate(array.shape):
        if length > 2 * EDGE_ITEMS:
            keep = np.r_[0:EDGE_ITEMS, length - EDGE_ITEMS:length]
            corner = np.take(corner, keep, axis=axis)
    summary = {"summary": True, "shape": list(array.shape), "size": int(array.size), "corner": for_json(corner)}
    if array.dtype.kind in "fc":
        finite = np.isfinite(array)
        count = int(finite.sum())
        values = array[finite] if count < array.size else array
        summary["not_finite"] = int(array.size - count)
    else:
        values, count = array, array.size
        summary["not_finite"] = 0
    summary.update({"min": for_json(values.min()) if count else None, "max": for_json(values.max()) if count else None,
                    "mean": for_json(values.mean(dtype=np.float64)) if count else None})
    return summary


@dataclass(repr=False)
class Page:
    """explain's clickable page, as data: the program, its graph drawn, the explanation and the steps."""

    source: str  # the program's name
    text: str  # the program's text
    explanation: Explanation
    graph: GraphModel
    svg: str  # the drawing, as `graph --format svg` makes it
    warnings: list = field(default_factory=list)
    formula: dict | None = None  # derive --steps for each input, each step's value at the point (numbers only)

    def data(self) -> dict:
        """Everything the page shows, as JSON-ready data: `explanation` is `explain --format json`."""
        explanation = self.explanation
        model = self.graph
        return {
            "source": self.source,
            "program": self.text,
            "explanation": explanation.to_dict(for_page),
            "graph": {
                "nodes": [{"id": n.id, "op": n.op, "name": n.name, "source": n.source, "line": n.line,
                           "shape": list(n.shape), "value": for_page(n.value), "leaf": n.op == "AccumulateGrad"}
                          for n in model.nodes],
                "root": model.root,
                "left_out": model.left_out,
            },
            "links": links(explanation, model),
            "text": {
                "labels": {name: grad_label(explanation, name) for name in explanation.inputs},
                "seed": seed_text(explanation) if seeded(explanation) else None,
                "scalar": {name: item.scalar for name, item in explanation.inputs.items()},  # products are numbers
                "counts": {name: {"all": f"{item.paths_count:,}",
                                  "others": f"{item.paths_count - len(item.paths):,}"}
                           for name, item in explanation.inputs.items()},
            },
            "warnings": [w.message for w in self.warnings],
            "formula": self.formula,
        }

    def __repr__(self) -> str:
        return (f"<autodiff page of {self.source}: {len(self.graph.nodes)} nodes, "
                f"{len(self.explanation.steps)} backward steps; .html() is the page>")

    def html(self) -> str:
        from .write import page_html

        return page_html(self)

    def _repr_html_(self) -> str:  # Jupyter: the same page, in a frame of its own
        from .write import framed

        return framed(self.html())


def build(source, at: dict | None = None, *, program=None, wrt=None, why: str | None = None,
          output: str | None = None, grad_output=None, options=None, limit: int = LIMIT,
          nodes: int = NODES) -> Page:
    """Run `source` at `at` once, explain it (`limit` paths per input) and draw its graph (at most
    `nodes` nodes): the page of `explain --format html`."""
    from ...language.evaluate import Options

    options = Options() if options is None else options
    options.keep_tensors = True  # the graph's nodes show their values
    run = differentiate(source, at, program=program, wrt=wrt, output=output, grad_output=grad_output,
                        options=options, keep_graph=True)
    explanation = explain_run(run, wrt=wrt, why=why, limit=limit)
    model = build_graph(run.evaluation, run.tensor, nodes)
    for node in model.nodes:  # drawn as before backward, as `graph --format svg` draws it: the steps show gradients
        node.grad, node.retained = None, False
    svg = graph_svg(model, title=f"autodiff graph of {run.source}") if model.nodes else ""  # nothing recorded
    formula = formula_steps(run, at, wrt, output, options) if len(model.nodes) <= STEPS_NODES else \
        {"refused": f"the program has more than {STEPS_NODES} operations; derive --steps writes its steps"}
    return Page(run.source, run.evaluation.source.text, explanation, model, svg, list(run.warnings), formula)


def formula_steps(run, at, wrt, output, options) -> dict:
    """The page's Formula part: `derive --steps` of each input, each step's value at the run's point;
    where the steps are not written (a tensor, a function without one), `refused` says why."""
    from dataclasses import replace

    from ...language import ProgramError
    from ..errors import GradientProblem, UsageProblem
    from ..steps import derivative_text, derive_steps, lines, result_text, rule_label, values_at, where_text

    source = run.evaluation.source
    tensors = [q for q in run.inputs if q.shape]
    if tensors:  # said before derive runs, which may take long over matrices
        return {"refused": f"the steps are written for numbers; {tensors[0].name} has shape {list(tensors[0].shape)}"}
    try:
        d = derive_steps(source, at, wrt=wrt, output=output, options=replace(options, keep_tensors=False))
        point = {q.name: q.value for q in run.inputs if q.name in d.derived.inputs}
        values = values_at(d, point) if sum(len(b.steps) for b in d.inputs) <= STEP_VALUES else {}
    except (ProgramError, GradientProblem, UsageProblem) as exc:
        return {"refused": str(exc).splitlines()[0] if str(exc) else type(exc).__name__}
    grads = {q.name: q.grad for q in run.inputs}
    inputs = {}
    for block in d.inputs:
        shown = []
        for s in block.steps:
            if s.rule == "simplify":
                text, value = f"∂{d.output}/∂{block.wrt} = {s.result[0]}", grads.get(block.wrt)
            else:
                text, value = f"{derivative_text(block.wrt, s)} = {result_text(block.steps, s, block.wrt)}", \
                    values.get(block.wrt, {}).get(s.id)
            where = where_text(d, s)
            shown.append({"id": s.id, "rule": rule_label(s), "text": text, "value": for_json(value),
                          "where": f"({where})" if where else None})
        inputs[block.wrt] = shown
    notes = [text for kind, text in lines(d) if kind in ("where", "assume")]
    return {"inputs": inputs, "notes": notes}


def links(explanation: Explanation, model: GraphModel) -> dict:
    """Where each path and each backward step runs in the drawing: node ids and edges
    ([parent, child, input position], as the drawing's `data-to`, `data-from`, `data-position`),
    None where a node is not drawn (beyond the node limit) or an edge is the starting gradient."""
    ids = {n.seq: n.id for n in model.nodes}
    child_at = {(parent, position): child for parent, child, position in model.edges}

    def edge(parent_seq, position):
        parent = ids.get(parent_seq)
        child = child_at.get((parent, position))
        return None if child is None else [parent, child, position]

    paths = {}
    for name, item in explanation.inputs.items():
        shown = []
        for path in item.paths:
            edges = [edge(seq, position) for seq, position in path.route]
            drawn = [ids.get(seq) for seq, _ in path.route] or [model.root]
            if edges:  # the input at the end: the last edge's child
                drawn.append(edges[-1][1] if edges[-1] is not None else None)
            lead = [None] * (len(path.edges) - len(edges))  # the starting gradient's edge, when there is one
            shown.append({"nodes": drawn, "edges": lead + edges})
        paths[name] = shown
    steps = []
    for step in explanation.steps:
        node = ids.get(step.key)
        passes = [edge(step.key, p.position) for p in step.passes]
        steps.append({"node": node, "passes": passes})
    return {"paths": paths, "steps": steps}

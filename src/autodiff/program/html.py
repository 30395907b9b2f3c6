"""Program results as HTML for notebooks: a run's values and gradients as a table, with its
graph drawn beside where it was recorded (program/svg.py). Nothing here is imported until a
notebook asks for it."""

from __future__ import annotations

from html import escape

from .graph import summary

STYLE = ('font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; '
         'border-collapse: collapse')
CELL = 'style="text-align: left; padding: 2px 10px; border-bottom: 1px solid rgba(128, 128, 128, 0.35)"'


def _row(cells: list, head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag} {CELL}>{escape(str(c))}</{tag}>" for c in cells) + "</tr>"


def differentiation_html(run) -> str:
    """`grad`'s report: the output, then each input with its gradient, then the variables kept."""
    rows = [_row(["", "name", "value", "Jacobian" if run.jacobian else "gradient", "shape"], head=True)]
    output = run.output
    rows.append(_row(["output", output.name, summary(output.value), "", list(output.shape)]))
    for quantity in [*run.inputs, *run.variables]:
        grad = summary(quantity.grad) if quantity.grad is not None else (quantity.note or "—")
        rows.append(_row([quantity.role, quantity.name, summary(quantity.value), grad, list(quantity.shape)]))
    for (a, b), value in (run.hessian or {}).items():
        rows.append(_row(["hessian", f"∂²{output.name}/∂{a}∂{b}", summary(value), "", list(value.shape)]))
    parts = [f'<table class="autodiff" style="{STYLE}">{"".join(rows)}</table>']
    if run.check is not None:
        verdict = "agree with" if run.check.passed else "DIFFER from"
        parts.append(f"<p>The gradients {verdict} central finite differences.</p>")
    if run.graph is not None and run.graph.nodes:
        from .svg import graph_svg

        parts.append(graph_svg(run.graph, title=f"autodiff graph of {run.source}").split("\n", 1)[1])
    return "<div>" + "".join(parts) + "</div>"


def differentiation_text(run) -> str:
    """The same, as a few lines of text (what IPython prints where HTML is not shown)."""
    lines = [f"{run.output.name} = {summary(run.output.value)}"]
    for quantity in [*run.inputs, *run.variables]:
        if quantity.grad is not None:
            lines.append(f"∂{run.output.name}/∂{quantity.name} = {summary(quantity.grad)}")
    return "\n".join(lines)

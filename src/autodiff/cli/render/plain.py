"""Plain output: tab-separated lines for cut and awk; tensors as JSON lists on one line.

grad: the output's name and value, then one line per input that requires grad with its
gradient (null when the output does not depend on it). Further lines start with a word —
`retained`, `hessian`, `check`, and with --tree `node` and `edge` — and have more than two fields, so an input that happens to
be called `check` is still told apart.
"""

from __future__ import annotations

from .values import plain_text, scalar_text


def _line(*fields) -> str:
    # A field never holds a tab or a line break (source text may span lines inside brackets).
    return "\t".join(" ".join(field.split()) if any(c in field for c in "\t\r\n") else field for field in fields)


def grad(report) -> str:
    lines = [_line(report.output.name, plain_text(report.output.value))]
    for quantity in report.inputs:
        if quantity.requires_grad:
            lines.append(_line(quantity.name, plain_text(quantity.grad)))
    for quantity in report.retained:
        lines.append(_line("retained", quantity.name, plain_text(quantity.grad)))
    if report.hessian is not None:
        for (first, second), block in report.hessian.items():
            lines.append(_line("hessian", first, second, plain_text(block)))
    if report.check is not None:
        for entry in report.check.entries:
            lines.append(_line("check", entry.name, scalar_text(entry.max_abs_error), "ok" if entry.passed else "FAILED"))
    if report.graph is not None:
        lines.extend(_graph_lines(report.graph))
    return "\n".join(lines) + "\n"


def evaluation(report) -> str:
    lines = [_line(report.output.name, plain_text(report.output.value))]
    for quantity in report.variables:
        lines.append(_line(quantity.name, plain_text(quantity.value)))
    return "\n".join(lines) + "\n"


def _graph_lines(model) -> list:
    """One line per node (id, node, variable, shape, source), then one per edge (towards the leaves)."""
    lines = []
    for node in model.nodes:
        lines.append(_line("node", str(node.id), node.op, node.name or "-", plain_text(tuple(node.shape)),
                           node.source or "-"))
    for parent, child, position in model.edges:
        label = model.edge_labels.get((parent, child, position))  # --edges local: the local derivative
        lines.append(_line("edge", str(parent), str(child), *([label] if label is not None else [])))
    if model.left_out:
        lines.append(_line("left_out", str(model.left_out)))
    return lines


def graph(report) -> str:
    return "\n".join(_graph_lines(report.graph)) + "\n"

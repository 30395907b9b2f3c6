"""Graphs as text for other tools: Graphviz DOT and Mermaid flowcharts.

Edges follow the data: from each input of an operation to the operation, so the picture
reads from the leaves up to the output. Labels carry the node's name (PyTorch's), the
variable and source line it computes, its shape, its value and, after backward, its gradient.
"""

from __future__ import annotations

import numpy as np

from ...program.values import to_python
from .values import scalar_text


def summary(value, limit: int = 4) -> str:
    """A short text for a value: the number, or the first few elements of a tensor."""
    if value is None:
        return "—"
    python = to_python(value)
    if not isinstance(python, list):
        return scalar_text(python) if not isinstance(python, float) else _number(python)
    flat = np.asarray(value).reshape(-1)
    shown = ", ".join(_number(float(v)) for v in flat[:limit])
    return f"[{shown}{', …' if flat.size > limit else ''}]"


def _number(value: float) -> str:
    text = f"{value:.6g}"
    return scalar_text(value) if text in ("nan", "inf", "-inf") else text


def _label_lines(node) -> list:
    """What a node computes (`u = a * b`, or an input's name), its PyTorch name, then its numbers."""
    if node.op == "AccumulateGrad":
        head = node.name or "leaf"
    elif node.name:
        head = f"{node.name} = {node.source}" if node.source else node.name
    else:
        head = node.source or node.op
    detail = f"shape {list(node.shape)}"
    if node.value is not None:
        detail += f" · value {summary(node.value)}"
    lines = [head, node.op, detail]
    if node.grad is not None:
        lines.append(f"grad {summary(node.grad)}")
    if node.line is not None:
        lines.append(f"line {node.line}")
    return lines


def dot(report) -> str:
    model = report.graph

    def quote(text: str) -> str:
        return text.replace("\\", "\\\\").replace('"', '\\"')

    out = [f'digraph "{quote(report.source)}" {{', "  rankdir=BT;", '  node [shape=box, fontname="monospace"];']
    for node in model.nodes:
        label = "\\n".join(quote(line) for line in _label_lines(node))
        style = ', style=rounded' if node.op == "AccumulateGrad" else ""
        out.append(f'  n{node.id} [label="{label}"{style}];')
    for parent, child, position in model.edges:
        label = model.edge_labels.get((parent, child, position))
        out.append(f'  n{child} -> n{parent} [label="{quote(label)}"];' if label else f"  n{child} -> n{parent};")
    if model.left_out:
        out.append(f'  more [label="… {model.left_out} more nodes", shape=plaintext];')
    out.append("}")
    return "\n".join(out) + "\n"


def mermaid(report) -> str:
    model = report.graph

    def escape(text: str) -> str:
        return text.replace("&", "&amp;").replace('"', "#quot;").replace("<", "&lt;").replace(">", "&gt;")

    out = ["flowchart BT"]
    for node in model.nodes:
        label = "<br/>".join(escape(line) for line in _label_lines(node))
        shape = ("([", "])") if node.op == "AccumulateGrad" else ("[", "]")
        out.append(f'  n{node.id}{shape[0]}"{label}"{shape[1]}')
    for parent, child, position in model.edges:
        label = model.edge_labels.get((parent, child, position))
        out.append(f'  n{child} -->|"{escape(label)}"| n{parent}' if label else f"  n{child} --> n{parent}")
    if model.left_out:
        out.append(f'  more["… {model.left_out} more nodes"]')
    return "\n".join(out) + "\n"

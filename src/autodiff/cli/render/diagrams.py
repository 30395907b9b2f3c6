"""Graphs as text for other tools: Graphviz DOT, Mermaid flowcharts, and SVG drawn here.

Edges follow the data: from each input of an operation to the operation, so the picture
reads from the leaves up to the output. Labels carry the node's name (PyTorch's), the
variable and source line it computes, its shape, its value and, after backward, its gradient.
"""

from __future__ import annotations

from ...program.graph import label_lines as _label_lines


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


def svg(report) -> str:
    """The graph drawn as SVG with nothing installed (program/layout.py, program/svg.py)."""
    from ...program.svg import graph_svg

    return graph_svg(report.graph, title=f"autodiff graph of {report.source}")


def png(report) -> bytes:
    return graphviz(report, "png")


def pdf(report) -> bytes:
    return graphviz(report, "pdf")


def graphviz(report, fmt: str) -> bytes:
    """PNG or PDF from Graphviz's `dot`, given our DOT; a usage error when `dot` is not installed."""
    import shutil
    import subprocess

    from ...program.errors import UsageProblem

    program = shutil.which("dot")
    if program is None:
        raise UsageProblem(f"--format {fmt} needs Graphviz's `dot` on the PATH; --format svg draws the graph "
                           "with nothing installed")
    done = subprocess.run([program, f"-T{fmt}"], input=dot(report).encode("utf-8"), capture_output=True,
                          timeout=120)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageProblem(f"Graphviz's dot failed: {message[0] if message else f'exit status {done.returncode}'}")
    return done.stdout

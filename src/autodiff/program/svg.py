"""Pictures as SVG text, made here with nothing installed: the recorded graph and a plot.

Both are plain strings of SVG 1.1 that a browser, an editor, GitHub or Jupyter shows as they
are. They read on light and on dark pages: every shape has its own fill and stroke (so text
always sits on its own box), and a `prefers-color-scheme: dark` rule swaps the palette where
the viewer supports it (its rules are scoped to the picture, so a page that holds it, as a
notebook does, keeps its own styles). Elements carry classes and data attributes, so tests and scripts can
read the picture back: `<g class="node" id="n3" data-op="MulBackward0">`, `<path class="edge"
data-from="n2" data-to="n1" data-position="0">`, and a plot's samples as JSON in `<metadata>`.
"""

from __future__ import annotations

import json
import math
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from .graph import label_lines
from .layout import layered

FONT = 12.0
CHAR = 7.3  # the advance of a monospace character at FONT (DejaVu Sans Mono: 0.602 em)
LINE = 16.0
PAD = 8.0

STYLE = """
  .autodiff-picture .bg { fill: #ffffff; }
  .autodiff-picture .node rect { fill: #f6f8fa; stroke: #57606a; }
  .autodiff-picture .node.leaf rect { fill: #ddf4ff; stroke: #0969da; }
  .autodiff-picture .node.output rect { stroke: #1f2328; stroke-width: 2; }
  .autodiff-picture .node text, .autodiff-picture .edge-label text, .autodiff-picture .note, .autodiff-picture .axis text, .autodiff-picture .legend text { fill: #1f2328; }
  .autodiff-picture .node text.op { fill: #8250df; }
  .autodiff-picture .node text.numbers { fill: #57606a; }
  .autodiff-picture .node text.grad { fill: #bc4c00; }
  .autodiff-picture .edge { stroke: #8c959f; fill: none; }
  .autodiff-picture .arrow { fill: #8c959f; }
  .autodiff-picture .edge-label rect { fill: #fff8c5; stroke: #d4a72c; }
  .autodiff-picture .axis line, .autodiff-picture .axis path { stroke: #8c959f; }
  .autodiff-picture .grid { stroke: #d0d7de; }
  .autodiff-picture .series.value { stroke: #0969da; }
  .autodiff-picture .series.grad { stroke: #bc4c00; }
  @media (prefers-color-scheme: dark) {
    .autodiff-picture .bg { fill: #0d1117; }
    .autodiff-picture .node rect { fill: #161b22; stroke: #8b949e; }
    .autodiff-picture .node.leaf rect { fill: #0c2d6b; stroke: #58a6ff; }
    .autodiff-picture .node.output rect { stroke: #f0f6fc; }
    .autodiff-picture .node text, .autodiff-picture .edge-label text, .autodiff-picture .note, .autodiff-picture .axis text, .autodiff-picture .legend text { fill: #e6edf3; }
    .autodiff-picture .node text.op { fill: #d2a8ff; }
    .autodiff-picture .node text.numbers { fill: #8b949e; }
    .autodiff-picture .node text.grad { fill: #ffa657; }
    .autodiff-picture .edge { stroke: #6e7681; }
    .autodiff-picture .arrow { fill: #6e7681; }
    .autodiff-picture .edge-label rect { fill: #3b2e00; stroke: #9e6a03; }
    .autodiff-picture .grid { stroke: #30363d; }
    .autodiff-picture .series.value { stroke: #58a6ff; }
    .autodiff-picture .series.grad { stroke: #ffa657; }
  }
"""


def _open(width: float, height: float, title: str, kind: str) -> list:
    return [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" class="autodiff-picture autodiff-{kind}" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        f'font-size="{FONT:g}">',
        f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style>",
        f'<rect class="bg" x="0" y="0" width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>',
    ]


def text_width(text: str) -> float:
    return len(text) * CHAR


# -- the graph ---------------------------------------------------------------------------------------------


def graph_svg(model, title: str = "autodiff graph") -> str:
    """The recorded graph (program.graph.GraphModel), the output on top and the leaves below;
    arrows follow the data, from each input up to the operation that uses it."""
    lines = {node.id: label_lines(node) for node in model.nodes}
    sizes = {i: (max(text_width(t) for t in ls) + 2 * PAD, len(ls) * LINE + PAD) for i, ls in lines.items()}
    edges = [(parent, child) for parent, child, _ in model.edges]
    labels = {}
    for index, key in enumerate(model.edges):
        text = model.edge_labels.get(key)
        if text:
            labels[index] = (text_width(text) + PAD, LINE + 4)
    layout = layered([n.id for n in model.nodes], edges, sizes, labels)
    note = f"… {model.left_out} more nodes" if model.left_out else ""
    if not model.nodes:  # nothing recorded (the output needs no grad): a drawing that says so
        note = "nothing recorded: no operation needs a gradient"
    width = max(layout.width, text_width(note) + 2 * PAD, 40.0)
    height = layout.height + (LINE + PAD if note else 0)
    out = _open(width, height, title, "graph")
    out.append('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
               'orient="auto-start-reverse"><path class="arrow" d="M 0 0 L 10 5 L 0 10 z" fill="#8c959f"/></marker>'
               '</defs>')
    out.append('<g class="edges">')
    for index, (parent, child, position) in enumerate(model.edges):
        points = list(reversed(layout.routes[index]))  # drawn with the data: from the input up
        out.append(f'<path class="edge" data-from="n{child}" data-to="n{parent}" data-position="{position}" '
                   f'd="{_curve(points)}" stroke="#8c959f" stroke-width="1.3" fill="none" marker-end="url(#arrow)"/>')
    out.append("</g>")
    out.append('<g class="edge-labels">')
    for index, box in layout.label_boxes.items():
        parent, child, position = model.edges[index]
        text = model.edge_labels[(parent, child, position)]
        out.append(f'<g class="edge-label" data-from="n{child}" data-to="n{parent}" data-position="{position}">'
                   f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" rx="3" '
                   f'fill="#fff8c5" stroke="#d4a72c"/>'
                   f'<text x="{box.x + PAD / 2:.1f}" y="{box.y + box.height / 2 + FONT * 0.35:.1f}" fill="#1f2328">'
                   f"{escape(text)}</text></g>")
    out.append("</g>")
    out.append('<g class="nodes">')
    for node in model.nodes:
        box = layout.boxes[node.id]
        leaf = node.op == "AccumulateGrad"
        kinds = "node" + (" leaf" if leaf else "") + (" output" if node.id == model.root else "")
        name = f' data-name={quoteattr(node.name)}' if node.name else ""
        fill, stroke = ("#ddf4ff", "#0969da") if leaf else ("#f6f8fa", "#57606a")
        out.append(f'<g class="{kinds}" id="n{node.id}" data-op={quoteattr(node.op)}{name}>'
                   f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" '
                   f'rx="{10 if leaf else 3}" fill="{fill}" stroke="{stroke}"/>')
        for k, text in enumerate(lines[node.id]):
            kind, colour = _line_kind(k, text)
            weight = ' font-weight="bold"' if k == 0 else ""
            out.append(f'<text class="{kind}" x="{box.x + PAD:.1f}" y="{box.y + PAD / 2 + LINE * (k + 1) - 4:.1f}" '
                       f'fill="{colour}"{weight}>{escape(text)}</text>')
        out.append("</g>")
    out.append("</g>")
    if note:
        out.append(f'<text class="note" x="{PAD}" y="{height - PAD:.1f}" fill="#1f2328">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _line_kind(k: int, text: str) -> tuple:
    if k == 0:
        return "head", "#1f2328"
    if k == 1:
        return "op", "#8250df"
    if text.startswith("grad "):
        return "grad", "#bc4c00"
    return "numbers", "#57606a"


def _curve(points: list) -> str:
    """A smooth path through the points: vertical runs straight, the steps between as S-curves."""
    (x, y), rest = points[0], points[1:]
    d = [f"M {x:.1f} {y:.1f}"]
    for nx, ny in rest:
        if abs(nx - x) < 0.05:
            d.append(f"L {nx:.1f} {ny:.1f}")
        else:
            middle = (y + ny) / 2
            d.append(f"C {x:.1f} {middle:.1f} {nx:.1f} {middle:.1f} {nx:.1f} {ny:.1f}")
        x, y = nx, ny
    return " ".join(d)


# -- a plot ------------------------------------------------------------------------------------------------


def nice_ticks(low: float, high: float, count: int = 6) -> list:
    """About `count` round numbers (1, 2 or 5 times a power of ten) from low to high."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda c: abs(math.log(c / raw)))
    first = math.ceil(low / step - 1e-9)
    ticks, k = [], 0
    while (first + k) * step <= high + step * 1e-9:
        ticks.append(float(f"{(first + k) * step:.12g}"))  # 0.30000000000000004 is 0.3; 5e-07 stays
        k += 1
    return ticks


def plot_svg(plot, width: float = 640.0, height: float = 400.0) -> str:
    """The output and its derivative over the range (program.plot.Plot), on one pair of axes, or
    on two, one above the other, where their scales differ too much to share one (Plot.panels);
    the samples themselves are in <metadata> as JSON."""
    left, right, top, bottom = 64.0, 16.0, 40.0, 44.0
    panels = plot.panels()
    if len(panels) > 1:
        left, height = 88.0, height * 1.5
    gap = 28.0  # between two panels
    each = (height - top - bottom - gap * (len(panels) - 1)) / len(panels)

    def sx(x):
        return left + (x - plot.low) / (plot.high - plot.low) * (width - left - right)

    title = f"{plot.output} and ∂{plot.output}/∂{plot.wrt}"
    out = _open(width, height, title, "plot")
    out.append(f'<metadata id="autodiff-plot-data">{escape(json.dumps(plot.to_dict()))}</metadata>')
    names = {"value": plot.output, "grad": f"∂{plot.output}/∂{plot.wrt}"}
    series = {"value": plot.values, "grad": plot.grads}
    looks = {"value": ("#0969da", ""), "grad": ("#bc4c00", "6 4")}
    x_ticks = nice_ticks(plot.low, plot.high)
    for number, (which, (low_y, high_y)) in enumerate(panels):
        ceiling = top + number * (each + gap)
        floor = ceiling + each
        clip = "plot-area" if number == 0 else f"plot-area-{number + 1}"

        def sy(y, ceiling=ceiling, low_y=low_y, high_y=high_y):
            return ceiling + (high_y - y) / (high_y - low_y) * each

        out.append(f'<defs><clipPath id="{clip}"><rect x="{left}" y="{ceiling}" width="{width - left - right}" '
                   f'height="{each}"/></clipPath></defs>')
        out.append('<g class="axis">')
        for t in x_ticks:
            out.append(f'<line class="grid" x1="{sx(t):.1f}" y1="{ceiling}" x2="{sx(t):.1f}" y2="{floor}" '
                       f'stroke="#d0d7de" stroke-width="0.6"/>')
            if number == len(panels) - 1:
                out.append(f'<text x="{sx(t):.1f}" y="{floor + 16}" text-anchor="middle" fill="#1f2328">'
                           f"{_tick(t)}</text>")
        for t in nice_ticks(low_y, high_y):
            out.append(f'<line class="grid" x1="{left}" y1="{sy(t):.1f}" x2="{width - right}" y2="{sy(t):.1f}" '
                       f'stroke="#d0d7de" stroke-width="0.6"/>')
            out.append(f'<text x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" fill="#1f2328">{_tick(t)}</text>')
        if low_y < 0 < high_y:
            out.append(f'<line x1="{left}" y1="{sy(0):.1f}" x2="{width - right}" y2="{sy(0):.1f}" stroke="#8c959f"/>')
        if plot.low < 0 < plot.high:
            out.append(f'<line x1="{sx(0):.1f}" y1="{ceiling}" x2="{sx(0):.1f}" y2="{floor}" stroke="#8c959f"/>')
        out.append(f'<path d="M {left} {ceiling} L {left} {floor} L {width - right} {floor}" '
                   'stroke="#8c959f" fill="none"/>')
        if number == len(panels) - 1:
            out.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle" '
                       f'fill="#1f2328">{escape(plot.wrt)}</text>')
        out.append("</g>")
        for kind in which:
            colour, dash = looks[kind]
            d = _polyline([(sx(x), sy(y)) for x, y in zip(plot.xs, series[kind])], (ceiling, floor))
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<path class="series {kind}" data-series="{kind}" data-name={quoteattr(names[kind])} '
                       f'd="{d}" stroke="{colour}" stroke-width="2" fill="none"{dashes} clip-path="url(#{clip})"/>')
    out.append('<g class="legend">')
    x = left
    for kind in ("value", "grad"):
        colour, dash = looks[kind]
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line class="series {kind}" x1="{x:.1f}" y1="20" x2="{x + 24:.1f}" y2="20" stroke="{colour}" '
                   f'stroke-width="2"{dashes}/>')
        out.append(f'<text x="{x + 30:.1f}" y="24" fill="#1f2328">{escape(names[kind])}</text>')
        x += 30 + text_width(names[kind]) + 24
    if plot.at:
        fixed = ", ".join(f"{k}={v}" for k, v in plot.at_text().items())
        out.append(f'<text x="{width - right:.1f}" y="24" text-anchor="end" fill="#1f2328">{escape(fixed)}</text>')
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tick(value: float) -> str:
    return f"{value:.6g}".replace("-", "−")


def _polyline(points: list, bounds: tuple) -> str:
    """Segments through the finite points; a point that is not a number (or far off the plot)
    breaks the line."""
    d, pen = [], False
    low, high = bounds[0] - 2 * (bounds[1] - bounds[0]), bounds[1] + 2 * (bounds[1] - bounds[0])
    for x, y in points:
        if not (np.isfinite(y) and low <= y <= high):
            pen = False
            continue
        d.append(f"{'L' if pen else 'M'} {x:.2f} {y:.2f}")
        pen = True
    return " ".join(d) or "M 0 0"

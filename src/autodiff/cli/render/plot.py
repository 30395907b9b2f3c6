"""`autodiff plot` shown: a braille plot on a terminal, the samples as text or JSON, or a PNG.

The terminal plot is our own: each character cell is a 2×4 grid of braille dots (U+2800 +
one bit per dot), the output in one colour, its derivative in another; without colour the
derivative is drawn with another glyph (MONO), so the two curves still differ. PNG is matplotlib's
(the `[plot]` extra), imported only here and only for a PNG; SVG needs nothing (program/svg.py).
"""

from __future__ import annotations

import json
import math

import numpy as np

from ...program.values import for_json

# the bit of each dot in a braille cell, by (column, row)
DOTS = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (0, 3): 0x40,
        (1, 0): 0x08, (1, 1): 0x10, (1, 2): 0x20, (1, 3): 0x80}
VALUE, GRAD, BOTH = "blue", "dark_orange", "magenta"
MONO = {2: "•", 3: "×"}  # without colour: a cell of the derivative, a cell both curves pass through


def plain(plot) -> str:
    lines = [f"{plot.wrt}\t{plot.output}\td{plot.output}/d{plot.wrt}"]
    lines += [f"{_number(x)}\t{_number(v)}\t{_number(g)}" for x, v, g in zip(plot.xs, plot.values, plot.grads)]
    return "\n".join(lines) + "\n"


def json_(plot) -> str:
    return json.dumps(plot.to_dict(), indent=2) + "\n"


def svg(plot) -> str:
    """The plot as SVG, drawn with nothing installed (program/svg.py)."""
    from ...program.svg import plot_svg

    return plot_svg(plot)


def _number(value) -> str:
    return json.dumps(for_json(float(value))).strip('"')


def canvas(plot, columns: int, rows: int, which=("value", "grad"), y_range=None) -> list:
    """The braille cells: rows × columns of (bits, which series: 1 value, 2 derivative, 3 both),
    for the curves `which` names, on `y_range` (default: both curves')."""
    cells = [[[0, 0] for _ in range(columns)] for _ in range(rows)]
    low_y, high_y = y_range or plot.y_range()
    width, height = columns * 2, rows * 4
    chosen = [(series, flag) for kind, series, flag in (("value", plot.values, 1), ("grad", plot.grads, 2))
              if kind in which]
    for series, flag in chosen:
        previous = None
        for x, y in zip(plot.xs, series):
            if not np.isfinite(y):
                previous = None
                continue
            px = (x - plot.low) / (plot.high - plot.low) * (width - 1)
            py = (high_y - y) / (high_y - low_y) * (height - 1)
            points = [(px, py)] if previous is None else _between(previous, (px, py))
            for qx, qy in points:
                col, row = int(round(qx)), int(round(qy))
                if 0 <= col < width and 0 <= row < height:
                    cell = cells[row // 4][col // 2]
                    cell[0] |= DOTS[(col % 2, row % 4)]
                    cell[1] |= flag
            previous = (px, py)
    return cells


def _between(a: tuple, b: tuple) -> list:
    """Dots from a to b, so that a steep line stays joined."""
    steps = max(1, int(math.ceil(max(abs(b[0] - a[0]), abs(b[1] - a[1])))))
    return [(a[0] + (b[0] - a[0]) * k / steps, a[1] + (b[1] - a[1]) * k / steps) for k in range(1, steps + 1)]


def rich(plot, console) -> None:
    """The curves in braille, on one pair of axes, or the output's above its derivative's where
    their scales differ too much to share one (Plot.panels)."""
    from rich.text import Text

    panels = plot.panels()
    labels = [[f"{high:.4g}", f"{(low + high) / 2:.4g}", f"{low:.4g}"] for _, (low, high) in panels]
    margin = max(len(t) for group in labels for t in group) + 1
    columns = max(20, min(console.width, 120) - margin - 2)
    rows = 16 if len(panels) == 1 else 9
    mono = console.color_system is None
    legend = Text()
    legend.append("⠿ ", style=VALUE).append(plot.output).append("    ")
    legend.append(f"{MONO[2] if mono else '⠿'} ", style=GRAD).append(f"∂{plot.output}/∂{plot.wrt}")
    if mono:
        legend.append(f"    {MONO[3]} both")
    if plot.at:
        legend.append("    " + ", ".join(f"{k}={v}" for k, v in plot.at_text().items()), style="dim")
    console.print(legend)
    for number, ((which, (low_y, high_y)), marks) in enumerate(zip(panels, labels)):
        if number:
            console.print(Text(" " * margin + "│", style="dim"), no_wrap=True, overflow="crop")
        cells = canvas(plot, columns, rows, which, (low_y, high_y))
        zero = None
        if low_y < 0 < high_y:
            zero = int(round((high_y / (high_y - low_y)) * (rows * 4 - 1))) // 4
        for r, row in enumerate(cells):
            label = marks[0] if r == 0 else marks[1] if r == rows // 2 else marks[2] if r == rows - 1 else ""
            line = Text(label.rjust(margin - 1) + " ┤" if label else " " * margin + "│", style="dim")
            for bits, kind in row:
                if bits:
                    glyph = MONO[kind] if mono and kind in MONO else chr(0x2800 + bits)
                    line.append(glyph, style={1: VALUE, 2: GRAD, 3: BOTH}[kind])
                else:
                    line.append("┈" if r == zero else " ", style="dim")
            console.print(line, no_wrap=True, overflow="crop")
    axis = " " * margin + "└" + "─" * columns
    console.print(Text(axis, style="dim"), no_wrap=True, overflow="crop")
    low, high = f"{plot.low:g}", f"{plot.high:g}"
    middle = f"{plot.wrt}"
    gap = columns + 1 - len(low) - len(high) - len(middle)
    console.print(Text(" " * margin + low + " " * (gap // 2) + middle + " " * (gap - gap // 2) + high, style="dim"),
                  no_wrap=True, overflow="crop")
    if plot.errors:
        console.print(Text(f"{len(plot.errors)} point(s) failed and are left out: {_first_error(plot)}",
                           style="yellow"))


def _first_error(plot) -> str:
    index = min(plot.errors)
    return f"at {plot.wrt}={plot.xs[index]:g}: {plot.errors[index]}"


def save_png(plot, path: str) -> None:
    """A PNG by matplotlib (the optional `[plot]` extra)."""
    from ...program.errors import UsageProblem

    try:
        import matplotlib
    except ImportError:
        raise UsageProblem("-o *.png needs matplotlib: pip install 'autodiff[plot]' (or write -o plot.svg, which "
                           "needs nothing installed)") from None
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    panels = plot.panels()
    figure = Figure(figsize=(6.4, 4.0 * (1 + 0.5 * (len(panels) - 1))), dpi=150)
    every = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    looks = {"value": (plot.values, plot.output, "#0969da", "-"),
             "grad": (plot.grads, f"∂{plot.output}/∂{plot.wrt}", "#bc4c00", "--")}
    for axes, (which, y_range) in zip(every, panels):
        for kind in which:
            series, label, colour, style = looks[kind]
            axes.plot(plot.xs, series, label=label, color=colour, linewidth=2, linestyle=style)
        axes.axhline(0, color="#8c959f", linewidth=0.8)
        axes.set_xlim(plot.low, plot.high)
        axes.set_ylim(*y_range)
        axes.grid(True, color="#d0d7de", linewidth=0.6)
        axes.legend()
    every[-1].set_xlabel(plot.wrt)
    title = ", ".join(f"{k}={v}" for k, v in plot.at_text().items())
    if title:
        every[0].set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, format="png")

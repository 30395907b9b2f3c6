"""An explanation as plain text: numbers as people read them, each path's product, the steps."""

from __future__ import annotations

import math

import numpy as np

from .. import codec
from .model import Explanation, Passed, Path


def number_text(value) -> str:
    """A number as people read it: 10 significant digits, integers without a point."""
    value = float(value)
    if not math.isfinite(value):
        return codec.word(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"


def values_text(value, limit: int = 9) -> str:
    """A value short: a number, or a tensor's first elements."""
    if value is None:
        return "None"
    array = np.asarray(value)
    if array.ndim == 0 or array.size == 1 and array.ndim == 0:
        return number_text(array)
    flat = array.reshape(-1)
    shown = ", ".join(number_text(v) for v in flat[:limit])
    if array.ndim == 1:
        return f"[{shown}{', …' if flat.size > limit else ''}]"
    # nested as the tensor is, the first and last rows and columns of a large one (as NumPy prints)
    text = np.array2string(array, separator=", ", threshold=limit, edgeitems=2, max_line_width=10**9,
                           formatter={"float_kind": number_text, "int": number_text, "bool": str})
    text = " ".join(text.split()).replace("...", "…")
    return f"{text} (shape {list(array.shape)})" if "…" in text else text


def product_text(path: Path, scalar: bool) -> str:
    """`∂e/∂(t * c) · ∂(t * c)/∂t · ∂t/∂d = 1 × 5 × 0.1 = 0.5`."""
    heads = " · ".join(e.formula.split(" = ")[0].split(":")[0] for e in path.edges) or f"∂{path.nodes[0]}/∂{path.nodes[0]}"
    if scalar:
        values = " × ".join(number_text(e.local) if e.local is not None else "?" for e in path.edges) or "1"
        if len(path.edges) <= 1:
            return f"{heads} = {number_text(path.product)}"
        return f"{heads} = {values} = {number_text(path.product)}"
    return f"{heads} → {values_text(path.product)}"


def seeded(explanation: Explanation) -> bool:
    """Whether backward started from a gradient other than the number 1."""
    seed = np.asarray(explanation.seed)
    return seed.size != 1 or float(seed.reshape(-1)[0]) != 1


def seed_text(explanation: Explanation) -> str:
    what = "vector–Jacobian products" if np.size(explanation.seed) != 1 or np.size(explanation.value) != 1 else \
        "gradients times g"
    return f"backward starts from the gradient g = {values_text(explanation.seed)}: what follows are {what}"


def grad_label(explanation: Explanation, name: str) -> str:
    """What an input's `.grad` holds: `∂y/∂x`, or for another starting gradient g its product with
    g: `g·∂y/∂x` for a number, the vector–Jacobian product `gᵀ·∂y/∂x` for a tensor."""
    label = f"∂{explanation.output}/∂{name}"
    if not seeded(explanation):
        return label
    return ("g·" if np.size(explanation.seed) == 1 and np.size(explanation.value) == 1 else "gᵀ·") + label


def plain(explanation: Explanation) -> str:
    lines = [f"{explanation.output} = {values_text(explanation.value)}"]
    if seeded(explanation):
        lines.append(seed_text(explanation))
    for name, item in explanation.inputs.items():
        lines.append("")
        head = f"{grad_label(explanation, name)} = {values_text(item.grad)}"
        lines.append(head)
        if item.why:
            lines.append(f"  why: {item.why}")
        if item.grad is None:
            continue
        count = f"{item.paths_count:,} path" + ("s" if item.paths_count != 1 else "")
        lines.append(f"  {count} from {explanation.output} to {name}" +
                     (f"; the {len(item.paths)} largest:" if len(item.paths) < item.paths_count else ":"))
        for k, path in enumerate(item.paths, 1):
            lines.append(f"  {k}. {product_text(path, item.scalar)}")
            for e in path.edges:
                shown = e.local is not None and not e.formula.endswith(f" = {values_text(e.local)}")
                local = f" = {values_text(e.local)}" if shown else ""
                lines.append(f"       {e.formula}{local}   [{e.op}]")
        if len(item.paths) < item.paths_count:
            note = "" if item.exhaustive else " (found by a heuristic search: not certainly the largest)"
            lines.append(f"  the other {item.paths_count - len(item.paths):,} paths add up to "
                         f"{values_text(item.rest)}{note}")
    if explanation.steps:
        lines.append("")
        lines.append("backward, step by step (the engine's order):")
        lines.extend(step_lines(explanation.steps))
    return "\n".join(lines) + "\n"


def passed_text(grad, passed: Passed) -> str:
    """What a step hands on, as true arithmetic: `g × local = value` where the local derivative
    is one factor per element (broadcast), else the map `g ↦ value` that the formula makes."""
    if passed.local is None:
        return f"{values_text(grad)} ↦ {values_text(passed.value)}"
    return f"{values_text(grad)} × {values_text(passed.local)} = {values_text(passed.value)}"


def step_lines(steps: list) -> list:
    lines = []
    for s in steps:
        where = f" (line {s.line})" if s.line is not None else ""
        if s.leaf is not None:
            lines.append(f"  {s.number}. {s.leaf}.grad += {values_text(s.grad)}"
                         f"{f' (the sum of {s.arrivals} gradients)' if s.arrivals > 1 else ''}   [AccumulateGrad]")
            continue
        retained = ", retained" if s.retained else ""
        lines.append(f"  {s.number}. {s.node}{where}   [{s.op}{retained}] receives {values_text(s.grad)}")
        for p in s.passes:
            lines.append(f"       to {p.to}: {passed_text(s.grad, p)}   ({p.formula})")
    return lines

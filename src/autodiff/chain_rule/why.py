"""Why a gradient is zero: the edges where a nonzero gradient arrives and a zero one leaves,
each said in its op's words (the registry's record: `defop(..., why_zero=...)`)."""

from __future__ import annotations

import numpy as np

from .graph import _Graph
from .paths import _reaching


def zero_causes(graph: _Graph, target, arriving: dict) -> list:
    """The edges where a nonzero gradient arrives and a zero one is passed on towards `target`:
    (node, position, text)."""
    inside = set(_reaching(graph, target))
    causes = []
    for node in graph.order:
        g = arriving.get(node)
        if node not in inside or node is target or g is None or not np.any(np.asarray(g) != 0):
            continue
        outputs = graph.vjp(node, 0, g)
        for position, ((child, _), out) in enumerate(zip(node.next_functions, outputs)):
            if child in inside and (out is None or not np.any(np.asarray(out) != 0)):
                op = getattr(node, "op", None)
                what = getattr(op, "why_zero", None) or f"{type(node).__name__}, whose local derivative is 0 there"
                causes.append((node, position, what))
    return causes


def _zero_sentence(graph: _Graph, causes: list, name: str) -> str:
    if not causes:
        return f"the gradient of {name} is 0 because its paths' shares cancel out (they add up to 0)"
    parts = []
    for node, position, what in causes[:3]:
        info = graph.infos[node]
        where = f" on line {info.line}" if info.line is not None else ""
        parts.append(f"{what}: `{info.text or graph.name(node)}`{where}")
    more = f", and {len(causes) - 3} more" if len(causes) > 3 else ""
    return f"the gradient of {name} is 0: every path passes a zero local derivative — " + "; ".join(parts) + more

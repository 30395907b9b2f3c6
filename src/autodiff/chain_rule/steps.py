"""The backward pass again, step by step: the engine's own schedule and order, every gradient
written down."""

from __future__ import annotations

import numpy as np

from ..autograd.engine import _conform, _schedule
from ..autograd.node import AccumulateGrad
from .graph import _Graph
from .model import Passed, Step


def _replay(graph: _Graph, leaf_names: dict, scalar: bool) -> tuple:
    """engine.run_backward's loop, in its order, run again with every gradient written down.

    Returns (steps, {leaf node: total gradient}, {node: gradient arriving})."""
    root = graph.root
    order, leaf_edges, _ = _schedule([root])
    buffers = {root: np.asarray(graph.seed)}
    arrivals = {root: 1}
    steps, totals, arriving = [], {}, {}

    def run(node) -> list:
        """One node's step; returns the leaves it completed, in edge order (as the engine)."""
        grad = buffers.pop(node, None)
        arriving[node] = grad
        info = graph.infos[node]
        step = Step(len(steps) + 1, graph.name(node), type(node).__name__, info.line, grad, arrivals.get(node, 0),
                    key=node._seq)
        steps.append(step)
        if type(node) is AccumulateGrad:
            step.leaf = leaf_names.get(node, graph.name(node))
            totals[node] = step.total = grad
            return []
        step.retained = any(node._retains(nr) for nr in range(node.n_outputs))
        outputs = node._apply([grad] + [None] * (node.n_outputs - 1), False) if grad is not None else \
            [None] * len(node._next)
        completed = []
        for position, ((child, nr), g) in enumerate(zip(node.next_functions, outputs)):
            if child is None:
                continue
            if g is not None:
                if nr or g.shape != child._shape or g.dtype is not child._dtype:
                    g = _conform(g, child, nr, node, outputs, False)
                ckey = child if nr == 0 else (child, nr)
                previous = buffers.get(ckey)
                buffers[ckey] = g if previous is None else previous + g
                arrivals[ckey] = arrivals.get(ckey, 0) + 1
                local = graph.locals_of(node)[position] if scalar else graph.tensor_local(node, position)
                step.passes.append(Passed(graph.name(child), type(node).__name__, graph.formula(node, position), local, g,
                                          type(child) is AccumulateGrad, position))
            if type(child) is AccumulateGrad:
                leaf_edges[child] -= 1
                if leaf_edges[child] == 0:
                    completed.append(child)
        return completed

    for node in [root] if type(root) is AccumulateGrad else order:
        for leaf in run(node):
            run(leaf)
    return steps, totals, arriving

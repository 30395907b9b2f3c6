"""Paths from the output to an input: counted exactly (dynamic programming over the graph, never a
listing), the largest shares found first (best-first, on an exact bound for numbers)."""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np

from .graph import _Graph
from .model import Edge, Path

ENUMERATE_LIMIT = 2_000  # tensor graphs with at most this many paths are listed in full
SEARCH_BUDGET = 100_000  # nodes the best-first search may expand


def _reaching(graph: _Graph, target) -> list:
    """The nodes from which `target` can be reached, in topological order."""
    reach = set()
    for node in reversed(graph.order):
        if node is target or any(c in reach for c, _ in node.next_functions if c is not None):
            reach.add(node)
    return [n for n in graph.order if n in reach]


def count_paths(graph: _Graph, target) -> int:
    """How many paths lead from the output to `target`: dynamic programming, an exact int."""
    counts: dict = {}
    for node in reversed(graph.order):
        counts[node] = 1 if node is target else sum(counts[c] for c, _ in node.next_functions if c is not None)
    return counts.get(graph.root, 0)


def _path_from(graph: _Graph, steps: list, product, scalar: bool) -> Path:
    """A Path from its steps (node, position) after the root."""
    nodes = [graph.name(graph.root)]
    edges = []
    for node, position in steps:
        child = node.next_functions[position][0]
        nodes.append(graph.name(child))
        local = graph.locals_of(node)[position] if scalar else graph.tensor_local(node, position)
        edges.append(Edge(type(node).__name__, graph.formula(node, position), local, graph.formula_latex(node, position)))
    return Path(nodes, edges, product, [(node._seq, position) for node, position in steps])


def _seed_edge(graph: _Graph, seed_value: float) -> Edge:
    return Edge("grad_output", f"∂{graph.term(graph.root)}/∂{graph.term(graph.root)} = the gradient given",
                seed_value)


def _number_paths(graph: _Graph, target, reach: list, limit: int) -> tuple:
    """The `limit` paths with the largest |product|, best-first on an exact bound."""
    inside = set(reach)
    best: dict = {}  # node -> the largest |product| from it to the target
    for node in reversed(reach):
        if node is target:
            best[node] = 1.0
            continue
        values = [abs(local) * best[c] for (c, _), local in zip(node.next_functions, graph.locals_of(node))
                  if c in inside and local is not None]
        best[node] = max((v if v == v else math.inf) for v in values) if values else 0.0
    seed = float(np.asarray(graph.seed).reshape(-1)[0])
    counter = itertools.count()
    heap = [(-_rounded(abs(seed) * best[graph.root]), 0, next(counter), graph.root, seed, None)]
    found, expanded = [], 0
    while heap and len(found) < limit and expanded < SEARCH_BUDGET:
        _, depth, _, node, product, link = heapq.heappop(heap)
        expanded += 1
        if node is target:
            steps = []
            while link is not None:
                steps.append(link[0])
                link = link[1]
            path = _path_from(graph, steps[::-1], product, True)
            if seed != 1:
                path.edges.insert(0, _seed_edge(graph, seed))
            found.append(path)
            continue
        for position, ((child, _), local) in enumerate(zip(node.next_functions, graph.locals_of(node))):
            if child in inside and local is not None:
                value = product * local
                bound = abs(value) * best[child]
                bound = math.inf if bound != bound else bound
                heapq.heappush(heap, (-_rounded(bound), -(depth + 1), next(counter), child, value,
                                      ((node, position), link)))
    return found, not heap or len(found) >= limit


def _rounded(value: float) -> float:
    """Equal products reached in a different order differ in the last bits: compare 12 digits."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, 11 - int(math.floor(math.log10(value))))


def _tensor_paths(graph: _Graph, target, reach: list, count: int, limit: int) -> tuple:
    """Tensor graphs: all paths when few (sorted by the size of their share), else best-first on it."""
    inside = set(reach)

    def size(g) -> float:
        norm = float(np.linalg.norm(np.asarray(g, dtype=float).reshape(-1)))
        return math.inf if norm != norm else norm

    def expand(node, nr, g):
        outputs = graph.vjp(node, nr, g)
        for position, ((child, child_nr), out) in enumerate(zip(node.next_functions, outputs)):
            if child in inside and out is not None:
                yield position, child, child_nr, out

    def finish(g, link):
        steps = []
        while link is not None:
            steps.append(link[0])
            link = link[1]
        return _path_from(graph, steps[::-1], g, False)

    seed = np.asarray(graph.seed)
    found = []
    if count <= ENUMERATE_LIMIT:
        stack = [(graph.root, 0, seed, None)]
        while stack:
            node, nr, g, link = stack.pop()
            if node is target:
                found.append((size(g), len(found), finish(g, link)))
                continue
            for position, child, child_nr, out in expand(node, nr, g):
                stack.append((child, child_nr, out, ((node, position), link)))
        found.sort(key=lambda item: (-item[0], item[1]))
        return [path for _, _, path in found[:limit]], True
    counter = itertools.count()
    heap = [(-size(seed), next(counter), graph.root, 0, seed, None)]
    expanded = 0
    while heap and len(found) < limit and expanded < SEARCH_BUDGET:
        _, _, node, nr, g, link = heapq.heappop(heap)
        expanded += 1
        if node is target:
            found.append(finish(g, link))
            continue
        for position, child, child_nr, out in expand(node, nr, g):
            heapq.heappush(heap, (-size(out), next(counter), child, child_nr, out, ((node, position), link)))
    return found, False

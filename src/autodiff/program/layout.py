"""A layered drawing of a DAG (Sugiyama's method), pure and small: boxes in, positions out.

    layout = layered([0, 1, 2], [(0, 1), (0, 2)], {0: (80, 40), 1: (60, 40), 2: (60, 40)})
    layout.boxes[1]          # Box(x, y, width, height), top-left corner
    layout.routes[0]         # the points edge 0 passes through, from its first node to its second

1. **Layers by longest path**: a node sits one layer below the lowest of the nodes pointing at
   it (the output on top, the leaves below what uses them), in topological order (Kahn's
   algorithm: no recursion).
2. **Long edges are cut** into one-layer steps through dummy points, so they bend around the
   boxes between; long edges into the same node share one trunk of points (edge concentration),
   so a node used on every line of a long program costs a point per layer, not one per layer
   and use. An edge may carry a label, drawn as a box in the layer just below its start
   (labels live in layers of their own, so they never overlap a node or one another).
3. **Crossings reduced** by barycenter sweeps, down then up, keeping the order with the fewest
   crossings seen.
4. **Coordinates**: each layer's boxes pulled towards the mean position of their neighbours,
   kept apart by a fixed gap (the mean of a left-packed and a right-packed placement, each of
   which keeps the gaps, keeps them too); then each trunk straightened onto one vertical line
   wherever the layers leave room, and a route keeps only the ends of its straight runs, so the
   drawing grows as the graph does.

Every step is iterative and deterministic; graphs of a few hundred nodes lay out in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

H_GAP = 24.0  # between boxes of a layer
V_GAP = 36.0  # between layers
DUMMY = 8.0  # the width of an edge passing through a layer
SWEEPS = 8
LARGE = 5_000  # boxes and bends beyond which the sweeps are cut to 2


@dataclass(frozen=True)
class Box:
    """A rectangle of the drawing: its top-left corner and size."""

    x: float
    y: float
    width: float
    height: float

    @property
    def center(self) -> tuple:
        return (self.x + self.width / 2, self.y + self.height / 2)

    def overlaps(self, other: "Box") -> bool:
        return (self.x < other.x + other.width and other.x < self.x + self.width
                and self.y < other.y + other.height and other.y < self.y + self.height)


@dataclass
class Layout:
    """Where the drawing puts each node, each edge's label and route, and its size."""

    boxes: dict = field(default_factory=dict)  # node -> Box
    label_boxes: dict = field(default_factory=dict)  # edge index -> Box of its label
    routes: dict = field(default_factory=dict)  # edge index -> [(x, y), ...] from its first node to its second
    width: float = 0.0
    height: float = 0.0
    layers: dict = field(default_factory=dict)  # node -> its layer (0: top)


def layered(nodes: list, edges: list, sizes: dict, labels: dict | None = None, *, h_gap: float = H_GAP,
            v_gap: float = V_GAP, margin: float = 8.0) -> Layout:
    """Lay out `nodes` (any hashable ids) joined by `edges` ([(upper, lower), ...], which must
    make a DAG; repeated edges are drawn apart), each node a box of `sizes[node]` = (width,
    height); `labels` ({edge index: (width, height)}) are boxes placed on their edges."""
    labels = labels or {}
    layer = _longest_path_layers(nodes, edges)
    spread = 2 if labels else 1  # labels take the layers between the nodes' own
    # The graph of one-layer steps: real nodes, and ("dummy", edge, k) points on long edges.
    rank = {n: layer[n] * spread for n in nodes}
    width = {n: float(sizes[n][0]) for n in nodes}
    height = {n: float(sizes[n][1]) for n in nodes}
    # Long edges into the same node share one trunk of points (edge concentration), each joining
    # it in the layer below its start: an input used on every line of a long program costs one
    # point per layer, not one per layer and use. A labelled edge keeps its first point (the
    # label) its own; an edge repeated between the same two nodes takes a trunk of its own.
    repeats: dict = {}
    joins = []  # per edge: (its trunk's key, the layer where it joins it)
    reach: dict = {}  # trunk key -> the highest layer it starts at
    for index, (upper, lower) in enumerate(edges):
        k = repeats[(upper, lower)] = repeats.get((upper, lower), -1) + 1
        start = rank[upper] + 1 + (1 if index in labels and rank[upper] + 1 < rank[lower] else 0)
        joins.append(((lower, k), start))
        if start < rank[lower]:
            reach[(lower, k)] = min(reach.get((lower, k), start), start)
    for key, start in reach.items():
        for r in range(start, rank[key[0]]):
            point = ("dummy", key, r)
            rank[point] = r
            width[point], height[point] = DUMMY, 0.0
    chains = []
    for index, (upper, lower) in enumerate(edges):
        chain = [upper]
        key, start = joins[index]
        if start > rank[upper] + 1:  # its label, in the layer just below its start
            point = ("label", index, rank[upper] + 1)
            rank[point] = rank[upper] + 1
            size = labels[index]
            width[point], height[point] = float(size[0]), float(size[1])
            chain.append(point)
        chain.extend(("dummy", key, r) for r in range(start, rank[lower]))
        chain.append(lower)
        chains.append(chain)
    steps = list(dict.fromkeys((a, b) for chain in chains for a, b in zip(chain, chain[1:])))
    depth = max(rank.values(), default=-1) + 1
    rows = [[] for _ in range(depth)]
    for n in nodes:  # the nodes' given order first: a depth-first order is a good start
        rows[rank[n]].append(n)
    placed = set(nodes)
    for chain in chains:
        for point in chain[1:-1]:
            if point not in placed:
                placed.add(point)
                rows[rank[point]].append(point)
    up = {v: [] for v in rank}
    down = {v: [] for v in rank}
    for a, b in steps:
        down[a].append(b)
        up[b].append(a)
    sweeps = SWEEPS if len(rank) <= LARGE else 2  # a huge drawing is unreadable anyway: stay quick
    rows = _reduce_crossings(rows, up, down, sweeps)

    # coordinates
    tops, y = [], margin
    for row in rows:
        tops.append(y)
        y += max((height[v] for v in row), default=0.0) + v_gap / spread
    total_height = (y - v_gap / spread if rows else y) + margin  # no gap after the last layer; nothing: the margins
    centre = {}
    for row in rows:
        x = margin
        for v in row:
            centre[v] = x + width[v] / 2
            x += width[v] + h_gap
    for _ in range(sweeps):
        for order, neighbours in ((range(1, depth), up), (range(depth - 2, -1, -1), down)):
            for i in order:
                _place(rows[i], neighbours, centre, width, h_gap)
    _straighten(reach, rank, rows, centre, width, h_gap)
    least = min((centre[v] - width[v] / 2 for v in rank), default=margin)
    row_heights = [max((height[v] for v in row), default=0.0) for row in rows]
    result = Layout(layers={n: layer[n] for n in nodes})
    for i, row in enumerate(rows):
        row_height = row_heights[i]
        for v in row:
            box = Box(centre[v] - width[v] / 2 - least + margin, tops[i] + (row_height - height[v]) / 2,
                      width[v], height[v])
            if v in layer:
                result.boxes[v] = box
            elif v[0] == "label":
                result.label_boxes[v[1]] = box
            centre[v] = box.center
    for index, chain in enumerate(chains):
        first, last = result.boxes[chain[0]], result.boxes[chain[-1]]
        points = [(first.center[0], first.y + first.height)]
        for point in chain[1:-1]:
            cx, _ = centre[point]
            box_top = tops[rank[point]]
            points.append((cx, box_top))
            points.append((cx, box_top + row_heights[rank[point]]))
        points.append((last.center[0], last.y))
        result.routes[index] = _straight_runs(points)
    result.width = max((b.x + b.width for b in [*result.boxes.values(), *result.label_boxes.values()]),
                       default=0.0) + margin
    result.height = total_height
    return result


def _straighten(trunks: dict, rank: dict, rows: list, centre: dict, width: dict, gap: float) -> None:
    """Move each trunk's points onto one vertical line (where most of its layers have room) wherever the
    boxes beside them leave room, keeping every layer's order and gaps: a straight trunk is drawn
    as one segment, however many layers it passes."""
    where = {v: (i, k) for i, row in enumerate(rows) for k, v in enumerate(row)}

    def room(point) -> tuple:
        i, k = where[point]
        row = rows[i]
        low = centre[row[k - 1]] + width[row[k - 1]] / 2 + gap + width[point] / 2 if k else float("-inf")
        high = centre[row[k + 1]] - width[row[k + 1]] / 2 - gap - width[point] / 2 if k + 1 < len(row) \
            else float("inf")
        return low, high

    for key, start in trunks.items():
        points = [("dummy", key, r) for r in range(start, rank[key[0]])]
        rooms = [room(point) for point in points]
        xs = sorted(centre[p] for p in points)
        candidates = {xs[len(xs) * q // 8] for q in range(8)}  # the line that most layers have room for
        target = max(sorted(candidates), key=lambda x: sum(low <= x <= high for low, high in rooms))
        for point, (low, high) in zip(points, rooms):
            if low <= target <= high:
                centre[point] = target


def _straight_runs(points: list) -> list:
    """The route without the points inside a vertical run (a trunk going straight down through
    layers): its drawing is the same, its length no longer grows with the layers it passes."""
    kept = points[:2]
    for point in points[2:]:
        if abs(kept[-1][0] - point[0]) < 0.05 and abs(kept[-2][0] - point[0]) < 0.05:
            kept[-1] = point
        else:
            kept.append(point)
    return kept


def _longest_path_layers(nodes: list, edges: list) -> dict:
    incoming = {n: 0 for n in nodes}
    below = {n: [] for n in nodes}
    for upper, lower in edges:
        incoming[lower] += 1
        below[upper].append(lower)
    layer = {n: 0 for n in nodes}
    ready = [n for n in reversed(nodes) if incoming[n] == 0]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for m in below[n]:
            layer[m] = max(layer[m], layer[n] + 1)
            incoming[m] -= 1
            if incoming[m] == 0:
                ready.append(m)
    if seen != len(nodes):
        raise ValueError("the graph has a cycle: a layered drawing needs a DAG")
    return layer


def _reduce_crossings(rows: list, up: dict, down: dict, sweeps: int = SWEEPS) -> list:
    best, fewest = [list(r) for r in rows], _crossings(rows, down)
    if fewest == 0:
        return best
    rows = [list(r) for r in rows]
    for _ in range(sweeps):
        for order, neighbours, other in ((range(1, len(rows)), up, -1), (range(len(rows) - 2, -1, -1), down, 1)):
            for i in order:
                position = {v: k for k, v in enumerate(rows[i + other])}

                def barycenter(item, position=position, neighbours=neighbours):
                    k, v = item
                    near = [position[w] for w in neighbours[v]]
                    return sum(near) / len(near) if near else k  # a node with no neighbours keeps its place

                rows[i] = [v for _, v in sorted(enumerate(rows[i]), key=lambda item: (barycenter(item), item[0]))]
        count = _crossings(rows, down)
        if count < fewest:
            best, fewest = [list(r) for r in rows], count
            if count == 0:
                break
    return best


def _crossings(rows: list, down: dict) -> int:
    """Edges between adjacent layers that cross: pairs whose ends are in opposite orders,
    counted as the inversions of the lower ends taken in the upper ends' order (a Fenwick
    tree: E log E per pair of layers, not E²)."""
    total = 0
    for upper, lower in zip(rows, rows[1:]):
        position = {v: k for k, v in enumerate(lower)}
        ends = sorted((i, position[w]) for i, v in enumerate(upper) for w in down[v])
        tree = [0] * (len(lower) + 1)
        seen = 0
        for _, j in ends:
            # the ends seen so far that lie to the right of j cross this edge
            k, not_right = j + 1, 0
            while k > 0:
                not_right += tree[k]
                k -= k & -k
            total += seen - not_right
            k = j + 1
            while k <= len(lower):
                tree[k] += 1
                k += k & -k
            seen += 1
    return total


def _place(row: list, neighbours: dict, centre: dict, width: dict, gap: float) -> None:
    """Move a layer's boxes towards their neighbours' mean centre, in order, `gap` apart."""
    if not row:
        return
    wanted = []
    for v in row:
        near = [centre[w] for w in neighbours[v]]
        wanted.append(sum(near) / len(near) if near else centre[v])
    sep = [(width[a] + width[b]) / 2 + gap for a, b in zip(row, row[1:])]
    left = list(wanted)
    for i in range(1, len(row)):
        left[i] = max(left[i], left[i - 1] + sep[i - 1])
    right = list(wanted)
    for i in range(len(row) - 2, -1, -1):
        right[i] = min(right[i], right[i + 1] - sep[i])
    for v, a, b in zip(row, left, right):
        centre[v] = (a + b) / 2

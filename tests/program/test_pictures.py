"""The layered layout and the SVG pictures: every node and edge drawn, nothing overlapping,
every number the engine's."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from autodiff.program import differentiate, record
from autodiff.program.errors import UsageProblem
from autodiff.program.layout import _crossings, layered
from autodiff.program.plot import parse_range, sample
from autodiff.program.svg import graph_svg, nice_ticks, plot_svg

SVG = "{http://www.w3.org/2000/svg}"
TUTORIAL = "u = a * b\nt = log(d)\ne = u + t * c\n"
AT = {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}


# -- the layout -------------------------------------------------------------------------------------------


@st.composite
def dags(draw):
    """A DAG whose edges go from lower to higher numbers (node 0 on top), with box sizes and labels."""
    n = draw(st.integers(1, 14))
    edges = []
    for child in range(1, n):
        parents = draw(st.lists(st.integers(0, child - 1), min_size=1, max_size=3))
        edges += [(p, child) for p in parents]  # repeated edges too, as x * x makes
    sizes = {i: (draw(st.integers(10, 160)), draw(st.integers(10, 80))) for i in range(n)}
    labelled = draw(st.lists(st.integers(0, max(len(edges) - 1, 0)), unique=True)) if edges else []
    labels = {i: (draw(st.integers(10, 120)), 20) for i in labelled}
    return list(range(n)), edges, sizes, labels


def all_boxes(layout) -> list:
    return [*layout.boxes.values(), *layout.label_boxes.values()]


@given(dags())
def test_no_two_boxes_overlap_and_every_edge_runs_downwards(graph):
    nodes, edges, sizes, labels = graph
    layout = layered(nodes, edges, sizes, labels)
    boxes = all_boxes(layout)
    assert len(layout.boxes) == len(nodes) and set(layout.label_boxes) == set(labels)
    for i, a in enumerate(boxes):
        assert a.x >= 0 and a.y >= 0 and a.x + a.width <= layout.width and a.y + a.height <= layout.height
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)
    for index, (upper, lower) in enumerate(edges):
        assert layout.layers[lower] > layout.layers[upper]
        route = layout.routes[index]
        top, bottom = layout.boxes[upper], layout.boxes[lower]
        assert route[0] == (top.center[0], top.y + top.height) and route[-1] == (bottom.center[0], bottom.y)
        assert all(y1 <= y2 for (_, y1), (_, y2) in zip(route, route[1:]))
    for node, box in layout.boxes.items():  # sizes are kept
        assert (box.width, box.height) == tuple(map(float, sizes[node]))


def test_layers_are_the_longest_path_from_the_top():
    layout = layered(["e", "u", "a", "b"], [("e", "u"), ("u", "a"), ("e", "a"), ("a", "b")],
                     {n: (20, 10) for n in "euab"})
    assert layout.layers == {"e": 0, "u": 1, "a": 2, "b": 3}


def test_barycenter_sweeps_remove_crossings_a_tree_does_not_need():
    # 0 -> 1, 2; 1 -> 4; 2 -> 3: in the given order 3 and 4 are crossed
    nodes, edges = [0, 1, 2, 3, 4], [(0, 1), (0, 2), (1, 4), (2, 3)]
    layout = layered(nodes, edges, {n: (30, 20) for n in nodes})
    x = {n: b.center[0] for n, b in layout.boxes.items()}
    assert (x[1] < x[2]) == (x[4] < x[3])
    rows = [[0], [1, 2], [3, 4]]
    assert _crossings(rows, {0: [1, 2], 1: [4], 2: [3], 3: [], 4: []}) == 1


def test_a_cycle_is_refused():
    with pytest.raises(ValueError, match="cycle"):
        layered([0, 1], [(0, 1), (1, 0)], {0: (1, 1), 1: (1, 1)})


# -- the graph as SVG -------------------------------------------------------------------------------------


def parse(svg: str) -> ET.Element:
    assert svg.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"')
    return ET.fromstring(svg.encode("utf-8"))


def rectangles(root: ET.Element, kind: str) -> dict:
    found = {}
    for group in root.iter(f"{SVG}g"):
        if kind in group.get("class", "").split():
            rect = group.find(f"{SVG}rect")
            key = group.get("id") or (group.get("data-from"), group.get("data-to"), group.get("data-position"))
            found[key] = tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))
    return found


def disjoint(a, b) -> bool:
    return a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]


def check_drawing(svg: str, model) -> ET.Element:
    root = parse(svg)
    nodes = rectangles(root, "node")
    assert set(nodes) == {f"n{n.id}" for n in model.nodes}
    edges = [(p.get("data-from"), p.get("data-to"), p.get("data-position"))
             for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]
    assert sorted(edges) == sorted((f"n{c}", f"n{p}", str(k)) for p, c, k in model.edges)
    labels = rectangles(root, "edge-label")
    assert set(labels) == {(f"n{c}", f"n{p}", str(k)) for (p, c, k) in model.edge_labels}
    boxes = list(nodes.values()) + list(labels.values())
    width, height = float(root.get("width")), float(root.get("height"))
    for i, a in enumerate(boxes):
        assert 0 <= a[0] and a[0] + a[2] <= width and 0 <= a[1] and a[1] + a[3] <= height
        assert all(disjoint(a, b) for b in boxes[i + 1:]), a
    return root


def test_the_tutorial_graph_has_every_node_edge_label_value_and_gradient():
    run = record(TUTORIAL, AT, backward=True, edge_labels=True)
    root = check_drawing(graph_svg(run.graph), run.graph)
    text = {g.get("id"): [t.text for t in g.iter(f"{SVG}text")] for g in root.iter(f"{SVG}g") if g.get("id")}
    by_name = {n.name: f"n{n.id}" for n in run.graph.nodes if n.name}
    assert text[by_name["e"]] == ["e = u + t * c", "AddBackward0", "shape [] · value 17.5129", "grad 1", "line 3"]
    assert text[by_name["d"]] == ["d", "AccumulateGrad", "shape [] · value 10", "grad 0.5"]
    edge_texts = {t.text for g in root.iter(f"{SVG}g") if g.get("class") == "edge-label" for t in g}
    assert "∂t/∂d = 1 / d = 0.1" in edge_texts and "∂u/∂a = b = 3" in edge_texts
    output = root.find(f".//{SVG}g[@id='n{run.graph.root}']")
    assert output.get("class") == "node output" and output.get("data-op") == "AddBackward0"


def test_hostile_names_and_a_large_graph_stay_well_formed():
    program = "x = a\n" + "x = x * a + x\n" * 40 + "y = x"
    run = record(program, {"a": 0.5}, limit=60)
    svg = graph_svg(run.graph, title='<"&">')
    root = check_drawing(svg, run.graph)
    assert root.find(f"{SVG}title").text == '<"&">'
    assert any("more nodes" in (t.text or "") for t in root.iter(f"{SVG}text"))


def test_the_picture_reads_on_dark_backgrounds_too():
    svg = graph_svg(record(TUTORIAL, AT).graph)
    assert "@media (prefers-color-scheme: dark)" in svg
    root = parse(svg)
    for rect in root.iter(f"{SVG}rect"):
        assert rect.get("fill"), "every box has its own fill"


# -- plots ---------------------------------------------------------------------------------------------------


def test_a_plot_is_the_engine_at_every_point():
    plot = sample("y = tanh(w * x) + x * v", "x", -3, 3, points=41, at={"w": 2.0, "v": 0.5})
    assert plot.output == "y" and len(plot.xs) == 41 and plot.xs[0] == -3 and plot.xs[-1] == 3
    for i in (0, 7, 20, 33, 40):
        run = differentiate("y = tanh(w * x) + x * v", {"x": plot.xs[i], "w": 2.0, "v": 0.5}, wrt=["x"])
        assert plot.values[i] == pytest.approx(float(run.output.value), rel=1e-12, abs=1e-15)
        assert plot.grads[i] == pytest.approx(float(run.grads["x"]), rel=1e-12, abs=1e-15)


def test_a_plot_is_one_vectorised_run(monkeypatch):
    from autodiff.program import sweep

    calls = []
    original = sweep.Sweep._batched
    monkeypatch.setattr(sweep.Sweep, "_batched", lambda self, columns, size: calls.append(size) or
                        original(self, columns, size))
    sample("y = x ** 3", "x", -1, 1, points=500)
    assert calls == [500]


def test_failed_points_are_left_out_and_named():
    plot = sample("y = sqrt(x)", "x", -1, 1, points=5)
    assert np.isnan(plot.values[0]) and plot.values[-1] == 1.0 and plot.grads[-1] == 0.5


def test_plot_usage_problems():
    with pytest.raises(UsageProblem, match=r"at=\{'b': VALUE\}"):
        sample("y = a * b", "a", 0, 1)
    with pytest.raises(UsageProblem, match="no input 'z'"):
        sample("y = a", "z", 0, 1)
    for text in ("3", "3:1", "a:b", "0:inf"):
        with pytest.raises(UsageProblem, match="low and high"):
            parse_range(text)
    assert parse_range("-3:3") == (-3.0, 3.0)


def test_the_plot_svg_carries_its_samples():
    plot = sample("y = x ** 2", "x", -2, 2, points=9)
    root = parse(plot_svg(plot))
    data = json.loads(root.find(f"{SVG}metadata").text)
    assert [p["x"] for p in data["points"]] == plot.xs.tolist()
    assert [p["grad"] for p in data["points"]] == (2 * plot.xs).tolist()
    series = {p.get("data-series"): p.get("d") for p in root.iter(f"{SVG}path") if p.get("data-series")}
    assert set(series) == {"value", "grad"} and series["value"].count("L") == 8


def test_ticks_are_round():
    assert nice_ticks(-3, 3) == [-3, -2, -1, 0, 1, 2, 3]
    assert nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]


@given(st.lists(st.lists(st.integers(0, 5), max_size=3), min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_crossings_are_counted_as_every_pair_would_count_them(targets, random):
    upper = list(range(len(targets)))
    lower = [f"v{k}" for k in range(6)]
    random.shuffle(lower)
    down = {u: [f"v{t}" for t in ts] for u, ts in zip(upper, targets)} | {v: [] for v in lower}
    position = {v: k for k, v in enumerate(lower)}
    ends = [(i, position[w]) for i, u in enumerate(upper) for w in down[u]]
    brute = sum((i - k) * (j - m) < 0 for a, (i, j) in enumerate(ends) for (k, m) in ends[a + 1:])
    assert _crossings([upper, lower], down) == brute


def test_inputs_used_on_every_line_cost_a_drawing_near_linear_in_the_program():
    """Long edges into one node share one trunk, drawn straight: the drawing of a program whose
    inputs are used on every line (the graph of explain's page) grows as its nodes do, not as
    nodes × layers."""
    def drawing(lines: int) -> tuple:
        run = record("s = a * b\n" + "s = s + sin(a * s) * b\n" * lines, {"a": 0.5, "b": 0.3}, limit=10_000)
        layout = layered([n.id for n in run.graph.nodes], [(p, c) for p, c, _ in run.graph.edges],
                         {n.id: (60, 30) for n in run.graph.nodes})
        boxes = list(layout.boxes.values())
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:i + 40])
        return len(run.graph.nodes), sum(len(route) for route in layout.routes.values()), len(graph_svg(run.graph))

    small, large = drawing(30), drawing(120)
    grown = large[0] / small[0]
    assert large[1] / small[1] < 1.5 * grown and large[2] / small[2] < 1.5 * grown

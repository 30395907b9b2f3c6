"""graph/explain --format svg, graph --format png|pdf, and autodiff plot, end to end."""

from __future__ import annotations

import importlib.util
import json
import xml.etree.ElementTree as ET

import pytest
from console import ROOT

from autodiff.program import differentiate, record

SVG = "{http://www.w3.org/2000/svg}"
TUTORIAL = ["examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10"]


def no_programs(tmp_path) -> dict:
    """An environment whose PATH finds nothing: no `dot`, nothing else installed."""
    empty = tmp_path / "bin"
    empty.mkdir()
    return {"PATH": str(empty)}


def drawn(svg: str) -> tuple:
    root = ET.fromstring(svg.encode("utf-8"))
    nodes = {g.get("id") for g in root.iter(f"{SVG}g") if "node" in g.get("class", "").split()}
    edges = sorted((p.get("data-from"), p.get("data-to"), p.get("data-position"))
                   for p in root.iter(f"{SVG}path") if p.get("class") == "edge")
    return root, nodes, edges


def test_graph_svg_needs_nothing_installed(autodiff, tmp_path):
    result = autodiff("graph", *TUTORIAL, "--backward", "--format", "svg", **no_programs(tmp_path))
    assert result.code == 0 and result.stderr == ""
    model = record((ROOT / "examples/tutorial.expr").read_text(), {"a": 2, "b": 3, "c": 5, "d": 10}).graph
    root, nodes, edges = drawn(result.stdout)
    assert nodes == {f"n{n.id}" for n in model.nodes}
    assert edges == sorted((f"n{c}", f"n{p}", str(k)) for p, c, k in model.edges)
    assert "grad 0.5" in {t.text for t in root.iter(f"{SVG}text")}


def test_explain_svg_labels_every_edge_with_its_local_derivative(autodiff, tmp_path):
    result = autodiff("explain", *TUTORIAL, "--format", "svg", **no_programs(tmp_path))
    assert result.code == 0
    root, nodes, edges = drawn(result.stdout)
    labels = {g.get("data-from") + ">" + g.get("data-to"): g.find(f"{SVG}text").text
              for g in root.iter(f"{SVG}g") if g.get("class") == "edge-label"}
    assert len(labels) == len(edges) == 7
    assert "∂t/∂d = 1 / d = 0.1" in labels.values()
    texts = {t.text for t in root.iter(f"{SVG}text")}
    assert {"grad 3", "grad 2", "grad 0.5", "shape [] · value 17.5129"} <= texts


@pytest.mark.parametrize("fmt", ["png", "pdf"])
def test_png_and_pdf_without_graphviz_is_a_usage_error_that_names_svg(autodiff, tmp_path, fmt):
    result = autodiff("graph", *TUTORIAL, "--format", fmt, **no_programs(tmp_path))
    assert result.code == 2 and result.stdout == ""
    assert "needs Graphviz's `dot`" in result.stderr and "--format svg" in result.stderr


def test_png_with_graphviz_is_dots_own(autodiff, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    dot = fake / "dot"  # a stand-in that shows what it was given
    dot.write_text("#!/bin/sh\necho \"$1\"\nexec /bin/cat\n")
    dot.chmod(0o755)
    result = autodiff("graph", *TUTORIAL, "--format", "png", PATH=str(fake))
    assert result.code == 0
    assert result.stdout.startswith("-Tpng\ndigraph") and "rankdir=BT" in result.stdout


# -- plot -----------------------------------------------------------------------------------------------------


def test_plot_json_is_the_engine_at_every_point(autodiff):
    result = autodiff("plot", "examples/tutorial.expr", "--wrt", "d", "--range", "1:10", "--at", "a=2,b=3,c=5",
                      "--samples", "10", "--format", "json")
    assert result.code == 0 and result.stderr == ""
    data = json.loads(result.stdout)
    assert data["output"] == "e" and data["wrt"] == "d" and data["at"] == {"a": 2.0, "b": 3.0, "c": 5.0}
    assert [p["d"] for p in data["points"]] == [float(d) for d in range(1, 11)]
    program = (ROOT / "examples/tutorial.expr").read_text()
    for point in data["points"]:
        run = differentiate(program, {"a": 2, "b": 3, "c": 5, "d": point["d"]})
        assert point["value"] == pytest.approx(float(run.output.value), rel=1e-12)
        assert point["grad"] == pytest.approx(float(run.grads["d"]), rel=1e-12)


def test_plot_plain_and_the_terminal_picture(autodiff):
    result = autodiff("plot", "-e", "y = x ** 2", "--wrt", "x", "--range", "-1:1", "--samples", "3")
    assert (result.code, result.stdout) == (0, "x\ty\tdy/dx\n-1.0\t1.0\t-2.0\n0.0\t0.0\t0.0\n1.0\t1.0\t2.0\n")
    result = autodiff("plot", "-e", "y = x ** 2", "--wrt", "x", "--range", "-1:1", "--format", "rich")
    lines = result.stdout.splitlines()
    assert result.code == 0 and "∂y/∂x" in lines[0] and len(lines) == 1 + 16 + 2
    assert any("\u2800" < ch <= "\u28ff" for ch in result.stdout)  # braille dots


def test_plot_says_where_the_output_is_not_finite_as_grad_does_at_one_point(autodiff):
    plot = autodiff("plot", "-e", "y = sqrt(x)", "--wrt", "x", "--range", "-1:1", "--samples", "5", "--at", "q=1")
    assert plot.code == 0
    values = [line.split("\t") for line in plot.stdout.splitlines()[1:]]
    not_finite = [row for row in values if "nan" in row[1:] or "inf" in row[1:]]
    assert f"y or dy/dx is nan or infinite at {len(not_finite)} of 5 point(s)" in plot.stderr, plot.stderr
    assert f"the first, at x={float(not_finite[0][0]):g}, run alone, says:" in plot.stderr
    alone = autodiff("grad", "-e", "y = sqrt(x)", "--at", f"x={not_finite[0][0]},q=1")
    assert alone.stderr.strip() and set(alone.stderr.splitlines()) <= set(plot.stderr.splitlines())  # the same warnings: the line, the caret, q unused
    assert "'q', which is not an input" in plot.stderr
    assert autodiff("plot", "-e", "y = x ** 2", "--wrt", "x", "--range", "-1:1").stderr == ""


def test_plot_svg_file(autodiff, tmp_path):
    out = tmp_path / "p.svg"
    result = autodiff("plot", "-e", "y = sin(x)", "--wrt", "x", "--range", "-3:3", "--samples", "50", "-o", str(out),
                      **no_programs(tmp_path))
    assert (result.code, result.stdout, result.stderr) == (0, "", "")
    root = ET.parse(out).getroot()
    data = json.loads(root.find(f"{SVG}metadata").text)
    assert len(data["points"]) == 50
    assert {p.get("data-series") for p in root.iter(f"{SVG}path")} >= {"value", "grad"}


PLANCK = ("h: const = 6.62607015e-34\nc: const = 299792458.0\nk: const = 1.380649e-23\nT: const = 5000.0\n"
          "B = 2 * h * c ** 2 / lam ** 5 / (exp(h * c / (lam * k * T)) - 1)\n")


def heights(svg: str) -> dict:
    """Each curve's drawn height as a share of its panel's (its clip rectangle's)."""
    root = ET.fromstring(svg.encode("utf-8"))
    clips = {f"url(#{c.get('id')})": float(c.find(f"{SVG}rect").get("height")) for c in root.iter(f"{SVG}clipPath")}
    shares = {}
    for path in root.iter(f"{SVG}path"):
        if path.get("data-series") and path.get("clip-path"):
            words = path.get("d").split()
            ys = [float(words[i + 2]) for i, word in enumerate(words) if word in ("M", "L")]
            shares[path.get("data-series")] = (max(ys) - min(ys)) / clips[path.get("clip-path")]
    return shares


def test_a_derivative_of_another_scale_gets_axes_of_its_own(autodiff):
    """Planck's law: B near 10¹³, ∂B/∂λ near 10¹⁹. On shared axes B is a flat line; each gets its
    panel, as matplotlib users draw them. Curves of one scale share one pair of axes."""
    planck = autodiff("plot", "-e", PLANCK, "--wrt", "lam", "--range", "1e-7:3e-6", "--samples", "80",
                      "--format", "svg")
    assert planck.code == 0, planck.stderr
    assert planck.stdout.count("<clipPath") == 2
    assert min(heights(planck.stdout).values()) > 0.8
    square = autodiff("plot", "-e", "y = x ** 2", "--wrt", "x", "--range", "-1:1", "--format", "svg")
    assert square.stdout.count("<clipPath") == 1 and min(heights(square.stdout).values()) > 0.2
    text = autodiff("plot", "-e", PLANCK, "--wrt", "lam", "--range", "1e-7:3e-6", "--format", "rich").stdout
    labels = [line.split("┤")[0].strip() for line in text.splitlines() if "┤" in line]
    assert len(labels) == 6 and "e+13" in labels[0] and "e+19" in labels[3], text


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="matplotlib is not installed")
def test_plot_png_by_matplotlib(autodiff, tmp_path):
    out = tmp_path / "p.png"
    result = autodiff("plot", "-e", "y = tanh(x)", "--wrt", "x", "--range", "-3:3", "-o", str(out))
    assert result.code == 0, result.stderr
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_plot_png_without_matplotlib_says_how_to_install_it(autodiff, tmp_path):
    blocker = tmp_path / "block"
    (blocker / "matplotlib").mkdir(parents=True)
    (blocker / "matplotlib" / "__init__.py").write_text("raise ImportError('No module named matplotlib')\n")
    import os

    path = os.pathsep.join(p for p in [str(blocker), os.environ.get("PYTHONPATH", "")] if p)
    result = autodiff("plot", "-e", "y = x", "--wrt", "x", "--range", "0:1", "-o", str(tmp_path / "p.png"),
                      PYTHONPATH=path)
    assert result.code == 2 and "pip install 'autodiff[plot]'" in result.stderr and "-o plot.svg" in result.stderr
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("args, message", [
    (["--range", "3:1"], "--range 3:1"),
    (["--range", "-1:1", "-o", "x.gif"], "write a .svg or a .png"),
    (["--range", "-1:1", "--samples", "1"], "--samples 1"),
])
def test_plot_usage_errors(autodiff, args, message):
    result = autodiff("plot", "-e", "y = x", "--wrt", "x", *args)
    assert result.code == 2 and message in result.stderr


# -- the pictures in examples/ are what the commands draw today -------------------------------------------


def test_the_example_pictures_are_up_to_date(autodiff, tmp_path):
    graph = autodiff("explain", *TUTORIAL, "--format", "svg")
    assert graph.stdout == (ROOT / "examples/tutorial-graph.svg").read_text(), \
        "regenerate: autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format svg " \
        "> examples/tutorial-graph.svg"
    out = tmp_path / "plot.svg"
    autodiff("plot", "examples/tutorial.expr", "--wrt", "d", "--range", "1:10", "--at", "a=2,b=3,c=5", "-o", str(out))
    assert out.read_text() == (ROOT / "examples/tutorial-plot.svg").read_text(), \
        "regenerate: autodiff plot examples/tutorial.expr --wrt d --range 1:10 --at a=2,b=3,c=5 " \
        "-o examples/tutorial-plot.svg"


def test_a_graph_with_nothing_recorded_is_a_drawing_of_positive_size(autodiff):
    result = autodiff("graph", "-e", "y = detach(x) * 2", "--at", "x=1", "--format", "svg")
    assert result.code == 0
    root = ET.fromstring(result.stdout.encode("utf-8"))
    assert float(root.get("height")) > 0 and float(root.get("width")) > 0
    assert root.find(f"{SVG}text[@class='note']").text.startswith("nothing recorded")

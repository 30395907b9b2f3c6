"""explain --format html and graph --format html, read as files: what the page embeds, that it is
the JSON and the drawing of the other formats, that it stands alone, and that nothing a program's
author wrote becomes markup. tests/page/test_browser.py opens the pages in a browser."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest
from console import ROOT

from autodiff.program.page import build
from autodiff.program.page.write import embedded_json

TUTORIAL = ["examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10"]


def embedded(page_html: str) -> dict:
    match = re.search(r'<script type="application/json" id="autodiff-data">(.*?)</script>', page_html, re.DOTALL)
    return json.loads(match.group(1))


def inline_svg(page_html: str) -> str:
    return re.search(r"(<svg .*?</svg>)", page_html, re.DOTALL).group(1)


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """The tutorial's page and the other formats of the same run, from the command line."""
    from console import run_autodiff

    out = {}
    for name, args in (("html", ["explain", *TUTORIAL, "--format", "html"]),
                       ("json", ["explain", *TUTORIAL, "--format", "json"]),
                       ("svg", ["graph", *TUTORIAL, "--format", "svg"]),
                       ("graph_json", ["graph", *TUTORIAL, "--format", "json"]),
                       ("graph_html", ["graph", *TUTORIAL, "--format", "html"])):
        result = run_autodiff(*args)
        assert result.code == 0 and result.stderr == "", result.stderr
        out[name] = result.stdout
    return out


def test_the_page_embeds_explains_json_as_it_is(tutorial):
    data = embedded(tutorial["html"])
    assert data["explanation"] == json.loads(tutorial["json"])
    assert data["source"] == "examples/tutorial.expr"
    assert data["program"] == (ROOT / "examples/tutorial.expr").read_text()


def test_the_graph_is_drawn_as_graph_svg_draws_it(tutorial):
    """The same drawing, box for box: only the XML declaration and the picture's own style are left
    out (the page's stylesheet colours it in the page's theme)."""
    svg = tutorial["svg"]
    expected = re.sub(r"<style>.*?</style>\n", "", svg.split("\n", 1)[1], flags=re.DOTALL).strip()
    assert inline_svg(tutorial["html"]) == expected
    nodes = embedded(tutorial["html"])["graph"]["nodes"]
    assert nodes == [{"id": n["id"], "op": n["op"], "name": n["name"], "source": n["source"], "line": n["line"],
                      "shape": n["shape"], "value": n["value"], "leaf": n["op"] == "AccumulateGrad"}
                     for n in json.loads(tutorial["graph_json"])["nodes"]]


def test_graph_format_html_is_the_same_page(tutorial):
    assert tutorial["graph_html"] == tutorial["html"]


def test_every_path_and_step_is_linked_to_the_drawing(tutorial):
    data = embedded(tutorial["html"])
    names = {n["id"]: n["name"] or n["source"] for n in data["graph"]["nodes"]}
    drawn = {(int(to[1:]), int(frm[1:]), int(pos)) for frm, to, pos in
             re.findall(r'class="edge" data-from="(n\d+)" data-to="(n\d+)" data-position="(\d+)"', tutorial["html"])}
    for name, item in data["explanation"]["inputs"].items():
        for path, link in zip(item["paths"], data["links"]["paths"][name], strict=True):
            assert [names[i] for i in link["nodes"]] == path["nodes"]
            assert all(tuple(e) in drawn for e in link["edges"])
            assert len(link["edges"]) == len(path["edges"])
    for step, link in zip(data["explanation"]["steps"], data["links"]["steps"], strict=True):
        assert names[link["node"]] == step.get("leaf", step["node"])
        assert [names[e[1]] for e in link["passes"]] == [p["to"] for p in step.get("passes", [])]


def test_the_tutorials_page_is_small_and_stands_alone(tutorial):
    page = tutorial["html"]
    assert len(page.encode("utf-8")) < 200_000
    # nothing to fetch: no URL anywhere, and a policy that forbids fetching anything
    assert not re.search(r"(?:src|href)\s*=\s*[\"'](?!#)", page)
    assert not re.search(r"https?:|//cdn|@import|url\((?!#)", page.replace("http://www.w3.org/2000/svg", ""))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    assert policy.startswith("default-src 'none'; script-src 'sha256-") and "'unsafe-inline'" not in policy


def test_the_policy_allows_exactly_the_pages_script_and_style(tutorial):
    import base64
    import hashlib

    page = tutorial["html"]
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL).group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL).group(1)
    digest = lambda text: base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()  # noqa: E731
    assert f"script-src 'sha256-{digest(script)}'" in page and f"style-src 'sha256-{digest(style)}'" in page


HOSTILE = "# </script><script>window.pwned = 1</script> <!-- <img src=x onerror=alert(1)> & &amp;\ny = x * 2\n"


def test_what_the_author_wrote_never_becomes_markup(tmp_path):
    name = "<img src=x onerror=alert(1)>&amp;.expr"
    path = tmp_path / name
    path.write_text(HOSTILE)
    from console import run_autodiff

    result = run_autodiff("explain", str(path), "--at", "x=1", "--format", "html")
    assert result.code == 0
    page = result.stdout
    data = embedded(page)
    assert data["program"] == HOSTILE and data["source"] == str(path)
    head, _, rest = page.partition('<script type="application/json" id="autodiff-data">')
    payload = rest.partition("</script>")[0]
    assert "<" not in payload and ">" not in payload and "&" not in payload  # JSON escapes only
    assert "<img" not in head.replace(html.escape("<img"), "")  # the file's name, escaped wherever it shows
    assert page.count("<script") == 2


def test_json_in_a_script_element_cannot_close_it():
    text = embedded_json({"a": "</script><!--<script>", "b": "&amp; \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!--<script>", "b": "&amp; \u2028"}


def test_a_page_reports_what_explain_warns_about():
    page = build("y = log(x)\n", {"x": -1.0})
    assert page.warnings and page.data()["warnings"] == [w.message for w in page.warnings]
    assert "nan" in page.data()["warnings"][0]


def test_a_tensor_program_links_each_path_to_its_edges():
    page = build((ROOT / "examples/mlp.expr").read_text(), {})
    data = page.data()
    for name, item in data["explanation"]["inputs"].items():
        for path, link in zip(item["paths"], data["links"]["paths"][name], strict=True):
            assert None not in link["nodes"] and None not in link["edges"]
            assert len(link["nodes"]) == len(path["nodes"])


def test_a_starting_gradient_is_an_edge_the_drawing_does_not_have():
    page = build("y = a * b\n", {"a": 2.0, "b": 3.0}, grad_output="2")
    data = page.data()
    path = data["explanation"]["inputs"]["a"]["paths"][0]
    assert path["edges"][0]["op"] == "grad_output" and data["links"]["paths"]["a"][0]["edges"][0] is None
    assert data["text"]["seed"].startswith("backward starts from the gradient g = 2")


def test_nodes_beyond_the_limit_are_counted_and_left_unlinked():
    page = build("x = a\n" + "x = sin(x)\n" * 30, {"a": 0.5}, nodes=10)
    data = page.data()
    assert data["graph"]["left_out"] == 21  # 30 sin nodes and the leaf, 10 of them drawn
    link = data["links"]["paths"]["a"][0]
    assert link["nodes"][:10] == list(range(10)) and link["nodes"][-1] is None
    assert sum(s["node"] is None for s in data["links"]["steps"]) == 21


def test_the_page_is_loaded_only_when_asked_for():
    """`--format html` imports the page; no other format does (start-up cost)."""
    code = ("import sys; from autodiff.cli.main import main; sys.argv = ['autodiff', 'explain', '-e', 'y = x * 2', "
            "'--at', 'x=1', '--format', '{fmt}']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('autodiff.program.page' in sys.modules, file=sys.stderr)")
    for fmt, loaded in (("json", "False"), ("html", "True")):
        done = subprocess.run([sys.executable, "-c", code.format(fmt=fmt)], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
        assert done.stderr.strip().splitlines()[-1] == loaded, done.stderr


def test_the_notebook_magic_shows_the_same_page_inline():
    jupyter = pytest.importorskip("autodiff.jupyter", exc_type=ImportError)
    text = (ROOT / "examples/tutorial.expr").read_text()
    shown = jupyter.run_cell("--at a=2,b=3,c=5,d=10 --explain --html", text)
    frame = shown._repr_html_()
    srcdoc = re.search(r'srcdoc="([^"]*)"', frame).group(1)
    from autodiff.language import Source

    assert html.unescape(srcdoc) == shown.html() == build(Source(text, "<cell>"), {"a": 2, "b": 3, "c": 5, "d": 10}).html()
    assert embedded(shown.html())["explanation"]["inputs"]["d"]["grad"] == 0.5
    assert repr(shown).startswith("<autodiff page of <cell>: ")
    from autodiff.program.errors import UsageProblem

    with pytest.raises(UsageProblem, match="add --explain"):
        jupyter.run_cell("--at a=2,b=3,c=5,d=10 --html", text)


def test_without_a_browser_the_browser_tests_skip_saying_how_to_get_one(tmp_path):
    from .conftest import locate_browser

    with pytest.raises(pytest.skip.Exception, match=r"apt-get install chromium chromium-driver"):
        locate_browser(ci=False, path=str(tmp_path))  # an empty folder: no browser, no driver


def test_in_ci_a_browser_that_cannot_be_had_is_a_failure(tmp_path):
    from .conftest import locate_browser

    with pytest.raises(pytest.fail.Exception, match="no headless Chromium and its driver found"):
        locate_browser(ci=True, path=str(tmp_path))  # no apt-get on this path either


def test_a_large_tensor_is_summarised_by_its_corners_and_statistics(tmp_path):
    """A page shows a large tensor as NumPy prints one (its first and last rows and columns) with
    its shape and statistics, never every number: explain --format json has them all."""
    import shutil

    from console import run_autodiff

    program = "W: input = randn(150, 160)\nx: input = randn(160)\ny = sum(tanh(W @ x) ** 2)\n"
    page = run_autodiff("explain", "-e", program, "--format", "html")
    whole = run_autodiff("explain", "-e", program, "--format", "json")
    assert page.code == whole.code == 0, page.stderr
    assert len(page.stdout) < len(whole.stdout) / 5
    grad = json.loads(whole.stdout)["inputs"]["W"]["grad"]
    shown = embedded(page.stdout)["explanation"]["inputs"]["W"]["grad"]
    rows = [0, 1, 2, 147, 148, 149]
    assert shown["summary"] and shown["shape"] == [150, 160] and shown["size"] == 150 * 160
    assert shown["corner"] == [[grad[i][j] for j in [0, 1, 2, 157, 158, 159]] for i in rows]
    flat = [v for row in grad for v in row]
    assert (shown["min"], shown["max"], shown["not_finite"]) == (min(flat), max(flat), 0)
    assert shown["mean"] == pytest.approx(sum(flat) / len(flat), rel=1e-9, abs=1e-15)
    x = embedded(page.stdout)["explanation"]["inputs"]["x"]["grad"]
    assert isinstance(x, list) and len(x) == 160  # small tensors stay whole
    node = shutil.which("node")
    if node is not None:  # the page's script draws the summary: its corners with the gaps, and the statistics
        script = (ROOT / "src/autodiff/program/page/page.js").read_text()
        functions = script[script.index("  function $(id)"):script.index("  // -- the drawing --")]
        stub = ("function N(t){this.tag=t;this.children=[];this.dataset={};this.className='';this.textContent='';}"
                "N.prototype.appendChild=function(c){this.children.push(c);return c;};"
                "N.prototype.setAttribute=function(){};N.prototype.addEventListener=function(){};"
                "var document={createElement:function(t){return new N(t);},createTextNode:function(t){"
                "var n=new N('#text');n.textContent=t;return n;}};var EDGE_ITEMS=3,THRESHOLD=8;"
                "function text(n){return n.textContent+n.children.map(text).join('');}")
        check = (f"var box=tensorView({json.dumps(shown)},'grad');"
                 "console.log(JSON.stringify([box.dataset.shape,box.children.map(function(c){return c.className;}),"
                 "box.children[0].children.map(function(r){return r.children.length;}),text(box.children[2])]));")
        done = subprocess.run([node, "-e", stub + functions + check], capture_output=True, text=True, timeout=60)
        shape, parts, cells, stats = json.loads(done.stdout)
        assert shape == "[150,160]" and parts == ["", "shape", "stats", "muted"]
        assert cells == [7, 7, 7, 1, 7, 7, 7]  # three rows, the gap, three rows: three cells, the gap, three
        assert stats.startswith("min ") and " · max " in stats and " · mean " in stats

"""The page in a real browser (headless Chromium, one for the whole session: conftest.py): every
number it shows is the one `explain --format json` gives, every path and backward step lights up
where the drawing has it, the keyboard and the themes work, and it makes no network request."""

from __future__ import annotations

import html
import json
import math
import os
import random
import re

import pytest
from console import ROOT, run_autodiff

from autodiff.chain_rule import Edge, Path, product_text, values_text
from autodiff.cli.render.explain import json_ as explain_json
from autodiff.program.explain import explain
from autodiff.program.page import build

from .conftest import open_page
from .dom import ALL_STEPS, PATHS, STEP, same, texts_agree, value

TUTORIAL = ["examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10"]
SCREENSHOT = ROOT / "docs" / "explain-page.png"


def run(*args) -> str:
    result = run_autodiff(*args)
    assert result.code == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """The tutorial's page as the command writes it, and what the other formats say of the same run."""
    where = tmp_path_factory.mktemp("tutorial") / "tutorial.html"
    where.write_text(run("explain", *TUTORIAL, "--format", "html"))
    svg = run("explain", *TUTORIAL, "--format", "svg")
    labels = {f"{to}>{frm}>{pos}": html.unescape(text) for frm, to, pos, text in
              re.findall(r'<g class="edge-label" data-from="n(\d+)" data-to="n(\d+)" data-position="(\d+)">.*?'
                         r"<text[^>]*>([^<]*)</text>", svg)}
    graph = json.loads(run("graph", *TUTORIAL, "--format", "json"))
    return {"path": where, "json": json.loads(run("explain", *TUTORIAL, "--format", "json")), "labels": labels,
            "plain": run("explain", *TUTORIAL, "--format", "plain"),
            "names": {f"n{n['id']}": n["name"] or n["source"] for n in graph["nodes"]}}


def check_paths(page, explanation: dict, name: str, names: dict | None = None) -> dict:
    """Pick input `name` and compare every number shown of its paths with the explanation's."""
    page.js("document.querySelector('#inputs button[data-input=\"' + arguments[0] + '\"]').click()", name)
    shown = page.js(PATHS)
    item = explanation["inputs"][name]
    assert same(value(shown["grad"]), item["grad"]) and texts_agree(shown["grad"])
    if item["grad"] is None:
        assert shown["paths"] == [] and shown["why"] == f"Why: {item['why']}"
        return shown
    assert shown["count_value"] == str(item["paths_count"])
    assert len(shown["paths"]) == len(item["paths"])
    scalar = not isinstance(item["grad"], list)
    for path, expected in zip(shown["paths"], item["paths"], strict=True):
        assert same(value(path["product"]), expected["product"]) and texts_agree(path["product"])
        heads = " · ".join(e["formula"].split(" = ")[0].split(":")[0] for e in expected["edges"])
        assert path["head"].startswith((heads or f"∂{expected['nodes'][0]}/∂{expected['nodes'][0]}") +
                                       (" = " if scalar else " → "))
        locals_ = [e["local"] for e in expected["edges"]] if scalar and len(expected["edges"]) > 1 else []
        assert [value(x) for x in path["locals"]] == [float(x) for x in locals_]
        assert all(texts_agree(x) for x in path["locals"])
        for edge, text, local in zip(expected["edges"], path["edges"], path["edge_locals"], strict=True):
            assert text.startswith(edge["formula"]) and text.endswith(f"[{edge['op']}]")
            assert local is None or same(value(local), edge["local"])
    if scalar:  # the products listed, the rest, and the sum: the gradient
        assert [value(t) for t in shown["terms"]] == [float(p["product"]) for p in item["paths"]]
        rest = value(shown["rest"]) if shown["rest"] else 0.0
        assert math.isclose(math.fsum([*(value(t) for t in shown["terms"]), rest]), float(item["grad"]),
                            rel_tol=1e-9, abs_tol=1e-12)
    assert same(value(shown["total"]), item["grad"])
    assert (shown["rest"] is not None) == (len(item["paths"]) < item["paths_count"])
    if shown["rest"] is not None:
        assert same(value(shown["rest"]), item["rest"])
    if names is not None:  # the lit nodes are the paths' nodes, by their names in the drawing
        assert {names[n] for n in shown["nodes"]} == {n for p in item["paths"] for n in p["nodes"]}
    return shown


def check_step(shown: dict, step: dict, total: int) -> None:
    assert shown["number"] == str(step["step"]) and shown["count"] == f"Step {step['step']} of {total}"
    assert shown["op"].strip("[]").split(",")[0] == step["op"]
    assert same(value(shown["grad"]), step["grad"]) and texts_agree(shown["grad"])
    if "leaf" in step:
        assert shown["leaf"] == step["leaf"] and shown["node"] is None
        assert same(value(shown["total"]), step["total"])
        assert (shown["arrivals"] is not None) == (step["arrivals"] > 1)
        assert shown["passes"] == [] and shown["passing"] == []
        return
    assert shown["node"] == step["node"]
    assert len(shown["passes"]) == len(step["passes"]) == len(shown["passing"])
    for got, expected in zip(shown["passes"], step["passes"], strict=True):
        assert got["to"] == expected["to"] and got["formula"] == f"({expected['formula']})"
        assert same(value(got["grad"]), step["grad"])
        assert same(value(got["local"]), expected["local"]) and texts_agree(got["local"])
        assert same(value(got["value"]), expected["value"]) and texts_agree(got["value"])


# -- the tutorial ------------------------------------------------------------------------------------------


def test_each_inputs_paths_are_explains(browser, tutorial):
    page = open_page(browser, tutorial["path"])
    explanation = tutorial["json"]
    assert list(explanation["inputs"]) == page.js(
        "return Array.from(document.querySelectorAll('#inputs button')).map(function (b) { return b.dataset.input; })")
    for name, item in explanation["inputs"].items():
        shown = check_paths(page, explanation, name, tutorial["names"])
        for path, expected in zip(shown["paths"], item["paths"]):  # as explain's text writes it
            edges = [Edge(e["op"], e["formula"], e["local"]) for e in expected["edges"]]
            assert path["head"] == product_text(Path(expected["nodes"], edges, expected["product"]), True)
            assert product_text(Path(expected["nodes"], edges, expected["product"]), True) in tutorial["plain"]
            for e, text in zip(edges, path["edges"]):
                assert " ".join(text.split()) in " ".join(tutorial["plain"].split())
        # each lit edge carries its local derivative, as explain --format svg labels that edge
        assert len(shown["notes"]) == len(shown["edges"]) == sum(len(p["edges"]) for p in item["paths"])
        for key, text in shown["notes"]:
            assert tutorial["labels"][key] == text
        assert shown["sum_text"].endswith(f"∂e/∂{name} = {values_text(float(item['grad']))}")


def test_the_backward_pass_step_by_step_with_the_keys_and_the_buttons(browser, tutorial):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    page = open_page(browser, tutorial["path"])
    steps = tutorial["json"]["steps"]
    keys = ActionChains(browser)
    shown = page.js(STEP)
    assert shown["previous"] and not shown["next"]
    for k, step in enumerate(steps):
        check_step(shown, step, len(steps))
        node = step.get("leaf", step.get("node"))
        assert [tutorial["names"][n] for n in shown["current"]] == [node]  # the node run, lit in the drawing
        assert sorted(tutorial["names"][e[1]] for e in shown["passing"]) == \
            sorted(p["to"] for p in step.get("passes", []))  # the edges it passes gradients along
        if k:
            assert shown["announced"].startswith(f"Step {k + 1} of {len(steps)}: ")
        if "line" in step and step["line"] is not None:
            assert shown["line"] == [str(step["line"])]
        keys.send_keys(Keys.ARROW_RIGHT).perform()
        shown = page.js(STEP)
    assert shown["number"] == str(len(steps)) and shown["next"]  # the last step stays the last
    page.js("document.getElementById('previous').click()")
    assert page.js(STEP)["number"] == str(len(steps) - 1)
    keys.send_keys(Keys.ARROW_LEFT).perform()
    assert page.js(STEP)["number"] == str(len(steps) - 2)
    page.js("document.getElementById('first').focus()")
    keys.send_keys(Keys.END).perform()
    assert page.js(STEP)["number"] == str(len(steps))
    keys.send_keys(Keys.HOME).perform()
    assert page.js(STEP)["number"] == "1"
    page.js("document.getElementById('last').click()")
    assert page.js(STEP)["number"] == str(len(steps))


def test_no_network_request_and_nothing_refused(browser, tutorial, tmp_path):
    """Everything the page does (every input, every step, a node, the themes) fetches nothing: the
    only request the browser logs is the file itself, and the console has no error (a request the
    page's policy refused would be one)."""
    page = open_page(browser, tutorial["path"])
    page.js("""
        Array.from(document.querySelectorAll('#inputs button')).forEach(function (b) { b.click(); });
        document.querySelector('li.path').click();
        """ + ALL_STEPS.replace("return out;", "") + """
        document.querySelector('svg g.node').dispatchEvent(new MouseEvent('click', {bubbles: true}));
        ['zoom-in', 'zoom-out', 'zoom-fit', 'theme', 'theme', 'theme'].forEach(function (id) {
          document.getElementById(id).click(); });
        """)
    assert requests(browser) == [page.url]
    assert errors(browser) == []
    # The two checks see what they look for: an image the page's policy refuses is an error in the
    # console, and without the policy it is a request.
    source = tutorial["path"].read_text().replace("<main>", '<main><img src="http://127.0.0.1:9/x.png" alt="">', 1)
    refused = tmp_path / "refused.html"
    refused.write_text(source)
    open_page(browser, refused)
    assert any("Content Security Policy" in message for message in errors(browser))
    fetched = tmp_path / "fetched.html"
    fetched.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", source))
    opened = open_page(browser, fetched)
    assert requests(browser) == [opened.url, "http://127.0.0.1:9/x.png"]


def requests(browser) -> list:
    """The URLs the browser asked for since the page was opened (Chrome's Network.requestWillBeSent)."""
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def errors(browser) -> list:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_keyboard_and_screen_reader(browser, tutorial):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    page = open_page(browser, tutorial["path"])
    nodes = page.js("""return Array.from(document.querySelectorAll('svg g.node')).map(function (g) {
        return [g.id, g.getAttribute('role'), g.getAttribute('tabindex'), g.getAttribute('aria-label')]; })""")
    assert len(nodes) == 8 and all(role == "button" and tab == "0" for _, role, tab, _ in nodes)
    labels = {tutorial["names"][i]: label for i, _, _, label in nodes}
    assert labels["d"] == "leaf, input d, AccumulateGrad, shape [] · value 10"
    assert labels["t"] == "node t = log(d), LogBackward0, shape [] · value 2.30259, line 4"
    # Tab reaches the drawing's nodes; Enter on a leaf shows it whole and picks its input
    page.js("document.activeElement.blur(); window.scrollTo(0, 0)")
    keys = ActionChains(browser)
    for _ in range(12):
        keys.send_keys(Keys.TAB).perform()
        if page.js("return document.activeElement.classList.contains('node')"):
            break
    else:
        raise AssertionError("Tab never reached a node of the drawing")
    leaf = next(i for i, _, _, label in nodes if label.startswith("leaf, input c"))
    page.js(f"document.getElementById('{leaf}').focus()")
    keys.send_keys(Keys.ENTER).perform()
    details = page.js("return document.getElementById('node-details').textContent")
    assert "AccumulateGrad" in details and "leaf: an input that requires grad" in details
    assert page.js("return document.querySelector('#inputs [aria-pressed=true]').dataset.input") == "c"
    assert page.js("return document.getElementById('announce').textContent") == \
        "c, AccumulateGrad, shape []; ∂e/∂c = 2.302585093: 1 path"
    # a path chosen with the keyboard
    page.js("document.querySelector('li.path').focus()")
    keys.send_keys(Keys.ENTER).perform()
    assert page.js("return document.querySelector('li.path').getAttribute('aria-current')") == "true"
    # the landmarks a screen reader lists
    assert page.js("return Array.from(document.querySelectorAll('section[aria-labelledby]')).length") == 6
    assert page.js("return document.getElementById('announce').getAttribute('aria-live')") == "polite"


def test_the_formula_part_shows_the_chosen_inputs_steps_with_their_values(browser, tutorial):
    page = open_page(browser, tutorial["path"])
    page.js("document.querySelector('#inputs button[data-input=d]').click();")
    shown = page.js("return Array.from(document.querySelectorAll('#formula li.formula-step'))"
                    ".map(function (li) { return li.textContent; })")
    assert shown == ["sum rule ∂/∂d [u + c * t] = ∂/∂d [c * t] = 0.5",
                     "constant multiple rule ∂/∂d [c * t] = c * ∂t/∂d = 0.5",
                     "chain rule ∂t/∂d = ∂/∂d [log(d)] = 0.1 (line 4)",
                     "log ∂/∂d [log(d)] = 1 / d = 0.1",
                     "simplify ∂e/∂d = c / d = 0.5"]


def test_light_and_dark(browser, tutorial):
    page = open_page(browser, tutorial["path"])
    colours = """return [getComputedStyle(document.body).backgroundColor,
                         getComputedStyle(document.querySelector('svg g.node:not(.leaf):not(.lit):not(.current) rect')).fill,
                         getComputedStyle(document.querySelector('svg .bg')).fill,
                         document.getElementById('theme').textContent]"""
    light = ["rgb(255, 255, 255)", "rgb(246, 248, 250)", "rgb(255, 255, 255)"]
    dark = ["rgb(13, 17, 23)", "rgb(22, 27, 34)", "rgb(13, 17, 23)"]
    try:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        assert page.js(colours) == [*light, "Theme: auto"]
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        assert page.js(colours) == [*dark, "Theme: auto"]  # auto follows the system
        page.js("document.getElementById('theme').click()")
        assert page.js(colours) == [*light, "Theme: light"]
        page.js("document.getElementById('theme').click()")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        assert page.js(colours) == [*dark, "Theme: dark"]
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_on_a_phone(browser, tutorial):
    """At a phone's width the panels go under the graph, and nothing is wider than the screen."""
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        page = open_page(browser, tutorial["path"])
        width, scroll, graph, panels = page.js("""return [window.innerWidth, document.documentElement.scrollWidth,
            document.getElementById('graph-section').getBoundingClientRect(),
            document.getElementById('panels').getBoundingClientRect()]""")
        assert scroll <= width and panels["top"] >= graph["bottom"]
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_a_screenshot_for_the_guide(browser, tutorial, tmp_path):
    """The picture docs/guide.md shows: the tutorial's page with input d and the second step. Written
    to docs/ with AUTODIFF_WRITE_SCREENSHOTS=1; otherwise taken again and held to the one there."""
    import struct

    page = open_page(browser, tutorial["path"])
    page.js("document.querySelector('#inputs button[data-input=d]').click();"
            "document.getElementById('next').click();")
    target = SCREENSHOT if os.environ.get("AUTODIFF_WRITE_SCREENSHOTS") else tmp_path / SCREENSHOT.name
    assert browser.save_screenshot(str(target))
    taken = target.read_bytes()
    assert taken[:8] == b"\x89PNG\r\n\x1a\n" and len(set(taken[100:4000])) > 50  # a picture, not a blank
    size = struct.unpack(">II", taken[16:24])
    assert size == struct.unpack(">II", SCREENSHOT.read_bytes()[16:24]) == tuple(
        page.js("return [window.innerWidth, window.innerHeight]"))
    assert f"]({SCREENSHOT.name})" in (ROOT / "docs" / "guide.md").read_text()


# -- tensors, and many paths -----------------------------------------------------------------------------------


def page_of(browser, tmp_path, text: str, at: dict, grad_output=None):
    """`text` at `at` written as a page and opened, with explain's JSON of the same run: what the
    page must show."""
    where = tmp_path / "page.html"
    where.write_text(build(text, at, grad_output=grad_output).html())
    expected = json.loads(explain_json(explain(text, at, grad_output=grad_output)))
    return open_page(browser, where), expected


def test_tensors_shown_in_their_shape_and_whole_on_demand(browser, tmp_path):
    text = "y = sum(sin(x) * w)\n"
    at = {"x": [[0.1 * (i + j) for j in range(10)] for i in range(3)], "w": [[1.0] * 10] * 3}
    page, expected = page_of(browser, tmp_path, text, at)
    page.js("document.querySelector('#inputs button[data-input=x]').click()")
    cut = page.js("""var t = document.querySelector('.grad-line .tensor');
        return [t.dataset.shape, t.dataset.whole, t.querySelectorAll('.num').length,
                t.querySelector('button.whole').textContent, t.textContent.indexOf('…') >= 0]""")
    assert cut == ["[3,10]", "false", 18, "Show all 30 numbers", True]  # 3 rows of the first and last 3
    check_paths(page, expected, "x")  # reads every tensor whole, after its Show all
    assert page.js("return document.querySelector('.grad-line .tensor').querySelectorAll('.num').length") == 30
    steps = page.js(ALL_STEPS)
    assert len(steps) == len(expected["steps"])
    for shown, step in zip(steps, expected["steps"]):
        check_step(shown, step, len(steps))


def test_the_examples_tensor_network(browser, tmp_path):
    text = (ROOT / "examples/mlp.expr").read_text()
    page, expected = page_of(browser, tmp_path, text, {})
    for name in expected["inputs"]:
        check_paths(page, expected, name)
    for shown, step in zip(page.js(ALL_STEPS), expected["steps"], strict=True):
        check_step(shown, step, len(expected["steps"]))


def test_two_to_the_forty_paths(browser, tmp_path):
    """explain's example of very many paths: the page says how many and shows the largest."""
    text = "x = a\n" + "x = x * a + x\n" * 40
    page, expected = page_of(browser, tmp_path, text, {"a": 2})
    shown = check_paths(page, expected, "a")
    count = expected["inputs"]["a"]["paths_count"]
    assert count > 2**40 and shown["count"] == f"{count:,} paths from x to a; the 10 largest shown."
    assert f"the other {count - 10:,} paths" in shown["sum_text"]
    assert len(shown["notes"]) == len(shown["edges"]) <= 40 and shown["note"] is None  # every lit edge labelled


def test_more_lit_edges_than_labels(browser, tmp_path):
    """Where the paths light more edges than can be labelled, the chosen path's edges are, and the
    page says so; choosing another path labels its own."""
    text = "x = a\n" + "x = sin(x) + cos(x)\n" * 30
    page, expected = page_of(browser, tmp_path, text, {"a": 0.3})
    shown = check_paths(page, expected, "a")
    paths = expected["inputs"]["a"]["paths"]
    assert len(shown["edges"]) > 40 and "edges are lit" in shown["note"]
    assert sorted(text for _, text in shown["notes"]) == sorted(label_text(e) for e in paths[0]["edges"])
    page.js("document.querySelectorAll('li.path')[3].click()")
    assert sorted(text for _, text in page.js(PATHS)["notes"]) == sorted(label_text(e) for e in paths[3]["edges"])


def label_text(edge: dict) -> str:
    """An edge's label, as explain --format svg writes one: the formula, then the value unless it ends so."""
    value = values_text(edge["local"])
    return edge["formula"] if edge["formula"].endswith(f" = {value}") else f"{edge['formula']} = {value}"


# -- random programs ---------------------------------------------------------------------------------------


def random_programs() -> list:
    from differential.programs import tensor_program
    from differential.scalar import scalar_program

    programs = [scalar_program(random.Random(seed)) for seed in (1, 2, 3)]
    programs.append(tensor_program(random.Random(4), "elementwise"))
    return programs


@pytest.mark.parametrize("k", range(4))
def test_random_programs_show_explains_numbers(browser, tmp_path, k):
    program = random_programs()[k]
    at = program.inputs
    page, expected = page_of(browser, tmp_path, program.text, at, grad_output="ones" if k == 3 else None)
    assert page.js("return JSON.parse(document.getElementById('autodiff-data').textContent).explanation") == expected
    for name in expected["inputs"]:
        check_paths(page, expected, name)
    steps = page.js(ALL_STEPS)
    if not expected["steps"]:  # the output does not depend on an input that requires grad
        assert [s["count"] for s in steps] == ["No steps"] and steps[0]["next"] and steps[0]["previous"]
        assert page.js("return document.querySelector('#picture svg')") is None
    else:
        assert len(steps) == len(expected["steps"])
        for shown, step in zip(steps, expected["steps"]):
            check_step(shown, step, len(steps))
    assert errors(browser) == []


# -- a large graph ---------------------------------------------------------------------------------------


def test_a_thousand_nodes_open_and_respond(browser, tmp_path):
    """A 1,000-node program's page opens and answers a click (its time: bench/page.py)."""
    where = tmp_path / "chain.html"
    page_ = build("x = a\n" + "x = tanh(x * 0.9 + 0.1)\n" * 333, {"a": 0.5})
    assert len(page_.graph.nodes) == 1000
    where.write_text(page_.html())
    page = open_page(browser, where)
    page.js("document.getElementById('last').click()")
    shown = page.js(STEP)
    assert shown["leaf"] == "a" and shown["number"] == "1000"
    assert page.js("return document.querySelectorAll('svg g.node').length") == 1000


def test_the_notebooks_frame_is_the_page(browser, tmp_path):
    jupyter = pytest.importorskip("autodiff.jupyter", exc_type=ImportError)
    shown = jupyter.run_cell("--at a=2,b=3,c=5,d=10 --explain --html", (ROOT / "examples/tutorial.expr").read_text())
    where = tmp_path / "notebook.html"
    where.write_text(f"<!DOCTYPE html><html><body><p>A notebook's output:</p>{shown._repr_html_()}</body></html>")
    browser.get(where.as_uri())
    browser.switch_to.frame(browser.find_element("css selector", "iframe.autodiff-page"))
    try:
        for _ in range(200):
            if browser.execute_script("return document.documentElement.dataset.ready") == "true":
                break
            import time

            time.sleep(0.02)
        browser.execute_script("document.querySelector('#inputs button[data-input=d]').click()")
        assert browser.execute_script("return document.querySelector('#paths .count-line').textContent") == \
            "1 path from e to d."
    finally:
        browser.switch_to.default_content()

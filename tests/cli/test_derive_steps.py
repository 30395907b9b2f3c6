"""`autodiff derive --steps` as a user runs it: the formats, the refusals and their exit codes."""

from __future__ import annotations

import json
import re

SPEC_EXAMPLE = ("derive", "-e", "y = x ** 2 * sin(x)", "--wrt", "x", "--steps")


def test_plain_numbers_the_steps_and_sets_the_rules_apart(autodiff):
    result = autodiff(*SPEC_EXAMPLE, "--format", "plain")
    assert (result.code, result.stderr) == (0, "")
    assert result.stdout == (
        "∂y/∂x = ∂/∂x [x ** 2 * sin(x)]\n"
        "  1. product rule   ∂/∂x [x ** 2 * sin(x)] = ∂/∂x [x ** 2] * sin(x) + x ** 2 * ∂/∂x [sin(x)]\n"
        "  2. power rule     ∂/∂x [x ** 2] = 2 * x\n"
        "  3. sin            ∂/∂x [sin(x)] = cos(x)\n"
        "  4. simplify       ∂y/∂x = x ** 2 * cos(x) + 2 * x * sin(x)\n")
    formula = json.loads(autodiff("derive", "-e", "y = x ** 2 * sin(x)", "--format", "json").stdout)
    assert formula["inputs"]["x"]["formula"] == "x ** 2 * cos(x) + 2 * x * sin(x)"  # the last step is derive's


def test_each_name_the_program_assigns_is_a_step_of_its_own(autodiff):
    result = autodiff("derive", "examples/tutorial.expr", "--wrt", "d", "--steps", "--format", "plain")
    assert result.code == 0 and result.stdout == (
        "∂e/∂d = ∂/∂d [u + c * t]\n"
        "  1. sum rule                 ∂/∂d [u + c * t] = ∂/∂d [c * t]\n"
        "  2. constant multiple rule   ∂/∂d [c * t] = c * ∂t/∂d\n"
        "  3. chain rule               ∂t/∂d = ∂/∂d [log(d)]  (line 4)\n"
        "  4. log                      ∂/∂d [log(d)] = 1 / d\n"
        "  5. simplify                 ∂e/∂d = c / d\n")


def test_json_adds_the_steps_of_each_input_and_the_values_they_name(autodiff):
    result = autodiff("derive", "examples/tutorial.expr", "--steps", "--format", "json")
    out = json.loads(result.stdout)
    assert result.code == 0 and out["inputs"]["a"]["formula"] == "b" and out["output"] == "e"
    assert out["definitions"] == [{"name": "u", "value": "a * b", "line": 3},
                                  {"name": "t", "value": "log(d)", "line": 4}]
    steps = out["inputs"]["d"]["steps"]
    assert steps[0] == {"id": 1, "rule": "sum", "of": "u + c * t", "result": "D2", "uses": {"D2": 2}}
    assert steps[1] == {"id": 2, "rule": "constant multiple", "of": "c * t", "result": "c * D3", "uses": {"D3": 3}}
    assert steps[-1] == {"id": 5, "rule": "simplify", "of": "e", "result": "c / d", "uses": {}}
    for name, block in out["inputs"].items():
        assert block["steps"][-1]["result"] == block["formula"]


def test_placeholders_are_no_names_of_the_program(autodiff):
    out = json.loads(autodiff("derive", "-e", "D2 = sin(D1 * x)\nD3 = D2 * D2", "--wrt", "x", "--steps",
                              "--format", "json").stdout)
    steps = out["inputs"]["x"]["steps"]
    placeholders = {p for s in steps for p in s["uses"]}
    assert placeholders and all(re.fullmatch(r"D_\d+", p) for p in placeholders)
    assert "D2" in steps[0]["of"] or any(s["of"] == "D2" for s in steps)


def test_loops_and_branches_are_unrolled_along_the_path_with_their_assumptions(autodiff):
    result = autodiff("derive", "examples/dynamic.expr", "--steps", "--format", "json")
    out = json.loads(result.stdout)
    assert result.code == 0
    assert [a["condition"] for a in out["assumptions"]] == ["y > 1", "y > 1", "not (y > 1)"]
    versions = {d["name"]: d for d in out["definitions"] if d.get("assigned") == "y"}
    assert versions["y_1"]["turn"] == 1 and versions["y_2"]["turn"] == 2 and versions["y_1"]["line"] == 12
    rules = [s["rule"] for s in out["inputs"]["x"]["steps"]]
    assert rules.count("chain") >= 3 and rules[-1] == "simplify"
    plain = autodiff("derive", "examples/dynamic.expr", "--steps", "--format", "plain").stdout
    assert "(y at line 12, turn 2)" in plain and plain.endswith("assuming not (y > 1)  (line 11, turn 3)\n")
    refused = autodiff("derive", "-e", "y = x * 2\nif x > 0:\n    y = x * x\ny", "--steps")
    assert refused.code == 2 and refused.stdout == "" and "depends on the value of x" in refused.stderr


def test_latex_and_markdown_are_aligned_equations(autodiff):
    latex = autodiff(*SPEC_EXAMPLE, "--format", "latex")
    assert latex.code == 0 and latex.stdout.startswith("\\begin{align*}\n")
    assert "\\frac{\\partial}{\\partial x}\\left[x^{2}\\right] &= 2 \\cdot x && \\text{2. power rule}" in latex.stdout
    names = autodiff("derive", "-e", "my_big_value = exp(x_1)\nmy_big_value * 2", "--steps", "--format", "latex").stdout
    assert "\\frac{\\partial \\mathrm{my\\_big\\_value}}{\\partial x_{1}}" in names
    markdown = autodiff(*SPEC_EXAMPLE, "--format", "markdown")
    assert markdown.code == 0 and "$$\n\\begin{aligned}\n" in markdown.stdout


def test_rich_sets_the_rule_names_apart(autodiff):
    result = autodiff(*SPEC_EXAMPLE, "--format", "rich")
    assert result.code == 0 and "  2. power rule     ∂/∂x [x ** 2] = 2 * x" in result.stdout


def test_what_steps_cannot_show_is_refused_in_one_line(autodiff):
    cases = [
        (("derive", "-e", "sum(x * x)", "--at", "x=[1,2]", "--steps"), "the input 'x' has shape [2]"),
        (("derive", "-e", "sum(ones(3) * x)", "--steps"), "a tensor of shape [3]"),
        (("derive", "-e", "x * x", "--steps", "--format", "python"), "not python"),
        (("derive", "-e", "x * x", "--steps", "--order", "2"), "--order 2"),
        (("derive", "-e", "x * x", "--steps", "--check"), "--check"),
    ]
    for command, message in cases:
        result = autodiff(*command)
        assert result.code == 2 and result.stdout == "", command
        assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr

"""`autodiff derive` as a user runs it: formats, exit codes, and programs that run again."""

from __future__ import annotations

import json

TUTORIAL = ("derive", "examples/tutorial.expr")


def test_plain_writes_each_derivative_as_a_person_would(autodiff):
    result = autodiff("derive", "-e", "x**3 * y", "--wrt", "x")
    assert (result.code, result.stdout, result.stderr) == (0, "∂output/∂x = 3 * x ** 2 * y\n", "")


def test_json_is_the_spec_object(autodiff):
    result = autodiff(*TUTORIAL, "--format", "json")
    out = json.loads(result.stdout)
    assert result.code == 0 and list(out)[:4] == ["output", "inputs", "program", "assumptions"]
    assert out["inputs"]["a"] == {"name": "de_da", "formula": "b", "shape": []}


def test_the_expr_format_runs_under_eval_and_gives_the_gradients(autodiff, tmp_path):
    derived = autodiff(*TUTORIAL, "--format", "expr")
    path = tmp_path / "derived.expr"
    path.write_text(derived.stdout)
    evaluated = autodiff("eval", str(path), "--at", "a=2,b=3,c=5,d=10", "--format", "json")
    grads = json.loads(autodiff("grad", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10",
                                "--format", "json").stdout)["grads"]
    values = json.loads(evaluated.stdout)
    named = {**values.get("variables", {}), values["output"]: values["value"]}
    for name, grad in grads.items():
        assert abs(named[f"de_d{name}"] - grad) < 1e-12


def test_check_passes_and_says_where(autodiff):
    result = autodiff("derive", "-e", "tanh(x * w + b) ** 2", "--check")
    assert result.code == 0 and "agrees with the engine at 3 random points" in result.stdout


def test_check_goes_to_standard_error_where_standard_output_is_a_program(autodiff):
    result = autodiff("derive", "-e", "x * x", "--check", "--format", "python")
    assert result.code == 0 and "agrees" in result.stderr and result.stdout.startswith('"""')


def test_a_path_that_depends_on_a_value_needs_at(autodiff):
    program = "y = x * 2\nif x > 0:\n    y = x * x\ny"
    refused = autodiff("derive", "-e", program)
    assert refused.code == 2 and refused.stdout == ""
    assert refused.stderr.startswith("<expr>:2:4: error: the path through this line depends on the value of x")
    followed = autodiff("derive", "-e", program, "--at", "x=3", "--format", "json")
    assert json.loads(followed.stdout)["assumptions"] == [{"line": 2, "condition": "x > 0"}]


def test_errors_have_their_exit_codes(autodiff):
    assert autodiff("derive", "-e", "cumprod(x, 0)", "--at", "x=[1,2,3]").code == 4  # a Jacobian with no formula
    assert autodiff("derive", "-e", "x * x", "--at", "x=[1,2]", "--order", "2").code == 2  # not a number
    assert autodiff("derive", "-e", "x @ A @ x").code == 2  # shapes needed, none given
    assert autodiff("derive", "-e", "x +").code == 3  # syntax
    assert autodiff("derive", "-e", "x", "--order", "3").code == 2
    assert autodiff("derive", "-e", "x", "--wrt", "y").code == 2


def test_latex_and_markdown_are_for_notes(autodiff):
    latex = autodiff("derive", "-e", "x / y", "--format", "latex").stdout
    assert latex.startswith("\\begin{align*}") and "\\frac{1}{y}" in latex
    markdown = autodiff("derive", "-e", "x / y", "--format", "markdown").stdout
    assert "| `∂output/∂y` | `-x / y ** 2` |" in markdown


def test_second_order(autodiff):
    result = autodiff("derive", "-e", "x**3 * y", "--order", "2", "--format", "plain")
    assert "∂²output/∂x² = 6 * x * y" in result.stdout and "∂²output/∂x∂y = 3 * x ** 2" in result.stdout


def test_shapes_by_name_on_the_command_line(autodiff):
    result = autodiff("derive", "-e", "x @ A @ x", "--shape", "x=n", "--shape", "A=n,n", "--wrt", "x", "--format", "expr")
    assert result.code == 0 and result.stdout == "doutput_dx = (A + A.T) @ x\n"
    plain = autodiff("derive", "-e", "x @ A @ x", "--shape", "x=n", "--shape", "A=n,n", "--wrt", "x", "--format", "plain")
    assert plain.stdout == "∂output/∂x = (A + Aᵀ) @ x\n"
    bad = autodiff("derive", "-e", "x @ x", "--shape", "x=n m")
    assert bad.code == 2 and "a size is a name or a whole number" in bad.stderr
    two = autodiff("derive", "-e", "x @ y", "--shape", "x=n", "--shape", "y=n", "--at", "x=[1,2]", "--at", "y=[1,2,3]")
    assert two.code == 2 and "the size n is 2 and 3" in two.stderr


def test_a_tensor_output_is_a_jacobian_in_json(autodiff):
    out = json.loads(autodiff("derive", "-e", "sigmoid(x)", "--shape", "x=n", "--format", "json").stdout)
    assert out["jacobian"] is True and out["inputs"]["x"]["formula"] == "diag(output * (1 - output))"


def test_a_declared_shape_is_checked_against_the_value(autodiff):
    program = "A: input[n, n]\nsize(A, 0) * 2"
    assert autodiff("eval", "-e", program, "--at", "A=[[1,2],[3,4]]", "--format", "plain").stdout == "output\t4\n"
    wrong = autodiff("eval", "-e", program, "--at", "A=[[1,2,3],[4,5,6]]")
    assert wrong.code == 2 and "declared [n, n]: it gives n = 3, where it is 2" in wrong.stderr


# -- user text is data in every format, and derive stays bounded -------------------------------------------------

import os  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import xml.dom.minidom  # noqa: E402

import pytest  # noqa: E402
from latex import assert_compiles  # noqa: E402

HOSTILE_FILE_NAMES = [
    "new\nline\\end{document}\\input{x}%^_{}.expr",
    "ctrl\x01\x1b[31m<b>&amp;<\\b>.expr",
    os.fsdecode(b"bytes-\xff\xfe-<script>.expr"),
    'q""";open("pwned","w").write("x");"""q.expr',
]


@pytest.mark.parametrize("name", HOSTILE_FILE_NAMES, ids=range(len(HOSTILE_FILE_NAMES)))
def test_a_file_name_is_data_in_svg_html_and_latex(autodiff, tmp_path, name):
    path = os.fsdecode(os.path.join(os.fsencode(tmp_path), os.fsencode(name)))
    with open(os.fsencode(path), "w", encoding="utf-8") as f:
        f.write("y = a * b + log(a)\n")
    at = ("--at", "a=2,b=3")
    svg = autodiff("graph", path, *at, "--format", "svg")
    xml.dom.minidom.parseString(svg.stdout.encode("utf-8"))  # well-formed XML, whatever the name
    page = autodiff("explain", path, *at, "--format", "html", cwd=tmp_path)
    assert page.code == 0 and page.stdout.count("<script") == 2  # its data and its own script, no other
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", page.stdout)
    latex = autodiff("explain", path, *at, "--format", "latex").stdout
    comment = next(line for line in latex.splitlines() if line.startswith("% autodiff explain"))
    assert latex.splitlines()[1].startswith("$$"), "the name stays on its comment line"
    assert "\n" not in comment and "\x01" not in comment
    assert_compiles(tmp_path, latex)
    module = autodiff("derive", path, "--format", "python").stdout
    compile(module, "<derived module>", "exec")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_ends_derive_at_once(tmp_path):
    from console import interrupted

    path = tmp_path / "long.expr"
    path.write_text("y = x\nfor i in range(2000000):\n    y = y * 0.5 + x\n")
    code, stdout, stderr, waited = interrupted(["derive", str(path), "--at", "x=1", "--max-iterations", "100000000"],
                                               after=2.0)  # well into the trace
    # generous for a loaded machine: what this holds is no wait for the trace to finish (tens of seconds)
    assert waited < 5
    assert (code, stdout, stderr) == (130, b"", b"autodiff: interrupted\n")


def test_made_up_points_respect_the_element_limit_before_allocating(autodiff):
    result = autodiff("derive", "-e", "sum(x * x)", "--shape", "x=n,m,k,p,q", "--max-elements", "1000")
    assert result.code == 4 and "323,323 elements" in result.stderr and "--max-elements" in result.stderr
    assert autodiff("derive", "-e", "sum(x * x)", "--shape", "x=n,,m").code == 2

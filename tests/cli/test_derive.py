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
    assert autodiff("derive", "-e", "cumsum(x, 0)", "--at", "x=[1,2]").code == 4  # a Jacobian with no formula
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

"""`autodiff explain`: golden output per format, the JSON contract, narrow terminals, and the
graph views that agree with it (`grad --tree`, `graph --edges local`)."""

from __future__ import annotations

import json
import math

import pytest
from latex import assert_compiles

PROGRAM = ("-e", "y = 3 * log(x)", "--at", "x=2")

GOLDEN = {
    "plain": "y = 2.079441542\n\n∂y/∂x = 1.5\n  1 path from y to x:\n  1. ∂y/∂log(x) · ∂log(x)/∂x = 3 × 0.5 = 1.5\n       ∂y/∂log(x) = 3   [MulBackward0]\n       ∂log(x)/∂x = 1 / x = 0.5   [LogBackward0]\n\nbackward, step by step (the engine's order):\n  1. y (line 1)   [MulBackward0] receives 1\n       to log(x): 1 × 3 = 3   (∂y/∂log(x) = 3)\n  2. log(x) (line 1)   [LogBackward0] receives 3\n       to x: 3 × 0.5 = 1.5   (∂log(x)/∂x = 1 / x)\n  3. x.grad += 1.5   [AccumulateGrad]\n",
    "markdown": '**y = 2.079441542**\n\nMultiply the local derivatives along each path from the output to the input, then add up the paths.\n\n### ∂y/∂x = 1.5\n\n1 path from y to x.\n\n| # | path | share |\n|---|---|---|\n| 1 | ∂y/∂log(x) · ∂log(x)/∂x = 3 × 0.5 = 1.5<br>`∂y/∂log(x) = 3`<br>`∂log(x)/∂x = 1 / x` | 1.5 |\n\n### Backward, step by step\n\n1. y (line 1)   [MulBackward0] receives 1\n   - to log(x): 1 × 3 = 3   (∂y/∂log(x) = 3)\n2. log(x) (line 1)   [LogBackward0] receives 3\n   - to x: 3 × 0.5 = 1.5   (∂log(x)/∂x = 1 / x)\n3. x.grad += 1.5   [AccumulateGrad]\n',
    "latex": '% autodiff explain: <expr>\n$$y = 2.079441542$$\n% 1 path from y to x\n\\begin{align*}\n\\frac{\\partial y}{\\partial x} &= \\frac{\\partial y}{\\partial \\operatorname{log}(x)} \\frac{\\partial \\operatorname{log}(x)}{\\partial x} \\\\\n  &= 3 \\times 0.5 \\\\\n  &= 1.5\n\\end{align*}\nwhere\n\\begin{align*}\n\\frac{\\partial \\operatorname{log}(x)}{\\partial x} &= \\frac{1}{x} \\\\\n\\frac{\\partial y}{\\partial \\operatorname{log}(x)} &= 3\n\\end{align*}\n',
}


@pytest.mark.parametrize("fmt", sorted(GOLDEN))
def test_golden_output(autodiff, fmt):
    result = autodiff("explain", *PROGRAM, "--format", fmt)
    assert result.code == 0, result.stderr
    assert result.stdout == GOLDEN[fmt]


def test_json_follows_the_contract(autodiff):
    result = autodiff("explain", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "--format", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["output"] == "e" and data["value"] == pytest.approx(17.512925464970227)
    grads = json.loads(autodiff("grad", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "-f", "json").stdout)["grads"]
    assert set(data["inputs"]) == set(grads)
    for name, item in data["inputs"].items():
        assert item["grad"] == grads[name]
        assert isinstance(item["paths_count"], int)
        total = item["rest"]
        for path in item["paths"]:
            assert path["product"] == pytest.approx(math.prod(e["local"] for e in path["edges"]))
            assert len(path["nodes"]) == len(path["edges"]) + 1
            assert all(set(e) >= {"op", "formula", "local"} for e in path["edges"])
            total += path["product"]
        assert total == pytest.approx(grads[name])
    d = data["inputs"]["d"]["paths"][0]
    assert d["nodes"] == ["e", "t * c", "t", "d"]
    assert [e["formula"] for e in d["edges"]] == ["∂e/∂(t * c) = 1", "∂(t * c)/∂t = c", "∂t/∂d = 1 / d"]
    assert [s["op"] for s in data["steps"]][0] == "AddBackward0"
    assert {s["leaf"]: s["total"] for s in data["steps"] if "leaf" in s} == grads


def test_json_counts_paths_beyond_floats_and_spells_non_finite_numbers(autodiff):
    program = "x = a\n" + "x = x * a + x\n" * 70
    data = json.loads(autodiff("explain", "-", "--at", "a=1", "-f", "json", "--limit", "2", stdin=program).stdout)
    assert data["inputs"]["a"]["paths_count"] == 2**71 - 1 and len(data["inputs"]["a"]["paths"]) == 2
    data = json.loads(autodiff("explain", "-e", "y = log(x)", "--at", "x=0", "-f", "json").stdout)
    assert data["value"] == "-inf" and data["inputs"]["x"]["grad"] == "inf"


def test_tensor_paths_are_tensors_in_the_inputs_shape(autodiff):
    result = autodiff("explain", "examples/matrix.expr", "-f", "json")
    x = json.loads(result.stdout)["inputs"]["x"]
    assert x["grad"] == [[-2.0] * 3] * 3 and x["paths"][0]["product"] == x["grad"]
    assert x["paths"][0]["edges"][2]["local"] == [[2.0] * 3] * 3


def test_rich_fits_a_60_column_terminal(autodiff):
    result = autodiff("explain", "examples/explain.expr", "--why", "b", "--format", "rich", COLUMNS="60")
    assert result.code == 0
    assert max(len(line) for line in result.stdout.splitlines()) <= 60
    assert "relu" in result.stdout and "3 paths from y to x" in result.stdout


def test_why_and_wrt(autodiff):
    result = autodiff("explain", "-e", "y = a * detach(b)", "--at", "a=1,b=2", "--why", "b", "-f", "plain")
    assert "b is cut by detach (line 1)" in result.stdout
    result = autodiff("explain", "-e", "y = a * b", "--at", "a=1,b=2", "--wrt", "a", "-f", "plain")
    assert "∂y/∂a = 2" in result.stdout and "∂y/∂b" not in result.stdout
    result = autodiff("explain", "-e", "y = a * 2", "--at", "a=1", "--why", "q")
    assert result.code == 2 and "not an input" in result.stderr


def test_why_of_a_computed_value_says_how_to_make_it_an_input(autodiff):
    """`w = randn(5, 3)` is a value of the program, not an input: --why w says how to make it one."""
    result = autodiff("explain", "-e", "x = 2\nw = randn(5, 3)\ny = sum(w * x)", "--why", "w")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == ("autodiff: error: --why names 'w', which is not an input of the program: line 2 assigns "
                             "it, a value the program computes; to differentiate with respect to it, declare it an "
                             "input: `w: input = randn(5, 3)`\n")


def test_options_shared_with_grad(autodiff):
    result = autodiff("explain", "examples/nonscalar.expr", "--grad-output", "ones", "-f", "json", "--dtype", "float32")
    x = json.loads(result.stdout)["inputs"]["x"]
    assert x["grad"] == [2.0, 4.0, 6.0]
    result = autodiff("explain", "examples/nonscalar.expr")
    assert result.code == 4 and "grad can be implicitly created only for scalar outputs" in result.stderr
    result = autodiff("explain", "examples/matrix.expr", "--output", "d", "--grad-output", "ones", "-f", "plain")
    assert result.code == 0 and result.stdout.startswith("d = ")


def test_grad_tree_shows_a_vector_leafs_gradient_values(autodiff):
    result = autodiff("grad", "examples/matrix.expr", "--tree", "-f", "rich", COLUMNS="200")
    assert "grad [[-2, -2, -2], [-2, -2, -2], [-2, -2, -2]]" in result.stdout


def test_graph_views_label_the_same_nodes(autodiff):
    args = ("examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "-f", "plain")
    tree = [line for line in autodiff("grad", *args, "--tree").stdout.splitlines() if line.startswith("node")]
    graph = [line for line in autodiff("graph", *args, "--backward").stdout.splitlines() if line.startswith("node")]
    assert tree == graph and len(tree) == 8


@pytest.mark.parametrize("fmt, edge", [
    ("dot", 'n6 -> n5 [label="∂t/∂d = 1 / d = 0.1"];'),
    ("mermaid", 'n2 -->|"∂u/∂a = b = 3"| n1'),
])
def test_graph_edges_local(autodiff, fmt, edge):
    result = autodiff("graph", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "--backward", "-f", fmt,
                      "--edges", "local")
    assert result.code == 0 and edge in result.stdout
    plain = autodiff("graph", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "-f", fmt)
    assert "∂" not in plain.stdout


def test_every_step_line_is_true_arithmetic_or_a_map(autodiff):
    """`to x * 2: 1 = [0.333…]` was a false equation. A step prints g × local = value
    where the local derivative is one factor per element, else g ↦ value."""
    result = autodiff("explain", "-e", "y = mean(x * 2)", "--at", "x=[1,2,3]", "--format", "plain")
    assert result.code == 0, result.stderr
    third = "0.3333333333"
    assert f"to x * 2: 1 × [{third}, {third}, {third}] = [{third}, {third}, {third}]" in result.stdout
    matmul = autodiff("explain", "-e", "z = sum(x @ w)", "--at", "x=[1,2]", "--at", "w=[[1,2,3],[4,5,6]]",
                      "--format", "plain")
    assert matmul.code == 0, matmul.stderr
    steps = [line for line in matmul.stdout.splitlines() if line.strip().startswith("to ")]
    assert steps and all(" ↦ " in line or " × " in line for line in steps), steps


def test_a_vector_matmul_path_shows_formulas_and_the_json_keys_stay(autodiff):
    args = ("explain", "-e", "z = x @ w + b", "--at", "x=[1,2]", "--at", "w=[[1,2,3],[4,5,6]]", "--at", "b=[1,1,1]",
            "--grad-output", "ones")
    result = autodiff(*args, "--format", "plain")
    assert result.code == 0, result.stderr
    assert ": ∂ " not in result.stdout and "\ngᵀ·∂z/∂x = [" in result.stdout  # a vector–Jacobian product
    data = json.loads(autodiff(*args, "--format", "json").stdout)
    for item in data["inputs"].values():
        assert {"grad", "paths_count", "paths", "rest"} <= set(item)
        for path in item["paths"]:
            assert {"nodes", "edges", "product"} <= set(path)
            assert all(set(e) == {"op", "formula", "local"} and " = " in e["formula"] for e in path["edges"])


def test_latex_writes_powers_products_and_transposes_as_mathematics(autodiff):
    latex = autodiff("explain", "-e", "y = sum(x ** 2) + sum(A @ x) + x[0] ** (k - 1) + sum(A.T @ x)",
                     "--at", "x=[1,2]", "--at", "A=[[1,2],[3,4]]", "--at", "k=3", "--format", "latex").stdout
    assert r"x ^{2}" in latex and r"x[0] ^{(k - 1)}" in latex and r"A^{\top}" in latex
    assert r"\cdot  \cdot" not in latex and "@" not in latex and ".T" not in latex
    assert r"\operatorname{sum}" in latex
    assert latex.count("{") - latex.count(r"\{") == latex.count("}") - latex.count(r"\}")


def test_explains_latex_writes_each_local_derivative_as_derive_does(autodiff, tmp_path):
    """One LaTeX printer: sigmoid as σ, exp2 as a power of 2, a power raised, as derive writes
    them (not the function names), and the page compiles where pdflatex is installed."""
    path = tmp_path / "f.expr"
    path.write_text("x: input = 0.5\nw: input = 2.0\nu = sigmoid(x * w)\ny = exp2(u) * x ** 3\n")
    latex = autodiff("explain", path, "--format", "latex").stdout
    where = latex.split("where", 1)[1]
    assert "\\sigma\\left(" in where and "2^{u}" in where and "x^{2}" in where
    assert "operatorname{sigmoid}" not in where and "\\cdot \\cdot" not in where
    derived = autodiff("derive", "-e", "u = sigmoid(z)", "--shape", "z=n", "--format", "latex").stdout
    assert "\\sigma\\left(" in derived  # the same spelling
    assert_compiles(tmp_path, latex)

"""The commands end to end: the installed script, exact standard output, standard error and status."""

from __future__ import annotations

import json

import numpy as np

import pytest

from autodiff import __version__

TUTORIAL = ["examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10"]
TUTORIAL_PLAIN = "e\t17.51292546497023\na\t3.0\nb\t2.0\nc\t2.302585092994046\nd\t0.5\n"
TUTORIAL_JSON = (
    '{"output": "e", "value": 17.51292546497023, "shape": [], '
    '"grads": {"a": 3.0, "b": 2.0, "c": 2.302585092994046, "d": 0.5}, "dtype": "float64", "grad_fn": "AddBackward0", '
    '"inputs": {"a": {"value": 2.0, "shape": [], "requires_grad": true, "is_leaf": true}, '
    '"b": {"value": 3.0, "shape": [], "requires_grad": true, "is_leaf": true}, '
    '"c": {"value": 5.0, "shape": [], "requires_grad": true, "is_leaf": true}, '
    '"d": {"value": 10.0, "shape": [], "requires_grad": true, "is_leaf": true}}, "warnings": []}\n'
)


def ok(result, stdout: str, stderr: str = ""):
    assert (result.code, result.stderr, result.stdout) == (0, stderr, stdout)


# -- grad: the formats of the spec ------------------------------------------------------------------------


def test_grad_plain_is_the_default_when_piped(autodiff):
    ok(autodiff("grad", *TUTORIAL), TUTORIAL_PLAIN)
    ok(autodiff("grad", *TUTORIAL, "--format", "plain"), TUTORIAL_PLAIN)


def test_grad_json_has_the_keys_of_the_spec_in_a_stable_order(autodiff):
    result = autodiff("grad", *TUTORIAL, "--format", "json")
    ok(result, TUTORIAL_JSON)
    assert list(json.loads(result.stdout))[:4] == ["output", "value", "shape", "grads"]


def test_grad_in_forward_mode_gives_what_reverse_mode_gives(autodiff):
    ok(autodiff("grad", *TUTORIAL, "--mode", "forward", "--format", "json"), TUTORIAL_JSON)
    matrix = ["-e", "sum(tanh(W @ x))", "--at", "W=[[1,2],[3,4]],x=[0.1,0.2]", "--format", "json"]
    forward, reverse = autodiff("grad", *matrix, "--mode", "forward"), autodiff("grad", *matrix)
    assert forward.code == reverse.code == 0
    pushed = json.loads(forward.stdout)["grads"]
    for name, values in json.loads(reverse.stdout)["grads"].items():
        np.testing.assert_allclose(pushed[name], values, rtol=1e-12)
    refused = autodiff("grad", *TUTORIAL, "--mode", "forward", "--order", "2")
    assert refused.code == 2 and "--order 2 needs reverse mode" in refused.stderr


def test_grad_in_forward_mode_gives_the_jacobian_of_a_non_scalar_output(autodiff):
    """Each input's Jacobian, the output's dimensions first: row i is reverse mode's gradient
    from the one-hot --grad-output e_i; --check compares every element with finite differences."""
    program = ["-e", "y = tanh(W @ x) * s", "--at", "W=[[1,2],[3,4],[5,6]],x=[0.1,-0.2],s=0.5"]
    forward = autodiff("grad", *program, "--mode", "forward", "--check", "--format", "json")
    assert forward.code == 0, forward.stderr
    report = json.loads(forward.stdout)
    assert report["jacobian"] is True and report["check"]["passed"]
    jacobians = {name: np.array(value) for name, value in report["grads"].items()}
    assert {name: j.shape for name, j in jacobians.items()} == {"W": (3, 3, 2), "x": (3, 2), "s": (3,)}
    for i in range(3):
        seed = [1.0 if k == i else 0.0 for k in range(3)]
        row = autodiff("grad", *program, "--grad-output", json.dumps(seed), "--format", "json")
        for name, gradient in json.loads(row.stdout)["grads"].items():
            np.testing.assert_allclose(jacobians[name][i], gradient, rtol=1e-12, atol=1e-15)
    assert "jacobian" not in json.loads(autodiff("grad", *TUTORIAL, "--format", "json").stdout)
    reverse = autodiff("grad", *program)
    assert reverse.code == 4 and "grad can be implicitly created only for scalar outputs" in reverse.stderr


def test_grad_checks_a_forward_jacobian_element_by_element(autodiff):
    kinked = autodiff("grad", "-e", "y = stack([sin(s), relu(s)])", "--at", "s=0", "--mode", "forward", "--check")
    assert kinked.code == 1 and "relu of 0 here" in kinked.stderr  # the kink is found in output element 1


def test_grad_points_refuse_the_options_of_one_point(autodiff):
    for extra in (["--mode", "forward"], ["--order", "2"], ["--tree", "--check"], ["--retain", "all"]):
        refused = autodiff("grad", "-e", "x ** 2", "--points", "-", *extra, stdin="x\n1\n")
        assert refused.code == 2 and "for one point (--at)" in refused.stderr, extra


def test_grad_rich_shows_every_input_and_variable(autodiff):
    ok(autodiff("grad", *TUTORIAL, "-f", "rich"), """\
e = 17.51292546   shape []   float64   grad_fn AddBackward0   (examples/tutorial.expr)

input   value   shape   requires_grad   is_leaf   grad_fn      gradient
───────────────────────────────────────────────────────────────────────
a           2   []           yes          yes     —                   3
b           3   []           yes          yes     —                   2
c           5   []           yes          yes     —         2.302585093
d          10   []           yes          yes     —                 0.5

variable         value   shape   grad_fn            gradient
────────────────────────────────────────────────────────────
u                    6   []      MulBackward0   not retained
t          2.302585093   []      LogBackward0   not retained
""")


def test_standard_input_and_inline_programs(autodiff):
    program = (__import__("pathlib").Path(__file__).parents[2] / "examples" / "tutorial.expr").read_text()
    ok(autodiff("grad", "-", "--at", "a=2,b=3", "--at", "c=5,d=10", stdin=program), TUTORIAL_PLAIN)
    ok(autodiff("grad", "-e", "u = a * b; t = log(d); e = u + t * c", "--at", "a=2,b=3,c=5,d=10"), TUTORIAL_PLAIN)
    ok(autodiff("grad", "-e", "a * b", "--at", "a=2,b=3"), "output\t6.0\na\t3.0\nb\t2.0\n")


def test_tensor_values_and_their_gradients(autodiff):
    ok(autodiff("grad", "-e", "sum(W @ x)", "--at", "W=[[1,2],[3,4]]", "--at", "x=[1,1]", "-f", "json"),
       '{"output": "output", "value": 10.0, "shape": [], "grads": {"W": [[1.0, 1.0], [1.0, 1.0]], "x": [4.0, 6.0]}, '
       '"dtype": "float64", "grad_fn": "SumBackward0", "inputs": {"W": {"value": [[1.0, 2.0], [3.0, 4.0]], '
       '"shape": [2, 2], "requires_grad": true, "is_leaf": true}, "x": {"value": [1.0, 1.0], "shape": [2], '
       '"requires_grad": true, "is_leaf": true}}, "warnings": []}\n')


def test_nan_and_infinities_are_strings_in_json_and_a_warning_names_the_line(autodiff):
    result = autodiff("grad", "-e", "y = 1 / x\nlog(x) + y", "--at", "x=0", "-f", "json")
    assert result.code == 0
    assert result.stderr == ("<expr>:1:5: warning: 1 / x produced inf\n    y = 1 / x\n        ^~~~~\n"
                             "autodiff: warning: the gradient with respect to 'x' is nan\n")
    data = json.loads(result.stdout)
    assert (data["value"], data["grads"]["x"]) == ("nan", "nan")
    assert data["warnings"] == ["1 / x produced inf", "the gradient with respect to 'x' is nan"]


# -- grad: the options ------------------------------------------------------------------------------------


def test_wrt_makes_the_other_inputs_constants(autodiff):
    ok(autodiff("grad", *TUTORIAL, "--wrt", "a,c"), "e\t17.51292546497023\na\t3.0\nc\t2.302585092994046\n")
    result = autodiff("grad", *TUTORIAL, "--wrt", "a,c", "-f", "json")
    data = json.loads(result.stdout)
    assert data["grads"] == {"a": 3.0, "c": 2.302585092994046}
    assert data["inputs"]["b"]["requires_grad"] is False


def test_retain_keeps_intermediate_gradients(autodiff):
    ok(autodiff("grad", *TUTORIAL, "--retain", "all"), TUTORIAL_PLAIN + "retained\tu\t1.0\nretained\tt\t5.0\n")
    result = autodiff("grad", *TUTORIAL, "--retain", "t", "-f", "json")
    assert json.loads(result.stdout)["retained"] == {"t": 5.0}
    result = autodiff("grad", *TUTORIAL, "--retain", "t", "-f", "rich")
    assert "u                    6   []      MulBackward0   not retained\n" in result.stdout
    assert "t          2.302585093   []      LogBackward0              5\n" in result.stdout


def test_output_picks_another_variable_and_unused_inputs_are_warned_about(autodiff):
    ok(autodiff("grad", *TUTORIAL, "--output", "u"), "u\t6.0\na\t3.0\nb\t2.0\nc\tnull\nd\tnull\n",
       "autodiff: warning: the output u does not depend on input 'c'\n"
       "autodiff: warning: the output u does not depend on input 'd'\n")


def test_at_values_the_program_does_not_use_are_a_warning(autodiff):
    ok(autodiff("grad", *TUTORIAL, "--at", "dd=1"), TUTORIAL_PLAIN,
       "autodiff: warning: --at gives 'dd', which is not an input of the program (its inputs: a, b, d, c): "
       "the value is not used; did you mean 'd'?\n")


def test_a_non_scalar_output_needs_a_gradient(autodiff):
    result = autodiff("grad", "examples/matrix.expr", "--output", "L")
    assert (result.code, result.stdout) == (4, "")
    assert result.stderr == (
        "autodiff: error: grad can be implicitly created only for scalar outputs\n"
        "hint: the output L has shape [3, 3]: differentiate a number, as sum(L), or give --grad-output ones\n"
    )
    ok(autodiff("grad", "examples/matrix.expr", "--output", "L", "--grad-output", "ones"),
       "L\t[[8.0, 6.0, 4.0], [2.0, 0.0, -2.0], [-4.0, -6.0, -8.0]]\n"
       "x\t[[-2.0, -2.0, -2.0], [-2.0, -2.0, -2.0], [-2.0, -2.0, -2.0]]\n")
    ok(autodiff("grad", "-e", "x * x", "--at", "x=[1,2]", "--grad-output", "[1,10]"),
       "output\t[1.0, 4.0]\nx\t[2.0, 40.0]\n")


def test_tree_shows_node_names_variables_lines_and_retained_gradients(autodiff):
    ok(autodiff("grad", *TUTORIAL, "--tree", "--retain", "t", "--wrt", "a,d", "-f", "rich"), """\
e = 17.51292546   shape []   float64   grad_fn AddBackward0   (examples/tutorial.expr)

input   value   shape   requires_grad   is_leaf   grad_fn                gradient
─────────────────────────────────────────────────────────────────────────────────
a           2   []           yes          yes     —                             3
b           3   []           no           yes     —         not asked for (--wrt)
c           5   []           no           yes     —         not asked for (--wrt)
d          10   []           yes          yes     —                           0.5

variable         value   shape   grad_fn            gradient
────────────────────────────────────────────────────────────
u                    6   []      MulBackward0   not retained
t          2.302585093   []      LogBackward0              5

grad_fn graph of e
└── AddBackward0  e = u + t * c  (line 5, shape [], value 17.51292546)
    ├── MulBackward0  u = a * b  (line 3, shape [], value 6)
    │   └── AccumulateGrad  a  (shape [], value 2)  grad 3
    └── MulBackward0  t * c  (line 5, shape [], value 11.51292546)
        └── LogBackward0  t = log(d)  (line 4, shape [], value 2.302585093)  grad 5
            └── AccumulateGrad  d  (shape [], value 10)  grad 0.5
""")


def test_tree_in_plain_and_json(autodiff):
    result = autodiff("grad", "-e", "y = log(x) * x", "--at", "x=2", "--tree")
    ok(result, "y\t1.3862943611198906\nx\t1.6931471805599454\n"
               "node\t0\tMulBackward0\ty\t[]\tlog(x) * x\nnode\t1\tLogBackward0\t-\t[]\tlog(x)\n"
               "node\t2\tAccumulateGrad\tx\t[]\t-\nedge\t0\t1\nedge\t0\t2\nedge\t1\t2\n")
    graph = json.loads(autodiff("grad", "-e", "y = log(x) * x", "--at", "x=2", "--tree", "-f", "json").stdout)["graph"]
    assert [(n["op"], n["name"], n["line"]) for n in graph["nodes"]] == [
        ("MulBackward0", "y", 1), ("LogBackward0", None, 1), ("AccumulateGrad", "x", None)]
    assert graph["edges"] == [[0, 1], [0, 2], [1, 2]]


def test_check_passes_for_correct_gradients(autodiff):
    result = autodiff("grad", "examples/linear.expr", "--at", "x=1,y=2,z=5", "--check")
    assert (result.code, result.stderr) == (0, "")
    lines = [line.split("\t") for line in result.stdout.splitlines()]
    assert lines[:4] == [["s", "3.0"], ["x", "2.0"], ["y", "-2.0"], ["z", "1.0"]]
    assert [(line[0], line[1], line[3]) for line in lines[4:]] == [("check", n, "ok") for n in "xyz"]
    assert all(float(line[2]) < 1e-9 for line in lines[4:])
    result = autodiff("grad", *TUTORIAL, "--check", "-f", "json")
    check = json.loads(result.stdout)["check"]
    assert check["passed"] is True and check["max_abs_error"] < 1e-8
    assert set(check["inputs"]) == {"a", "b", "c", "d"}


def test_check_fails_with_exit_1_where_gradients_are_not_derivatives(autodiff):
    # detach and no_grad stop gradients on purpose: finite differences see through them
    result = autodiff("grad", "examples/dynamic.expr", "--check", "-f", "rich")
    assert result.code == 1
    assert "check FAILED for x: largest error 3.45\n" in result.stdout
    assert result.stderr.startswith(
        "examples/dynamic.expr:15:1: warning: --check: the program stops gradients here (a with block that turns "
        "off recording); finite differences see through it, so they differ from autograd's gradient by design\n")
    assert result.stderr.endswith("autodiff: warning: --check: and in 1 more place(s)\n")


def test_check_tolerances_are_options(autodiff):
    result = autodiff("grad", "-e", "sin(x)", "--at", "x=0.5", "--check", "--atol", "0", "--rtol", "0")
    assert result.code == 1 and "\tFAILED\n" in result.stdout
    # on a line the quotient is exact (it divides by the distance the dtype holds): nothing to tolerate
    assert autodiff("grad", "-e", "abs(x)", "--at", "x=0.5", "--check", "--atol", "0", "--rtol", "0").code == 0


def test_order_2_gives_the_hessian(autodiff):
    ok(autodiff("grad", "-e", "x**3 * y", "--at", "x=2,y=3", "--order", "2"),
       "output\t24.0\nx\t36.0\ny\t8.0\nhessian\tx\tx\t36.0\nhessian\tx\ty\t12.0\nhessian\ty\tx\t12.0\n"
       "hessian\ty\ty\t0.0\n")
    result = autodiff("grad", "-e", "sum(x**3) * y", "--at", "x=[1,2],y=3", "--order", "2", "-f", "json")
    assert json.loads(result.stdout)["hessian"] == {
        "x,x": [[18.0, 0.0], [0.0, 36.0]], "x,y": [3.0, 12.0], "y,x": [3.0, 12.0], "y,y": 0.0}


def test_dtype_float32_prints_float32_digits(autodiff):
    ok(autodiff("grad", *TUTORIAL, "--dtype", "float32"), "e\t17.512926\na\t3.0\nb\t2.0\nc\t2.3025851\nd\t0.5\n")


def test_seed_makes_random_numbers_reproducible(autodiff):
    first = autodiff("grad", "-e", "sum(randn(3) * x)", "--at", "x=1", "--seed", "3")
    again = autodiff("grad", "-e", "sum(randn(3) * x)", "--at", "x=1", "--seed", "3")
    other = autodiff("grad", "-e", "sum(randn(3) * x)", "--at", "x=1", "--seed", "4")
    assert first.stdout == again.stdout != other.stdout


def test_a_program_of_constants_has_a_value_and_no_gradients(autodiff):
    ok(autodiff("grad", "-e", "2 * 3"), "output\t6\n",
       "autodiff: warning: the output does not depend on any input that requires grad: every gradient is null\n")


# -- eval and graph ---------------------------------------------------------------------------------------


def test_eval_runs_forward_only(autodiff):
    ok(autodiff("eval", *TUTORIAL), "e\t17.51292546497023\nu\t6.0\nt\t2.302585092994046\n")
    ok(autodiff("eval", *TUTORIAL, "-f", "json"),
       '{"output": "e", "value": 17.51292546497023, "shape": [], "dtype": "float64", '
       '"inputs": {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}, "variables": {"u": 6.0, "t": 2.302585092994046}, '
       '"warnings": []}\n')
    rich = autodiff("eval", *TUTORIAL, "-f", "rich")
    assert rich.stdout.startswith("e = 17.51292546   shape []   float64   (examples/tutorial.expr, forward only)\n")
    assert "u                    6   []      —      \n" in rich.stdout  # no grad_fn: nothing was recorded


def test_graph_formats(autodiff):
    ok(autodiff("graph", "-e", "y = a * b", "--at", "a=2,b=3", "-f", "dot"), """\
digraph "<expr>" {
  rankdir=BT;
  node [shape=box, fontname="monospace"];
  n0 [label="y = a * b\\nMulBackward0\\nshape [] · value 6\\nline 1"];
  n1 [label="a\\nAccumulateGrad\\nshape [] · value 2", style=rounded];
  n2 [label="b\\nAccumulateGrad\\nshape [] · value 3", style=rounded];
  n1 -> n0;
  n2 -> n0;
}
""")
    ok(autodiff("graph", "-e", "y = a * b", "--at", "a=2,b=3", "--backward", "-f", "mermaid"), """\
flowchart BT
  n0["y = a * b<br/>MulBackward0<br/>shape [] · value 6<br/>grad 1<br/>line 1"]
  n1(["a<br/>AccumulateGrad<br/>shape [] · value 2<br/>grad 3"])
  n2(["b<br/>AccumulateGrad<br/>shape [] · value 3<br/>grad 2"])
  n1 --> n0
  n2 --> n0
""")
    ok(autodiff("graph", "-e", "y = a * b", "--at", "a=2,b=3", "-f", "rich"), """\
grad_fn graph of y (<expr>)
└── MulBackward0  y = a * b  (line 1, shape [], value 6)
    ├── AccumulateGrad  a  (shape [], value 2)
    └── AccumulateGrad  b  (shape [], value 3)
""")
    ok(autodiff("graph", "-e", "y = a * b", "--at", "a=2,b=3", "-f", "plain"),
       "node\t0\tMulBackward0\ty\t[]\ta * b\nnode\t1\tAccumulateGrad\ta\t[]\t-\nnode\t2\tAccumulateGrad\tb\t[]\t-\n"
       "edge\t0\t1\nedge\t0\t2\n")
    data = json.loads(autodiff("graph", *TUTORIAL, "--backward", "-f", "json").stdout)
    assert [(n["op"], n["name"], n["grad"]) for n in data["nodes"] if n["op"] == "AccumulateGrad"] == [
        ("AccumulateGrad", "a", 3.0), ("AccumulateGrad", "b", 2.0), ("AccumulateGrad", "d", 0.5),
        ("AccumulateGrad", "c", 2.302585092994046)]


def test_graph_labels_escape_what_dot_and_mermaid_would_read(autodiff, tmp_path):
    # a comment inside brackets is part of an expression's source text
    program = tmp_path / "q.expr"
    program.write_text('y = sum([x,  # a "quoted" <b> \\ end\n x])\n')
    dot = autodiff("graph", str(program), "--at", "x=1", "-f", "dot").stdout
    assert 'n0 [label="y = sum([x, # a \\"quoted\\" <b> \\\\ end x])\\nSumBackward0' in dot
    mermaid = autodiff("graph", str(program), "--at", "x=1", "-f", "mermaid").stdout
    assert 'n0["y = sum([x, # a #quot;quoted#quot; &lt;b&gt; \\ end x])<br/>SumBackward0' in mermaid


def test_graph_limit_leaves_out_nodes_and_says_so(autodiff):
    result = autodiff("graph", "-e", "y = x\nfor i in range(50):\n    y = y * 1.01\ny", "--at", "x=1",
                      "--limit", "5", "-f", "plain")
    assert result.stdout.count("node\t") == 5 and result.stdout.endswith("left_out\t46\n")


# -- the program itself -----------------------------------------------------------------------------------


def test_version_and_help(autodiff):
    ok(autodiff("--version"), f"autodiff {__version__}\n")
    for command in ("grad", "eval", "graph"):
        result = autodiff(command, "--help")
        assert result.code == 0 and "Examples" in result.stdout and f"autodiff {command} " in result.stdout
    result = autodiff()  # no command: the help, as a usage error
    assert result.code == 2 and "grad" in result.stderr and "eval" in result.stderr and result.stdout == ""


def test_python_dash_m_runs_the_same_program(autodiff):
    import subprocess
    import sys

    from console import ROOT, environment

    done = subprocess.run([sys.executable, "-m", "autodiff", "grad", *TUTORIAL], capture_output=True, text=True,
                          cwd=ROOT, env=environment())
    assert (done.returncode, done.stdout, done.stderr) == (0, TUTORIAL_PLAIN, "")


@pytest.mark.parametrize("flag", ["--debug"])
def test_debug_shows_the_traceback(autodiff, flag):
    import subprocess

    from console import ROOT, console_script, environment

    done = subprocess.run(console_script() + ["grad", "-e", "x +", flag], capture_output=True, text=True, cwd=ROOT,
                          env=environment())
    assert done.returncode == 3
    assert "Traceback" in done.stderr and done.stderr.rstrip().endswith("^")


def test_a_variable_holding_a_tuple_is_shown_not_an_internal_error(autodiff):
    # x.max(0)'s (values, indices) and split's pieces, each as its values
    result = autodiff("eval", "-e", "p = x.max(0)\nq = split(x, 2)\ny = p[0] * 2", "--at", "x=[1,3,2]", "-f", "plain")
    assert result.code == 0, result.stderr
    assert "p\t[3.0, 1]\n" in result.stdout and "q\t[[1.0, 3.0], [2.0]]\n" in result.stdout


def test_linear_algebra_in_a_program(autodiff):
    # torch.linalg's functions as linalg_<name>, their named results by field; PyTorch's error texts
    program = "r = linalg_eigh(S)\nsum(r.eigenvalues * [1, 3]) + det(S)"
    result = autodiff("grad", "-e", program, "--at", "S=[[2,1],[1,2]]", "-f", "json")
    assert result.code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["value"] == pytest.approx(13.0) and out["grad_fn"] == "AddBackward0"
    assert sum(out["grads"]["S"], []) == pytest.approx([4.0, 0.0, 0.0, 4.0], abs=1e-12)  # PyTorch's, to rounding
    result = autodiff("eval", "-e", "s = linalg_slogdet(S)\ny = s.logabsdet * 2", "--at", "S=[[2,1],[1,2]]", "-f", "plain")
    assert result.code == 0 and "s\t[1.0, 1.0986122886681096]\n" in result.stdout
    result = autodiff("grad", "-e", "sum(linalg_inv(A))", "--at", "A=[[1,2],[2,4]]")
    assert result.code == 4
    assert "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input " \
           "matrix is singular." in result.stderr
    result = autodiff("grad", "-e", "torch.linalg.solve(A, b)", "--at", "A=[[2,1],[1,2]]", "--at", "b=[1,2]")
    assert "write linalg_solve(A, b): the language names torch.linalg's functions linalg_<name>" in result.stderr

"""A newcomer's second hour: the autograd tutorials' own lines pasted into a program, checks that
do not cry wolf, scripts that meet odd records, and the smaller things seen on the way."""

from __future__ import annotations

import json
import re

import pytest

from console import ROOT

# -- the tutorials' own words ----------------------------------------------------------------------------

TUTORIAL_LINES = [  # program, exit status, the start of the message, what it says to write instead
    ("u = a * b\nu.retain_grad()\ne = u + 1", 3, "<expr>:2:1: error: 'retain_grad' is an option of the commands "
     "here, not a method", "`autodiff grad FILE --retain u` (`%%autodiff --retain u` in a notebook) shows u's "
     "gradient; remove this line"),
    ("e = a * b\ne.backward()", 3, "<expr>:2:1: error: 'backward' is not a method here: `autodiff grad` runs "
     "backward from the program's output (its last statement) and prints every input's gradient",
     "end the program with `e` instead of calling backward"),
    ("e = a * b\ne.sum().backward()", 3, "<expr>:2:1: error: 'backward' is not a method here",
     "end the program with `e.sum()` instead of calling backward"),
    ("e = a * b\ng = a.grad", 3, "<expr>:2:5: error: 'grad' is not an attribute here: `autodiff grad` runs backward",
     "(a's among them, and a variable's with --retain NAME)"),
    ("a.requires_grad = False\ne = a * 2", 3, "<expr>:1:17: error: inputs require grad; to hold a constant",
     "declare it a constant: `a: const = VALUE` (or name the others with --wrt)"),
    ("a.requires_grad = True\ne = a * 2", 3, "<expr>:1:17: error: inputs require grad already",
     "remove this line (a, used and never assigned, is an input)"),
    ("w = randn(3, 2).requires_grad_()\ne = sum(w * a)", 3, "<expr>:1:5: error: 'requires_grad_' is not a method",
     "declare it an input: `NAME: input = randn(3, 2)`"),
    ("y = e ** a", 2, "<expr>:1:5: error: no value for input 'e': give one with --at e=VALUE",
     "for Euler's number to a power write exp(a) (e is not a constant here; exp(1) is e)"),
    ("y = e ^ (2 * a)", 2, "<expr>:1:5: error: no value for input 'e'", "write exp(2 * a)"),
    ("y = e * a", 2, "<expr>:1:5: error: no value for input 'e'", "e is not a constant here: write exp(1)"),
    ("y = log(a, 2)", 3, "<expr>:1:5: error: log takes one argument (the natural logarithm)",
     "write log2(a) for the logarithm base 2"),
    ("y = log(a, 10)", 3, "<expr>:1:5: error: log takes one argument", "write log10(a)"),
    ("y = log(a, b)", 3, "<expr>:1:5: error: log takes one argument", "write log(a) / log(b) for the logarithm base b"),
]


@pytest.mark.parametrize("program,status,start,advice", TUTORIAL_LINES, ids=[t[0].split("\n")[-1] for t in TUTORIAL_LINES])
def test_a_tutorials_line_says_what_the_commands_do_instead(autodiff, program, status, start, advice):
    result = autodiff("grad", "-e", program, "--at", "a=2,b=3")
    assert (result.code, result.stdout) == (status, "")
    message = result.stderr.splitlines()
    assert message[0].startswith(start) and advice in message[0], result.stderr
    assert message[2].lstrip().startswith("^")  # the line, then the caret under the place
    assert "did you mean" not in result.stderr


def test_the_same_words_are_fine_where_the_program_defines_them(autodiff):
    """A program's own `log` of two arguments, and an `e` given a value, are the program's business."""
    program = "def log(x, b):\n    return x * b\ny = log(a, 2)"
    assert autodiff("grad", "-e", program, "--at", "a=3", "--format", "plain").stdout == "y\t6.0\na\t2.0\n"
    assert autodiff("grad", "-e", "y = e ** a", "--at", "e=2,a=3", "--format", "plain").stdout.startswith("y\t8.0\n")


def test_requires_grad_true_warns_that_the_leaf_is_no_input_and_says_how_to_make_one(autodiff):
    result = autodiff("grad", "-e", "w = randn(3, 2, requires_grad=True)\ne = sum(w * x)", "--at", "x=2", "--check",
                      "--format", "plain")
    assert result.code == 0
    assert result.stderr.startswith(
        "<expr>:1:5: warning: requires_grad=True makes 'w' a leaf that is not an input: its gradient is shown among "
        "the variables, but --check, --wrt and derive leave it out; to differentiate with respect to it, declare it "
        "an input: `w: input = randn(3, 2)`\n    w = randn(3, 2, requires_grad=True)\n        ^~~~"), result.stderr
    assert "retained\tw\t[[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]" in result.stdout
    declared = autodiff("grad", "-e", "w: input = randn(3, 2)\ne = sum(w * x)", "--at", "x=2", "--check",
                        "--format", "plain")
    assert (declared.code, declared.stderr) == (0, "")
    assert "w\t[[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]" in declared.stdout and "check\tw\t" in declared.stdout
    wrt = autodiff("grad", "-e", "w = randn(3, 2, requires_grad=True)\ne = sum(w * x)", "--at", "x=2", "--wrt", "w")
    assert wrt.code == 2 and "declare it an input: `w: input = randn(3, 2)`" in wrt.stderr


def test_a_leaf_without_a_name_is_warned_about_too(autodiff):
    result = autodiff("grad", "-e", "y = sum(rand(3, requires_grad=True) * x)", "--at", "x=2", "--format", "plain")
    assert result.code == 0
    assert "warning: requires_grad=True makes a leaf that is not an input: its gradient is not shown, checked or " \
           "derived; to differentiate with respect to it, declare an input: `NAME: input = rand(3)`" in result.stderr


@pytest.mark.parametrize("command", ["grad", "derive", "explain", "graph"])
def test_a_program_given_where_a_file_belongs_suggests_e(autodiff, command):
    result = autodiff(command, "x**2 + 1", "--at", "x=3")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == "autodiff: error: x**2 + 1: no such file; to give the program itself, use -e: " \
                            "-e 'x**2 + 1'\n"
    missing = autodiff(command, "nofile.expr", "--at", "x=3")
    assert missing.stderr == "autodiff: error: nofile.expr: no such file\n"  # a file's name: no advice


# -- checks that do not cry wolf ----------------------------------------------------------------------

PLANCK = "h = 6.62607015e-34\nc = 299792458.0\nk = 1.380649e-23\nB = 2 * h * c**2 / lam**5 / (exp(h * c / (lam * k * T)) - 1)"


@pytest.mark.parametrize("program,at", [(PLANCK, "lam=500e-9,T=5000"), ("sqrt(x)", "x=1e-9"), ("sin(x)", "x=1e8"),
                                        ("x ** 2", "x=1e12")], ids=["planck", "sqrt", "sin", "square"])
def test_check_passes_correct_gradients_at_every_magnitude(autodiff, program, at):
    result = autodiff("grad", "-e", program, "--at", at, "--check", "--format", "json")
    assert result.code == 0, result.stdout
    check = json.loads(result.stdout)["check"]
    assert check["passed"] and check["eps"] == 1e-6
    assert all(entry["step"] > 0 for entry in check["inputs"].values())


def test_eps_chooses_the_relative_step_and_is_refused_without_check(autodiff):
    result = autodiff("grad", "-e", "x ** 3", "--at", "x=0.5", "--check", "--eps", "1e-4", "--format", "json")
    check = json.loads(result.stdout)["check"]
    assert result.code == 0 and check["eps"] == 1e-4 and check["inputs"]["x"]["step"] == pytest.approx(5e-5)
    alone = autodiff("grad", "-e", "x ** 3", "--at", "x=0.5", "--eps", "1e-4")
    assert (alone.code, alone.stderr) == (2, "autodiff: error: --eps is the step of --check: add --check\n")
    zero = autodiff("grad", "-e", "x ** 3", "--at", "x=0.5", "--check", "--eps", "0")
    assert zero.code == 2 and "--eps 0: the step relative to each value must be above 0 and below 1" in zero.stderr


def test_a_large_eps_is_noted_and_a_kink_is_still_a_kink(autodiff):
    result = autodiff("grad", "-e", "x ** 2", "--at", "x=3", "--check", "--eps", "0.1", "--format", "plain")
    assert result.code == 0
    assert result.stderr == ("autodiff: note: --check: x = 3 moves by 0.1, 3% of its magnitude: finite differences "
                             "measure a secant there, not the slope; a smaller --eps measures the slope\n")
    kink = autodiff("grad", "-e", "y = relu(x - 5)", "--at", "x=5", "--check")
    assert kink.code == 1 and "not differentiable in x at this point (a kink): its slope is 1 from the right and 0 " \
                              "from the left" in kink.stderr
    assert "warning: --check: relu of 0 here" in kink.stderr


def test_the_notebook_takes_eps_with_check():
    from autodiff.jupyter import run_cell
    from autodiff.program.errors import UsageProblem

    result = run_cell("--at x=1e-9 --check --eps 1e-7", "sqrt(x)")
    assert result.check.passed and result.check.eps == 1e-7
    with pytest.raises(UsageProblem, match="--eps is the step of --check"):
        run_cell("--at x=1 --eps 1e-7", "sqrt(x)")


# -- scripts ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("record,message", [
    ('{"a": 1, "b": null}', "input 'b': the value is missing (null)"),
    ('{"a": 1, "b": true}', "input 'b': true is not a number"),
    ('{"a": 1, "b": [1, null]}', "input 'b': the value is missing (null)"),
])
def test_a_json_lines_null_is_a_missing_value_as_a_csv_empty_cell_is(autodiff, record, message):
    points = record + '\n{"a": 2, "b": 3}\n'
    result = autodiff("grad", "-e", "sum(a * b)", "--points", "-", "--in", "jsonl", stdin=points)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == f"autodiff: error: <stdin>:1: {message}\n"
    csv = autodiff("grad", "-e", "sum(a * b)", "--points", "-", stdin="a,b\n1,\n2,3\n")
    assert csv.code == 2 and "<stdin>:2: input 'b': '' is not a number or a [list] (the value is missing)" in csv.stderr
    kept = autodiff("grad", "-e", "sum(a * b)", "--points", "-", "--in", "jsonl", "--on-error", "null", stdin=points)
    assert kept.code == 1 and f'"error": "{message}"' in kept.stdout.splitlines()[0]


@pytest.mark.parametrize("command,out,header", [
    ("grad", "csv", "a,b,value,grad_a,grad_b"), ("eval", "csv", "a,b,value"), ("grad", "tsv", "a\tb\tvalue\tgrad_a\tgrad_b"),
])
def test_points_given_only_a_header_write_the_header(autodiff, command, out, header):
    result = autodiff(command, "-e", "a * b", "--points", "-", "--out", out, stdin="a,b\n")
    assert (result.code, result.stdout, result.stderr) == (0, header + "\n", "")
    bare = autodiff(command, "-e", "a * b", "--points", "-", "--out", out, "--no-header", stdin="a,b\n")
    assert (bare.code, bare.stdout) == (0, "")
    jsonl = autodiff(command, "-e", "a * b", "--points", "-", "--out", "jsonl", stdin="a,b\n")
    assert (jsonl.code, jsonl.stdout) == (0, "")  # JSON Lines has no header: nothing at all


@pytest.mark.parametrize("value,shown", [("1e400", "1e400"), ("-1e400", "-1e400"), ("[1,2e308]", "2e308"),
                                         ("1" + "0" * 400, "100000000000... (401 characters)")])
def test_an_at_value_beyond_float64_is_refused_not_made_inf(autodiff, value, shown):
    result = autodiff("grad", "-e", "sum(x * 2)", "--at", f"x={value}")
    assert (result.code, result.stdout) == (2, "")
    sign = "-" if value.startswith("-") else ""
    assert result.stderr == (f"autodiff: error: --at x: {shown} is beyond the range of float64 (at most about "
                             f"1.8e308): write {sign}inf for {'minus ' if sign else ''}infinity\n")
    assert autodiff("grad", "-e", "x * 2", "--at", f"x={sign}inf", "--format", "plain").stdout == \
        f"output\t{sign}inf\nx\t2.0\n"  # infinity written as such is a value


def test_points_beyond_float64_or_the_runs_dtype_are_refused(autodiff):
    for points, fmt in (("x\n1e400\n1\n", "csv"), ('{"x": 1e400}\n{"x": 1}\n', "jsonl")):
        result = autodiff("grad", "-e", "x * 2", "--points", "-", "--in", fmt, stdin=points)
        assert result.code == 2 and "<stdin>:" in result.stderr and \
            "1e400 is beyond the range of float64 (at most about 1.8e308): write inf for infinity" in result.stderr
    result = autodiff("grad", "-e", "x * 2", "--points", "-", "--dtype", "float32", stdin="x\n1e39\n1\n")
    assert result.code == 2
    assert result.stderr == ("autodiff: error: <stdin>:2: input 'x': 1e+39 is beyond the range of float32 (at most "
                             "about 3.4e+38): it would be inf\n")
    assert autodiff("grad", "-e", "x * 2", "--points", "-", stdin="x\n1e39\n").code == 0  # float64 holds it
    alone = autodiff("grad", "-e", "x * 2", "--at", "x=1e39", "--dtype", "float32")
    assert alone.code == 2 and alone.stderr.startswith(
        "<expr>:1:1: error: the value of 'x' holds 1e+39, beyond the range of float32 (at most about 3.4e+38): it "
        "would be inf\n")


# -- smaller things, seen on the way ---------------------------------------------------------------------

LONG = "y = sigmoid(a * b + log(a) * exp(b)) * tanh(a)"


@pytest.mark.parametrize("columns", [60, 80])
def test_explain_wraps_each_line_under_its_own_start_never_at_column_0(autodiff, columns):
    result = autodiff("explain", "-e", LONG, "--at", "a=2,b=3", "--format", "rich", COLUMNS=str(columns))
    assert result.code == 0
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= columns
    body = lines[lines.index("∂y/∂a = 0.07065085271"):]
    starts = ("∂y/∂", "1 path", "2 paths", "3 paths", "backward, step by step")
    for line in body:  # a path, its edges and the steps: numbered, or indented under their start
        assert not line or line.startswith(" ") or re.match(r"\d+\. ", line) or line.startswith(starts), line
    joined = re.sub(r"\s+", " ", result.stdout)
    assert "∂sigmoid(a * b + log(a) * exp(b))/∂(a * b + log(a) * exp(b)) = sigmoid(a * b + log(a) * exp(b)) * (1 " \
           "- sigmoid(a * b + log(a) * exp(b))) = 2.22784013e-09 SigmoidBackward0" in joined  # nothing lost


def test_explain_keeps_a_line_that_fits_as_it_was(autodiff):
    result = autodiff("explain", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "--format", "rich",
                      COLUMNS="100")
    assert "1. ∂e/∂(t * c) · ∂(t * c)/∂t · ∂t/∂d = 1 × 5 × 0.1 = 0.5\n     ∂e/∂(t * c) = 1  AddBackward0\n" \
        in result.stdout


def test_graph_edges_local_is_written_in_every_format(autodiff):
    args = ("graph", "-e", "y = a * b + log(a)", "--at", "a=2,b=3", "--edges", "local")
    rich = autodiff(*args, "--format", "rich").stdout
    assert "├── ∂y/∂(a * b) = 1  ← MulBackward0  a * b" in rich
    assert "│   ├── ∂(a * b)/∂a = b = 3  ← AccumulateGrad  a" in rich
    assert "∂log(a)/∂a = 1 / a = 0.5  ← AccumulateGrad  a" in rich  # a node shown above gets its edge too
    assert "←" not in autodiff(*args[:-2], "--format", "rich").stdout  # not asked: no labels
    plain = autodiff(*args, "--format", "plain").stdout.splitlines()
    assert [line for line in plain if line.startswith("edge")] == [
        "edge\t0\t1\t∂y/∂(a * b) = 1", "edge\t0\t4\t∂y/∂log(a) = 1", "edge\t1\t2\t∂(a * b)/∂a = b = 3",
        "edge\t1\t3\t∂(a * b)/∂b = a = 2", "edge\t4\t2\t∂log(a)/∂a = 1 / a = 0.5"]
    graph = json.loads(autodiff(*args, "--format", "json").stdout)
    assert graph["edges"] == [[0, 1], [0, 4], [1, 2], [1, 3], [4, 2]]
    assert graph["edge_labels"] == ["∂y/∂(a * b) = 1", "∂y/∂log(a) = 1", "∂(a * b)/∂a = b = 3", "∂(a * b)/∂b = a = 2",
                                    "∂log(a)/∂a = 1 / a = 0.5"]
    assert "edge_labels" not in json.loads(autodiff(*args[:-2], "--format", "json").stdout)


def test_a_missing_file_with_a_directory_is_no_program(autodiff):
    result = autodiff("grad", "examples/missing.expr", "--at", "x=3")
    assert result.stderr == "autodiff: error: examples/missing.expr: no such file\n"

"""A newcomer's first hour: layouts that fit, mistakes that teach, conventions that hold."""

from __future__ import annotations

import json
import re

import pytest

from console import ROOT, run_in_terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TUTORIAL = ("grad", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10")


def rich_screen(width: int, *args: str) -> str:
    """The rich output of a command, drawn in colour in this process at `width` columns."""
    from rich.console import Console

    from autodiff.cli.program_input import parse_names
    from autodiff.program import differentiate
    from autodiff.language import Source

    source = Source(open(ROOT / args[0]).read() if not args[0].startswith("-e") else args[1], args[0])
    at = {}
    from autodiff.cli.program_input import parse_at

    at = parse_at([args[args.index("--at") + 1]]) if "--at" in args else {}
    tree = "--tree" in args
    retain = parse_names(args[args.index("--retain") + 1], "--retain") if "--retain" in args else None
    result = differentiate(source, at, graph=tree, retain=retain)
    from autodiff.cli.render import rich_

    console = Console(force_terminal=True, width=width, color_system="truecolor")
    with console.capture() as captured:
        rich_.grad(result, console)
    text = captured.get()
    assert "\x1b[" in text  # in colour
    return ANSI.sub("", text)


def widest(text: str) -> int:
    return max(len(line.rstrip()) for line in text.splitlines())


@pytest.mark.parametrize("width", [40, 50, 60, 80, 120])
def test_tutorial_fits_and_keeps_every_value_and_gradient(width):
    screen = rich_screen(width, "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10")
    assert widest(screen) <= width, screen
    for number in ("17.51292546", "2.302585093", "0.5"):  # whole, never split across lines
        assert number in screen, screen
    rows = {line.split()[0]: line.split() for line in screen.splitlines() if line[:2] in ("a ", "b ", "c ", "d ")}
    assert [rows[n][-1] for n in "abcd"] == ["3", "2", "2.302585093", "0.5"], screen  # the gradient column is there


def test_constant_columns_fold_into_a_note_only_when_needed():
    wide, narrow = rich_screen(120, *TUTORIAL[1:]), rich_screen(50, *TUTORIAL[1:])
    assert any(line.startswith("input") and "requires_grad" in line for line in wide.splitlines())
    assert "every input" not in wide
    assert "every input: shape [], requires_grad yes," in narrow
    assert "is_leaf yes" in narrow


MATRIX = ("-e", "sum(W*W)", "--at", "W=[[1.0123456,2,3,4],[5,6,7,8]]")


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_a_matrix_wraps_by_rows_never_inside_a_number(width):
    screen = rich_screen(width, *MATRIX)
    assert widest(screen) <= width, screen
    for number in ("1.0123", "8.0000", "2.0247", "16.0000"):
        assert number in screen
    if width >= 80:  # one matrix row per line, not one number per line
        assert "[[1.0123, 2.0000, 3.0000, 4.0000]," in screen, screen
        assert "[10.0000, 12.0000, 14.0000, 16.0000]]" in screen, screen


def test_a_matrix_in_a_narrow_block_keeps_its_commas_and_brackets():
    """PyTorch's layout counts numbers, not the `],` after a row: at 40 columns it cut them silently."""
    values = [[3.2585, -4.5085, 2.2648], [-6.5462, -5.5587, -5.3356], [-1.0037, 5.0122, 9.4688]]
    whole = "[" + ",".join("[" + ",".join(f"{v:.4f}" for v in row) + "]" for row in values) + "]"
    for width in range(30, 61):
        screen = rich_screen(width, "-e", "y = sum(logsumexp(longer_input_name))", "--at",
                             "longer_input_name=" + str(values).replace(" ", ""))
        assert widest(screen) <= width, screen
        assert whole in re.sub(r"\s", "", screen), (width, screen)
        assert "…" not in screen


@pytest.mark.parametrize("columns", [40, 60, 100])
def test_the_test_failure_table_keeps_every_number_whole(autodiff, tmp_path, columns):
    import json

    result = autodiff("test", failing_suite(tmp_path), "--format", "rich", COLUMNS=str(columns))
    assert result.code == 1
    assert widest(result.stdout) <= columns, result.stdout
    lines = result.stdout.splitlines()
    recorded = json.loads((tmp_path / "tutorial.expr.golden.json").read_text())["points"][0]
    got = json.loads(autodiff(*TUTORIAL, "--format", "json").stdout)
    for number in (recorded["value"], got["value"], recorded["grads"]["a"], got["grads"]["a"]):
        number = json.dumps(number)
        assert any(re.search(rf"(^|\s){re.escape(number)}(\s|$)", line) for line in lines), (number, result.stdout)
    assert "…" not in result.stdout
    assert re.search(r"\d\.\d\d s \(\d+ files/s\)", result.stdout)  # the summary's time, on one line too


def test_a_deep_tree_goes_on_below_and_stays_readable():
    program = "x = a\n" + "x = tanh(x * a + x)\n" * 30 + "y = x * 2\n"
    from rich.console import Console

    from autodiff.cli.render import rich_
    from autodiff.program import differentiate

    result = differentiate(program, {"a": 0.1}, graph=True)
    console = Console(force_terminal=True, width=60)
    with console.capture() as captured:
        rich_.grad(result, console)
    screen = ANSI.sub("", captured.get())
    assert "continued below in ⟨1⟩" in screen and "⟨1⟩ continued" in screen
    assert widest(screen) <= 60
    # every line of the tree keeps room for its label: the guides never take more than 40 columns
    assert all(len(line) - len(line.lstrip(" │├└─")) <= 44 for line in screen.splitlines())


@pytest.mark.parametrize("columns", ["40", "60", "80", "120"])
def test_the_script_fits_the_terminal_it_is_told(autodiff, columns):
    result = autodiff(*TUTORIAL, "--format", "rich", COLUMNS=columns, FORCE_COLOR="1", NO_COLOR="",
                      TERM="xterm-256color")
    assert result.code == 0 and "\x1b[" in result.stdout
    screen = ANSI.sub("", result.stdout)
    assert widest(screen) <= int(columns), screen
    assert "2.302585093" in screen and "0.5" in screen


def test_a_leaf_assigned_to_a_variable_is_named_by_it(autodiff):
    result = autodiff("graph", "-e", "x = rand(3, 3, requires_grad=True)\ny = sum(x * x)", "--format", "mermaid")
    assert '(["x<br/>AccumulateGrad' in result.stdout and "leaf" not in result.stdout


def test_retaining_the_output_gives_its_gradient_one(autodiff):
    result = autodiff(*TUTORIAL, "--retain", "e", "--format", "plain")
    assert "retained\te\t1.0\n" in result.stdout
    result = autodiff(*TUTORIAL, "--retain", "e", "--format", "json")
    assert '"retained": {"e": 1.0}' in result.stdout


# -- mistakes that teach ---------------------------------------------------------------------------------

MISTAKES = [
    ("torch.sum(x)", 3, "write sum(x): functions are called by their names alone, without 'torch.'"),
    ("np.exp(x)", 3, "write exp(x)"),
    ("math.log(x)", 3, "write log(x)"),
    ("np.pi * x", 3, "write pi"),
    ("torch.nn.functional.relu(x)", 3, "write relu(x)"),
    ("torch.linalg.solve(x, x)", 3, "write linalg_solve(x, x): the language names torch.linalg's functions "
                                    "linalg_<name>"),
    ("linalg.inv(x)", 3, "write linalg_inv(x)"),
    ("with torch.no_grad():\n    y = x\ny = x", 3, "write `with no_grad:`"),
    ("while x < 3:\n    x = x + 1", 3, "'while' loops are not part of the language: use a bounded loop"),
    ("import numpy", 3, "'import' is not part of the language"),
    ("f = lambda x: x", 3, "'lambda' is not part of the language: define a function"),
    ("class A:\n    y = 1", 3, "'class' is not part of the language"),
    ("ln(x)", 3, "unknown function 'ln': write log(x)"),
    ("cbrt(x + 1)", 3, "write sign(x + 1) * abs(x + 1) ** (1/3)"),
    ("expit(x)", 3, "write sigmoid(x)"),
    ("2x", 3, "a number against a name is not a product here: write 2*x"),
    ("y = 2π", 3, "write 2*pi"),
    ("x²", 3, "write x**2 for x²"),
    ("π * x", 3, "'π' is not a name here: write pi"),
    ("√x", 3, "write sqrt(x)"),
    ("x × 2", 3, "did you mean '*'?"),
]


@pytest.mark.parametrize("program,status,advice", MISTAKES, ids=[m[0].split("\n")[0] for m in MISTAKES])
def test_a_mistake_says_what_to_write_instead(autodiff, program, status, advice):
    result = autodiff("grad", "-e", program, "--at", "x=2")
    assert result.code == status, result.stderr
    assert advice in result.stderr, result.stderr
    assert "no value for input" not in result.stderr


def test_a_prefix_is_dropped_only_where_the_bare_name_exists(autodiff):
    result = autodiff("grad", "-e", "F.mse_loss(x, y)", "--at", "x=2,y=3")
    assert result.code == 3 and "write mse_loss(x, y): functions are called by their names alone" in result.stderr
    assert autodiff("grad", "-e", "mse_loss(x, y)", "--at", "x=2,y=3", "-f", "plain").stdout == \
        "output\t1.0\nx\t-2.0\ny\t2.0\n"
    result = autodiff("grad", "-e", "F.celu(x)", "--at", "x=2")
    assert result.code == 3 and "autodiff has no function 'celu', with or without 'F.'" in result.stderr
    assert "names alone" not in result.stderr


def test_a_dropped_prefix_keeps_the_calls_keyword_arguments(autodiff):
    """Following the advice must not change the call: `reduction=sum` is no `mean`."""
    result = autodiff("grad", "-e", "F.mse_loss(x, x * 2, reduction=sum)", "--at", "x=[1,2]")
    assert result.code == 3 and "write mse_loss(x, x * 2, reduction=sum): functions" in result.stderr
    result = autodiff("grad", "-e", "y = torch.log_softmax(x, dim=0)[0]", "--at", "x=[1,2]")
    assert result.code == 3 and "write log_softmax(x, dim=0): functions" in result.stderr


def test_pow_is_fine(autodiff):
    assert autodiff("grad", "-e", "pow(x, 2)", "--at", "x=3", "--format", "plain").stdout == "output\t9.0\nx\t6.0\n"


def test_a_program_missing_several_inputs_names_them_all(autodiff):
    result = autodiff("grad", "examples/tutorial.expr", "--at", "a=2")
    assert result.code == 2
    assert "no values for the inputs 'b', 'd' and 'c': give them with --at b=VALUE,d=VALUE,c=VALUE" in result.stderr


@pytest.mark.parametrize("args", [
    ("grad", "examples/tutorial.expr", "--at", "a=2,", "b=3,c=5,d=10"),
    ("grad", "-e", "x * y", "--at", "x=2,", "y=3"),
    ("grad", "--at", "x=2,", "y=3", "examples/tutorial.expr"),
])
def test_an_at_list_split_by_the_shell_is_explained(autodiff, args):
    result = autodiff(*args)
    assert result.code == 2
    assert "looks like an --at value cut off by the shell: remove the space after the comma" in result.stderr
    assert "or quote the list" in result.stderr


def test_json_lines_read_as_csv_hint_at_in_jsonl(autodiff):
    lines = '{"a": 1, "b": 2}\n{"a": 3, "b": 4}\n'
    result = autodiff("grad", "-e", "a * b", "--points", "-", stdin=lines)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.rstrip().endswith("the lines look like JSON Lines: add --in jsonl"), result.stderr
    assert autodiff("grad", "-e", "a * b", "--points", "-", "--in", "jsonl", stdin=lines).code == 0


@pytest.mark.parametrize("args,message", [
    (("-e", "sum(x*2)", "--at", "x=[1,", "2]"),
     "--at x=[1,: the shell cut this value at its spaces (its bracket is not closed); "
     "quote it and drop the spaces: --at 'x=[1,2]'"),
    (("examples/tutorial.expr", "--at", "a=[1,", "2],b=3,c=5,d=10"),
     "quote it and drop the spaces: --at 'a=[1,2],b=3,c=5,d=10'"),
    (("--at=W=[[1,", "2],", "[3,", "4]]", "-e", "sum(W)"), "quote it and drop the spaces: --at 'W=[[1,2],[3,4]]'"),
    (("-e", "a * b", "--at", "a=2", "b=3"), "'b=3' looks like another --at value: join them with commas: --at a=2,b=3"),
    (("examples/tutorial.expr", "--at", "a=2", "b=3", "c=5,d=10"), "join them with commas: --at a=2,b=3,c=5,d=10"),
])
def test_an_at_value_cut_at_its_spaces_is_explained(autodiff, args, message):
    result = autodiff("grad", *args)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith("autodiff: error: ") and result.stderr.endswith(f"{message}\n"), result.stderr
    assert result.stderr.count("\n") == 1


# -- conventions -----------------------------------------------------------------------------------------


def test_the_program_is_read_from_a_pipe_when_no_file_is_named(autodiff):
    result = autodiff("grad", "--at", "x=3", "--format", "plain", stdin="x**2\n")
    assert (result.code, result.stdout) == (0, "output\t9.0\nx\t6.0\n")
    assert autodiff("grad", "--at", "x=3").code == 2  # nothing piped: the usual advice


def test_version_has_a_short_flag(autodiff):
    assert autodiff("-V").stdout == autodiff("--version").stdout != ""


def test_color_always_and_never(autodiff):
    always = autodiff(*TUTORIAL, "--format", "rich", "--color", "always", TERM="xterm-256color")
    assert "\x1b[" in always.stdout
    never = autodiff(*TUTORIAL, "--format", "rich", "--color", "never", FORCE_COLOR="1")
    assert "\x1b[" not in never.stdout  # no colours, and no bold or dim either
    error = autodiff("grad", "-e", "ln(x)", "--at", "x=1", "--color", "always")
    assert "\x1b[1;31merror:\x1b[0m" in error.stderr
    assert "\x1b[" not in autodiff("grad", "-e", "ln(x)", "--at", "x=1").stderr  # not a terminal


def failing_suite(directory) -> str:
    """A copy of the tutorial whose record expects other numbers: `autodiff test` shows its failure table."""
    import json
    import shutil

    shutil.copy(ROOT / "examples/tutorial.expr", directory / "tutorial.expr")
    record = json.loads((ROOT / "examples/tutorial.expr.golden.json").read_text())
    record["points"][0]["value"] += 0.1
    record["points"][0]["grads"]["a"] += 1e-8
    (directory / "tutorial.expr.golden.json").write_text(json.dumps(record))
    return str(directory)


def terminal_session(tmp_path) -> str:
    """Every command and format that draws for a person at a terminal, warnings and errors too."""
    at = "--at a=2,b=3,c=5,d=10"
    commands = [f"grad examples/tutorial.expr {at} --tree --check --order 2", f"eval examples/tutorial.expr {at}",
                f"graph examples/tutorial.expr {at}", f"explain examples/tutorial.expr {at}",
                "plot -e 'y = x ** 3 - 3 * x' --wrt x --range -2:2", "grad -e 'log(x)' --at x=-1",
                "grad -e 'x +' --at x=1", f"test {failing_suite(tmp_path)} -v", "--help", "grad --help", ""]
    return "; ".join(f"autodiff {command} COLOR" for command in commands)


def test_without_colour_a_terminal_gets_no_escape_at_all(tmp_path):
    session = terminal_session(tmp_path)
    code, coloured = run_in_terminal(session.replace(" COLOR", ""), ROOT, TERM="xterm-256color", NO_COLOR="")
    assert "\x1b[" in coloured  # the same session in colour: bold, dim and colours are escapes
    for flag, no_color in (("", "1"), (" --color never", "")):  # NO_COLOR=1, or --color never
        code, shown = run_in_terminal(session.replace(" COLOR", flag), ROOT, TERM="xterm-256color", NO_COLOR=no_color)
        assert "\x1b" not in shown, (flag, shown[max(0, shown.find("\x1b") - 200):shown.find("\x1b") + 50])
        assert "FAILED" in shown and "∂y/∂x" in shown and "Usage: autodiff" in shown  # every command did draw


def test_without_colour_the_plot_draws_its_two_curves_with_different_glyphs():
    from rich.console import Console

    from autodiff.cli.render import plot as render
    from autodiff.language import Source
    from autodiff.program.plot import sample

    result = sample(Source("y = x ** 3 - 3 * x", "<expr>"), "x", -2.0, 2.0, points=201)

    def glyphs(console) -> tuple:
        with console.capture() as captured:
            render.rich(result, console)
        body = ANSI.sub("", captured.get()).split("\n", 1)[1]
        return {c for c in body if 0x2800 < ord(c) <= 0x28FF}, {c for c in body if c in render.MONO.values()}

    braille, marks = glyphs(Console(width=80, color_system=None, force_terminal=True))
    assert braille and marks == {"•", "×"}  # the output in braille, its derivative in dots, a crossing as ×
    braille, marks = glyphs(Console(width=80, color_system="truecolor", force_terminal=True))
    assert braille and not marks  # in colour, both in braille, told apart by colour


SHELL_SCRIPTS = [("bash", "complete -o default -F"), ("zsh", "#compdef autodiff"), ("fish", "complete --command autodiff")]


def _prints_the_script(argv: list, mark: str, **env) -> None:
    """`argv` (the command, started afresh: Typer reads its switches as the app is built) prints a
    completion script holding `mark`."""
    import subprocess

    from console import environment

    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=environment(**env), timeout=60)
    assert done.returncode == 0 and "_AUTODIFF_COMPLETE" in done.stdout and mark in done.stdout, done.stderr


@pytest.mark.parametrize("shell, mark", SHELL_SCRIPTS)
def test_shell_completion_scripts(shell, mark):
    """Each shell's script, the shell named (Typer's test switch turns its detection off, so that
    `--show-completion` takes the shell as its value)."""
    from console import console_script

    _prints_the_script([*console_script(), "--show-completion", shell], mark,
                       _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")


@pytest.mark.parametrize("shell, mark", SHELL_SCRIPTS)
def test_shell_completion_is_the_script_of_the_shell_it_runs_in(shell, mark):
    """`--show-completion` finds its shell among the processes above it (shellingham): run from
    that shell, it prints that shell's script. (A suite started from no shell detects none.)"""
    import shutil

    from console import console_script

    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (its script is checked by name above)")
    # `; true`: the shell stays the command's parent, rather than replacing itself with it
    _prints_the_script([shell, "-c", f"{console_script()[0]} --show-completion; true"], mark)


def test_completion_answers_a_shell(autodiff):
    result = autodiff(_AUTODIFF_COMPLETE="complete_bash", COMP_WORDS="autodiff gr", COMP_CWORD="1")
    assert result.stdout.split() == ["grad", "graph"]


@pytest.mark.parametrize("command", ["grad", "eval", "graph", "explain", "test"])
def test_help_has_examples_and_no_type_noise(autodiff, command):
    text = autodiff(command, "--help", COLUMNS="200").stdout
    assert "Examples" in text and f"autodiff {command}" in text
    for noise in ("<str>", "TEXT", "INTEGER", "FLOAT"):
        assert noise not in text, (command, noise)


@pytest.mark.parametrize("command", ["accept", "reject", "review", "merge"])
def test_test_subcommands_help_has_no_type_noise(autodiff, command):
    text = autodiff("test", command, "--help", COLUMNS="200").stdout
    assert "PATH..." in text or "REPORT.xml..." in text
    assert "<str>" not in text


def test_no_command_is_a_usage_error_with_the_help_on_standard_error(autodiff):
    result = autodiff()
    assert (result.code, result.stdout) == (2, "")
    assert "Usage: autodiff" in result.stderr and "grad" in result.stderr
    assert autodiff("--help").code == 0  # asked for, the help is a result


def test_options_of_the_same_name_mean_the_same_in_every_command():
    """Same name, same default, except where the help says why (--atol/--rtol, --limit)."""
    from typer.main import get_command

    from autodiff.cli.app import app

    group = get_command(app)
    seen: dict = {}
    documented = {"--atol", "--rtol", "--limit", "--at", "--format"}
    for name, command in group.commands.items():
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--") and opt not in documented:
                    seen.setdefault(opt, set()).add(repr(param.default))
    assert {opt: defaults for opt, defaults in seen.items() if len(defaults) > 1} == {}
    helps = {name: {p.opts[0]: p.help for p in c.params if getattr(p, "opts", None)} for name, c in group.commands.items()}
    assert "autodiff test" in helps["grad"]["--atol"] and "nodes" in helps["explain"]["--limit"]


def test_check_failing_at_relu_of_0_says_it_is_a_kink(autodiff):
    result = autodiff("grad", "-e", "y = relu(x)", "--at", "x=0", "--check")
    assert result.code == 1
    assert "not differentiable in x at this point (a kink): its slope is 1 from the right and 0 from the left" \
        in result.stderr, result.stderr
    assert "autograd gives 0, the slope from the left" in result.stderr
    assert "<expr>:1:5: warning: --check: relu of 0 here\n    y = relu(x)\n        ^~~~~~~" in result.stderr
    assert "kink" not in autodiff("grad", "-e", "y = relu(x)", "--at", "x=1", "--check").stderr


def test_a_function_name_used_only_as_a_value_is_the_users_input(autodiff):
    """`t` for time (and `exp` on its own) are the user's variables: Python would read them so."""
    motion = autodiff("grad", "-e", "x = v * t + 0.5 * a * t ** 2", "--at", "v=2,a=9.81,t=1.5", "--format", "json")
    assert motion.code == 0, motion.stderr
    assert json.loads(motion.stdout)["grads"] == pytest.approx({"v": 1.5, "a": 0.5 * 1.5 ** 2, "t": 2 + 9.81 * 1.5})
    loss = autodiff("grad", "-e", "mse_loss(pred, t)", "--at", "pred=[1,3]", "--at", "t=[1,1]", "--format", "json")
    assert loss.code == 0 and json.loads(loss.stdout)["grads"]["t"] == [0.0, -2.0]
    missing = autodiff("grad", "-e", "y = v * t", "--at", "v=1")
    assert missing.code == 2 and "--at t=VALUE; or, for the function t, call it: t(...)" in missing.stderr
    both = autodiff("grad", "-e", "y = sum(t(A)) * t", "--at", "A=[[1,2],[3,4]],t=2")
    assert both.code == 3 and "'t' is called as a function (line 1) and used here as a value" in both.stderr

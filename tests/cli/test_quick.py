"""cli/quick.py runs the usual command lines of every command without Typer (test's sub-commands
are Typer's), by the options the commands declare (cli/declare.py): it must read every option as
Typer reads it, say exactly what Typer's path says (output, messages, exit status), leave every
other command line to Typer, and load nothing a run does not need."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from typing import List, Optional

import pytest

from autodiff.cli import main as cli_main
from autodiff.cli import quick
from autodiff.cli.commands import command
from console import ROOT, environment

TUTORIAL = "examples/tutorial.expr"
AT = "a=2,b=3,c=5,d=10"


def _run(monkeypatch, capsys, argv, typer_only: bool):
    monkeypatch.chdir(ROOT)
    if typer_only:
        monkeypatch.setattr(quick, "run", lambda argv: None)
    status = cli_main.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "bad.expr").write_text("u = a *\n")
    (tmp_path / "log.expr").write_text("y = log(x)\n")
    (tmp_path / "big.expr").write_text("y = zeros(100000, 100000)\n")
    (tmp_path / "typo.expr").write_text("u = a * b\ne = uu + 2\n")
    (tmp_path / "equals.expr").write_text("y == x*2\n")
    (tmp_path / "relu.expr").write_text("y = relu(x)\n")
    (tmp_path / "points.csv").write_text("a,b,c,d\n2,3,5,10\n1,1,1,1\n")
    (tmp_path / "bad_points.csv").write_text("a,b,c,d\n2,3,5,10\n1,x,1,1\n")
    return tmp_path


# Each runs on the quick path; Typer's path must say the same.
CASES = [
    ["grad", TUTORIAL, "--at", AT, "--format", "plain"],
    ["grad", TUTORIAL, f"--at={AT}", "--format=plain"],
    ["grad", "--at", "a=2,b=3", "-f", "plain", TUTORIAL, "--at", "c=5,d=10"],
    ["grad", TUTORIAL, "--at", AT, "-fjson"],
    ["grad", TUTORIAL, "--at", AT],  # auto: plain, standard output is not a terminal
    ["grad", TUTORIAL, "--at", AT, "--format", "json"],
    ["grad", TUTORIAL, "--at", AT, "--format", "rich"],
    ["grad", TUTORIAL, "--at", AT, "--format", "rich", "--tree", "--retain", "all"],
    ["grad", TUTORIAL, "--at", AT, "--format", "json", "--format", "plain"],  # the last one counts, as in Click
    ["grad", "-e", "x**3 * y", "--at", "x=2,y=3", "--order", "2", "--format", "json"],
    ["grad", "-e", "-x**2", "--at", "x=3"],  # a value that starts with a dash is still the value
    ["grad", "-e", "sum(W @ x)", "--at", "W=[[1,2],[3,4]]", "--at", "x=[1,1]", "--mode", "FORWARD"],
    ["grad", "-e", "x * y", "--at", "x=2,y=3", "--wrt", "x", "--dtype", "float32", "--seed", "3"],
    ["grad", "{tmp}/relu.expr", "--at", "x=0", "--check"],  # exit 1
    ["grad", TUTORIAL, "--at", AT, "--check", "--atol", "nan"],  # the command's own check, in Typer's words
    ["grad", TUTORIAL, "--at", AT, "--debug", "--color", "never"],
    ["grad", "--at", AT, "--", TUTORIAL],
    ["grad", TUTORIAL, "--points", "{tmp}/points.csv"],
    ["grad", TUTORIAL, "--points", "{tmp}/bad_points.csv"],  # exit 2 partway
    ["grad", TUTORIAL, "--points", "{tmp}/bad_points.csv", "--on-error", "skip", "--out", "jsonl"],  # exit 1
    ["grad", TUTORIAL, "--points", "{tmp}/points.csv", "--tree"],  # refused: a one-point option
    ["grad", TUTORIAL, "--at", "a=2"],
    ["grad", TUTORIAL, "--at", "a=", "--format", "plain"],
    ["grad", TUTORIAL, "--at", "=2"],
    ["grad", TUTORIAL, "--at", "a=abc"],
    ["grad", TUTORIAL, "--at", "a=2,a=3"],
    ["grad", TUTORIAL, "--at", "a=[1,2],b=3,c=5,d=10"],
    ["grad", "missing.expr", "--at", "a=2"],
    ["grad", "examples", "--at", "a=2"],
    ["grad", "y=3", "--at", "a=2"],
    ["grad", "{tmp}/bad.expr"],
    ["grad", "{tmp}/log.expr", "--at", "x=-1"],
    ["grad", "{tmp}/big.expr"],
    ["grad", "--at", "x=[1,", "2]"],  # an --at value cut by the shell: the stray word reads as the FILE
    ["grad", "--at", "a=2", "b=3"],
    ["grad", "{tmp}/typo.expr", "--at", "a=2,b=3"],
    ["grad", "{tmp}/equals.expr", "--at", "x=1"],
    ["grad", "-e", "x", "--at", "x=1", TUTORIAL],  # both a FILE and -e
    ["eval", TUTORIAL, "--at", AT],
    ["eval", TUTORIAL, "--at", AT, "--format", "json"],
    ["eval", TUTORIAL, "--at", AT, "--format", "rich"],
    ["eval", "-e", "softmax([1, 2, 3])", "--format", "json"],
    ["eval", TUTORIAL, "--points", "{tmp}/points.csv", "--out", "tsv", "--no-header"],
    ["eval", "{tmp}/log.expr", "--at", "x=-1", "--output", "y"],
    ["derive", TUTORIAL],
    ["derive", TUTORIAL, "--format", "json"],
    ["derive", TUTORIAL, "--format", "rich"],
    ["derive", TUTORIAL, "--format", "python"],
    ["derive", "-e", "x**3 * y", "--order", "2", "--check", "--format", "latex"],
    ["derive", "-e", "x @ A @ x", "--shape", "x=n", "--shape", "A=n,n", "--wrt", "x", "-f", "expr"],
    ["derive", "-e", "x @ A @ x"],  # exit 2: no shapes
    ["derive", "{tmp}/bad.expr"],
    ["graph", TUTORIAL, "--at", AT],
    ["graph", TUTORIAL, "--at", AT, "--format", "plain", "--backward", "--edges", "local"],
    ["graph", TUTORIAL, "--at", AT, "--format", "json", "--limit", "3"],
    ["graph", TUTORIAL, "--at", AT, "-f", "dot", "--wrt", "a,b"],
    ["graph", TUTORIAL, "--at", AT, "--format", "mermaid"],
    ["graph", TUTORIAL, "--at", AT, "--format", "rich", "--backward"],
    ["graph", TUTORIAL, "--at", AT, "--format", "svg"],
    ["graph", "-e", "sum(W @ x)", "--at", "W=[[1,2],[3,4]]", "--at", "x=[1,1]", "--backward", "--grad-output", "ones"],
    ["graph", "{tmp}/bad.expr"],
    ["graph", TUTORIAL, "--at", "a=2"],  # exit 2: inputs without values
    ["explain", TUTORIAL, "--at", AT],
    ["explain", TUTORIAL, "--at", AT, "--format", "json", "--wrt", "d"],
    ["explain", TUTORIAL, "--at", AT, "--format", "rich"],
    ["explain", TUTORIAL, "--at", AT, "--format", "markdown", "--limit", "1"],
    ["explain", TUTORIAL, "--at", AT, "-f", "latex"],
    ["explain", "examples/explain.expr", "--why", "b", "--format", "plain"],
    ["explain", "-e", "x = a; x = x * a + x", "--at", "a=2", "--limit", "3", "--format", "json"],
    ["explain", "{tmp}/log.expr", "--at", "x=-1"],
    ["explain", "missing.expr", "--at", "a=2"],
    ["explain", TUTORIAL, "--at", AT, "--debug", "--color", "never", "--dtype", "float32"],
    ["graph", "--at", AT, "--", TUTORIAL],
    ["plot", TUTORIAL, "--wrt", "a", "--range", "0:1", "--at", "b=3,c=5,d=10", "--samples", "5"],
    ["plot", TUTORIAL, "--wrt", "a", "--range", "-1:1", "--at", "b=3,c=5,d=10", "--samples", "4", "-f", "json"],
    ["plot", "-e", "sin(x) * x", "--wrt", "x", "--range", "-6:6", "--samples", "9", "--format", "svg"],
    ["plot", "-e", "tanh(w * x)", "--wrt", "x", "--range", "-3:3", "--at", "w=2", "--format", "rich"],
    ["plot", "-e", "x**2", "--wrt", "x", "--range", "3:1"],  # exit 2: an empty range
    ["plot", "-e", "x**2", "--wrt", "y", "--range", "0:1"],  # exit 2: no such input
    ["test", TUTORIAL, "--format", "plain"],
    ["test", "examples", "-k", "tutorial or linear", "-f", "plain", "-v"],
    ["test", TUTORIAL, "examples/linear.expr", "--seed", "3", "--dtype", "float64", "--format", "plain", "-j", "1"],
    ["test", "{tmp}", "--format", "plain"],  # exit 1: files without records, one that does not parse
    ["test", "{tmp}/nothing", "--format", "plain"],  # no such path
    ["test", "--glob", "*.none", "examples"],  # exit 5: no files collected
    ["test", TUTORIAL, "--at", "a=1"],  # exit 2: --at needs --update, in Typer's words
    ["test", "examples", "--unused", "delete", "-k", "tutorial"],  # exit 2: not the whole suite
    ["test", TUTORIAL, "--timeout", "nan"],  # exit 2: the command's own check
]


@pytest.mark.parametrize("argv,hint", [
    (["grad", "--at", "x=[1,", "2]"], "quote it and drop the spaces: --at 'x=[1,2]'\n"),
    (["grad", "--at", "a=2", "b=3"], "join them with commas: --at a=2,b=3\n"),
    (["grad", "{tmp}/typo.expr", "--at", "a=2,b=3"], "did you mean 'u'?\n    e = uu + 2\n        ^~\n"),
    (["grad", "{tmp}/equals.expr", "--at", "x=1"], "did you mean `y = x*2`?\n    y == x*2\n    ^\n"),
])
def test_the_quick_path_gives_the_hints(argv, hint, files, monkeypatch, capsys):
    argv = [word.replace("{tmp}", str(files)) for word in argv]
    status, out, err = _run(monkeypatch, capsys, argv, typer_only=False)
    assert (status, out) == (2, "") and err.endswith(hint), err


@pytest.mark.parametrize("argv", CASES, ids=lambda argv: " ".join(argv))
def test_the_quick_path_says_what_typer_says(argv, files, monkeypatch, capsys):
    argv = [word.replace("{tmp}", str(files)) for word in argv]
    assert quick.parse(command(argv[0]), argv[1:]) is not None, "not read by the quick path"
    quick_result = _run(monkeypatch, capsys, argv, typer_only=False)
    typer_result = _run(monkeypatch, capsys, argv, typer_only=True)
    assert quick_result == typer_result


# Typer's alone: help, errors of the command line, other commands, completion.
TYPERS = [
    [], ["--help"], ["--version"], ["grad", "--help"], ["grad", TUTORIAL, "-h"], ["derive", "--help"],
    ["graph", TUTORIAL, "--help"], ["explain", "--help"], ["explain", TUTORIAL, "--limit", "0"],
    ["plot", TUTORIAL, "--range", "0:1"], ["plot", "--help"], ["test", "--help"], ["gradient", TUTORIAL],
    ["test", "review"], ["test", "accept", "examples"], ["test", "merge", "a.xml", "--expect", "examples"],
    ["test", "examples", "--wrong"], ["test", "examples", "-j", "0"],
    ["grad", TUTORIAL, "--at"], ["grad", TUTORIAL, "--format", "csv"], ["grad", TUTORIAL, "--format", "PLAIN"],
    ["grad", TUTORIAL, "--order", "x"], ["grad", TUTORIAL, "--order", "2.0"], ["grad", TUTORIAL, "--seed", "-1"],
    ["grad", TUTORIAL, "--atol", "-1"], ["grad", TUTORIAL, "--max-elements", "0"], ["grad", TUTORIAL, "--tree=yes"],
    ["grad", TUTORIAL, "other.expr"], ["grad", TUTORIAL, "--wrong"], ["grad", TUTORIAL, "--tre"],
    ["grad", TUTORIAL, "-x"], ["grad", TUTORIAL, "-f=plain"], ["grad", TUTORIAL, "-1"], ["eval", TUTORIAL, "--tree"],
    ["derive", TUTORIAL, "--points", "p.csv"], ["grad", TUTORIAL, "--dtype", "float16"],
]


@pytest.mark.parametrize("argv", TYPERS, ids=lambda argv: " ".join(argv) or "nothing")
def test_every_other_command_line_is_typers(argv):
    assert quick.run(argv) is None


@pytest.mark.parametrize("argv", [a for a in TYPERS if a[:1] == ["grad"] and "-h" not in a and "--help" not in a],
                         ids=lambda argv: " ".join(argv))
def test_typer_says_what_is_wrong(argv, monkeypatch, capsys):
    status, out, err = _run(monkeypatch, capsys, argv, typer_only=False)
    assert (status, out) == (2, "") and err.startswith("autodiff: error: ") and "(see autodiff grad --help)" in err, err


# -- every option, read alike --------------------------------------------------------------------


def _click_command(name: str):
    from typer.main import get_command

    from autodiff.cli.app import app

    found = get_command(app).commands[name]
    return found.commands["run"] if name == "test" else found  # test is a group: its run is the command


def typer_values(name: str, words: list) -> dict:
    """What Typer calls the command `name` with for the command line `words`: the command's own
    declarations, made Typer's as cli/app.py makes them, around a function that keeps them."""
    import typer
    from typer.main import get_command

    from autodiff.cli.declare import for_typer

    seen = {}
    function = command(name)

    def keep(**values):
        seen.update(values)

    keep.__signature__ = inspect.signature(function)
    keep.__annotations__ = {p.name: p.annotation for p in inspect.signature(function).parameters.values()}
    app = typer.Typer()
    app.command(name)(for_typer(keep))
    click_command = get_command(app)
    with click_command.make_context(name, list(words)) as context:
        click_command.invoke(context)
    return seen


def _samples(param) -> list:
    """Values to give an option, from Click's reading of it: every choice, a number in range, text."""
    from typer._click import types

    kind = param.type
    if hasattr(kind, "choices"):  # Typer's Choice
        return [str(choice) for choice in kind.choices] + [str(choice).upper() for choice in kind.choices
                                                           if not kind.case_sensitive]
    if isinstance(kind, types.IntParamType):
        low, high = getattr(kind, "min", None), getattr(kind, "max", None)
        return [str(low if low is not None else -3), str((low or 0) + 7), "1_000" if high is None else str(high)]
    if isinstance(kind, types.FloatParamType):
        return ["0.25", "1e-7", "inf", "nan"] + ([] if getattr(kind, "min", None) is not None else ["-2.5"])
    return ["x", "a,b", "-1", "[1, 2]", ""]


@pytest.mark.parametrize("name", quick.QUICK)
def test_the_quick_path_knows_every_option_typer_knows(name):
    click_command = _click_command(name)
    typers = {opt for p in click_command.params for opt in (*p.opts, *p.secondary_opts) if opt.startswith("-")}
    typers -= {"--help", "-h"}
    by_name, arguments = quick._params(command(name))
    assert set(by_name) == typers
    assert [a.name for a in arguments] == [p.name for p in click_command.params if not getattr(p, "opts", [""])[0].startswith("-")]


@pytest.mark.parametrize("name", quick.QUICK)
def test_every_option_is_read_as_typer_reads_it(name):
    click_command = _click_command(name)
    function = command(name)
    lines = [[TUTORIAL], [], ["-"], ["--", TUTORIAL]]
    for param in click_command.params:
        if not param.opts[0].startswith("-") or param.name == "help":
            continue
        for opt in (*param.opts, *param.secondary_opts):
            if param.is_flag:
                lines += [[TUTORIAL, opt], [opt, TUTORIAL, opt]]
                continue
            for value in _samples(param):
                lines += [[TUTORIAL, opt, value], [opt, value, TUTORIAL]]
                if opt.startswith("--"):
                    lines.append([TUTORIAL, f"{opt}={value}"])
                elif value:
                    lines.append([TUTORIAL, f"{opt}{value}"])
            first, second = _samples(param)[:2]
            lines.append([TUTORIAL, opt, first, opt, second])  # given twice: both, or the last
    # a required option (plot's --wrt, --range) goes first on every line: a line's own value comes later and wins
    needed = [word for p in click_command.params if p.required and p.opts[0].startswith("-")
              for word in (p.opts[0], _samples(p)[0])]
    for words in lines:
        words = needed + words
        ours = quick.parse(function, words)
        assert ours is not None, words
        assert _same(ours, typer_values(name, words)), words


def _same(ours: dict, theirs: dict) -> bool:
    """Equal, with nan equal to nan and the types alike (an Enum member, a list, an int)."""
    if ours.keys() != theirs.keys():
        return False
    for key, value in ours.items():
        other = theirs[key]
        if type(value) is not type(other):
            return False
        if value != other and not (isinstance(value, float) and value != value and other != other):
            return False
    return True


def test_the_run_options_default_to_what_typer_passes():
    from autodiff.cli.options import RUN_OPTIONS, DType, Device, run_options
    from autodiff.language import Options

    defaults = {p.name: p.default.default for p in RUN_OPTIONS if p.name not in ("color", "debug")}
    assert run_options(**defaults) == Options()
    assert defaults["dtype"] is DType.float64 and defaults["device"] is Device.cpu


# -- what a run loads ----------------------------------------------------------------------------

# Loaded by none of these runs: the command line's parser (Typer, Click), the grammar generator
# (the parser's tables ship with the package), the oracles of the tests, Rich's help renderers,
# pathlib (with urllib and ipaddress, some 3 ms) and the signal module's enums, and
# multiprocessing (test's worker is forked without it on Linux).
NEVER = {"typer", "click", "lark", "sympy", "torch", "markdown_it", "pygments", "shellingham", "pathlib", "signal"}
if sys.platform.startswith("linux"):
    NEVER |= {"multiprocessing"}

LOADS = [
    (["grad", TUTORIAL, "--at", AT, "--format", "plain"], set()),
    (["grad", TUTORIAL, "--at", AT, "--format", "json"], set()),
    (["grad", TUTORIAL, "--at", AT], set()),  # auto, not a terminal: plain
    (["eval", TUTORIAL, "--at", AT, "--format", "plain"], set()),
    (["eval", TUTORIAL, "--at", AT, "--format", "json"], set()),
    (["derive", TUTORIAL, "--format", "plain"], set()),
    (["derive", TUTORIAL, "--format", "json"], set()),
    (["derive", TUTORIAL, "--format", "python"], set()),
    (["grad", TUTORIAL, "--points", "-"], set()),
    (["grad", TUTORIAL, "--at", AT, "--format", "rich"], {"rich"}),
    (["eval", TUTORIAL, "--at", AT, "--format", "rich"], {"rich"}),
    (["derive", TUTORIAL, "--format", "rich"], {"rich"}),
    (["graph", TUTORIAL, "--at", AT, "--format", "plain"], set()),
    (["graph", TUTORIAL, "--at", AT, "--format", "json"], set()),
    (["explain", TUTORIAL, "--at", AT, "--format", "plain"], set()),
    (["explain", TUTORIAL, "--at", AT, "--format", "json"], set()),
    (["graph", TUTORIAL, "--at", AT, "--format", "rich"], {"rich"}),
    (["plot", TUTORIAL, "--wrt", "a", "--range", "0:1", "--at", "b=3,c=5,d=10", "--format", "plain"], set()),
    (["plot", TUTORIAL, "--wrt", "a", "--range", "0:1", "--at", "b=3,c=5,d=10", "--format", "json"], set()),
    (["test", TUTORIAL, "--format", "plain"], set()),
    (["test", TUTORIAL, "--format", "json"], set()),
]

_LOADED = """
import io, sys
from autodiff.cli.main import main
sys.stdout = io.StringIO()
status = main(sys.argv[1:])
sys.__stdout__.write(repr((status, sorted({name.split(".")[0] for name in sys.modules}))))
"""


@pytest.mark.parametrize("argv,needed", LOADS, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_a_run_loads_only_what_it_needs(argv, needed):
    done = subprocess.run([sys.executable, "-c", _LOADED, *argv], cwd=ROOT, capture_output=True, text=True,
                          input="a,b,c,d\n2,3,5,10\n", env=environment(), timeout=120)
    status, loaded = ast.literal_eval(done.stdout)
    assert status == 0, done.stderr
    assert not (set(loaded) & (NEVER | {"rich"})) - needed, sorted(set(loaded) & (NEVER | {"rich"}))
    assert needed <= set(loaded)


@pytest.mark.parametrize("command", ["grad", "eval", "explain"])
def test_plain_text_loads_no_json(command):
    """JSON's modules are for --format json and the records of `test`, not for plain text."""
    done = subprocess.run([sys.executable, "-c", _LOADED, command, TUTORIAL, "--at", AT, "--format", "plain"],
                          cwd=ROOT, capture_output=True, text=True, env=environment(), timeout=120)
    status, loaded = ast.literal_eval(done.stdout)
    assert status == 0 and "json" not in loaded, done.stderr


def test_a_declaration_the_quick_path_does_not_know_leaves_the_command_to_typer():
    from autodiff.cli.declare import Argument, Option

    def plain(file: Optional[str] = Argument(None), at: List[str] = Option([], "--at"), tree: bool = Option(False, "--tree")):
        """A command the quick path reads."""

    def read_by_a_callback(file: str = Argument(None), at: str = Option(None, "--at", callback=print)):
        """A callback reads the value: Typer's to call."""

    def from_the_environment(at: str = Option(None, "--at", envvar="AT")):
        """A value that may come from the environment: Typer's to read."""

    def with_a_secondary_name(tree: bool = Option(False, "--tree/--no-tree")):
        """A flag with a `--no-` form: Typer's."""

    assert quick.parse(plain, ["f", "--tree"]) == {"file": "f", "at": [], "tree": True}
    assert quick.parse(plain, ["--at", "x=1", "--at=y=2"]) == {"file": None, "at": ["x=1", "y=2"], "tree": False}
    for function in (read_by_a_callback, from_the_environment, with_a_secondary_name):
        assert quick.parse(function, []) is None, function.__name__


# -- the way out ---------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["eval", "-e", "ones(300000)", "--format", "json"],
                                  ["grad", "-e", "x**2", "--points", "-", "--out", "csv"]], ids=["eval", "grad --points"])
def test_the_console_script_writes_all_its_output_before_it_exits(autodiff, argv):
    """console() ends a grad, eval or derive run with os._exit, without Python's teardown:
    standard output and standard error are flushed first."""
    result = autodiff(*argv, stdin="x\n" + "".join(f"{i}\n" for i in range(20000)))
    assert result.code == 0, result.stderr
    if argv[0] == "eval":
        import json

        assert json.loads(result.stdout)["value"] == [1.0] * 300000
    else:
        lines = result.stdout.splitlines()
        assert (len(lines), lines[0], lines[-1]) == (20001, "x,value,grad_x", "19999,399960001.0,39998.0")


def test_the_console_script_ends_a_suite_with_its_workers_done_and_its_report_written(autodiff, tmp_path):
    """`autodiff test` ends with os._exit too: its workers have exited, its JUnit report is whole."""
    import json
    import pathlib
    import xml.etree.ElementTree as ElementTree

    report = tmp_path / "report.xml"
    result = autodiff("test", "examples", "-j", "2", "--junit", str(report), "--format", "json")
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)["summary"]
    cases = ElementTree.parse(report).getroot().iter("testcase")
    assert summary["passed"] == summary["files"] == len(list(cases)) > 1
    left = []  # processes whose command line names the report: the command's workers, if any lived on
    for cmdline in pathlib.Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(report).encode() in cmdline.read_bytes():
                left.append(cmdline.parent.name)
        except OSError:  # gone meanwhile
            pass
    assert left == [], "a worker outlived the command"


def test_python_dash_m_is_the_console_script():
    done = subprocess.run([sys.executable, "-m", "autodiff", "grad", TUTORIAL, "--at", AT, "--format", "plain"],
                          cwd=ROOT, capture_output=True, text=True, env=environment(), timeout=120)
    assert (done.returncode, done.stdout.splitlines()[0]) == (0, "e\t17.51292546497023"), done.stderr


@pytest.mark.parametrize("typer_only", [False, True], ids=["quick", "typer"])
def test_test_knows_an_option_given_on_its_command_line_from_its_default(typer_only, tmp_path, monkeypatch, capsys):
    """`autodiff test --update` takes --seed over a record's seed where --seed is given, and the
    record's over --seed's default: each path tells the two apart (the quick parser's names given,
    Click's context)."""
    (tmp_path / "r.expr").write_text("x: input = 1.0\ny = x * sum(randn(3))\n")
    monkeypatch.delenv("CI", raising=False)
    update = ["test", str(tmp_path), "--update", "--format", "plain"]
    assert _run(monkeypatch, capsys, update, typer_only)[0] == 0  # the record, with seed 0
    status, out, _ = _run(monkeypatch, capsys, [*update, "--seed", "1"], typer_only)
    assert status == 0 and "setting seed\t0\t1\tset on the command line" in out, out
    status, out, _ = _run(monkeypatch, capsys, update, typer_only)  # --seed's default 0, not given: the record's 1
    assert status == 0 and "record unchanged" in out and "setting seed" not in out, out

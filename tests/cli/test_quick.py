"""cli/quick.py runs `grad FILE --at ... --format plain` without Typer: it must say exactly what
Typer's path says (output, messages, exit status), and leave every other command line to Typer."""

from __future__ import annotations

import pytest

from autodiff.cli import main as cli_main
from autodiff.cli import quick
from console import ROOT

TUTORIAL = "examples/tutorial.expr"


def _run(monkeypatch, capsys, argv, typer_only: bool):
    monkeypatch.chdir(ROOT)
    if typer_only:
        monkeypatch.setattr(quick, "quick_grad", lambda argv: None)
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
    return tmp_path


CASES = [
    ["grad", TUTORIAL, "--at", "a=2,b=3,c=5,d=10", "--format", "plain"],
    ["grad", TUTORIAL, "--at=a=2,b=3,c=5,d=10", "--format=plain"],
    ["grad", "--at", "a=2,b=3", "-f", "plain", TUTORIAL, "--at", "c=5,d=10"],
    ["grad", TUTORIAL, "--at", "a=2,b=3,c=5,d=10"],  # auto: plain, standard output is not a terminal
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


@pytest.mark.parametrize("argv", CASES, ids=lambda argv: " ".join(argv[1:]))
def test_the_quick_path_says_what_typer_says(argv, files, monkeypatch, capsys):
    argv = [word.replace("{tmp}", str(files)) for word in argv]
    assert quick._plain_grad(argv) is not None
    quick_result = _run(monkeypatch, capsys, argv, typer_only=False)
    typer_result = _run(monkeypatch, capsys, argv, typer_only=True)
    assert quick_result == typer_result


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["grad"], ["grad", "--help"], ["eval", TUTORIAL, "--at", "a=2"],
    ["grad", TUTORIAL, "--format", "json"], ["grad", TUTORIAL, "--format", "rich"], ["grad", TUTORIAL, "-fplain"],
    ["grad", TUTORIAL, "--format", "plain", "--format", "plain"], ["grad", TUTORIAL, "--at"],
    ["grad", TUTORIAL, "--at", "-1"], ["grad", "-", "--at", "x=1"], ["grad", "-e", "x", "--at", "x=1"],
    ["grad", TUTORIAL, "--tree"], ["grad", TUTORIAL, "--", "x"], ["grad", TUTORIAL, "other.expr"],
    ["grad", TUTORIAL, "--debug"], ["grad", TUTORIAL, "--color", "never"], ["grad", TUTORIAL, "--dtype", "float32"],
], ids=lambda argv: " ".join(argv) or "nothing")
def test_every_other_command_line_is_typers(argv):
    assert quick._plain_grad(argv) is None


def test_the_run_options_default_to_what_typer_passes():
    from autodiff.cli.options import RUN_OPTIONS, DType, Device, run_options
    from autodiff.language import Options

    defaults = {p.name: p.default.default for p in RUN_OPTIONS if p.name not in ("color", "debug")}
    assert run_options(**defaults) == Options()
    assert defaults["dtype"] is DType.float64 and defaults["device"] is Device.cpu


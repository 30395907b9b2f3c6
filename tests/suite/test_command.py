"""`autodiff test` end to end: the installed script, its reports, exit codes and JUnit XML."""

from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest

from console import run_autodiff, run_in_terminal
from .conftest import NONSCALAR, TUTORIAL, WITH_DEFAULTS

SCHEMA = pathlib.Path(__file__).with_name("junit.xsd")


def make(suite):
    suite.write("a/defaults.expr", WITH_DEFAULTS)
    suite.write("a/nonscalar.expr", NONSCALAR)
    suite.write("b/tutorial.expr", TUTORIAL)
    return suite


def test_new_then_recorded_then_passing(suite):
    make(suite)
    root = str(suite.root)
    result = run_autodiff("test", root, cwd=suite.root)
    assert result.code == 1
    assert result.stdout.splitlines()[-1] == "summary\tpassed 0\tfailed 0\terrored 0\tnew 3"
    result = run_autodiff("test", ".", "--update", "--at", "a=2,b=3,c=5,d=10", cwd=suite.root)
    assert (result.code, result.stderr) == (0, "")
    assert result.stdout == (
        "updated\ta/defaults.expr\trecorded 1 point(s)\nupdated\ta/nonscalar.expr\trecorded 1 point(s)\n"
        "updated\tb/tutorial.expr\trecorded 1 point(s)\nsummary\tpassed 0\tfailed 0\terrored 0\tnew 0\tupdated 3\n")
    result = run_autodiff("test", cwd=suite.root)  # the current directory by default
    assert (result.code, result.stdout) == (0, "passed\ta/defaults.expr\npassed\ta/nonscalar.expr\n"
                                               "passed\tb/tutorial.expr\nsummary\tpassed 3\tfailed 0\terrored 0\tnew 0\n")


def test_a_failure_names_the_file_point_quantity_values_and_difference(suite):
    make(suite)
    run_autodiff("test", ".", "--update", "--at", "a=2,b=3,c=5,d=10", cwd=suite.root)
    (suite.root / "b" / "tutorial.expr").write_text(TUTORIAL.replace("t * c", "t * c * 1.5"))
    result = run_autodiff("test", cwd=suite.root)
    assert result.code == 1
    assert "failed\tb/tutorial.expr\n" in result.stdout
    assert ("mismatch\tb/tutorial.expr\ta=2.0,b=3.0,c=5.0,d=10.0\tgrad c\t2.302585092994046\t3.453877639491069\t"
            "abs 1.15, rel 0.5, 2.59e+15 ulp\n") in result.stdout
    rich = run_autodiff("test", "--format", "rich", cwd=suite.root).stdout
    assert "FAILED b/tutorial.expr" in rich and re.search(r"a=2.0,b=3.0,c=5.0,d=10.0 +grad c +2.302585092994046 +3.453877639491069", rich)
    data = json.loads(run_autodiff("test", "--format", "json", cwd=suite.root).stdout)
    assert data["summary"] == {**data["summary"], "passed": 2, "failed": 1, "errored": 0, "new": 0, "files": 3,
                               "passed_all": False}
    [failed] = [f for f in data["files"] if f["status"] == "failed"]
    assert {m["quantity"] for m in failed["mismatches"]} == {"value", "grad c", "grad d"}


def test_jobs_and_shards_from_the_command_line(suite):
    for i in range(9):
        suite.write(f"f{i}.expr", WITH_DEFAULTS.replace("2.0", str(i + 1.5)))
    run_autodiff("test", ".", "--update", cwd=suite.root)
    one = run_autodiff("test", "-j", "1", cwd=suite.root).stdout
    assert run_autodiff("test", "-j", "3", cwd=suite.root).stdout == one
    seen = []
    for index in (1, 2, 3):
        out = run_autodiff("test", "--shard", f"{index}/3", cwd=suite.root).stdout
        seen += [line.split("\t")[1] for line in out.splitlines() if line.startswith("passed\t")]
    assert sorted(seen) == sorted(f"f{i}.expr" for i in range(9))


def test_globs(suite):
    make(suite)
    suite.write("c/x.formula", WITH_DEFAULTS)
    out = run_autodiff("test", "--glob", "*.formula", "--update", cwd=suite.root).stdout
    assert out.splitlines()[0] == "updated\tc/x.formula\trecorded 1 point(s)" and len(out.splitlines()) == 2


@pytest.mark.parametrize("args, message", [
    (["nope"], "autodiff: error: nope: no such file or directory\n"),
    (["--shard", "4/3"], "autodiff: error: --shard 4/3: expected I/N with 1 <= I <= N, as 1/3\n"),
    (["--at", "a=1"], "autodiff: error: Invalid value for '--at': --at adds points to records, so it needs --update "
                      "(see autodiff test --help)\n"),
    (["-j", "0"], "autodiff: error: Invalid value for '--jobs' / '-j': 0 is not in the range 1<=x<=256 "
                  "(see autodiff test --help)\n"),
])
def test_usage_errors(suite, args, message):
    result = run_autodiff("test", *args, cwd=suite.root)
    assert (result.code, result.stdout, result.stderr) == (2, "", message)


def test_a_broken_file_does_not_stop_the_run(suite):
    make(suite)
    (suite.root / "a" / "bad.expr").write_bytes(b"\xff\xfe")
    result = run_autodiff("test", "--update", "-j", "2", cwd=suite.root)
    assert result.code == 1
    assert result.stdout.startswith("errored\ta/bad.expr\ta/bad.expr:1:1: not UTF-8 text (byte 0xff); save the file as UTF-8\n")
    assert "updated\tb/tutorial.expr" not in result.stdout  # no points: it needs values
    assert result.stdout.count("updated\t") == 2


def test_a_syntax_error_is_located_as_grad_locates_it(suite):
    suite.write("bad.expr", "x: input = 2.0\ny = x *\n")
    grad = run_autodiff("grad", "bad.expr", cwd=suite.root)
    headline, *excerpt = grad.stderr.splitlines()
    assert grad.code == 3 and headline == "bad.expr:2:7: error: expected an expression after '*'"
    plain = run_autodiff("test", cwd=suite.root)
    assert plain.stdout.splitlines()[0] == (f"errored\tbad.expr\t{headline} (an invalid program never passes, "
                                            "even with an expect-error comment)")
    rich = run_autodiff("test", "--format", "rich", cwd=suite.root).stdout.splitlines()
    assert rich[rich.index(excerpt[0]) + 1] == excerpt[1] == "          ^"  # the line, and the caret under it


def test_junit_xml_is_valid_and_says_what_failed(suite):
    etree = pytest.importorskip("lxml.etree")
    make(suite)
    run_autodiff("test", "--update", cwd=suite.root)
    (suite.root / "a" / "defaults.expr").write_text(WITH_DEFAULTS.replace("sin", "cos"))
    (suite.root / "a" / "weird\x01.expr").write_text("x = 1 +\n")  # a control character XML cannot hold
    result = run_autodiff("test", "--junit", "report.xml", cwd=suite.root)
    assert result.code == 1
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    document = etree.parse(str(suite.root / "report.xml"))
    schema.assertValid(document)
    suite_element = document.getroot()[0]
    assert (suite_element.get("tests"), suite_element.get("failures"), suite_element.get("errors")) == ("4", "2", "1")
    cases = {case.get("name"): case for case in suite_element}
    failure = cases["defaults.expr"].find("failure")
    assert failure.get("type") == "mismatch" and "value at defaults: expected" in failure.text
    assert len(cases["nonscalar.expr"]) == 0  # passed: no child element
    assert cases["tutorial.expr"].find("failure").get("type") == "new"  # no record: not a pass
    assert cases["weird\ufffd.expr"].find("error").get("type") == "errored"  # a syntax error is never a result


def test_the_examples_suite_passes():
    result = run_autodiff("test", "examples")
    assert result.code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "summary\tpassed 7\tfailed 0\terrored 0\tnew 0"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals")
def test_a_terminal_shows_a_progress_bar_then_the_tables(suite):
    make(suite)
    run_autodiff("test", "--update", "--at", "a=2,b=3,c=5,d=10", cwd=suite.root)
    code, shown = run_in_terminal("autodiff test -j 2", suite.root, TERM="xterm")
    assert code == 0
    assert "testing" in shown and "3/3" in shown  # the bar, drawn on standard error
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)  # bold headers, cursor moves
    assert re.search(r"passed +failed +errored +new +files +time *\n", plain)

"""The pytest plugin: expression files collected as items, passing, failing with readable reports."""

from __future__ import annotations

import os

import pytest

from .conftest import NONSCALAR, WITH_DEFAULTS


@pytest.fixture
def project(pytester):
    pytester.makefile(".expr", defaults=WITH_DEFAULTS, nonscalar=NONSCALAR)
    pytester.mkdir("sub")
    (pytester.path / "sub" / "more.expr").write_text("x: input = 0.5\ny = exp(x) * x\n")
    pytester.makefile(".txt", notes="not collected: only *.expr by default")
    return pytester


def test_the_plugin_is_installed_as_an_entry_point():
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group="pytest11") if e.name == "autodiff"]
    assert [e.value for e in found] == ["autodiff.testing.pytest_plugin"]


def test_expression_files_are_collected_as_items(project):
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["defaults.expr", "nonscalar.expr", "sub/more.expr", "3 tests collected*"])
    assert "::" not in result.stdout.str()  # an item is named by its path, nothing repeated after it


def test_new_files_fail_until_recorded(project):
    result = project.runpytest()
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*defaults.expr: new: no golden record: run pytest --autodiff-update to write one"])
    updated = project.runpytest("--autodiff-update")
    updated.assert_outcomes(passed=3)
    updated.stdout.fnmatch_lines(["*- autodiff golden records -*", "3 records created"])
    assert (project.path / "defaults.expr.golden.json").exists()
    project.runpytest().assert_outcomes(passed=3)
    assert "autodiff golden records" not in project.runpytest().stdout.str()  # said only when updating


def test_update_says_how_many_records_it_rewrote(project):
    project.runpytest("--autodiff-update")
    (project.path / "defaults.expr").write_text(WITH_DEFAULTS.replace("sin", "cos"))
    result = project.runpytest("--autodiff-update")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["1 record updated, 2 records unchanged"])


def test_a_changed_value_fails_with_a_readable_report(project):
    project.runpytest("--autodiff-update")
    (project.path / "defaults.expr").write_text(WITH_DEFAULTS.replace("sin", "cos"))
    result = project.runpytest("-k", "defaults")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*autodiff: defaults.expr*",
        "*defaults.expr: failed",
        "  value at defaults",
        "    expected  6.909297426825682",
        "    got       5.583853163452858",
        "    (abs 1.33, rel 0.192, *ulp)",
        "  grad x at defaults",
    ])


def test_update_in_ci_is_a_usage_error(project, monkeypatch):
    project.runpytest("--autodiff-update")
    before = (project.path / "defaults.expr.golden.json").read_bytes()
    (project.path / "defaults.expr").write_text(WITH_DEFAULTS.replace("sin", "cos"))
    monkeypatch.setenv("CI", "true")
    result = project.runpytest("--autodiff-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--autodiff-update writes records, and CI is set: in CI nothing is ever rewritten*"])
    assert (project.path / "defaults.expr.golden.json").read_bytes() == before
    project.runpytest().assert_outcomes(passed=2, failed=1)  # without the option, CI runs as usual


def test_pytest_xdist_runs_expression_files_in_parallel(project):
    pytest.importorskip("xdist")
    updated = project.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--autodiff-update")
    updated.stdout.fnmatch_lines(["*2 workers*"])
    updated.stdout.fnmatch_lines(["3 records created"])  # counted from the workers' reports
    result = project.runpytest_subprocess("-p", "no:cacheprovider")  # what the workers wrote holds
    result.assert_outcomes(passed=3)


def test_patterns_and_tolerances_come_from_the_ini_file(project):
    project.runpytest("--autodiff-update")
    (project.path / "defaults.expr").write_text(WITH_DEFAULTS.replace("x * y", "x * y * 1.000001"))
    project.makeini("[pytest]\nautodiff_rtol = 1e-5\n")
    project.runpytest().assert_outcomes(passed=3)
    project.makeini("[pytest]\nautodiff_patterns = *.txt\n")
    project.runpytest("--collect-only", "-q").stdout.fnmatch_lines(["notes.txt", "1 test collected*"])


@pytest.mark.skipif(os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD") == "1", reason="plugins are not autoloaded")
def test_the_plugin_can_be_turned_off(project):
    project.runpytest("-p", "no:autodiff").assert_outcomes()

"""`autodiff test` as a snapshot tool built for floating point: explicit expected
errors, precise collection shared with the pytest plugin, nothing stale hidden, reviewed
updates, records that know their settings and tolerances, differences told in ULPs, pytest's
selection options, and shards that CI systems drive."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from autodiff.testing.compare import numbers_differ, ulps
from autodiff.testing.config import _small_reader, find_config
from autodiff.testing.discover import shard_from_environment
from console import run_autodiff

from .conftest import NONSCALAR, TUTORIAL, WITH_DEFAULTS

CUBE = "x: input = 2.0\ny = x ** 3\n"
NONSCALAR_ERROR = "RuntimeError: grad can be implicitly created only for scalar outputs"


def lines(result, kind: str) -> list:
    return [line for line in result.stdout.splitlines() if line.startswith(kind + "\t")]


def files_of(result) -> list:
    return sorted(line.split("\t")[1] for line in result.stdout.splitlines()
                  if line.split("\t")[0] in ("passed", "failed", "errored", "new", "updated", "pending"))


# -- 1. expected errors are explicit ---------------------------------------------------------------------


def test_an_error_passes_only_when_the_file_says_it_expects_it(suite):
    suite.write("n.expr", NONSCALAR.split("\n", 1)[1])  # the same program, without its comment
    result = run_autodiff("test", "--update", cwd=suite.root)
    assert result.code == 1
    assert lines(result, "errored") == [f"errored\tn.expr\t{NONSCALAR_ERROR} (not expected: a file meant to fail "
                                        f"says so with a comment, # expect-error: {NONSCALAR_ERROR})"]
    assert not (suite.root / "n.expr.golden.json").exists()  # --update never records an unexpected error
    suite.write("n.expr", "# expect-error: RuntimeError\n" + NONSCALAR.split("\n", 1)[1])  # the class alone
    assert run_autodiff("test", "--update", cwd=suite.root).code == 0
    assert run_autodiff("test", cwd=suite.root).code == 0


def test_a_syntax_error_or_an_unknown_function_never_passes(suite):
    suite.write("s.expr", "# expect-error: SyntaxProblem\nx = (1 +\n")
    suite.write("u.expr", "# expect-error: NameProblem: unknown\ny = lgo(2.0)\n")
    for args in (["--update"], []):
        result = run_autodiff("test", *args, cwd=suite.root)
        assert result.code == 1 and len(lines(result, "errored")) == 2
        assert all("an invalid program never passes" in line for line in lines(result, "errored"))
    assert not list(suite.root.glob("*.golden.json"))


def test_an_old_record_of_an_error_no_longer_passes_without_the_comment(suite):
    path = suite.write("n.expr", NONSCALAR)
    run_autodiff("test", "--update", cwd=suite.root)
    path.write_text(NONSCALAR.split("\n", 1)[1])
    result = run_autodiff("test", cwd=suite.root)
    assert result.code == 1 and lines(result, "errored")


# -- 2. collection: precise, shared, configured ------------------------------------------------------------


@pytest.fixture
def repository(tmp_path):
    """A git repository with expression files and the files every project has beside them."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name, text in {"NOTES.txt": "remember the milk\n", "requirements.txt": "numpy>=1.26\n",
                       "CMakeLists.txt": "project(x)\n", "formulas/cube.expr": CUBE,
                       "formulas/deep/tutorial.expr": TUTORIAL, "formulas/model.formula": WITH_DEFAULTS,
                       "formulas/nonscalar.expr": NONSCALAR}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def pytest_collected(root, *args) -> list:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.environ.get(
                              "PYTHONPATH", "")})
    return sorted(line for line in done.stdout.splitlines() if line.endswith((".expr", ".formula", ".txt")))


def test_stray_text_files_are_never_collected(repository):
    result = run_autodiff("test", "--update", "--at", "a=2,b=3,c=5,d=10", cwd=repository)
    assert result.code == 0, result.stdout
    assert files_of(result) == ["formulas/cube.expr", "formulas/deep/tutorial.expr", "formulas/nonscalar.expr"]
    assert not list(repository.glob("*.txt.golden.json"))


def test_pyproject_patterns_and_tolerances_are_shared_with_pytest(repository):
    run_autodiff("test", "--update", "--at", "a=2,b=3,c=5,d=10", cwd=repository)
    (repository / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.autodiff]\n'
                                               'patterns = ["*.expr", "*.formula"]\nrtol = 1e-5\n')
    ours = run_autodiff("test", "--update", cwd=repository / "formulas")  # found by walking up
    assert "updated\tmodel.formula\trecorded 1 point(s)" in ours.stdout
    ours = run_autodiff("test", cwd=repository)
    assert files_of(ours) == ["formulas/cube.expr", "formulas/deep/tutorial.expr", "formulas/model.formula",
                              "formulas/nonscalar.expr"]
    assert pytest_collected(repository) == files_of(ours)  # exactly the same files
    (repository / "formulas" / "cube.expr").write_text(CUBE.replace("x ** 3", "x ** 3 * 1.000001"))
    assert run_autodiff("test", cwd=repository).code == 0  # within [tool.autodiff] rtol
    assert subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repository,
                          capture_output=True).returncode == 0  # pytest uses the same tolerance
    assert run_autodiff("test", "--rtol", "1e-9", cwd=repository).code == 1  # the command line's wins over it


def test_no_files_collected_is_status_5_as_pytest(tmp_path):
    (tmp_path / "NOTES.txt").write_text("x = 1\n")
    result = run_autodiff("test", cwd=tmp_path)
    assert (result.code, result.stdout) == (5, "")
    assert result.stderr == "autodiff: no files collected: no file under . matches *.expr\n"
    (tmp_path / "a.expr").write_text(CUBE)
    result = run_autodiff("test", "-k", "nothing", cwd=tmp_path)
    assert result.code == 5 and "none of the 1 file(s) matches -k nothing" in result.stderr


def test_an_empty_shard_of_a_suite_passes_with_a_notice(tmp_path):
    (tmp_path / "a.expr").write_text(CUBE)
    run_autodiff("test", "--update", cwd=tmp_path)
    codes = {}
    for index in range(1, 5):
        result = run_autodiff("test", "--shard", f"{index}/4", cwd=tmp_path)
        codes[index] = result.code
        if not result.stdout.startswith("passed"):
            assert "has none of the 1 file(s) collected: nothing to run here" in result.stderr
    assert set(codes.values()) == {0}


def test_the_small_toml_reader_of_python_3_10(tmp_path):
    text = '[tool.other]\npatterns = ["no"]\n[tool.autodiff]\npatterns = ["*.expr", "*.f"]  # mine\nrtol = 1e-6\n'
    assert _small_reader(text, tmp_path / "pyproject.toml") == {"patterns": ["*.expr", "*.f"], "rtol": 1e-6}
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "sub").mkdir()
    found = find_config(tmp_path / "sub")
    assert (found.patterns, found.rtol, found.root) == (("*.expr", "*.f"), 1e-6, str(tmp_path))


def test_a_bad_table_is_a_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.autodiff]\npaterns = ['*.expr']\n")
    (tmp_path / "a.expr").write_text(CUBE)
    result = run_autodiff("test", cwd=tmp_path)
    assert result.code == 2 and "[tool.autodiff] has paterns; it may have patterns, rtol, atol" in result.stderr


# -- 3. nothing stale hides --------------------------------------------------------------------------------


def test_records_without_files_and_points_that_no_longer_apply(suite):
    suite.write("gone.expr", CUBE)
    tutorial = suite.write("t.expr", TUTORIAL)
    run_autodiff("test", "--update", "--at", "a=2,b=3,c=5,d=10", cwd=suite.root)
    (suite.root / "gone.expr").unlink()
    record = json.loads((suite.root / "t.expr.golden.json").read_text())
    record["points"].append({"at": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "old": 2.0}, "value": 1.0})
    (suite.root / "t.expr.golden.json").write_text(json.dumps(record))
    result = run_autodiff("test", cwd=suite.root)  # warn: reported, status unchanged
    assert result.code == 0
    assert lines(result, "unused") == [
        "unused\tgone.expr.golden.json\trecord\tits file gone.expr does not exist",
        "unused\tt.expr\ta=1.0,b=1.0,c=1.0,d=1.0,old=2.0\told is not an input of the program"]
    assert result.stdout.endswith("summary\tpassed 1\tfailed 0\terrored 0\tnew 0\tunused 2\n")
    assert run_autodiff("test", "--unused", "fail", cwd=suite.root).code == 1
    for args in (["-k", "t"], ["--shard", "1/2"]):
        refused = run_autodiff("test", "--unused", "delete", *args, cwd=suite.root)
        assert refused.code == 2 and "deleting unused records needs the whole suite" in refused.stderr
    tutorial.write_text(TUTORIAL.replace("t * c", "t * c * 2"))  # a failing run deletes nothing
    failing = run_autodiff("test", "--unused", "delete", cwd=suite.root)
    assert failing.code == 1 and "were not deleted: the run did not pass" in failing.stderr
    assert (suite.root / "gone.expr.golden.json").exists()
    tutorial.write_text(TUTORIAL)
    deleted = run_autodiff("test", "--unused", "delete", cwd=suite.root)
    assert deleted.code == 0 and not (suite.root / "gone.expr.golden.json").exists()
    assert len(json.loads((suite.root / "t.expr.golden.json").read_text())["points"]) == 1
    assert not lines(run_autodiff("test", cwd=suite.root), "unused")


def test_a_record_whose_file_is_no_longer_collected_is_reported(suite):
    suite.write("a.expr", CUBE)
    suite.write("old.txt", CUBE)
    run_autodiff("test", "--update", "--glob", "*.expr", "--glob", "*.txt", cwd=suite.root)
    result = run_autodiff("test", cwd=suite.root)
    assert "unused\told.txt.golden.json\trecord\tits file old.txt is not collected (patterns: *.expr)" in result.stdout


# -- 4. updates are reviewed, and never silent in CI -------------------------------------------------------


def test_update_prints_what_changed(suite):
    path = suite.write("t.expr", TUTORIAL)
    run_autodiff("test", "--update", "--at", "a=2,b=3,c=5,d=10", cwd=suite.root)
    path.write_text(TUTORIAL.replace("u + t * c", "u + t * c + a"))
    result = run_autodiff("test", "--update", "--at", "a=1,b=1,c=1,d=1", cwd=suite.root)
    assert result.code == 0
    assert result.stdout == (
        "updated\tt.expr\t2 change(s), 1 point(s) added\n"
        "changed\tt.expr\ta=2.0,b=3.0,c=5.0,d=10.0\tvalue\t17.51292546497023\t19.51292546497023\t"
        "abs 2, rel 0.114, 5.63e+14 ulp\n"
        "changed\tt.expr\ta=2.0,b=3.0,c=5.0,d=10.0\tgrad a\t3.0\t4.0\tabs 1, rel 0.333, 2.25e+15 ulp\n"
        "added\tt.expr\ta=1.0,b=1.0,c=1.0,d=1.0\n"
        "summary\tpassed 0\tfailed 0\terrored 0\tnew 0\tupdated 1\n")


def test_values_within_tolerance_are_kept_so_records_do_not_churn(suite):
    path = suite.write("f.expr", "x: input = 1.0\ny = x * 3.0\n")
    run_autodiff("test", "--update", cwd=suite.root)
    before = (suite.root / "f.expr.golden.json").read_text()
    path.write_text("x: input = 1.0\ny = x * 3.0000000000001\n")
    result = run_autodiff("test", "--update", cwd=suite.root)
    assert "record unchanged" in result.stdout and (suite.root / "f.expr.golden.json").read_text() == before


def test_pending_updates_are_accepted_or_rejected(suite):
    path = suite.write("cube.expr", CUBE)
    run_autodiff("test", "--update", cwd=suite.root)
    record = (suite.root / "cube.expr.golden.json").read_text()
    path.write_text(CUBE.replace("x ** 3", "x ** 3 + x"))
    result = run_autodiff("test", "--pending", cwd=suite.root)
    assert result.code == 1  # something waits for review
    assert result.stdout.splitlines()[0] == "pending\tcube.expr\t2 change(s), pending review: cube.expr.golden.new"
    assert (suite.root / "cube.expr.golden.json").read_text() == record  # untouched
    failing = run_autodiff("test", cwd=suite.root)  # the file fails, and says that a new record waits
    assert lines(failing, "failed") == ["failed\tcube.expr\ta pending record waits for review: cube.expr.golden.new "
                                        "(autodiff test review, accept or reject)"]
    rich = " ".join(run_autodiff("test", "--format", "rich", cwd=suite.root).stdout.split())
    assert "a pending record waits for review: cube.expr.golden.new" in rich
    rejected = run_autodiff("test", "reject", cwd=suite.root)
    assert rejected.stdout == "rejected\tcube.expr.golden.new\n" and not (suite.root / "cube.expr.golden.new").exists()
    assert lines(run_autodiff("test", cwd=suite.root), "failed") == ["failed\tcube.expr"]  # none waits now
    run_autodiff("test", "--pending", cwd=suite.root)
    accepted = run_autodiff("test", "accept", "cube.expr", cwd=suite.root)
    assert accepted.stdout == "accepted\tcube.expr.golden.new\n"
    assert run_autodiff("test", cwd=suite.root).code == 0
    assert run_autodiff("test", "accept", cwd=suite.root).stderr == "nothing pending\n"


def test_review_needs_a_terminal(suite):
    suite.write("cube.expr", CUBE)
    result = run_autodiff("test", "review", cwd=suite.root)
    assert result.code == 2 and "standard input is not one: use autodiff test accept" in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals")
def _review_at_a_terminal(suite, answer: bytes, **env) -> tuple:
    """`autodiff test review` with a pseudo-terminal for its input and output: (status, what it showed)."""
    import pty

    from console import console_script, environment

    main, follower = pty.openpty()
    process = subprocess.Popen(console_script() + ["test", "review"], stdin=follower, stdout=follower,
                               stderr=follower, cwd=suite.root, env=environment(**env))
    os.close(follower)
    os.write(main, answer)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    return process.wait(timeout=60), b"".join(chunks).decode().replace("\r\n", "\n")


def test_an_update_reviewed_and_accepted_at_a_terminal(suite):
    path = suite.write("cube.expr", CUBE)
    run_autodiff("test", "--update", cwd=suite.root)
    path.write_text(CUBE.replace("x ** 3", "x ** 3 + x"))
    run_autodiff("test", "--pending", cwd=suite.root)
    code, shown = _review_at_a_terminal(suite, b"a\n")
    assert code == 0
    assert "[1/1] cube.expr.golden.new" in shown
    assert "value at defaults: 8.0 -> 10.0" in shown and "grad x at defaults: 12.0 -> 13.0" in shown
    assert "accepted 1, rejected 0, skipped 0" in shown
    assert run_autodiff("test", cwd=suite.root).code == 0


def test_review_wraps_at_spaces_to_the_terminal_never_inside_a_word(suite):
    path = suite.write("cube.expr", CUBE)
    run_autodiff("test", "--update", cwd=suite.root)
    path.write_text(CUBE.replace("x ** 3", "x ** 3 + x * 1.000000000123456"))
    run_autodiff("test", "--pending", cwd=suite.root)
    code, shown = _review_at_a_terminal(suite, b"s\n", COLUMNS="30")
    assert code == 0
    change = shown[shown.index("[1/1]"):shown.index("accept, reject")].splitlines()[1:]
    assert all(len(line) <= 30 for line in change), change
    assert change[0].startswith("  value at defaults:") and all(line.startswith("      ") for line in change[1:2])
    words = " ".join(change).split()
    assert "8.0" in words and "10.000000000246912" in words  # each number whole, on one line
    from autodiff.cli.render.suite import review_line

    assert review_line("grad x at defaults: 12.000000000123 -> 13.000000000123456789  (abs 1)", 25).splitlines() == [
        "  grad x at defaults:", "      12.000000000123 ->", "      13.000000000123456789", "      (abs 1)"]


def test_in_ci_a_new_file_is_never_recorded(suite):
    suite.write("old.expr", CUBE)
    run_autodiff("test", "--update", cwd=suite.root)
    suite.write("new.expr", WITH_DEFAULTS)
    result = run_autodiff("test", cwd=suite.root, CI="true")
    assert result.code == 1
    assert lines(result, "new") == ["new\tnew.expr\tno golden record, and CI is set: records are not written in CI; "
                                    "run autodiff test --update where you work and commit the record"]
    assert not (suite.root / "new.expr.golden.json").exists()
    assert run_autodiff("test", "--update", cwd=suite.root, CI="false").code == 0  # not truthy


@pytest.mark.parametrize("option", ["--update", "--pending", "--unused delete"])
def test_in_ci_update_is_refused_and_nothing_is_rewritten(suite, option):
    path = suite.write("old.expr", CUBE)
    run_autodiff("test", "--update", cwd=suite.root)
    before = (suite.root / "old.expr.golden.json").read_bytes()
    (suite.root / "gone.expr.golden.json").write_bytes(before)  # a record no file owns: --unused delete's
    path.write_text(CUBE.replace("3", "4"))  # a changed result that --update would record
    suite.write("new.expr", WITH_DEFAULTS)
    result = run_autodiff("test", *option.split(), cwd=suite.root, CI="true")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (f"autodiff: error: {option} writes records, and CI is set: in CI nothing is ever "
                             "rewritten (a record must come from where you work, reviewed and committed)\n")
    assert (suite.root / "old.expr.golden.json").read_bytes() == before
    assert sorted(p.name for p in suite.root.iterdir()) == ["gone.expr.golden.json", "new.expr", "old.expr",
                                                            "old.expr.golden.json"]


# -- 5. records know what they depend on -------------------------------------------------------------------


def test_the_records_settings_win_unless_updating(suite):
    suite.write("r.expr", "x: input = 1.0\ny = x * sum(randn(3))\n")
    run_autodiff("test", "--update", cwd=suite.root)
    assert json.loads((suite.root / "r.expr.golden.json").read_text())["settings"] == {"dtype": "float64", "seed": 0}
    assert run_autodiff("test", "--seed", "1", cwd=suite.root).code == 0  # run with the record's seed 0
    assert run_autodiff("test", "--dtype", "float32", cwd=suite.root).code == 0
    result = run_autodiff("test", "--update", "--seed", "1", cwd=suite.root)
    assert "changed\tr.expr\trecord\tsetting seed\t0\t1\tset on the command line" in result.stdout
    assert json.loads((suite.root / "r.expr.golden.json").read_text())["settings"]["seed"] == 1
    assert run_autodiff("test", cwd=suite.root).code == 0  # now seed 1 by the record, without --seed
    assert "record unchanged" in run_autodiff("test", "--update", cwd=suite.root).stdout  # --update alone keeps it


def test_tolerances_of_the_record_its_points_and_quantities(suite):
    path = suite.write("f.expr", "x: input = 1.0\ny = x * 3.0\n")
    run_autodiff("test", "--update", cwd=suite.root)
    path.write_text("x: input = 1.0\ny = x * 3.00003\n")  # value and grad move by 1e-5 relative
    record_file = suite.root / "f.expr.golden.json"
    record = json.loads(record_file.read_text())
    assert run_autodiff("test", cwd=suite.root).code == 1
    record_file.write_text(json.dumps({**record, "rtol": 1e-4}))
    assert run_autodiff("test", cwd=suite.root).code == 0  # the record's own
    assert run_autodiff("test", "--rtol", "1e-12", cwd=suite.root).code == 0  # the record's wins
    point = record["points"][0]
    record_file.write_text(json.dumps({**record, "rtol": 1e-4, "points": [{**point, "rtol": 1e-9}]}))
    assert run_autodiff("test", cwd=suite.root).code == 1  # the point's wins over the record's
    point = {**point, "rtol": 1e-9, "tolerances": {"value": {"rtol": 1e-4}, "grad x": {"atol": 1e-4}}}
    record_file.write_text(json.dumps({**record, "points": [point]}))
    assert run_autodiff("test", cwd=suite.root).code == 0  # each quantity its own
    run_autodiff("test", "--update", cwd=suite.root)
    assert json.loads(record_file.read_text())["points"][0]["tolerances"] == point["tolerances"]  # kept
    record_file.write_text(json.dumps({**record, "rtol": "loose"}))
    assert "\"rtol\" must be a finite number >= 0" in run_autodiff("test", cwd=suite.root).stdout


# -- 6. failures say what differs --------------------------------------------------------------------------


def test_ulps_from_the_bits_of_float64():
    one_up = np.nextafter(1.0, 2.0)
    assert list(ulps([1.0, 0.0, -0.0, 1.0], [one_up, -0.0, 5e-324, np.nextafter(one_up, 2.0)])) == [1, 0, 1, 2]
    assert int(ulps([-5e-324], [5e-324])[0]) == 2  # across zero
    assert int(ulps([1.0], [2.0])[0]) == 2**52


def test_a_tensor_difference_is_told_never_shown_whole():
    expected = [[1.0] * 100 for _ in range(100)]
    got = [row[:] for row in expected]
    got[3][7] = 1.5
    got[50][50] = 1.0 + 1e-6
    difference = numbers_differ(expected, got, 1e-9, 1e-12)
    assert difference.text == "2 of 10000 elements differ, worst at [3, 7]: abs 0.5, rel 0.5, 2.25e+15 ulp"
    assert (difference.expected, difference.got, difference.index) == (1.0, 1.5, [3, 7])


def test_a_tensor_mismatch_in_a_report_is_one_line(suite):
    path = suite.write("m.expr", "x: input = [[1.0, 2.0], [3.0, 4.0]]\ny = sum(x * x)\n")
    run_autodiff("test", "--update", cwd=suite.root)
    path.write_text("x: input = [[1.0, 2.0], [3.0, 4.0]]\ny = sum(x * x) + x[1, 0] * 1e-6\n")
    result = run_autodiff("test", cwd=suite.root)
    [grad] = [line for line in lines(result, "mismatch") if "\tgrad x\t" in line]
    assert grad == ("mismatch\tm.expr\tdefaults\tgrad x\t6.0\t6.000001\t1 of 4 elements differ, worst at [1, 0]: "
                    "abs 1e-06, rel 1.67e-07, 1.13e+09 ulp")


# -- 7. selection like pytest ------------------------------------------------------------------------------


def test_k_x_q_and_v(suite):
    for name in ("alpha.expr", "beta.expr", "sub/gamma.expr"):
        suite.write(name, CUBE)
    run_autodiff("test", "--update", cwd=suite.root)
    assert files_of(run_autodiff("test", "-k", "alpha or gamma", cwd=suite.root)) == ["alpha.expr", "sub/gamma.expr"]
    assert files_of(run_autodiff("test", "-k", "not sub and not alpha", cwd=suite.root)) == ["beta.expr"]
    assert files_of(run_autodiff("test", "-k", "SUB/", cwd=suite.root)) == ["sub/gamma.expr"]
    bad = run_autodiff("test", "-k", "alpha or", cwd=suite.root)
    assert bad.code == 2 and "-k alpha or: expected a word at the end" in bad.stderr
    for name in ("alpha.expr", "beta.expr"):
        (suite.root / name).write_text(CUBE.replace("3", "4"))
    for jobs in ("1", "2"):
        stopped = run_autodiff("test", "-x", "-j", jobs, cwd=suite.root)
        assert stopped.code == 1 and len(lines(stopped, "failed")) == 1 and not lines(stopped, "passed")
    quiet = run_autodiff("test", "-q", cwd=suite.root)
    assert not lines(quiet, "passed") and len(lines(quiet, "failed")) == 2
    assert "PASSED sub/gamma.expr" in run_autodiff("test", "-v", "--format", "rich", cwd=suite.root).stdout


def test_x_stops_at_the_first_failing_file_in_order_with_any_jobs_and_counts_the_rest(suite):
    # the first file is slow: a second worker finishes a later failing file first
    suite.write("f0.expr", "x: input = 1.0\ns = x\nfor i in range(30000):\n    s = s * 1.0\n")
    for i in range(1, 6):
        suite.write(f"f{i}.expr", CUBE)
    for jobs in ("1", "2"):
        result = run_autodiff("test", "-x", "-j", jobs, cwd=suite.root)
        assert result.code == 1
        assert files_of(result) == ["f0.expr"]  # new: no record, so not a pass
        assert result.stdout.splitlines()[-1] == "summary\tpassed 0\tfailed 0\terrored 0\tnew 1\tnot run 5"
    data = json.loads(run_autodiff("test", "-x", "-j", "2", "--format", "json", cwd=suite.root).stdout)
    assert (data["summary"]["files"], data["summary"]["not_run"]) == (1, 5)
    assert "not run" in run_autodiff("test", "-x", "--format", "rich", cwd=suite.root).stdout


# -- 8. shards that CI systems drive -----------------------------------------------------------------------


@pytest.fixture
def many(tmp_path):
    for i in range(12):
        (tmp_path / f"f{i:02}.expr").write_text(CUBE.replace("2.0", f"{i + 1}.0"))
    run_autodiff("test", "--update", cwd=tmp_path)
    return tmp_path


def run_shards(root, variables: list) -> list:
    ran = []
    for env in variables:
        result = run_autodiff("test", *env.pop("args", []), cwd=root, **env)
        assert result.code == 0, result.stderr
        ran.extend(line.split("\t")[1] for line in lines(result, "passed"))
    return ran


@pytest.mark.parametrize("system", ["bazel", "gitlab", "circleci", "command line"])
def test_each_ci_systems_shards_run_every_file_once(many, system):
    if system == "bazel":  # from 0, without --shard
        variables = [{"TEST_SHARD_INDEX": str(i), "TEST_TOTAL_SHARDS": "3",
                      "TEST_SHARD_STATUS_FILE": str(many / f"status{i}")} for i in range(3)]
    elif system == "gitlab":  # from 1
        variables = [{"args": ["--shard", "auto"], "CI_NODE_INDEX": str(i), "CI_NODE_TOTAL": "3"} for i in (1, 2, 3)]
    elif system == "circleci":  # from 0
        variables = [{"args": ["--shard", "auto"], "CIRCLE_NODE_INDEX": str(i), "CIRCLE_NODE_TOTAL": "3"}
                     for i in range(3)]
    else:
        variables = [{"args": ["--shard", f"{i}/3"]} for i in (1, 2, 3)]
    ran = run_shards(many, variables)
    assert sorted(ran) == [f"f{i:02}.expr" for i in range(12)]
    if system == "bazel":
        assert all((many / f"status{i}").exists() for i in range(3))


def test_shards_follow_the_path_not_the_number_of_files(many):
    first = run_shards(many, [{"args": ["--shard", "1/3"]}])
    (many / "zz_new.expr").write_text(CUBE)
    run_autodiff("test", "--update", "zz_new.expr", cwd=many)
    after = run_shards(many, [{"args": ["--shard", "1/3"]}])
    assert [f for f in after if f != "zz_new.expr"] == first


@pytest.mark.parametrize("env, message", [
    ({"TEST_SHARD_INDEX": "3", "TEST_TOTAL_SHARDS": "3"}, "Bazel: TEST_SHARD_INDEX=3 is out of range"),
    ({"args": ["--shard", "auto"], "CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "2"}, "GitLab CI: CI_NODE_INDEX=0 is out"),
    ({"args": ["--shard", "auto"], "CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "2"}, "CircleCI: CIRCLE_NODE_INDEX=2"),
    ({"args": ["--shard", "0/2"]}, "--shard 0/2: expected I/N with 1 <= I <= N"),
])
def test_a_shard_out_of_range_is_a_usage_error(many, env, message):
    result = run_autodiff("test", *env.pop("args", []), cwd=many, **env)
    assert result.code == 2 and message in result.stderr


def test_the_command_lines_shard_wins_over_bazels():
    assert shard_from_environment("2/5", {"TEST_SHARD_INDEX": "0", "TEST_TOTAL_SHARDS": "3"}) == (2, 5, "--shard")
    assert shard_from_environment(None, {"CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "3"}) is None  # only with auto
    assert shard_from_environment("auto", {}) is None


def test_merge_checks_that_shards_ran_every_file_once(many):
    for i in (1, 2, 3):
        assert run_autodiff("test", "--shard", f"{i}/3", "--junit", f"r{i}.xml", cwd=many).code == 0
    ok = run_autodiff("test", "merge", "r1.xml", "r2.xml", "r3.xml", "--expect", ".", cwd=many)
    assert (ok.code, ok.stdout) == (0, "summary\tfiles 12\tran once each in 3 report(s)\n")
    missing = run_autodiff("test", "merge", "r1.xml", "r1.xml", "r2.xml", "--expect", ".", cwd=many)
    assert missing.code == 1
    ran_twice = {line.split("\t")[1] for line in lines(missing, "duplicated")}
    not_ran = {line.split("\t")[1] for line in lines(missing, "missing")}
    assert ran_twice and not_ran and ran_twice.isdisjoint(not_ran)
    assert len(not_ran) + len(ran_twice) + len(run_shards(many, [{"args": ["--shard", "2/3"]}])) == 12


# -- 9. the pytest plugin matches --------------------------------------------------------------------------


def test_the_plugin_follows_the_expected_error_rule_and_names_its_own_option(pytester):
    pytester.makefile(".expr", nonscalar=NONSCALAR, bare=NONSCALAR.split("\n", 1)[1], syntax="x = (1 +\n")
    result = pytester.runpytest("--autodiff-update")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*bare.expr: errored: RuntimeError*not expected*# expect-error*"])
    result.stdout.fnmatch_lines(["*syntax.expr: errored: *syntax.expr:1:5: error: unclosed '('*an invalid program "
                                 "never passes*", "    x = (1 +", "        ^"])
    pytester.makefile(".expr", new=WITH_DEFAULTS)
    pytester.runpytest("-k", "new").stdout.fnmatch_lines(["*no golden record: run pytest --autodiff-update*"])

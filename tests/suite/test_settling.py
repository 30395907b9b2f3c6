"""Records written by runs at once, and pending records settled: nothing a run reports written
is lost, a pending record that is not a record is never installed, and a folder that refuses
the change is one line with status 2."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time

import pytest
from console import console_script, environment, run_autodiff

SQUARE = "y = x * x\n"


def points_of(record) -> list:
    return sorted(point["at"]["x"] for point in json.loads(record.read_text())["points"])


def update(suite, *points: str) -> subprocess.Popen:
    at = [word for x in points for word in ("--at", f"x={x}")]
    return subprocess.Popen(console_script() + ["test", str(suite), "--update", *at], env=environment(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_updates_at_once_keep_every_point_they_report(tmp_path):
    (tmp_path / "s.expr").write_text(SQUARE)
    assert run_autodiff("test", tmp_path, "--update", "--at", "x=2").code == 0
    expected = [2.0]
    for turn in range(2):
        runs = [update(tmp_path, f"{3 + turn}.5"), update(tmp_path, f"{5 + turn}.5")]
        for process in runs:
            out, err = process.communicate(timeout=60)
            assert process.returncode == 0 and b"1 point(s) added" in out, err
        expected += [3.5 + turn, 5.5 + turn]
        assert points_of(tmp_path / "s.expr.golden.json") == sorted(expected)


def test_an_update_waits_for_a_writer_that_holds_the_file(tmp_path):
    """The order between writers: a run that updates a record holds the expression file locked
    from reading the record to writing it, and waits while another holds it."""
    program = tmp_path / "s.expr"
    program.write_text(SQUARE)
    record = tmp_path / "s.expr.golden.json"
    assert run_autodiff("test", tmp_path, "--update", "--at", "x=2").code == 0
    with open(program) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = update(tmp_path, "3")
        time.sleep(1.5)
        assert waiting.poll() is None, waiting.communicate()
        text = json.loads(record.read_text())  # what another writer adds while it holds the lock
        text["points"].append({"at": {"x": 4.0}})
        record.write_text(json.dumps(text))
    out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    assert points_of(record) == [2.0, 3.0, 4.0]


def pending_suite(tmp_path):
    for name, text in (("a.expr", SQUARE), ("b.expr", "y = 3 * x\n")):
        (tmp_path / name).write_text(text)
    assert run_autodiff("test", tmp_path, "--update", "--at", "x=2").code == 0
    assert run_autodiff("test", tmp_path, "--pending", "--at", "x=3").code == 1
    return {name: (tmp_path / f"{name}.golden.json").read_bytes() for name in ("a.expr", "b.expr")}


def test_accept_refuses_a_pending_record_that_is_not_one(tmp_path):
    before = pending_suite(tmp_path)
    pending = tmp_path / "a.expr.golden.new"
    pending.write_text("<<<<<<< HEAD\n" + pending.read_text() + "=======\n>>>>>>> theirs\n")
    result = run_autodiff("test", "accept", tmp_path)
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "a.expr.golden.new:1:1: not valid JSON" in result.stderr
    assert {name: (tmp_path / f"{name}.golden.json").read_bytes() for name in before} == before
    assert pending.exists() and (tmp_path / "b.expr.golden.new").exists()
    assert run_autodiff("test", "reject", pending).code == 0
    accepted = run_autodiff("test", "accept", tmp_path)
    assert accepted.code == 0 and points_of(tmp_path / "b.expr.golden.json") == [2.0, 3.0]


def test_accept_where_the_record_cannot_be_replaced_is_one_line(tmp_path):
    pending_suite(tmp_path)
    (tmp_path / "a.expr.golden.json").unlink()
    (tmp_path / "a.expr.golden.json").mkdir()  # what the rename cannot replace, even as root
    result = run_autodiff("test", "accept", tmp_path / "a.expr")
    assert result.code == 2 and "internal error" not in result.stderr
    assert result.stderr.count("\n") == 1 and "a.expr.golden.new: cannot be accepted" in result.stderr
    assert (tmp_path / "a.expr.golden.new").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_accept_in_a_read_only_folder_is_one_line(tmp_path):
    pending_suite(tmp_path)
    os.chmod(tmp_path, 0o555)
    try:
        result = run_autodiff("test", "accept", tmp_path)
    finally:
        os.chmod(tmp_path, 0o755)
    assert result.code == 2 and "cannot be accepted (Permission denied)" in result.stderr


def test_repeated_at_adds_to_one_point_as_in_grad_and_a_name_again_starts_the_next(tmp_path):
    (tmp_path / "m.expr").write_text("y = sum(X @ w)\n")
    result = run_autodiff("test", tmp_path, "--update", "--at", "X=[[1,2],[3,4]]", "--at", "w=[1,1]")
    assert result.code == 0, result.stderr + result.stdout
    matrix = json.loads((tmp_path / "m.expr.golden.json").read_text())["points"]
    assert [point["at"] for point in matrix] == [{"X": [[1.0, 2.0], [3.0, 4.0]], "w": [1.0, 1.0]}]
    single = json.loads(run_autodiff("grad", tmp_path / "m.expr", "--at", "X=[[1,2],[3,4]]", "--at", "w=[1,1]",
                                     "--format", "json").stdout)
    assert matrix[0]["value"] == single["value"] and matrix[0]["grads"] == single["grads"]
    (tmp_path / "s.expr").write_text(SQUARE)
    assert run_autodiff("test", tmp_path / "s.expr", "--update", "--at", "x=1", "--at", "x=2").code == 0
    assert points_of(tmp_path / "s.expr.golden.json") == [1.0, 2.0]

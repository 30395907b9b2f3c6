"""--points: many points in one run, through the installed script (and the program layer)."""

from __future__ import annotations

import json
import os
import select
import subprocess

import numpy as np
import pytest

from autodiff.language import Source, run
from autodiff.program.sweep import Sweep

from console import as_in_the_foreground, console_script, environment, run_script

TUTORIAL = "examples/tutorial.expr"
BRANCHY = "if x > 0:\n    y = x * log(x + 1)\nelse:\n    y = -x * x\ny\n"


def alone(text: str, point: dict) -> tuple:
    """The value and gradients of a program run at one point, the ordinary way."""
    evaluation = run(text, at=point)
    evaluation.output.backward()
    return float(evaluation.output), {n: float(t.grad) for n, t in evaluation.inputs.items()}


def test_csv_in_csv_out_matches_each_point_alone(autodiff, tmp_path):
    rng = np.random.default_rng(3)
    points = rng.uniform(1, 5, size=(20, 4))
    path = tmp_path / "in.csv"
    path.write_text("a,b,c,d\n" + "".join(",".join(repr(v) for v in row) + "\n" for row in points.tolist()))
    result = autodiff("grad", TUTORIAL, "--points", str(path))
    assert result.code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == "a,b,c,d,value,grad_a,grad_b,grad_c,grad_d"
    text = open(TUTORIAL).read()
    for row, line in zip(points.tolist(), lines[1:]):
        cells = line.split(",")
        assert [float(c) for c in cells[:4]] == row
        value, grads = alone(text, dict(zip("abcd", row)))
        assert float(cells[4]) == pytest.approx(value, rel=1e-14)
        assert [float(c) for c in cells[5:]] == pytest.approx([grads[n] for n in "abcd"], rel=1e-14)
    assert len(lines) == 21


def test_json_lines_with_tensors_nan_and_the_keys_of_format_json(autodiff, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"W": [[1, 2], [3, 4]], "x": [1, 1]}\n{"W": [[0, 1], [1, 0]], "x": ["nan", 2]}\n')
    result = autodiff("grad", "-e", "sum(W @ x)", "--points", str(path))
    assert result.code == 0
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    single = json.loads(autodiff("grad", "-e", "sum(W @ x)", "--at", "W=[[1,2],[3,4]]", "--at", "x=[1,1]",
                                 "--format", "json").stdout)
    for key in ("output", "value", "shape", "grads"):
        assert first[key] == single[key]
    assert second["value"] == "nan" and second["grads"]["W"] == [["nan", 2.0], ["nan", 2.0]]


def test_flatten_no_header_and_tsv(autodiff, tmp_path):
    path = tmp_path / "in.tsv"
    path.write_text("W\tx\n[[1,2],[3,4]]\t[1,1]\n")
    result = autodiff("grad", "-e", "sum(W @ x)", "--points", str(path), "--flatten")
    header, row = result.stdout.splitlines()
    assert header.split("\t") == ["W", "x", "value", "grad_W[0,0]", "grad_W[0,1]", "grad_W[1,0]", "grad_W[1,1]",
                                  "grad_x[0]", "grad_x[1]"]
    assert row.split("\t")[2:] == ["10.0", "1.0", "1.0", "1.0", "1.0", "4.0", "6.0"]
    result = autodiff("eval", TUTORIAL, "--points", str(tmp_path / "p.csv"), "--no-header") \
        if (tmp_path / "p.csv").write_text("a,b,c,d\n1,2,3,4\n") else None
    assert result.stdout == "1,2,3,4,6.1588830833596715\n"


def streamed(*args):
    """A run whose results stream out: those before an error are written already (as jq's are)."""
    code, out, err = run_script(args, env=environment(), timeout=60)
    assert "Traceback" not in err.decode()
    return code, out.decode(), err.decode()


@pytest.mark.parametrize("policy, code", [("stop", 2), ("skip", 1), ("null", 1)])
def test_a_bad_record_by_each_policy(tmp_path, policy, code):
    path = tmp_path / "in.csv"
    path.write_text("a,b,c,d\n2,3,5,10\n1,x,1,1\n4,4,4,4\n")
    status, stdout, stderr = streamed("grad", TUTORIAL, "--points", str(path), "--on-error", policy)

    class result:  # noqa: N801
        pass

    result.code, result.stdout, result.stderr = status, stdout, stderr
    assert result.code == code
    lines = result.stdout.splitlines()
    reason = "input 'b': 'x' is not a number or a [list]"
    if policy == "stop":
        assert len(lines) == 2 and f"{path}:3: {reason}" in result.stderr
    elif policy == "skip":
        assert [line.split(",")[0] for line in lines[1:]] == ["2", "4"] and f"{path}:3: skipped" in result.stderr
    else:
        assert lines[0].endswith(",error") and lines[2].startswith("1,x,1,1,,,,,,") and reason in lines[2]


def test_a_missing_input_and_a_wrong_shape_are_named_by_line(autodiff, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"W": [1, 2], "x": [1, 1]}\n{"W": [1, 2, 3], "x": [1, 1]}\n{"x": [1, 1]}\n')
    result = autodiff("grad", "-e", "sum(W * x)", "--points", str(path), "--on-error", "skip")
    assert result.code == 1 and len(result.stdout.splitlines()) == 1
    assert "in.jsonl:2: skipped: input 'W' has shape [3] here, [2] at the points before" in result.stderr
    assert "in.jsonl:3: skipped: no value for input 'W'" in result.stderr


def test_an_evaluation_error_of_one_point_costs_that_point(autodiff, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("n,x\n0,1\n5,1\n1,2\n")
    result = autodiff("grad", "-e", "[10, 20, 30][n] * x", "--points", str(path), "--on-error", "null",
                      "--out", "jsonl")
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["value"] for r in records] == [10.0, None, 40.0]
    assert records[1]["error"] == "index 5 is out of bounds for dimension 0 with size 3"
    assert [r["grads"]["x"] for r in records] == [10.0, None, 20.0]
    assert result.code == 1


def test_points_that_branch_are_grouped_and_agree_with_each_point_alone(autodiff, tmp_path):
    xs = [1.5, -2.0, 0.5, -0.25, 3.0]
    path = tmp_path / "in.csv"
    path.write_text("x\n" + "".join(f"{x}\n" for x in xs))
    program = tmp_path / "branchy.expr"
    program.write_text(BRANCHY)
    result = autodiff("grad", str(program), "--points", str(path))
    assert result.code == 0 and "grouped" in result.stderr and "line 1" in result.stderr
    for x, line in zip(xs, result.stdout.splitlines()[1:]):
        value, grads = alone(BRANCHY, {"x": x})
        assert [float(c) for c in line.split(",")[1:]] == pytest.approx([value, grads["x"]], rel=1e-14)


def test_output_appears_while_the_pipe_is_still_open(tmp_path):
    child = subprocess.Popen(console_script() + ["grad", TUTORIAL, "--points", "-", "--in", "jsonl"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment())
    try:
        child.stdin.write(b'{"a": 2, "b": 3, "c": 5, "d": 10}\n')
        child.stdin.flush()
        ready, _, _ = select.select([child.stdout], [], [], 30)
        assert ready, "no result before the input ended"
        assert json.loads(child.stdout.readline())["grads"]["d"] == 0.5
        child.stdin.write(b'{"a": 1, "b": 1, "c": 1, "d": 1}\n')
        child.stdin.close()
        assert json.loads(child.stdout.readline())["value"] == 1.0
        assert child.wait(30) == 0
    finally:
        child.kill()


def test_many_points_run_in_chunks_with_the_same_results_as_one_run():
    rng = np.random.default_rng(4)
    columns = dict(zip("abcd", rng.uniform(1, 5, size=(4, 3000))))
    sweep = Sweep(Source(open(TUTORIAL).read(), TUTORIAL))
    whole = sweep.run(columns, 3000).groups[0]
    for start in (0, 1000, 2000):
        part = sweep.run({n: v[start:start + 1000] for n, v in columns.items()}, 1000).groups[0]
        np.testing.assert_array_equal(part.values, whole.values[start:start + 1000])
        for name in "abcd":
            np.testing.assert_array_equal(part.grads[name], whole.grads[name][start:start + 1000])


def test_the_program_and_the_points_cannot_both_be_standard_input(autodiff):
    result = autodiff("grad", "-", "--points", "-", stdin="x\n")
    assert result.code == 2 and "cannot both come from standard input" in result.stderr


def test_at_gives_values_every_point_shares(autodiff, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("a,d\n2,10\n1,1\n")
    result = autodiff("grad", TUTORIAL, "--points", str(path), "--at", "b=3,c=5")
    assert result.stdout.splitlines() == ["a,d,value,grad_a,grad_d", "2,10,17.51292546497023,3.0,0.5",
                                          "1,1,3.0,3.0,5.0"]


@pytest.mark.parametrize("command", ["grad", "eval"])
def test_format_json_with_points_writes_json_lines(autodiff, tmp_path, command):
    path = tmp_path / "in.csv"
    path.write_text("a,b,c,d\n2,3,5,10\n1,1,1,1\n")
    result = autodiff(command, TUTORIAL, "--points", str(path), "--format", "json")
    assert result.code == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["value"] for r in records] == pytest.approx([alone(open(TUTORIAL).read(), p)[0] for p in
                                                          ({"a": 2, "b": 3, "c": 5, "d": 10}, dict.fromkeys("abcd", 1))])
    assert ("grads" in records[0]) == (command == "grad")


@pytest.mark.parametrize("args,said", [
    (("--format", "json", "--out", "csv"), "--format json and --out csv ask for two formats"),
    (("--format", "plain"), "not --format plain: choose their format with --out jsonl|csv|tsv"),
    (("--format", "rich"), "not --format rich: choose their format with --out jsonl|csv|tsv"),
])
def test_a_format_that_points_cannot_write_is_refused(autodiff, tmp_path, args, said):
    path = tmp_path / "in.csv"
    path.write_text("a,b,c,d\n2,3,5,10\n")
    result = autodiff("grad", TUTORIAL, "--points", str(path), *args)
    assert (result.code, result.stdout) == (2, "") and said in result.stderr, result.stderr


@pytest.mark.parametrize("command,fmt", [("grad", "csv"), ("eval", "tsv"), ("grad", "jsonl")])
def test_format_csv_names_the_option_that_writes_csv(autodiff, command, fmt):
    result = autodiff(command, TUTORIAL, "--at", "a=2,b=3,c=5,d=10", "--format", fmt)
    assert result.code == 2
    assert f"is written by --points FILE --out {fmt}" in result.stderr, result.stderr


@pytest.mark.parametrize("command", ["grad", "eval"])
def test_points_warn_as_grad_does_at_one_point(autodiff, tmp_path, command):
    """nan at a point, and an --at value the program does not take: said once, as for one point."""
    path = tmp_path / "in.csv"
    path.write_text("x\n4\n-1\n-2\n")
    result = autodiff(command, "-e", "y = log(x)", "--points", str(path), "--at", "q=1")
    assert result.code == 0
    assert f"{path}:3: nan or inf in this point's results (the first such point); run alone, it says:" in result.stderr
    alone = autodiff(command, "-e", "y = log(x)", "--at", "x=-1,q=1")
    assert alone.stderr.strip() and set(alone.stderr.splitlines()) <= set(result.stderr.splitlines()), result.stderr
    assert result.stderr.count("warning:") == alone.stderr.count("warning:") + 1  # each once, not per point


def test_points_without_nan_or_unused_values_say_nothing(autodiff, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("x\n4\n1\n")
    assert autodiff("grad", "-e", "y = log(x)", "--points", str(path)).stderr == ""


def test_points_warn_only_of_the_gradients_they_write(autodiff, tmp_path):
    """b comes from --at: the records have no grad_b, so its nan gradient is not warned of."""
    path = tmp_path / "in.csv"
    path.write_text("a\n2\n-1\n")
    result = autodiff("grad", "-e", "y = log(a) * b", "--points", str(path), "--at", "b=3")
    assert result.stdout.splitlines()[0] == "a,value,grad_a"
    assert "log(a) produced nan" in result.stderr
    assert "'b'" not in result.stderr
    assert "'b' is nan" in autodiff("grad", "-e", "y = log(a) * b", "--at", "a=-1,b=3").stderr  # one point: b's too


def test_an_input_given_by_at_and_by_the_points_is_refused(autodiff, tmp_path):
    """Held fixed, or varied per point? Refused with a hint, never guessed (its gradient column
    was silently left out)."""
    path = tmp_path / "in.csv"
    path.write_text("x\n1\n2\n")
    result = autodiff("grad", "-e", "y = x * x", "--points", str(path), "--at", "x=3")
    assert (result.code, result.stdout) == (2, "")
    assert "'x' given both by --at (held fixed) and by the points: give each input in one place" in result.stderr
    result = autodiff("grad", "-e", "y = x * z", "--points", "-", "--in", "jsonl", "--at", "x=3",
                      stdin='{"z": 2, "x": 5}\n')
    assert result.code == 2 and "<stdin>:1: 'x' given both by --at" in result.stderr


def test_an_input_left_at_its_default_has_each_points_gradient(autodiff, tmp_path):
    program = tmp_path / "d.expr"
    program.write_text("x: input = 2.0\ny: input = 3.0\nz = x * y ** 2\n")
    for extra in ([], ["--wrt", "y"]):
        result = autodiff("grad", program, "--points", "-", "--out", "jsonl", *extra, stdin="x\n1\n5\n")
        assert result.code == 0, result.stderr
        records = [json.loads(line) for line in result.stdout.splitlines()]
        for x, record in zip((1.0, 5.0), records):
            single = json.loads(autodiff("grad", program, "--at", f"x={x}", "--format", "json", *extra).stdout)
            assert record["grads"]["y"] == pytest.approx(single["grads"]["y"]) == pytest.approx(2 * x * 3.0)
    everything = autodiff("grad", program, "--points", "-", "--in", "jsonl", stdin="{}\n{}\n")
    assert [json.loads(line)["grads"] for line in everything.stdout.splitlines()] == [{"x": 9.0, "y": 12.0}] * 2


def test_a_declared_shape_holds_for_every_point(autodiff, tmp_path):
    program = "A: input[n, n]\nsum(A @ A)"
    good = autodiff("grad", "-e", program, "--points", "-", "--in", "jsonl", stdin='{"A": [[1, 2], [3, 4]]}\n')
    assert good.code == 0, good.stderr
    bad = autodiff("grad", "-e", program, "--points", "-", "--in", "jsonl", stdin='{"A": [[1, 2, 3], [4, 5, 6]]}\n')
    alone = autodiff("grad", "-e", program, "--at", "A=[[1,2,3],[4,5,6]]")
    assert alone.code == 2 and bad.code == 2, (bad.code, bad.stderr)
    assert "declared [n, n]" in bad.stderr and "Traceback" not in bad.stderr


def test_ctrl_c_while_a_full_pipe_waits_stops_at_a_records_end(tmp_path):
    """Into a pipe nobody reads, the writer waits inside a write; Ctrl-C there ends the output
    after a whole record, as it does to a file (a record cut in two is a wrong record)."""
    import fcntl
    import signal
    import termios
    import time

    path = tmp_path / "in.csv"
    path.write_text("x\n" + "".join(f"{i / 7}\n" for i in range(20_000)))
    program = "W: input = [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]\ny = sum(W * x) ** 2"
    read, write = os.pipe()
    size = fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)
    process = subprocess.Popen(console_script() + ["grad", "-e", program, "--points", str(path), "--out", "jsonl"],
                               stdout=write, stderr=subprocess.PIPE, env=environment(), preexec_fn=as_in_the_foreground)
    os.close(write)
    try:
        deadline = time.monotonic() + 60
        waiting = bytearray(4)
        while time.monotonic() < deadline:  # until the pipe is full: the writer waits in write()
            fcntl.ioctl(read, termios.FIONREAD, waiting)
            if int.from_bytes(waiting, "little") >= size or process.poll() is not None:
                break
            time.sleep(0.02)
        time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        chunks = []
        while chunk := os.read(read, 1 << 16):
            chunks.append(chunk)
        status = process.wait(timeout=60)
    finally:
        os.close(read)
        if process.poll() is None:
            process.kill()
    out = b"".join(chunks).decode()
    assert status == 130 and process.stderr.read().decode() == "autodiff: interrupted\n"
    assert out.endswith("\n") and len(out) >= size
    assert all(json.loads(line)["output"] == "y" for line in out.splitlines())

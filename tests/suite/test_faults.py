"""Faults: `autodiff test` and the commands under bad records, special files, signals, broken
standard streams, runaway programs and hostile text (TESTING.md, "Faults").

Every case runs the real console script and asserts the exit status, that no traceback
appears, and that nothing outside the run's own files changed.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest
from console import console_script, environment, run_script

GOOD = "x: input = 2.0\ny = x * x\n"
RECURSIVE = "def f(n):\n    if n <= 0:\n        return 1\n    return f(n - 1) + f(n - 1)\ny = f(40)\n"


def run(*args, cwd=None, stdin=subprocess.DEVNULL, timeout=60, shell_prefix=None, preexec_fn=None):
    """The console script; (status, stdout, stderr). shell_prefix: a shell redirection applied first."""
    if shell_prefix is None and preexec_fn is None and stdin is subprocess.DEVNULL:
        code, out, err = run_script(args, cwd=cwd or os.getcwd(), env=environment(), timeout=timeout)
    else:
        command = console_script() + [str(a) for a in args]
        if shell_prefix is not None:
            command = ["sh", "-c", f'{shell_prefix} exec "$@"', "sh"] + command
        done = subprocess.run(command, cwd=cwd, stdin=stdin, capture_output=True, timeout=timeout, env=environment(),
                              preexec_fn=preexec_fn)
        code, out, err = done.returncode, done.stdout, done.stderr
    out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    assert "Traceback" not in err and "Traceback" not in out, err
    assert "internal error" not in err, err
    return code, out, err


def snapshot(root) -> dict:
    """Every path below root with its kind, size, mode and mtime (links not followed)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            found[os.path.relpath(path, root)] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mode,
                                                  info.st_mtime_ns)
    return found


def changed(before: dict, after: dict) -> set:
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


@pytest.fixture
def outside(tmp_path):
    """A folder beside the suite that no run may touch."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.dat").write_text("precious\n")  # a name no glob takes
    before = snapshot(folder)
    yield folder
    assert snapshot(folder) == before, "a file outside the run's own files changed"


# -- 1. one bad file costs one file ------------------------------------------------------------------------

BAD_RECORDS = {
    "string_value": '{"points": [{"at": {"x": "abc"}, "value": 1.0}]}',
    "bool_value": '{"points": [{"at": {"x": true}}]}',
    "null_at": '{"points": [{"at": {"x": null}}]}',
    "dict_in_value": '{"points": [{"at": {}, "output": "y", "value": [{"a": 1}]}]}',
    "grads_list": '{"points": [{"at": {}, "output": "y", "value": 1.0, "grads": [1]}]}',
    "error_numbers": '{"points": [{"at": {}, "error": {"class": 1, "message": 2}}]}',
    "output_number": '{"points": [{"at": {}, "output": 3, "value": 1.0}]}',
    "format_text": '{"format": "1", "points": []}',
    "huge_integer": '{"points": [{"at": {"x": 1' + "0" * 400 + "}}]}",
    "thousands_of_digits": '{"points": [{"at": {}, "output": "y", "value": 9' + "9" * 5000 + "}]}",
    "deep_nesting": "[" * 100_000 + "]" * 100_000,
    "deep_value": '{"points": [{"at": {"x": ' + "[" * 5000 + "]" * 5000 + "}}]}",
    "lone_surrogate": '{"points": [{"at": {}, "error": {"class": "\\ud800", "message": "m"}}]}',
    "surrogate_key": '{"points": [{"at": {"\\udc80": 1.0}}]}',
    "not_utf8": b'{"points": [\xff]}',
    "not_json": "{",
}


def _bad_suite(root):
    suite = root / "suite"
    suite.mkdir()
    (suite / "a_good.expr").write_text(GOOD)
    for name, text in BAD_RECORDS.items():
        (suite / f"{name}.expr").write_text(GOOD)
        record = suite / f"{name}.expr.golden.json"
        record.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    (suite / "fifo.expr").write_text(GOOD)
    os.mkfifo(suite / "fifo.expr.golden.json")
    (suite / "zero.expr").write_text(GOOD)
    os.symlink("/dev/zero", suite / "zero.expr.golden.json")
    (suite / "folder.expr").write_text(GOOD)
    (suite / "folder.expr.golden.json").mkdir()
    (suite / "oversized.expr").write_text(GOOD)
    with open(suite / "oversized.expr.golden.json", "wb") as big:
        big.write(b'{"points": [], "pad": "' + b"x" * (17 * 1024 * 1024) + b'"}')
    return suite


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_malformed_record_costs_its_file_only(tmp_path, outside, jobs):
    suite = _bad_suite(tmp_path)
    run("--version")  # warm
    code, out, err = run("test", suite, "--update", "--glob", "a_good.expr", cwd=tmp_path)  # a record for the good file
    assert code == 0, err
    before = snapshot(suite)
    code, out, err = run("test", suite, "-j", jobs, "--format", "json", cwd=tmp_path)
    assert code == 1, err
    files = {os.path.basename(f["path"]): f for f in json.loads(out)["files"]}
    assert files.pop("a_good.expr")["status"] == "passed"
    expected = set(BAD_RECORDS) | {"fifo", "zero", "folder", "oversized"}
    assert set(files) == {f"{name}.expr" for name in expected}
    for name, result in files.items():
        assert result["status"] == "errored", (name, result)
        assert "\n" not in result["message"] and result["message"], (name, result)
        assert "worker" not in result["message"], (name, result)
    assert "JSON nested too deeply" in files["deep_nesting.expr"]["message"]
    assert "too large for a float" in files["huge_integer.expr"]["message"]
    assert "an integer of more than 4300 digits" in files["thousands_of_digits.expr"]["message"]
    assert "FIFO" in files["fifo.expr"]["message"]
    assert "character device" in files["zero.expr"]["message"]
    assert "larger than" in files["oversized.expr"]["message"]
    assert changed(before, snapshot(suite)) == set()  # a test run writes nothing
    assert err == ""


def test_a_record_that_looks_like_markup_is_shown_as_written(tmp_path, outside):
    (tmp_path / "m.expr").write_text(GOOD)
    (tmp_path / "m.expr.golden.json").write_text(
        '{"points": [{"at": {}, "error": {"class": "[bold red]Boom[/]", "message": "\\u001b[2J[link=x]y"}}]}')
    code, out, err = run("test", "m.expr", "--format", "rich", cwd=tmp_path)
    assert code == 1
    assert "[bold red]Boom[/]" in " ".join(out.split())  # literally, not as markup
    assert "\x1b" not in out and "\\x1b[2J" in out
    (tmp_path / "s.expr").write_text("y = [red]x [/red] +\n")  # the line quoted under a syntax error too
    (tmp_path / "m.expr.golden.new").write_text("{}")  # and the note of a pending record
    code, out, err = run("test", "m.expr", "s.expr", "--format", "rich", cwd=tmp_path)
    assert code == 1 and "    y = [red]x [/red] +\n" in out and "a pending record waits for review" in out


# -- 2. never a false pass ---------------------------------------------------------------------------------


def test_update_never_records_a_limit_or_a_timeout(tmp_path, outside):
    (tmp_path / "big.expr").write_text("y = sum(zeros(100, 100))\n")
    (tmp_path / "calls.expr").write_text(RECURSIVE)
    (tmp_path / "old.expr").write_text("y = sum(zeros(100, 100))\n")
    (tmp_path / "old.expr.golden.json").write_text('{"format": 1, "points": [{"at": {}, "output": "y", "value": 0.0}]}')
    before = snapshot(tmp_path)
    code, out, err = run("test", ".", "--update", "-j", "1", "--max-elements", "100", "--max-iterations", "1000",
                         "--format", "plain", cwd=tmp_path)
    assert code == 1
    statuses = {line.split("\t")[1]: line.split("\t")[0] for line in out.splitlines() if not line.startswith("summary")}
    assert "errored" in out
    assert "--max-elements" in out and "--max-iterations" in out
    assert not (tmp_path / "big.expr.golden.json").exists() and not (tmp_path / "calls.expr.golden.json").exists()
    assert changed(before, snapshot(tmp_path)) == set()  # old.expr's record is not overwritten with the limit
    assert statuses == {"big.expr": "errored", "calls.expr": "errored", "old.expr": "errored"}
    code, out, err = run("test", "calls.expr", "--update", "--timeout", "1", "--max-iterations", "1000000000",
                         "--format", "plain", cwd=tmp_path)
    assert code == 1 and "timed out after 1 s" in out
    assert changed(before, snapshot(tmp_path)) == set()


# -- 3. nothing runs away ------------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_hanging_file_times_out_and_the_run_goes_on(tmp_path, outside, jobs):
    (tmp_path / "a.expr").write_text(GOOD)
    (tmp_path / "hang.expr").write_text(RECURSIVE)
    started = time.monotonic()
    code, out, err = run("test", ".", "--update", "-j", jobs, "--timeout", "1", "--max-iterations", "1000000000",
                         "--format", "plain", cwd=tmp_path)
    assert time.monotonic() - started < 20
    assert code == 1
    assert "updated\ta.expr" in out and "errored\thang.expr\ttimed out after 1 s (--timeout)" in out


def test_doubly_recursive_calls_end_with_a_limit(tmp_path):
    (tmp_path / "f.expr").write_text(RECURSIVE)
    code, out, err = run("eval", tmp_path / "f.expr", "--max-iterations", "20000")
    assert code == 4 and "loop turns and function calls (--max-iterations)" in err and out == ""


@pytest.mark.parametrize("program, words", [
    ("maximum(ones(1, 100000), ones(100000, 1))", "maximum of shapes [1, 100000] and [100000, 1]"),
    ("sum(ones(1000, 1, 1000) @ ones(1, 1000, 1000))", "1,000,000,000 elements"),
    ("x = ones(20000000)\nsum(cat([x, x, x]))", "60,000,000 elements"),
    ("sum(ones(1, 100000) < ones(100000, 1))", "10,000,000,000 elements"),
    ("arange(0, 1e308, 1e-308)", "too many elements"),
])
def test_every_result_is_limited_before_it_is_allocated(program, words):
    code, out, err = run("eval", "-e", program)
    assert code == 4 and words in err and out == ""
    assert err.startswith("<expr>:")  # located


def test_check_and_jobs_are_bounded(tmp_path):
    (tmp_path / "big.expr").write_text("x: input = zeros(100001)\nsum(x)\n")
    code, out, err = run("grad", tmp_path / "big.expr", "--check")
    assert code == 2 and "--check is limited to 100,000 input elements" in err
    code, out, err = run("test", tmp_path, "-j", "100000")
    assert code == 2 and "-j" in err


# -- 4. workers die with their parent ------------------------------------------------------------------------


def _children(pid: int) -> list:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_workers_die_with_their_parent(tmp_path, outside, how):
    for name in "ab":
        (tmp_path / f"{name}.expr").write_text(RECURSIVE)
    parent = subprocess.Popen(console_script() + ["test", ".", "-j", "2", "--timeout", "0", "--max-iterations",
                                                  "1000000000"], cwd=tmp_path, env=environment(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
        workers = _children(parent.pid)
    assert len(workers) == 2, "the workers did not start"
    time.sleep(0.3)
    os.kill(parent.pid, how)
    parent.wait(10)
    assert "Traceback" not in parent.stderr.read().decode()
    deadline = time.monotonic() + 5
    while any(_running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_running(w) for w in workers), "a worker outlived its parent"
    assert not list(tmp_path.glob("*.golden.json"))


def test_a_stopped_worker_is_covered_by_the_time_limit(tmp_path, outside):
    for name in "ab":
        (tmp_path / f"{name}.expr").write_text(RECURSIVE)
    parent = subprocess.Popen(console_script() + ["test", ".", "-j", "2", "--timeout", "2", "--format", "plain",
                                                  "--max-iterations", "1000000000"],
                              cwd=tmp_path, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    workers = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
        workers = _children(parent.pid)
    for worker in workers:
        os.kill(worker, signal.SIGSTOP)
    out, err = parent.communicate(timeout=30)
    assert parent.returncode == 1 and b"Traceback" not in err
    assert out.decode().count("timed out after 2 s") == 2
    assert not any(_running(w) for w in workers)


# -- 5. files are written safely -----------------------------------------------------------------------------


def test_junit_to_a_directory_or_a_missing_folder_is_a_usage_error_after_the_report(tmp_path, outside):
    (tmp_path / "a.expr").write_text(GOOD)
    for target, words in ((tmp_path, "is a directory"), (tmp_path / "no" / "r.xml", "does not exist")):
        before = snapshot(tmp_path)
        code, out, err = run("test", "a.expr", "--junit", target, "--format", "plain", cwd=tmp_path)
        assert code == 2 and words in err
        assert "summary\t" in out  # the report is still printed
        assert changed(before, snapshot(tmp_path)) == set()


def test_junit_to_a_device_is_written_directly_and_a_symlink_where_it_points(tmp_path, outside):
    (tmp_path / "a.expr").write_text(GOOD)
    run("test", "a.expr", "--update", cwd=tmp_path)
    code, out, err = run("test", "a.expr", "--junit", "/dev/null", cwd=tmp_path)
    assert code == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "real.xml").write_text("old")
    os.chmod(reports / "real.xml", 0o640)
    os.symlink(reports / "real.xml", tmp_path / "link.xml")
    code, out, err = run("test", "a.expr", "--junit", "link.xml", cwd=tmp_path)
    assert code == 0
    assert os.path.islink(tmp_path / "link.xml") and "<testsuites" in (reports / "real.xml").read_text()
    assert stat.S_IMODE(os.stat(reports / "real.xml").st_mode) == 0o640
    assert sorted(os.listdir(reports)) == ["real.xml"]  # no temporary file left


def test_records_keep_their_mode_follow_links_and_new_ones_follow_the_umask(tmp_path, outside):
    (tmp_path / "a.expr").write_text(GOOD)
    (tmp_path / "b.expr").write_text(GOOD)
    store = tmp_path / "store"
    store.mkdir()
    (store / "a.json").write_text('{"points": []}')
    os.chmod(store / "a.json", 0o604)
    os.symlink(store / "a.json", tmp_path / "a.expr.golden.json")
    code, out, err = run("test", ".", "--update", "-j", "1", cwd=tmp_path, preexec_fn=lambda: os.umask(0o077))
    assert code == 0, err
    assert os.path.islink(tmp_path / "a.expr.golden.json")
    assert '"value": 4.0' in (store / "a.json").read_text()
    assert stat.S_IMODE(os.stat(store / "a.json").st_mode) == 0o604
    assert stat.S_IMODE(os.stat(tmp_path / "b.expr.golden.json").st_mode) == 0o600
    assert not [p for p in os.listdir(tmp_path) + os.listdir(store) if p.endswith(".tmp")]


# -- 6. broken standard streams ------------------------------------------------------------------------------


@pytest.mark.parametrize("redirect, code, words", [
    ("exec 1>&-;", 74, "standard output is closed"),
    ("exec 1>/dev/full;", 74, "cannot write to standard output (No space left on device)"),
])
def test_standard_output_closed_or_full(tmp_path, outside, redirect, code, words):
    (tmp_path / "a.expr").write_text(GOOD)
    before = snapshot(tmp_path)
    status, out, err = run("test", "a.expr", "--update", cwd=tmp_path, shell_prefix=redirect)
    assert status == code and words in err and len(err.splitlines()) == 1
    status, out, err = run("grad", "-e", "x * x", "--at", "x=2", cwd=tmp_path, shell_prefix=redirect)
    assert status == code and words in err
    if redirect.startswith("exec 1>&-"):
        assert changed(before, snapshot(tmp_path)) == set()


@pytest.mark.parametrize("redirect", ["exec 2>&-;", "exec 2>/dev/full;"])
def test_standard_error_closed_or_full_keeps_the_status(tmp_path, redirect):
    status, out, err = run("eval", "-e", "1 +", shell_prefix=redirect)
    assert status == 3 and out == ""  # the error goes nowhere, never to standard output
    status, out, err = run("eval", "-e", "log(-1)", "--format", "plain", shell_prefix=redirect)
    assert status == 0 and out.startswith("output\tnan")


def test_standard_input_closed():
    status, out, err = run("grad", "-", shell_prefix="exec 0<&-;", stdin=None)
    assert status == 2 and "standard input is closed" in err and out == ""


# -- 7. hostile text is shown, never obeyed --------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_symlink_loops_cost_their_own_entry_only_never_an_os_error(tmp_path, outside, jobs):
    (tmp_path / "a.expr").write_text(GOOD)
    assert run("test", "--update", cwd=tmp_path)[0] == 0
    os.symlink("l1", tmp_path / "l2")  # a loop no glob takes: not searched, not reported
    os.symlink("l2", tmp_path / "l1")
    code, out, err = run("test", "-j", jobs, cwd=tmp_path)
    assert (code, out.splitlines()[0], err) == (0, "passed\ta.expr", "")
    os.symlink("loop.expr", tmp_path / "loop.expr")  # a file the run collects: it errors, the others run
    (tmp_path / "b.expr").write_text(GOOD)
    code, out, err = run("test", "-j", jobs, "--format", "plain", cwd=tmp_path)
    assert (code, err) == (1, "")
    assert out.splitlines() == ["passed\ta.expr", "new\tb.expr\tno golden record: run autodiff test --update to write "
                                "one", "errored\tloop.expr\tloop.expr: cannot be read (Too many levels of symbolic "
                                "links)", "summary\tpassed 1\tfailed 0\terrored 1\tnew 1"], out
    os.symlink("gone.expr.golden.json", tmp_path / "gone.expr.golden.json")  # a record: unused, as any orphan
    code, out, err = run("test", "-j", jobs, "--format", "plain", cwd=tmp_path)
    assert code == 1 and "unused\tgone.expr.golden.json\trecord\tits file gone.expr does not exist" in out
    code, out, err = run("test", "loop.expr", cwd=tmp_path)  # named on the command line
    assert (code, out, err) == (2, "", "autodiff: error: loop.expr: a symbolic link that cannot be followed (Too many "
                                       "levels of symbolic links)\n")


def test_a_name_of_a_megabyte_is_cut_in_messages(tmp_path, outside):
    name = "q" * 1_000_000
    (tmp_path / "big.expr").write_text(f"x: input = 1.0\ny = x * {name}(x)\n")
    shortened = "q" * 199 + "…"
    code, out, err = run("test", "big.expr", cwd=tmp_path)
    assert code == 1 and len(out) < 1000 and f"unknown function '{shortened}'" in out
    code, out, err = run("grad", "big.expr", cwd=tmp_path)  # the same message, as grad says it
    assert code == 3 and len(err) < 1000 and f"unknown function '{shortened}'" in err
    (tmp_path / "big.expr").write_text(f"# expect-error: NameError\nz = {name} + 1.0\n{name} = 2.0\n")
    code, out, err = run("test", "big.expr", "--update", cwd=tmp_path)  # an error recorded: its message cut too
    assert code == 0 and len((tmp_path / "big.expr.golden.json").read_text()) < 1000
    (tmp_path / "big.expr").write_text(f"y = {name} * 2\n")  # an input without a value: nothing to record
    (tmp_path / "big.expr.golden.json").unlink()
    for fmt in ("plain", "rich", "json"):
        code, out, err = run("test", "big.expr", "--update", "--format", fmt, cwd=tmp_path)
        assert code == 1 and len(out) < 1000 and "q" * 200 not in out, (fmt, len(out))
        assert fmt == "rich" or "q" * 199 in out  # cut, not lost (rich wraps it)


def test_hostile_file_names_stay_one_escaped_field(tmp_path, outside):
    name = "we\x1b[2Jird\tna\nme [bold]x.expr"
    (tmp_path / name).write_text(GOOD)
    code, out, err = run("test", ".", "--format", "plain", cwd=tmp_path)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].split("\t") == ["new", "we\\x1b[2Jird\\tna\\nme [bold]x.expr",
                                                        lines[0].split("\t")[2]]
    code, out, err = run("test", ".", "--format", "rich", cwd=tmp_path)
    assert "\x1b" not in out and "[bold]x" in out
    code, out, err = run("grad", name + ".missing", cwd=tmp_path)
    assert code == 2 and "\x1b" not in err and "\\x1b[2Jird\\tna\\nme" in err and len(err.splitlines()) == 1


def test_hostile_option_values_and_comments_are_escaped_and_long_names_cut(tmp_path):
    code, out, err = run("grad", "-e", "y = x +* 1 # \x1b[31m", "--at", "x=1")
    assert code == 3 and "\x1b" not in err and "\\x1b[31m" in err
    code, out, err = run("grad", "-e", "x", "--at", "x\x1b[31m=1")
    assert code == 2 and "\x1b" not in err
    code, out, err = run("test", tmp_path, "--shard", "\x1b]0;owned\x07")
    assert code == 2 and "\x1b" not in err and "\\x1b]0;owned\\a" in err
    code, out, err = run("grad", "-e", "x", "--output", "\x1b[2J")
    assert code == 2 and "\x1b" not in err
    code, out, err = run("grad", "n" * 400 + ".expr")
    assert code == 2 and "…" in err and len(err) < 320


# -- 8. options are validated ------------------------------------------------------------------------------------


def test_nan_tolerances_are_usage_errors_and_inf_stays_strict_json(tmp_path):
    (tmp_path / "a.expr").write_text(GOOD)
    for option in ("--atol", "--rtol"):
        assert run("test", tmp_path, option, "nan")[0] == 2
        assert run("grad", "-e", "x * x", "--at", "x=2", "--check", option, "nan")[0] == 2
    code, out, err = run("grad", "-e", "x * x", "--at", "x=2", "--check", "--atol", "inf", "--format", "json")

    def refuse(constant):
        raise ValueError(constant)

    assert code == 0 and json.loads(out, parse_constant=refuse)["check"]["atol"] == "inf"

"""Worker processes: the same results as one process, and a crashed worker loses nothing else."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time

import pytest

from autodiff.testing import forked, pool
from autodiff.testing.one_file import ERRORED, Settings, run_file
from autodiff.testing.pool import run_files

from .conftest import NONSCALAR, TUTORIAL, WITH_DEFAULTS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="worker processes are tested on POSIX")
FORKED_MISSING = "forked.py's workers need Linux 5.3 (pidfd_open)"
needs_forked = pytest.mark.skipif(not forked.available(), reason=FORKED_MISSING)


def mixed_suite(suite, count: int = 24) -> list:
    texts = [WITH_DEFAULTS, NONSCALAR, "x = (1 +\n", TUTORIAL, "x: input = 0.5\ny = log(x) * exp(x)\n"]
    files = [suite.write(f"f{i:02}.expr", texts[i % len(texts)]) for i in range(count)]
    for path in files[: count // 2]:
        run_file(path, Settings(update=True))  # half have records, some of which are then broken
    files[1].write_text("x: input = [1, 2, 3]\ny = sum(x * x)\n")
    return files


def comparable(results) -> list:
    return [(r.path, r.status, r.message, [(m.quantity, m.difference) for m in r.mismatches]) for r in results]


@pytest.fixture(params=["forked", "multiprocessing"])
def workers(request, monkeypatch):
    """Each test of workers runs with both kinds: forked.py's (Linux) and multiprocessing's."""
    if request.param == "multiprocessing":
        monkeypatch.setattr(forked, "available", lambda: False)
    elif not forked.available():
        pytest.skip(FORKED_MISSING)
    return request.param


def test_workers_give_the_same_results_in_the_same_order(suite, workers):
    files = mixed_suite(suite)
    one = run_files(files, Settings(), jobs=1)
    assert len({r.status for r in one}) >= 3
    for jobs, timeout in ((1, 60.0), (2, 0.0), (3, 0.0)):  # -j 1 with a time limit: one worker process
        arrived = []
        results = run_files(files, Settings(), jobs=jobs, on_result=arrived.append, timeout=timeout)
        assert comparable(results) == comparable(one)
        assert sorted(r.path for r in arrived) == sorted(r.path for r in one)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_worker_that_dies_costs_only_the_file_it_was_running(suite, monkeypatch, jobs, workers):
    files = mixed_suite(suite, 20)
    fatal = str(files[7])

    def crashing(path, settings):
        if str(path) == fatal:
            os._exit(3)  # as a segfault in a native library would end the process
        return run_file(path, settings)

    monkeypatch.setattr(pool, "run_file", crashing)  # forked workers inherit it
    results = run_files(files, Settings(), jobs=jobs, timeout=60.0)  # the lone worker has every file sent ahead
    expected = [run_file(path, Settings()) for path in files]  # the unpatched function, in this process
    assert [r.path for r in results] == [str(f) for f in files]
    crashed = results[7]
    assert (crashed.status, crashed.message) == (ERRORED, "the worker process running this file died (exit status 3)")
    assert comparable(results[:7] + results[8:]) == comparable(expected[:7] + expected[8:])


@needs_forked
def test_a_worker_gone_before_its_next_request_costs_one_file(suite, monkeypatch, tmp_path):
    """Sending to a worker that has died (its end of the pipe closed) is its death, not the run's:
    as when the death is seen after the send, the file it was to run first is blamed."""
    files = mixed_suite(suite, 8)
    marker = tmp_path / "died once"
    real_worker = pool._worker

    def dying_once(connection, settings, parent):
        if marker.exists():
            return real_worker(connection, settings, parent)
        marker.write_text("")
        (index, path), *_ = connection.recv()
        os.close(connection.fileno())  # nothing reads what is sent it from now on
        connection.send((index, run_file(path, settings)))
        time.sleep(0.5)  # this process sends its next request meanwhile
        os._exit(3)

    monkeypatch.setattr(pool, "_worker", dying_once)
    monkeypatch.setattr(pool, "FILES_PER_REQUEST_ALONE", 2)
    results = run_files(files, Settings(), jobs=1, timeout=60.0)
    expected = [run_file(path, Settings()) for path in files]
    assert (results[1].status, results[1].message) == (ERRORED, "the worker process running this file died "
                                                                "(exit status 3)")
    assert comparable(results[:1] + results[2:]) == comparable(expected[:1] + expected[2:])


def test_a_lone_worker_that_runs_dry_is_sent_more_at_a_time(suite, monkeypatch):
    """Its results are read at a tick: files faster than that make its requests grow, and
    every file still has its result, in order."""
    files = [suite.write(f"f{i:03}.expr", "1 + 1\n") for i in range(300)]
    monkeypatch.setattr(pool._Pool, "TICK_MS", 300)  # far longer than 64 such files take
    grown = []
    real = pool._Pool._give_work

    def watching(self, worker):
        real(self, worker)
        grown.append(self.alone_share)

    monkeypatch.setattr(pool._Pool, "_give_work", watching)
    results = run_files(files, Settings(), jobs=1, timeout=60.0)
    assert [r.path for r in results] == [str(f) for f in files]
    assert max(grown) > pool.FILES_PER_REQUEST_ALONE


PIPE_BYTES = 65_536  # Linux's pipe buffer


def test_a_request_never_fills_a_pipe(suite, monkeypatch):
    """A lone worker's requests grow to MAX_FILES_PER_REQUEST paths, but never past
    REQUEST_BYTES: a request that filled the pipe would hold the pool up, time limits and all,
    until the worker had finished the files it has."""
    files = [suite.write(f"{'long-name-' * 24}{i:03}.expr", "1 + 1\n") for i in range(200)]
    monkeypatch.setattr(pool, "FILES_PER_REQUEST_ALONE", pool.MAX_FILES_PER_REQUEST)  # as grown
    parent, sizes = os.getpid(), []
    send = forked.Channel.send

    def measuring(self, message):
        if os.getpid() == parent and message is not None:
            sizes.append(len(pickle.dumps(message, pickle.HIGHEST_PROTOCOL)))
        send(self, message)

    monkeypatch.setattr(forked.Channel, "send", measuring)
    results = run_files(files, Settings(), jobs=1, timeout=60.0)
    assert [r.path for r in results] == [str(f) for f in files]
    assert len(sizes) > 2 and max(sizes) <= PIPE_BYTES // 2, sizes


@needs_forked
def test_a_forked_channel_carries_messages_longer_than_a_pipe_holds():
    def child(channel, size):
        request = channel.recv()
        channel.send((request, "x" * size))
        channel.send(b"\0" * size)

    size = 1 << 20  # a pipe holds 64 KiB
    channel, process = forked.start(child, (size,))
    try:
        channel.send(("hello", 1))
        assert channel.recv() == (("hello", 1), "x" * size)
        assert channel.recv() == b"\0" * size
        process.join()
        assert process.exitcode == 0
        with pytest.raises(EOFError):  # the child has gone, and its end with it
            channel.recv()
    finally:
        process.kill()
        process.join()
        channel.close()


_ENDING = """
import os, select, sys, time
from autodiff.testing import forked

how, parent = sys.argv[1], os.getpid()

def child(channel):
    if how == "raise":
        raise ValueError("in the worker")
    if how == "exit":
        sys.exit(4)
    if how == "exit()":
        sys.exit()
    if how == "exit(text)":
        sys.exit("the reason")
    if how == "exit(huge)":
        sys.exit(2 ** 70)  # os._exit refuses it
    time.sleep(60)

try:
    channel, process = forked.start(child, ())
finally:
    if os.getpid() != parent:
        print("the child came back into its caller's code", flush=True)
        os._exit(99)
if how == "kill":
    process.kill()
select.select([process.sentinel], [], [], 30)
process.join()
print(process.exitcode)
"""


@needs_forked
@pytest.mark.parametrize("how,status,said", [("raise", 1, "ValueError: in the worker"), ("exit", 4, ""),
                                             ("exit()", 0, ""), ("exit(text)", 1, "the reason"),
                                             ("exit(huge)", 1, ""), ("kill", -9, "")])
def test_a_forked_process_reports_how_it_ended_and_never_returns(how, status, said):
    """Its exit status as multiprocessing's Process gives it; whatever happens in the child, it
    never runs on in its caller's code (a second copy of the parent)."""
    done = subprocess.run([sys.executable, "-c", _ENDING, how], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [str(status)], (done.stdout, done.stderr)
    assert said in done.stderr


_BUFFERED = """
import sys
from autodiff.testing import pool
from autodiff.testing.one_file import Settings
print("said once, before the workers start")  # a pipe: buffered, not yet written
pool.run_files(sys.argv[1:], Settings(), jobs=3, timeout=30.0)
"""


@needs_forked
def test_what_the_parent_had_buffered_is_written_once(suite):
    files = [str(suite.write(f"f{i}.expr", "1 + 1\n")) for i in range(6)]
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", _BUFFERED, *files], capture_output=True, text=True, timeout=60,
                          env=environment)
    assert done.stdout.count("said once") == 1, done.stdout


_HANGING_AMONG_LONG_PATHS = r"""
import sys, time
from pathlib import Path
from autodiff.testing import pool
from autodiff.testing.one_file import Settings

folder = Path(sys.argv[1])
for level in range(12):  # paths of some 3,000 characters: six files fill a request
    folder = folder / (str(level) + "d" * 240)
folder.mkdir(parents=True)
files = [folder / f"f{i:03}.expr" for i in range(200)]
for path in files:
    path.write_text("1 + 1\n")
hanging, real = str(files[60]), pool.run_file

def run_file(path, settings):
    if str(path) == hanging:
        time.sleep(3600)
    return real(path, settings)

pool.run_file = run_file  # the forked workers run it too
results = pool.run_files(files, Settings(), jobs=1, timeout=2.0)
print(len(results), [r.message for r in results if r.status == "errored"])
"""


def test_a_hanging_file_times_out_whatever_the_length_of_the_paths(tmp_path):
    """Requests of long paths hold few files each: were one sent at every result, they would
    fill the pipe while the worker hangs, and this process would wait to send, its time limit
    with it."""
    done = subprocess.run([sys.executable, "-c", _HANGING_AMONG_LONG_PATHS, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip() == "200 ['timed out after 2 s (--timeout)']", (done.stdout, done.stderr)


@needs_forked
def test_a_fork_that_fails_leaves_no_pipe_open(monkeypatch):
    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", refused)
    with pytest.raises(BlockingIOError):
        forked.start(lambda channel: None, ())
    assert len(os.listdir("/proc/self/fd")) == before


def test_the_default_is_one_worker_per_core():
    assert pool.default_jobs() >= 1

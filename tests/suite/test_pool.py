"""Worker processes: the same results as one process, and a crashed worker loses nothing else."""

from __future__ import annotations

import os
import pickle
import select
import sys
import time

import pytest

from autodiff.testing import forked, pool
from autodiff.testing.one_file import ERRORED, Settings, run_file
from autodiff.testing.pool import run_files

from .conftest import NONSCALAR, TUTORIAL, WITH_DEFAULTS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="worker processes are tested on POSIX")


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
        pytest.skip("forked.py's workers need Linux 5.3 (pidfd_open)")
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


@pytest.mark.skipif(not forked.available(), reason="forked.py's workers need Linux 5.3 (pidfd_open)")
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


@pytest.mark.skipif(not forked.available(), reason="forked.py's workers need Linux 5.3 (pidfd_open)")
@pytest.mark.parametrize("how,status", [("raise", 1), ("exit", 4), ("kill", -9)])
def test_a_forked_process_reports_how_it_ended(how, status):
    def child(channel):
        if how == "raise":
            sys.stderr = open(os.devnull, "w")  # the traceback it prints
            raise ValueError("in the worker")
        if how == "exit":
            sys.exit(4)
        time.sleep(60)

    channel, process = forked.start(child, ())
    try:
        if how == "kill":
            process.kill()
        assert select.select([process.sentinel], [], [], 30)[0] == [process.sentinel]
        process.join()
        assert process.exitcode == status
    finally:
        process.kill()
        process.join()
        channel.close()


def test_the_default_is_one_worker_per_core():
    assert pool.default_jobs() >= 1

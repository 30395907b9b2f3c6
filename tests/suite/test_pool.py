"""Worker processes: the same results as one process, and a crashed worker loses nothing else."""

from __future__ import annotations

import os
import sys

import pytest

from autodiff.testing import pool
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


def test_workers_give_the_same_results_in_the_same_order(suite):
    files = mixed_suite(suite)
    one = run_files(files, Settings(), jobs=1)
    assert len({r.status for r in one}) >= 3
    for jobs in (2, 3):
        arrived = []
        results = run_files(files, Settings(), jobs=jobs, on_result=arrived.append)
        assert comparable(results) == comparable(one)
        assert sorted(r.path for r in arrived) == sorted(r.path for r in one)


def test_a_worker_that_dies_costs_only_the_file_it_was_running(suite, monkeypatch):
    files = mixed_suite(suite, 20)
    fatal = str(files[7])

    def crashing(path, settings):
        if str(path) == fatal:
            os._exit(3)  # as a segfault in a native library would end the process
        return run_file(path, settings)

    monkeypatch.setattr(pool, "run_file", crashing)  # forked workers inherit it
    results = run_files(files, Settings(), jobs=2)
    expected = [run_file(path, Settings()) for path in files]  # the unpatched function, in this process
    assert [r.path for r in results] == [str(f) for f in files]
    crashed = results[7]
    assert (crashed.status, crashed.message) == (ERRORED, "the worker process running this file died (exit status 3)")
    assert comparable(results[:7] + results[8:]) == comparable(expected[:7] + expected[8:])


def test_the_default_is_one_worker_per_core():
    assert pool.default_jobs() >= 1

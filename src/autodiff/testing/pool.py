"""Running many files: in this process for -j 1, else spread over worker processes.

Workers are forked from this process on Linux, so they start with everything already
imported; elsewhere they are spawned. Each takes a few files at a time and sends back one
result per file as soon as it has it. When a worker dies (a crash in a native library, a
kill), the file it was running is reported as errored, the files it had not started go back
to the queue, and a new worker takes its place: no other file's result is lost.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from multiprocessing.connection import wait

from .one_file import ERRORED, FileResult, Settings, run_file

FILES_PER_REQUEST = 8  # few enough to balance the workers, enough to keep messages rare


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def run_files(files: list, settings: Settings, jobs: int = 1, on_result=None) -> list:
    """The result of each file, in the order of `files`; on_result(result) as each arrives."""
    if jobs <= 1 or len(files) <= 1:
        results = []
        for path in files:
            results.append(run_file(path, settings))
            if on_result:
                on_result(results[-1])
        return results
    return _Pool(files, settings, min(jobs, len(files)), on_result).run()


def _worker(connection, settings: Settings) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    while True:
        request = connection.recv()
        if request is None:
            return
        for index, path in request:
            connection.send((index, run_file(path, settings)))
        connection.send(None)  # ready for more


class _Worker:
    def __init__(self, context, settings: Settings) -> None:
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=_worker, args=(child_end, settings), daemon=True)
        self.process.start()
        child_end.close()
        self.assigned: list = []  # (index, path) sent and not yet answered


class _Pool:
    def __init__(self, files: list, settings: Settings, jobs: int, on_result) -> None:
        self.files = files
        self.settings = settings
        self.jobs = jobs
        self.on_result = on_result
        self.queue = deque(enumerate(files))
        self.results: list = [None] * len(files)
        method = "fork" if sys.platform.startswith("linux") else "spawn"
        self.context = multiprocessing.get_context(method)
        self.workers: list = []

    def run(self) -> list:
        try:
            for _ in range(self.jobs):
                self._start_worker()
            while self.workers:
                waitables = {}
                for worker in self.workers:
                    waitables[worker.connection] = worker
                    waitables[worker.process.sentinel] = worker
                for ready in wait(list(waitables)):
                    worker = waitables[ready]
                    if worker in self.workers:
                        self._serve(worker, died=ready is worker.process.sentinel)
        finally:
            for worker in self.workers:
                worker.process.terminate()
            for worker in self.workers:
                worker.process.join()
        return self.results

    def _start_worker(self) -> None:
        worker = _Worker(self.context, self.settings)
        self.workers.append(worker)
        self._give_work(worker)

    def _give_work(self, worker: _Worker) -> None:
        share = max(1, min(FILES_PER_REQUEST, len(self.queue) // (2 * self.jobs)))
        request = [self.queue.popleft() for _ in range(min(share, len(self.queue)))]
        if not request:
            worker.connection.send(None)
            worker.process.join()
            self.workers.remove(worker)
            return
        worker.assigned = request
        worker.connection.send([(index, str(path)) for index, path in request])

    def _serve(self, worker: _Worker, died: bool) -> None:
        try:
            while worker.connection.poll():
                message = worker.connection.recv()
                if message is None:
                    self._give_work(worker)
                    return
                index, result = message
                worker.assigned = [item for item in worker.assigned if item[0] != index]
                self._keep(index, result)
        except (EOFError, OSError):
            died = True
        if died or not worker.process.is_alive():
            self._lost(worker)

    def _keep(self, index: int, result: FileResult) -> None:
        self.results[index] = result
        if self.on_result:
            self.on_result(result)

    def _lost(self, worker: _Worker) -> None:
        """A worker died: blame the file it was running, requeue the rest, replace the worker."""
        worker.process.join()
        self.workers.remove(worker)
        if worker.assigned:
            (index, path), *rest = worker.assigned
            code = worker.process.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
            self._keep(index, FileResult(str(path), ERRORED, f"the worker process running this file died ({how})"))
            self.queue.extendleft(reversed(rest))
        if self.queue:
            self._start_worker()

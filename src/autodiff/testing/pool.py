"""Running many files: in this process for -j 1, else spread over worker processes.

Workers are forked from this process on Linux, so they start with everything already
imported (forked.py, without multiprocessing); elsewhere multiprocessing spawns them. Each
is sent a few files at a time, the next few before it has finished, and sends back one
result per file as soon as it has it. When a worker dies (a crash in a native library, a
kill), the file it was running is reported as errored, the files it had not started go back
to the queue, and a new worker takes its place: no other file's result is lost.

A file that runs longer than the time limit (`--timeout`, seconds; 0 for none) has its worker
killed and is reported as errored; with a limit, even -j 1 runs files in a worker. Workers
die with their parent: each asks Linux for SIGKILL when the parent dies (PR_SET_PDEATHSIG),
and between files checks that its parent is still the one that started it.
"""

from __future__ import annotations

import gc
import math
import os
import select
import sys
import time
from collections import deque

from . import forked
from .one_file import ERRORED, FileResult, Settings, run_file

FILES_PER_REQUEST = 8  # few enough to balance the workers, enough to keep messages rare
FILES_PER_REQUEST_ALONE = 64  # one worker has nothing to balance: fewer round trips (doubled while it runs dry)
MAX_FILES_PER_REQUEST = 1024
REQUEST_BYTES = 16_384  # a request's paths, at most (but one): far within a pipe's buffer (see _give_work)
MAX_JOBS = 256  # more worker processes than this is a usage error
DEFAULT_TIMEOUT = 60.0  # seconds one file may run


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def run_files(files: list, settings: Settings, jobs: int = 1, on_result=None, timeout: float = 0.0,
              stop_when=None) -> list:
    """The result of each file, in the order of `files`; on_result(result) as each arrives.
    timeout: seconds one file may run (0: no limit). stop_when(result): True stops the run
    (-x) after the first such file in the order of `files`, whatever order the workers finish
    in: the files before it all run, those after it are left out (as with one process)."""
    if timeout <= 0 and (jobs <= 1 or len(files) <= 1):
        results = []
        for path in files:
            results.append(run_file(path, settings))
            if on_result:
                on_result(results[-1])
            if stop_when and stop_when(results[-1]):
                break
        return results
    if not files:
        return []
    pool = _Pool(files, settings, max(1, min(jobs, len(files))), on_result, timeout)
    pool.stop_when = stop_when
    results = pool.run()
    if pool.stop_at is not None:  # files after the one that stopped the run count as not run, finished or not
        results = results[: pool.stop_at + 1]
    return [result for result in results if result is not None]


def _die_with_parent(parent: int) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux); elsewhere the
    worker's own check of its parent between files is all there is."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            PR_SET_PDEATHSIG = 1
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _worker(connection, settings: Settings, parent: int) -> None:
    # A forked worker shares its parent's memory until it writes to it; the collector's walks
    # over the inherited objects would write to (and copy) every page they are on. Frozen, they
    # are left alone, in this process only (CPython's advice for forked workers, gc.freeze).
    gc.freeze()
    _die_with_parent(parent)
    import signal  # here: a run in this process has no use for its enums (half a millisecond of the start)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        while not connection.poll(1.0):
            if os.getppid() != parent:
                os._exit(1)
        try:
            request = connection.recv()
        except (EOFError, OSError):
            os._exit(1)
        if request is None:
            return
        for index, path in request:  # the next request may already be waiting in the pipe
            connection.send((index, run_file(path, settings)))


def _multiprocessing_context():
    """None where forked.py starts the workers; else multiprocessing's way of spawning them."""
    if forked.available():
        return None
    import multiprocessing  # here: Linux and a run in this process (-j 1 --timeout 0) need none of it

    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


class _Worker:
    def __init__(self, context, settings: Settings) -> None:
        if context is None:  # forked here (Linux)
            self.connection, self.process = forked.start(_worker, (settings, os.getpid()))
        else:
            self.connection, child_end = context.Pipe()
            self.process = context.Process(target=_worker, args=(child_end, settings, os.getpid()), daemon=True)
            self.process.start()
            child_end.close()
        self.assigned: deque = deque()  # (index, path) sent and not yet answered, in the order it runs them
        self.since = time.monotonic()  # when the file it is running (assigned[0]) started, as far as seen
        self.latest = 0  # how many files the last request sent it held
        self.timed_out = False
        self.muted = False  # its results are read at the next tick, not as each comes
        self.inbox = select.poll()  # its end of the pipe alone: is a message waiting?
        self.inbox.register(self.connection.fileno(), select.POLLIN)

    def has_message(self) -> bool:
        return bool(self.inbox.poll(0))


class _Pool:
    """The workers, each sent its next few files before it runs out of work.

    A lone worker (-j 1) has nothing to balance: while it has plenty of files still to run,
    its results are read in batches, at a tick (TICK_MS), rather than each waking this process;
    its death and the time limit still wake it at once. Several workers are served at each
    result, so that none waits for work."""

    TICK_MS = 20

    def __init__(self, files: list, settings: Settings, jobs: int, on_result, timeout: float = 0.0) -> None:
        self.timeout = timeout
        self.files = files
        self.settings = settings
        self.jobs = jobs
        self.on_result = on_result
        self.queue = deque(enumerate(files))
        self.results: list = [None] * len(files)
        self.context = _multiprocessing_context()
        self.workers: list = []
        self.stop_when = None
        self.stop_at = None  # the index of the first file, in order, that stops the run (-x)
        self.stopped = False
        self.poller = select.poll()  # every worker's sentinel, and the pipes of those not muted
        self.alone_share = FILES_PER_REQUEST_ALONE
        self.watched: dict = {}  # fd -> (worker, whether it is the process's sentinel)

    def run(self) -> list:
        try:
            for _ in range(self.jobs):
                self._start_worker()
            while self.workers and not self.stopped:
                died = set()
                for fd, _ in self.poller.poll(self._wait_time()):
                    worker, sentinel = self.watched.get(fd, (None, False))
                    if sentinel:
                        died.add(worker)
                for worker in list(self.workers):
                    if worker in self.workers and not self.stopped:
                        self._serve(worker, died=worker in died)
                self._stop_late_workers()
        finally:
            for worker in self.workers:
                worker.process.kill()
            for worker in self.workers:
                worker.process.join()
                worker.connection.close()
        return self.results

    def _wait_time(self):
        """Milliseconds to wait for a message (None: until one comes)."""
        wait = None
        if self.timeout > 0:
            busy = [w.since for w in self.workers if w.assigned]
            seconds = max(0.0, min(busy) + self.timeout - time.monotonic()) + 0.01 if busy else self.timeout
            wait = math.ceil(seconds * 1000)
        if any(w.muted for w in self.workers):
            wait = self.TICK_MS if wait is None else min(wait, self.TICK_MS)
        return wait

    def _stop_late_workers(self) -> None:
        """Kill a worker whose file has run past the time limit (hung, stopped or just slow)."""
        if self.timeout <= 0:
            return
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.assigned and now - worker.since >= self.timeout:
                worker.timed_out = True
                worker.process.kill()
                self._lost(worker)

    def _start_worker(self) -> None:
        worker = _Worker(self.context, self.settings)
        self.workers.append(worker)
        for fd, sentinel in ((worker.connection.fileno(), False), (worker.process.sentinel, True)):
            self.watched[fd] = (worker, sentinel)
            self.poller.register(fd, select.POLLIN)
        self._give_work(worker)

    def _unwatch(self, worker: _Worker) -> None:
        """Stop polling a worker's descriptors (before they close: a new worker may get their numbers)."""
        for fd in [fd for fd, (watched, _) in self.watched.items() if watched is worker]:
            self.poller.unregister(fd)
            del self.watched[fd]

    def _share(self) -> int:
        if self.jobs == 1:
            return self.alone_share
        return max(1, min(FILES_PER_REQUEST, len(self.queue) // (2 * self.jobs)))

    def _give_work(self, worker: _Worker) -> None:
        """Send a worker more files when it is running low (so that it never waits for this
        process), stop it when there are none left and it has finished its own, and watch its
        pipe at every result only while it is running low."""
        if self.jobs == 1 and worker.muted and not worker.assigned and self.queue:  # it ran dry between ticks
            self.alone_share = min(2 * self.alone_share, MAX_FILES_PER_REQUEST)
        share = self._share()
        # Sent when it runs low, and only once it has read the last request (all that is left of
        # what it was sent is from that one): one request at most waits unread in the pipe, and
        # REQUEST_BYTES keeps it within the pipe's buffer, so this process never waits to send
        # (a worker busy with a hanging file reads nothing: its time limit must still fire).
        if len(worker.assigned) <= min(share // 2, worker.latest) and self.queue:
            request, size = [], 0
            while self.queue and len(request) < share and size < REQUEST_BYTES:
                request.append(self.queue.popleft())
                size += len(str(request[-1][1]).encode("utf-8", "surrogatepass")) + 16
            if not worker.assigned:
                worker.since = time.monotonic()
            worker.assigned.extend(request)
            worker.latest = len(request)
            try:
                worker.connection.send([(index, str(path)) for index, path in request])
            except (BrokenPipeError, ConnectionResetError):  # it died before reading it: its sentinel
                return  # says so next, and the loop handles the death as after any send (never a nested _lost)
        if not worker.assigned:
            self._unwatch(worker)
            try:
                worker.connection.send(None)
            except (BrokenPipeError, ConnectionResetError):  # gone already
                pass
            worker.process.join()
            worker.connection.close()
            self.workers.remove(worker)
            return
        muted = self.jobs == 1 and len(worker.assigned) > share // 2
        if muted != worker.muted:
            worker.muted = muted
            self.poller.modify(worker.connection.fileno(), 0 if muted else select.POLLIN)

    def _serve(self, worker: _Worker, died: bool) -> None:
        """The messages a worker has sent; then, when it died, its loss."""
        try:
            while not self.stopped and worker.has_message():
                index, result = worker.connection.recv()
                if worker.assigned and worker.assigned[0][0] == index:
                    worker.assigned.popleft()
                else:
                    worker.assigned = deque(item for item in worker.assigned if item[0] != index)
                worker.since = time.monotonic()
                self._keep(index, result)
        except (EOFError, OSError):
            died = True
        if died:
            self._lost(worker)
        elif worker in self.workers and not self.stopped:
            self._give_work(worker)

    def _keep(self, index: int, result: FileResult) -> None:
        if self.stopped:
            return
        self.results[index] = result
        if self.on_result:
            self.on_result(result)
        if self.stop_when and self.stop_when(result) and (self.stop_at is None or index < self.stop_at):
            # the run stops here unless a file before this one stops it: those still run, the rest never start
            self.stop_at = index
            self.queue = deque(item for item in self.queue if item[0] < index)
        if self.stop_at is not None and all(r is not None for r in self.results[: self.stop_at]):
            self.stopped = True

    def _lost(self, worker: _Worker) -> None:
        """A worker died: blame the file it was running, requeue the rest, replace the worker."""
        self._unwatch(worker)
        worker.process.join()
        worker.connection.close()
        if worker not in self.workers:
            return
        self.workers.remove(worker)
        if worker.assigned:
            (index, path), *rest = worker.assigned
            code = worker.process.exitcode
            if worker.timed_out:
                message = f"timed out after {self.timeout:g} s (--timeout)"
            else:
                how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
                message = f"the worker process running this file died ({how})"
            self._keep(index, FileResult(str(path), ERRORED, message, seconds=time.monotonic() - worker.since))
            if self.stop_at is not None:  # -x: what comes after the file that stops the run never starts
                rest = [item for item in rest if item[0] < self.stop_at]
            self.queue.extendleft(reversed(rest))
        if self.queue:
            self._start_worker()

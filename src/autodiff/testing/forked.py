"""A worker process forked from this one, and the two pipes it talks over: the little of
multiprocessing's Process and Pipe that the pool uses, on Linux, without importing
multiprocessing (with socket, tempfile and subprocess, which it imports, some 10 ms of every
`autodiff test` start: more than the fork itself).

Messages are pickled, each after its length. Each end blocks while it writes: the pool sends
a worker its next request only once it has read the last, and keeps each within a pipe's
buffer (pool.REQUEST_BYTES), so that it never waits on a worker busy with a file. A worker
whose parent stops reading just waits, as it did over multiprocessing's socket.
"""

from __future__ import annotations

import os
import pickle
import select
import sys

_HEADER = 8  # bytes of a message's length, little-endian


def available() -> bool:
    """Whether this system forks and can wait for a process through a descriptor (Linux 5.3)."""
    global _AVAILABLE
    if _AVAILABLE is None:
        _AVAILABLE = False
        if sys.platform.startswith("linux") and hasattr(os, "pidfd_open"):
            try:
                os.close(os.pidfd_open(os.getpid()))
                _AVAILABLE = True
            except OSError:  # a kernel before 5.3
                pass
    return _AVAILABLE


_AVAILABLE = None


class Channel:
    """One end: it reads one pipe and writes the other (as multiprocessing's Connection)."""

    def __init__(self, reading: int, writing: int) -> None:
        self._reading = reading
        self._writing = writing

    def fileno(self) -> int:
        return self._reading

    def send(self, message) -> None:
        data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        view = memoryview(len(data).to_bytes(_HEADER, "little") + data)
        while view:
            view = view[os.write(self._writing, view):]

    def recv(self):
        """The next message, whole; EOFError when the other end has closed (or died) first."""
        return pickle.loads(self._exactly(int.from_bytes(self._exactly(_HEADER), "little")))

    def _exactly(self, size: int) -> bytes:
        parts, wanted = [], size
        while wanted:
            part = os.read(self._reading, min(wanted, 1 << 20))
            if not part:
                raise EOFError("the other end closed its pipe")
            parts.append(part)
            wanted -= len(part)
        return b"".join(parts)

    def poll(self, timeout: float) -> bool:
        """Whether a message (or the end) can be read within `timeout` seconds."""
        waiting = select.poll()
        waiting.register(self._reading, select.POLLIN)
        return bool(waiting.poll(timeout * 1000))

    def close(self) -> None:
        for fd in (self._reading, self._writing):
            if fd >= 0:
                os.close(fd)
        self._reading = self._writing = -1


class Process:
    """A forked child running `target(*args)`, then gone with `os._exit`. Its exit status is as
    multiprocessing's Process gives it: 0, 1 after an exception, sys.exit's own, and `exitcode`
    is minus the signal that killed it. `sentinel` is a descriptor that becomes readable when it
    has ended."""

    def __init__(self, target, args: tuple, close_in_child: tuple) -> None:
        self.exitcode = None
        _flush()  # else the child would write what this process had buffered a second time
        pid = os.fork()
        if pid == 0:  # the child: never returns into the parent's code
            _run_child(target, args, close_in_child)
        self.pid = pid
        self.sentinel = os.pidfd_open(pid)

    def kill(self) -> None:
        if self.exitcode is None:  # not yet reaped: the pid is still this child's
            import signal  # here: its enums cost half a millisecond of a start that kills nothing

            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def join(self) -> None:
        if self.exitcode is None:
            _, status = os.waitpid(self.pid, 0)
            self.exitcode = os.waitstatus_to_exitcode(status)
            os.close(self.sentinel)


def _run_child(target, args: tuple, close_in_child: tuple) -> None:
    code = 1
    try:
        for fd in close_in_child:  # the parent's ends of this child's pipes
            os.close(fd)
        _no_input()
        target(*args)
        code = 0
    except SystemExit as stop:  # as multiprocessing's: sys.exit() is 0, sys.exit("why") says why, then 1
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            sys.stderr.write(f"{stop.code}\n")
    except BaseException:  # as multiprocessing's worker: said on stderr, status 1
        try:
            import traceback

            traceback.print_exc()
        except BaseException:
            pass
    finally:
        try:
            _flush()
            os._exit(code)
        finally:  # never back into the parent's code (an exit status os._exit refuses, a Ctrl-C)
            os._exit(1)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def _no_input() -> None:
    """Standard input from /dev/null: a file a worker runs never reads the terminal (as
    multiprocessing does for its children)."""
    try:
        if sys.stdin is not None:
            sys.stdin.close()
        sys.stdin = open(os.devnull, encoding="utf-8")
    except (OSError, ValueError):
        pass


def start(target, args: tuple) -> tuple:
    """Fork a child running `target(channel, *args)`; returns (this end's Channel, Process)."""
    to_child_r, to_child_w = os.pipe()
    try:
        to_parent_r, to_parent_w = os.pipe()
    except OSError:
        os.close(to_child_r)
        os.close(to_child_w)
        raise
    child = Channel(to_child_r, to_parent_w)
    try:
        process = Process(target, (child, *args), close_in_child=(to_child_w, to_parent_r))
    except OSError:  # no fork (too many processes): none of the four ends is left open
        child.close()
        Channel(to_parent_r, to_child_w).close()
        raise
    os.close(to_child_r)
    os.close(to_parent_w)
    return Channel(to_parent_r, to_child_w), process

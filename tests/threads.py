"""Threads in the tests: switched as often as CPython allows, and run to their end with the first
failure raised in the test's own thread."""

import contextlib
import sys
import threading


@contextlib.contextmanager
def switching_every_microsecond():
    """While in force, CPython switches threads every microsecond: a switch falls between any two
    bytecodes of what the threads run."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


def run_threads(*targets):
    """Run each target in its own thread; re-raise the first failure."""
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]

"""Exit statuses, in one place, and the one table of which error gives which.

`ExitCode` costs nothing to import (main.py needs it before anything else loads); the table of
errors imports their classes on first use."""

from __future__ import annotations

import functools
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    CHECK_FAILED = 1  # a check or regression test ran and failed
    USAGE = 2  # bad option, bad --at value, missing input value, unreadable file
    INVALID_PROGRAM = 3  # syntax error, unknown name or function, wrong arguments
    EVALUATION = 4  # shape mismatch, non-scalar backward without a gradient, a size limit
    NO_TESTS = 5  # autodiff test: no files collected (as pytest)
    OUTPUT_FAILED = 74  # standard output closed or full (EX_IOERR of sysexits.h); see main.py
    INTERRUPTED = 130  # Ctrl-C
    BROKEN_PIPE = 141  # the reader of our output went away (as SIGPIPE would end a C tool)


@functools.lru_cache(maxsize=None)
def statuses() -> dict:
    """A language error by its category; any other error by its type (the first of its classes listed)."""
    from ..backend import DeviceUnavailable
    from ..language import ErrorKind
    from ..program.errors import GradientProblem, UsageProblem
    from ..testing.config import ConfigProblem
    from ..testing.discover import SuiteProblem
    from ..testing.files import WriteProblem

    return {
        ErrorKind.INVALID_INPUT: ExitCode.USAGE,
        ErrorKind.INVALID_PROGRAM: ExitCode.INVALID_PROGRAM,
        ErrorKind.EVALUATION: ExitCode.EVALUATION,
        ErrorKind.LIMIT: ExitCode.EVALUATION,
        ErrorKind.WARNING: ExitCode.OK,
        UsageProblem: ExitCode.USAGE,
        SuiteProblem: ExitCode.USAGE,
        ConfigProblem: ExitCode.USAGE,
        WriteProblem: ExitCode.USAGE,
        DeviceUnavailable: ExitCode.USAGE,
        GradientProblem: ExitCode.EVALUATION,
        MemoryError: ExitCode.EVALUATION,
        KeyboardInterrupt: ExitCode.INTERRUPTED,
        BrokenPipeError: ExitCode.BROKEN_PIPE,
    }


def status_for(error: BaseException) -> ExitCode:
    """The exit status of an error; one the table does not know (a bug) is an evaluation error."""
    from ..language import ProgramError

    if isinstance(error, ProgramError):
        return statuses()[error.category]
    status = _listed(error)
    return ExitCode.EVALUATION if status is None else status


def is_expected(error: BaseException) -> bool:
    """Whether the table knows the error: one of ours or the host's, not a bug."""
    from ..language import ProgramError

    return isinstance(error, ProgramError) or _listed(error) is not None


def _listed(error: BaseException):
    table = statuses()
    return next((table[cls] for cls in type(error).__mro__ if cls in table), None)

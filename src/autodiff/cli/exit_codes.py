"""Exit statuses, in one place, and the one table of which error gives which."""

from __future__ import annotations

from enum import IntEnum

from ..backend import DeviceUnavailable
from ..language import ErrorKind, ProgramError
from ..program.errors import GradientProblem, UsageProblem
from ..testing.config import ConfigProblem
from ..testing.discover import SuiteProblem
from ..testing.files import WriteProblem


class ExitCode(IntEnum):
    OK = 0
    CHECK_FAILED = 1  # a check or regression test ran and failed
    USAGE = 2  # bad option, bad --at value, missing input value, unreadable file
    INVALID_PROGRAM = 3  # syntax error, unknown name or function, wrong arguments
    EVALUATION = 4  # shape mismatch, non-scalar backward without a gradient, a size limit
    NO_TESTS = 5  # autodiff test: no files collected (as pytest)
    OUTPUT_FAILED = 74  # standard output closed or full (EX_IOERR); see main.py
    INTERRUPTED = 130  # Ctrl-C
    BROKEN_PIPE = 141  # the reader of our output went away (as SIGPIPE would end a C tool)


# A language error by its category; any other error by its type (the first of its classes listed).
STATUSES = {
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
    if isinstance(error, ProgramError):
        return STATUSES[error.category]
    status = _listed(error)
    return ExitCode.EVALUATION if status is None else status


def is_expected(error: BaseException) -> bool:
    """Whether the table knows the error: one of ours or the host's, not a bug."""
    return isinstance(error, ProgramError) or _listed(error) is not None


def _listed(error: BaseException):
    return next((STATUSES[cls] for cls in type(error).__mro__ if cls in STATUSES), None)

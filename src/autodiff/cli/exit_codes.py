"""Exit statuses, in one place, and which error gives which."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    CHECK_FAILED = 1  # a check or regression test ran and failed
    USAGE = 2  # bad option, bad --at value, missing input value, unreadable file
    INVALID_PROGRAM = 3  # syntax error, unknown name or function, wrong arguments
    EVALUATION = 4  # shape mismatch, non-scalar backward without a gradient, a size limit
    INTERRUPTED = 130  # Ctrl-C
    BROKEN_PIPE = 141  # the reader of our output went away (as SIGPIPE would end a C tool)


class UsageProblem(Exception):
    """A command line that cannot be carried out as given."""

    exit_code = ExitCode.USAGE


class GradientProblem(Exception):
    """Backward could not run (a non-scalar output without a gradient...), with a hint."""

    exit_code = ExitCode.EVALUATION

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


def status_for(error: BaseException) -> ExitCode:
    """The exit status of an error: its own when it carries one, else by type."""
    from ..backend import DeviceUnavailable

    if isinstance(error, DeviceUnavailable):
        return ExitCode.USAGE
    code = getattr(error, "exit_code", None)
    if isinstance(code, int):
        return ExitCode(code) if code in ExitCode._value2member_map_ else ExitCode.USAGE
    if isinstance(error, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    return ExitCode.EVALUATION

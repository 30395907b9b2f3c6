"""The `autodiff` console script: runs the app and turns every failure into one clear line.

Errors become one message on standard error (with the source line and a caret where there
is one) and the exit status of the spec; standard output stays empty. `--debug` shows
Python's traceback instead. A closed pipe and Ctrl-C end quietly.
"""

from __future__ import annotations

import os
import sys


def main(argv: list | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or bool(os.environ.get("AUTODIFF_DEBUG"))
    try:
        return _run(argv)
    except KeyboardInterrupt:
        print("autodiff: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _closed_pipe()
    except Exception as error:  # one place turns every error into its message and status
        return _report(error, debug, argv)


def _run(argv: list) -> int:
    # The command is driven here rather than through Typer's own main(), which would turn
    # Ctrl-C into a silent 130 and a closed pipe into exit 1; those are ours to report.
    from typer import Abort, Exit, TyperException
    from typer.main import get_command

    from .app import app

    command = get_command(app)
    try:
        with command.make_context("autodiff", argv) as context:
            status = command.invoke(context)
    except Exit as done:  # --help, --version, and exit statuses the commands choose
        status = done.exit_code
    except Abort:
        raise KeyboardInterrupt from None
    except TyperException as error:  # the command line does not parse
        return _usage(error, argv)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return _closed_pipe()
    return status if isinstance(status, int) else 0


def _usage(error, argv: list) -> int:
    """A command line that does not parse: one line naming the help to read (exit 2)."""
    message = _first_line(error.format_message()).rstrip(".")
    if not message:  # `autodiff` alone shows the help, as asked for: not an error (as docker, cargo)
        return 0
    command = next((a for a in argv if not a.startswith("-")), None)
    where = f"autodiff {command} --help" if command in ("grad", "eval", "graph", "test") else "autodiff --help"
    print(f"autodiff: error: {message} (see {where})", file=sys.stderr)
    return 2


def _first_line(message: str) -> str:
    return " ".join(message.strip().split())


def _report(error: Exception, debug: bool, argv: list) -> int:
    from ..language import ProgramError
    from .exit_codes import is_expected, status_for
    from .messages import line_for

    if debug:
        import traceback

        traceback.print_exception(error)
    if isinstance(error, ProgramError):
        print(line_for(error), file=sys.stderr)
    elif isinstance(error, MemoryError):
        print("autodiff: error: out of memory (lower --max-elements to stop such programs earlier)", file=sys.stderr)
    elif is_expected(error):  # usage, device, suite and gradient problems
        print(f"autodiff: error: {error}", file=sys.stderr)
        if getattr(error, "hint", ""):
            print(f"hint: {error.hint}", file=sys.stderr)
    else:  # not ours: a bug, said in one line (with --debug, the traceback above)
        print(f"autodiff: internal error: {type(error).__name__}: {error} (run with --debug for details)",
              file=sys.stderr)
    return int(status_for(error))


def _closed_pipe() -> int:
    """The reader went away (`| head -c1`): stop quietly, and let nothing write to the pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass
    return 141


if __name__ == "__main__":
    sys.exit(main())

"""The `autodiff` console script: runs the app and turns every failure into one clear line.

Errors become one message on standard error (with the source line and a caret where there
is one) and the exit status of the spec; standard output stays empty. `--debug` shows
Python's traceback instead. A closed pipe and Ctrl-C end quietly.

Broken standard streams: standard output closed or full (ENOSPC, EIO) is one line on standard
error and exit 74 (EX_IOERR of sysexits.h); standard error closed or full loses the messages,
never the exit status, and nothing meant for it ever goes to standard output; a closed
standard input read with `-` is a usage error (exit 2).
"""

from __future__ import annotations

import os
import sys

from .console import OutputFailed, Tolerant, colour_on, is_output_error, say, silence_output
from ..language.option_names import flags
from .exit_codes import ExitCode


def console() -> None:
    """The `autodiff` console script and `python -m autodiff`: main(), then the process exits.

    After a command of quick.QUICK (whichever path parsed its command line: test's sub-commands
    and `--help` too), it exits at once (os._exit), both streams flushed, without the
    interpreter's teardown: freeing every loaded module's objects one by one costs more than a
    tenth of such a run (bench/cli.py), and they leave nothing that needs it: no thread,
    temporary file or exit handler of their own, and no child process (`autodiff test` has
    joined its workers before it returns, on every path: testing/pool.py). `autodiff` alone,
    `--help`, `--version`, and a run under a tracer (coverage), exit as Python does."""
    argv = sys.argv[1:]
    status = main(argv)
    if _quick_command(argv) and sys.gettrace() is None and "coverage" not in sys.modules:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(status)
    sys.exit(status)


def _quick_command(argv: list) -> bool:
    from .quick import QUICK

    return bool(argv) and argv[0] in QUICK


def main(argv: list | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or bool(os.environ.get("AUTODIFF_DEBUG"))
    _choose_colour(argv)
    if not isinstance(sys.stderr, Tolerant):
        sys.stderr = Tolerant(sys.stderr)
    if sys.stdout is None:  # started with standard output closed (`>&-`)
        say("autodiff: error: standard output is closed")
        return ExitCode.OUTPUT_FAILED
    try:
        with flags():  # messages from below name the command line's flags (--at, not at=)
            return _run(argv)
    except KeyboardInterrupt:
        print("autodiff: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return _closed_pipe()
    except OutputFailed as failed:
        return _output_failed(failed.reason)
    except OSError as error:
        if is_output_error(error):
            return _output_failed(error.strerror or str(error))
        return _report(error, debug, argv)
    except Exception as error:  # one place turns every error into its message and status
        return _report(error, debug, argv)


def _choose_colour(argv: list) -> None:
    """`--color always|never` as the environment says it to Rich (FORCE_COLOR, NO_COLOR)."""
    choice = None
    for i, word in enumerate(argv):
        if word == "--":
            break
        if word == "--color" and i + 1 < len(argv):
            choice = argv[i + 1]
        elif word.startswith("--color="):
            choice = word.split("=", 1)[1]
    if choice == "always":
        os.environ.pop("NO_COLOR", None)
        os.environ["FORCE_COLOR"] = "1"
    elif choice == "never":
        os.environ.pop("FORCE_COLOR", None)
        os.environ["NO_COLOR"] = "1"


def _output_failed(reason: str) -> int:
    say(f"autodiff: error: cannot write to standard output ({reason})")
    silence_output()  # nothing more is written there, not even at exit
    return ExitCode.OUTPUT_FAILED


def _run(argv: list) -> int:
    completing = os.environ.get("_AUTODIFF_COMPLETE")
    if not completing and any(word == "--at" or word.startswith("--at=") for word in argv):
        from .program_input import check_at_words

        check_at_words(argv)  # `--at x=[1, 2]` cut by the shell: said alike on both paths below
    status = None
    if not completing:  # the usual command lines of quick.QUICK run without Typer (cli/quick.py)
        from . import quick

        try:
            status = quick.run(argv)
        except Exception as error:
            if _typer_usage_error(error):  # a command's own check said in Typer's words (options.bad_number)
                return _usage(error, argv)
            raise
    if status is None:
        # The command is driven here rather than through Typer's own main(), which would turn
        # Ctrl-C into a silent 130 and a closed pipe into exit 1; those are ours to report.
        from typer import Abort, Exit, TyperException
        from typer.main import get_command

        from .app import app

        command = get_command(app)
        _help_colours(sys.stdout if argv else sys.stderr)
        if os.environ.get("_AUTODIFF_COMPLETE"):  # a shell asks for completions (--install-completion's script)
            command.main(args=argv, prog_name="autodiff")
            return ExitCode.OK
        try:
            with _help_to_stderr(not argv), command.make_context("autodiff", argv) as context:
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
    except OSError as error:
        return _output_failed(error.strerror or str(error))
    return int(status) if isinstance(status, int) else ExitCode.OK


def _typer_usage_error(error: Exception) -> bool:
    """An error of Typer's, raised by a command that loaded Typer to say it."""
    typer = sys.modules.get("typer")
    return typer is not None and isinstance(error, typer.TyperException)


def _help_colours(stream) -> None:
    """Typer's help, drawn by Rich, without colour has no style at all (bold is an escape too)."""
    if not colour_on(stream):
        from typer import rich_utils

        rich_utils.COLOR_SYSTEM = None


def _help_to_stderr(no_command: bool):
    """`autodiff` alone shows the help, but names no command: a usage error (exit 2), so the help goes
    to standard error and a script that lost its command word fails with nothing on standard output."""
    import contextlib

    return contextlib.redirect_stdout(sys.stderr) if no_command else contextlib.nullcontext()


def _usage(error, argv: list) -> int:
    """A command line that does not parse: one line naming the help to read (exit 2)."""
    message = _first_line(error.format_message()).rstrip(".")
    if not message:  # `autodiff` alone: the help went to standard error (_help_to_stderr); no command is a usage error
        return ExitCode.USAGE
    from .program_input import looks_like_an_at_value, split_at_message

    stray = next((i for i, a in enumerate(argv) if i and argv[i - 1].endswith(",") and looks_like_an_at_value(a)), None)
    if stray is not None and "unexpected extra argument" in message:
        before = argv[stray - 1].removeprefix("--at=")
        message = split_at_message(argv[stray], before)
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in ("grad", "eval"):
        message += _records_hint(message)
    where = f"autodiff {command} --help" if command in ("grad", "eval", "graph", "test") else "autodiff --help"
    from .._text import escape

    say(f"autodiff: error: {escape(message)} (see {where})")
    return ExitCode.USAGE


def _records_hint(message: str) -> str:
    """`--format csv` names the option that writes CSV: --out, with --points."""
    import re

    wanted = re.search(r"'--format'.*'(csv|tsv|jsonl)' is not one of", message)
    if wanted is None:
        return ""
    return f"; {wanted.group(1)} (one record per point) is written by --points FILE --out {wanted.group(1)}"


def _first_line(message: str) -> str:
    return " ".join(message.strip().split())


def _report(error: Exception, debug: bool, argv: list) -> int:
    from .._text import escape, escape_lines
    from ..language import ProgramError
    from .exit_codes import is_expected, status_for
    from .messages import line_for

    if debug:
        import traceback

        traceback.print_exception(error)
    if isinstance(error, ProgramError):
        say(line_for(error))
    elif isinstance(error, MemoryError):
        say("autodiff: error: out of memory (lower --max-elements to stop such programs earlier)")
    elif is_expected(error):  # usage, device, suite and gradient problems
        say(f"autodiff: error: {escape_lines(str(error))}")
        if getattr(error, "hint", ""):
            say(f"hint: {escape_lines(error.hint)}")
    else:  # not ours: a bug, said in one line (with --debug, the traceback above)
        say(f"autodiff: internal error: {type(error).__name__}: {escape(str(error))} (run with --debug for details)")
    return int(status_for(error))


def _closed_pipe() -> int:
    """The reader went away (`| head -c1`): stop quietly, and let nothing write to the pipe again."""
    silence_output()
    return ExitCode.BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())

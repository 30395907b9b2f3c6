"""`autodiff grad FILE --at NAME=VALUE,... --format plain`, the command scripts run most, without
loading Typer, Click and Rich (about a third of its start-up).

When the command line is exactly that form (a FILE, any number of --at, plain output asked for
or chosen because standard output is not a terminal), it is run by the same steps as
commands/grad.py's grad with the defaults of every other option. Anything else (another command or option,
--help, a value that looks like an option, a repeated --format) returns None, and Typer
parses the command line as always; tests/cli/test_quick.py holds the two paths to the same
output, errors and statuses.
"""

from __future__ import annotations

import sys


def quick_grad(argv: list):
    """Run `grad` if the command line is its plain form and return its exit status; else None."""
    parsed = _plain_grad(argv)
    if parsed is None:
        return None
    file, at = parsed
    from ..language import Options
    from .exit_codes import ExitCode
    from .commands.gradients import show_gradients
    from .program_input import read_inputs

    source, values = read_inputs(file, None, at)
    show_gradients(source, values, wrt=None, retain=None, output=None, grad_output=None, tree=False, check=False,
                   order=1, atol=None, rtol=None, chosen="plain", options=Options())
    return ExitCode.OK


def _plain_grad(argv: list):
    """(FILE, [--at values]) for `grad FILE [--at V]... [--format plain]` in any order; else None."""
    if not argv or argv[0] != "grad":
        return None
    file, at, plain = None, [], None
    words = iter(argv[1:])
    for word in words:
        if word in ("--at", "--format", "-f"):
            name, value = word, next(words, None)
            if value is None:
                return None
        elif word.startswith(("--at=", "--format=")):
            name, value = word.split("=", 1)
        elif word.startswith("-") or file is not None:
            return None
        else:
            file = word
            continue
        if value.startswith("-"):
            return None
        if name == "--at":
            at.append(value)
        elif plain is not None or value != "plain":
            return None
        else:
            plain = True
    if file is None:
        return None
    if plain is None:  # auto: plain unless standard output is a terminal
        try:
            if sys.stdout.isatty():
                return None
        except (OSError, ValueError, AttributeError):
            return None
    return file, at

"""What the commands share that needs no Typer: reading a program and its --at values, and
choosing a format and writing a result, so that cli/quick.py can run a command without it."""

from __future__ import annotations

import sys
from enum import Enum


class Format(str, Enum):
    auto = "auto"
    rich = "rich"
    plain = "plain"
    json = "json"


def read_inputs(file, expr, at):
    from .program_input import parse_at, read_program

    source = read_program(file, expr)
    return source, parse_at(at)


def show_gradients(source, values, *, wrt, retain, output, grad_output, tree, check, order, atol, rtol, chosen,
                   options):
    """`autodiff grad` at one point: run forward and backward, check if asked, show the result."""
    from ..program import check as check_gradients
    from ..program import differentiate
    from .program_input import parse_names

    result = differentiate(source, values, wrt=parse_names(wrt, "--wrt"), retain=parse_names(retain, "--retain"),
                           output=output, grad_output=grad_output, order=order, graph=tree, options=options)
    if check and result.differentiable:
        check_gradients(result, atol=atol, rtol=rtol)
    emit("grad", result, chosen)
    return result


def emit(kind: str, report, chosen) -> None:
    """Render once, to standard output; warnings go to standard error."""
    from .messages import line_for

    from .main import say

    for warning in report.warnings:
        say(line_for(warning))

    def draw(console):
        from .render import rich_

        getattr(rich_, kind)(report, console)

    def text(fmt: str) -> str:
        if fmt == "plain":
            from .render import plain as module
        elif fmt == "json":
            from .render import json_ as module
        else:
            from .render import diagrams as module

            return getattr(module, fmt)(report)
        return getattr(module, kind)(report)

    output(chosen, draw, text)


def emit_with(module, report, chosen) -> None:
    """Render with a module that has a function per format (rich draws on a console); text
    formats other than plain and rich keep standard output for the result itself, so a check's
    verdict goes to standard error there."""
    from .main import say
    from .messages import line_for

    for warning in report.warnings:
        say(line_for(warning))
    fmt = chosen.value
    if fmt not in ("auto", "rich", "plain", "json"):
        for line in module.check_lines(report):
            say(line)
    output(chosen, lambda console: module.rich(report, console), lambda f: getattr(module, f)(report))


def output(chosen, draw, text) -> None:
    """The one place a format is chosen: auto is rich on a terminal, plain otherwise. Rich
    output is drawn for this terminal, then written like any other text."""
    fmt = chosen.value
    if fmt == "auto":
        fmt = "rich" if sys.stdout.isatty() else "plain"
    if fmt != "rich":
        write(text(fmt))
        return
    from rich.console import Console

    from .main import colour_on

    # Without colour (NO_COLOR, --color never), no style at all: bold and dim are escapes too.
    console = Console(file=sys.stdout, color_system="auto" if colour_on(sys.stdout) else None)
    with console.capture() as captured:
        draw(console)
    write(captured.get())


def write(text: str, piece: int = 1 << 16) -> None:
    """Write in pieces the size of a pipe's buffer. One large write() to a pipe whose reader has
    gone (`| head -c1`) can come back as a short write with no error; a later piece reports it."""
    from .main import OutputFailed

    try:
        for start in range(0, len(text), piece):
            sys.stdout.write(text[start : start + piece])
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:  # a full disk or device (/dev/full), an I/O error
        raise OutputFailed(error.strerror or str(error)) from None

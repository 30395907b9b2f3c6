"""Errors are values with a location: one family, rendered once by whoever reports them.

Each class carries its category (an ErrorKind): a problem with the input to a program
(unreadable files, values), a program that is not valid, one that fails while running or
exceeds a limit. The command line maps categories to exit statuses (cli/exit_codes.py).
"""

from __future__ import annotations

from enum import Enum

from .._text import escape, escape_lines, short_words
from .._text import shown as shown_name
from .source import Source


class ErrorKind(Enum):
    """What sort of problem an error is; its users decide what each means (an exit status...)."""

    INVALID_INPUT = "invalid input"  # a missing or unusable input value, an unreadable file
    INVALID_PROGRAM = "invalid program"  # syntax, unknown names, wrong arguments
    EVALUATION = "evaluation"  # the program failed while running
    LIMIT = "limit"  # the program asked for more than a limit allows
    WARNING = "warning"  # not an error


class ProgramError(Exception):
    """A problem with a program, at a place in its source (when there is one)."""

    category = ErrorKind.INVALID_PROGRAM
    kind = "error"  # the word render() shows: "error" or "warning"

    def __init__(self, message: str, source: Source | None = None, start: int | None = None, end: int | None = None):
        super().__init__(message)
        self.message = message
        self.source = source
        self.start = start
        self.end = end

    @property
    def location(self) -> tuple[int, int] | None:
        if self.source is None or self.start is None:
            return None
        return self.source.line_column(self.start)

    def render(self) -> str:
        """`file:line:col: error: message`, then the line and a caret under the place."""
        return render(self.kind, self.message, self.source, self.start, self.end)

    def __str__(self) -> str:
        return self.render()


def render(kind: str, message: str, source: Source | None, start: int | None, end: int | None = None) -> str:
    # Names, messages and quoted lines come from outside: control characters are shown escaped.
    message = escape_lines(short_words(message))
    if source is None:
        return f"{kind}: {message}"
    name = shown_name(source.name)
    if start is None:
        return f"{name}: {kind}: {message}"
    line, column = source.line_column(start)
    raw = source.line_text(line)
    text = escape(raw, keep_tabs=True)
    # An option's value (`--at x`) is one short line: its name says where, without line:col.
    head = f"{kind}: {name}: {message}" if source.name.startswith("--") else \
        f"{name}:{line}:{column}: {kind}: {message}"
    prefix = escape(raw[: column - 1], keep_tabs=True)
    width = 1
    if end is not None and end > start:
        end_line, end_column = source.line_column(end)
        if end_line == line:
            width = max(1, len(escape(raw[column - 1 : end_column - 1], keep_tabs=True)))
        else:
            width = max(1, len(text) - len(prefix))
    column = len(prefix) + 1  # where the place is in the line as shown
    if len(text) > WIDTH:  # a very long line: show a window around the place
        left = max(0, column - 1 - WIDTH // 3)
        shown = ("..." if left else "") + text[left : left + WIDTH] + ("..." if left + WIDTH < len(text) else "")
        indent = column - 1 - left + (3 if left else 0)
        width = min(width, WIDTH - (column - 1 - left))
        return f"{head}\n    {shown}\n    {' ' * indent}^{'~' * (width - 1)}"
    # Tabs keep their width so the caret lines up; everything else is one column per character.
    pad = "".join("\t" if ch == "\t" else " " for ch in prefix)
    caret = (pad + "^" + "~" * (width - 1)).expandtabs(8)
    return f"{head}\n    {text.expandtabs(8)}\n    {caret}"


WIDTH = 100  # characters of a long source line shown around an error


class SyntaxProblem(ProgramError):
    """The text is not a program: a syntax error (exit 3)."""


class NameProblem(ProgramError):
    """An unknown name or function, or a call that does not fit its signature (exit 3)."""


class InputProblem(ProgramError):
    """A missing or unusable value for an input, or an unreadable file (exit 2)."""

    category = ErrorKind.INVALID_INPUT


class EvaluationProblem(ProgramError):
    """The program failed while running: shapes, values, limits (exit 4).

    `python_class` names the built-in exception PyTorch raises for the same failure (Python,
    for the language's own statements): RuntimeError for shapes, IndexError for an index or a
    dimension out of range, TypeError for a value of the wrong kind. `# expect-error:` comments
    and records name it; this class's own name is autodiff's business."""

    category = ErrorKind.EVALUATION
    python_class = "RuntimeError"

    def __init__(self, message: str, source: Source | None = None, start: int | None = None, end: int | None = None,
                 python_class: str | None = None):
        super().__init__(message, source, start, end)
        if python_class is not None:
            self.python_class = python_class


class LimitProblem(EvaluationProblem):
    """The program asked for more than a limit allows (exit 4)."""

    category = ErrorKind.LIMIT


class Warning_(ProgramError):
    """Not an error: something worth knowing (NaN produced...). Rendered as `warning:`."""

    kind = "warning"
    category = ErrorKind.WARNING


class Note(Warning_):
    """Not a problem: how a result was reached, where that matters to reading it (a step of
    --check near its value's scale). Rendered as `note:`, and listed with the warnings."""

    kind = "note"

"""The console: what every command writes, and how a broken stream is survived.

- `say` puts one message on standard error, its `error:`/`warning:`/`hint:` word coloured on a terminal;
- `write` puts a result on standard output, in pieces, and turns a full or closed one into
  `OutputFailed` (main.py makes that one line and exit 74);
- `show` chooses the form of a result (auto is rich on a terminal, plain otherwise) and writes it;
- `Tolerant` wraps standard error so that a closed or full one loses the messages, never the run.

Nothing here imports the commands: they import it (as main.py does).
"""

from __future__ import annotations

import os
import sys


class OutputFailed(Exception):
    """Standard output cannot be written: closed, or its device full."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Tolerant:
    """Standard error that cannot fail: a closed or full one loses the messages, not the run."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is not None:
            try:
                self._stream.write(text)
                if "\n" in text:
                    self._stream.flush()
            except (OSError, ValueError):
                self._stream = None
        return len(text)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._stream = None

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self._stream is None:
            raise OSError("standard error is closed")
        return self._stream.fileno()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def colour_on(stream) -> bool:
    """Colours on this stream: FORCE_COLOR, else a terminal without NO_COLOR and not TERM=dumb."""
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


_PAINT = {"error": "\x1b[1;31m", "internal error": "\x1b[1;31m", "warning": "\x1b[1;33m", "hint": "\x1b[1;36m",
          "note": "\x1b[1;36m"}


def say(text: str) -> None:
    """One message on standard error, its `error:`/`warning:`/`hint:`/`note:` word coloured on a terminal."""
    if colour_on(sys.stderr):
        import re

        text = re.sub(r"(?m)(^|: )(error|internal error|warning|hint|note):",
                      lambda m: f"{m.group(1)}{_PAINT[m.group(2)]}{m.group(2)}:\x1b[0m", text, count=0)
    print(text, file=sys.stderr)


def say_warnings(warnings) -> None:
    """The language's warnings of a result (nan produced, an unused --at value), one line each."""
    if warnings:
        from .messages import line_for

        for warning in warnings:
            say(line_for(warning))


def write(text: str, piece: int = 1 << 16) -> None:
    """Write in pieces the size of a pipe's buffer. One large write() to a pipe whose reader has
    gone (`| head -c1`) can come back as a short write with no error; a later piece reports it."""
    try:
        for start in range(0, len(text), piece):
            sys.stdout.write(text[start : start + piece])
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:  # a full disk or device (/dev/full), an I/O error
        raise OutputFailed(error.strerror or str(error)) from None


def write_bytes(data: bytes) -> None:
    """A picture (PNG, PDF) on standard output, after any text already written."""
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputFailed(error.strerror or str(error)) from None


def chosen_format(chosen: str) -> str:
    """auto is rich on a terminal, plain otherwise."""
    if chosen == "auto":
        return "rich" if sys.stdout.isatty() else "plain"
    return chosen


def show(fmt: str, draw, text) -> None:
    """Write a result in format `fmt` (after `chosen_format`): `draw(console)` draws it with Rich
    for this terminal, `text(fmt)` gives any other format as text (or bytes, for a picture)."""
    if fmt != "rich":
        out = text(fmt)
        write_bytes(out) if isinstance(out, bytes) else write(out)
        return
    from rich.console import Console

    # Without colour (NO_COLOR, --color never), no style at all: bold and dim are escapes too.
    # No :emoji: codes: nothing drawn here has one, and reading Rich's table of them on the first
    # plain string (a table's heading) costs more than drawing the table.
    console = Console(file=sys.stdout, color_system="auto" if colour_on(sys.stdout) else None, emoji=False)
    with console.capture() as captured:
        draw(console)
    write(captured.get())


def is_output_error(error: OSError) -> bool:
    """An error of standard output itself (a full disk, an I/O error), not of a file named."""
    import errno

    return error.errno in (errno.ENOSPC, errno.EIO, errno.EBADF, errno.EDQUOT, errno.EFBIG) and \
        not getattr(error, "filename", None)


def silence_output() -> None:
    """The reader went away (`| head -c1`): let nothing write to standard output again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass

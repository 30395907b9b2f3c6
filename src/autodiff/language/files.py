"""Program files as Sources: at most MAX_FILE_BYTES read (so /dev/zero ends too), decoded as
UTF-8 (a byte-order mark dropped); anything else is an InputProblem saying what is wrong."""

from __future__ import annotations

from .._text import escape, shown
from .errors import InputProblem
from .parser import MAX_SOURCE_CHARACTERS
from .source import Source

MAX_FILE_BYTES = MAX_SOURCE_CHARACTERS  # a program file larger than this is refused unread


def read_file(path) -> Source:
    name = str(path)
    quoted = shown(name)  # as messages show it: escaped, a long name cut
    try:
        with open(path, "rb") as stream:
            data = _read_limited(stream, quoted)
    except FileNotFoundError:
        raise InputProblem(f"{quoted}: no such file") from None
    except IsADirectoryError:
        raise InputProblem(f"{quoted}: is a directory, not a program file") from None
    except PermissionError:
        raise InputProblem(f"{quoted}: permission denied") from None
    except OSError as exc:
        raise InputProblem(f"{quoted}: cannot be read ({exc.strerror or exc})") from None
    return decode(data, name)


def read_stream(stream, name: str) -> Source:
    """A program from a binary stream (standard input)."""
    return decode(_read_limited(stream, name), name)


def _read_limited(stream, name: str) -> bytes:
    data = stream.read(MAX_FILE_BYTES + 1)  # never more
    if len(data) > MAX_FILE_BYTES:
        raise InputProblem(f"{name}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, the largest program autodiff reads")
    return data


def decode(data: bytes, name: str) -> Source:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputProblem(
            f"{name}:{line}:{column}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the file as UTF-8"
        ) from None
    if text.startswith("\ufeff"):  # a byte-order mark some editors write
        text = text[1:]
    # The name every format writes: control characters and bytes that were not UTF-8 (surrogates
    # here) as visible escapes, so no format carries them (SVG, HTML, LaTeX, a module's docstring).
    return Source(text, escape(name))

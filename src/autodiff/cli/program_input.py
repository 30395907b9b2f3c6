"""What a command reads: the program (a file, standard input or -e), and --at values."""

from __future__ import annotations

import sys

from ..language import InputProblem, Source
from ..language.parser import MAX_SOURCE_CHARACTERS
from .exit_codes import UsageProblem

MAX_FILE_BYTES = MAX_SOURCE_CHARACTERS  # a program file larger than this is refused unread


def read_program(file: str | None, expression: str | None) -> Source:
    """The program to run: from FILE, from standard input (`-`), or from `-e EXPR`."""
    if file is not None and expression is not None:
        raise UsageProblem("give either a FILE or -e EXPR, not both")
    if expression is not None:
        return Source(expression, "<expr>")
    if file is None:
        raise UsageProblem("give a FILE, - to read standard input, or -e EXPR")
    if file == "-":
        return _decode(_read_limited(sys.stdin.buffer, "<stdin>"), "<stdin>")
    try:
        with open(file, "rb") as stream:
            data = _read_limited(stream, file)
    except FileNotFoundError:
        raise InputProblem(f"{file}: no such file") from None
    except IsADirectoryError:
        raise InputProblem(f"{file}: is a directory, not a program file") from None
    except PermissionError:
        raise InputProblem(f"{file}: permission denied") from None
    except OSError as exc:
        raise InputProblem(f"{file}: cannot be read ({exc.strerror or exc})") from None
    return _decode(data, file)


def _read_limited(stream, name: str) -> bytes:
    data = stream.read(MAX_FILE_BYTES + 1)  # never more: /dev/zero ends here too
    if len(data) > MAX_FILE_BYTES:
        raise InputProblem(f"{name}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, the largest program autodiff reads")
    return data


def _decode(data: bytes, name: str) -> Source:
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
    return Source(text, name)


def parse_at(options: list[str]) -> dict:
    """`--at a=2,b=3 --at W=[[1,2],[3,4]]` as {name: tensor}. Commas inside brackets belong to values."""
    from ..language import parse_value

    values: dict = {}
    for option in options:
        for pair in _split_top_level(option):
            name, equals, text = pair.partition("=")
            name = name.strip()
            if not equals:
                raise InputProblem(f"--at {pair}: expected NAME=VALUE")
            if not name:
                raise InputProblem(f"--at {pair}: a name is missing before '='")
            if not name.isidentifier():
                raise InputProblem(f"--at {pair}: {name!r} is not a name")
            if name in values:
                raise InputProblem(f"--at gives {name!r} twice")
            if not text.strip():
                raise InputProblem(f"--at {pair}: the value after '=' is missing")
            values[name] = parse_value(text.strip(), f"--at {name}")
    return values


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth <= 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    if len(parts) > 1 and not parts[-1].strip():
        parts.pop()  # a trailing comma
    return [p for p in parts if p.strip() or len(parts) == 1]


def parse_names(option: str | None, what: str) -> list[str] | None:
    """`--wrt a,b` as ['a', 'b']."""
    if option is None:
        return None
    names = [n.strip() for n in option.split(",") if n.strip()]
    if not names:
        raise UsageProblem(f"{what} needs at least one name")
    for name in names:
        if not name.isidentifier():
            raise UsageProblem(f"{what}: {name!r} is not a name")
    return names

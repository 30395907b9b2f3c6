"""What a command reads: the program (a file, standard input or -e), and --at values."""

from __future__ import annotations

import sys

from ..language import InputProblem, Source
from ..language.files import read_file, read_stream
from ..program.errors import UsageProblem


def read_program(file: str | None, expression: str | None) -> Source:
    """The program to run: from FILE, from standard input (`-`), or from `-e EXPR`."""
    if file is not None and expression is not None:
        raise UsageProblem("give either a FILE or -e EXPR, not both")
    if expression is not None:
        return Source(expression, "<expr>")
    if file is None:
        raise UsageProblem("give a FILE, - to read standard input, or -e EXPR")
    if file == "-":
        if sys.stdin is None:
            raise UsageProblem("standard input is closed: give a FILE or -e EXPR")
        try:
            return read_stream(sys.stdin.buffer, "<stdin>")
        except OSError as error:
            raise UsageProblem(f"standard input cannot be read ({error.strerror or error})") from None
    return read_file(file)


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

"""What a command reads: the program (a file, standard input or -e), and --at values."""

from __future__ import annotations

import sys

from ..language import InputProblem, Source
from ..language.files import read_file, read_stream
from ..program.errors import UsageProblem


def looks_like_an_at_value(word: str) -> bool:
    """`y=3`: what the shell leaves as an argument of its own from `--at x=2, y=3`."""
    import os
    import re

    return re.match(r"^[^\W\d]\w*=", word) is not None and not os.path.exists(word)


def split_at_message(word: str, before: str = "x=2,") -> str:
    return (f"{word!r} looks like an --at value cut off by the shell: remove the space after the comma "
            f"(--at {before}{word}) or quote the list (--at '{before} {word}')")


def check_at_words(argv: list) -> None:
    """An --at value the shell cut at its spaces, said before anything else reads the command line:
    `--at x=[1, 2]` arrives as `x=[1,` and a stray `2]`, `--at a=2 b=3` as `a=2` and a stray `b=3`."""
    for index, word in enumerate(argv):
        if word == "--":
            return
        if word == "--at" and index + 1 < len(argv):
            _check_at_value(argv[index + 1], argv[index + 2:])
        elif word.startswith("--at="):
            _check_at_value(word[len("--at="):], argv[index + 1:])


def _check_at_value(value: str, rest: list) -> None:
    depth, joined = _depth(value), value
    for word in rest if depth > 0 else ():
        joined += word
        depth += _depth(word)
        if depth <= 0:  # the words after it close its brackets: one value, cut at its spaces
            import shlex

            raise UsageProblem(f"--at {value}: the shell cut this value at its spaces (its bracket is not closed); "
                               f"quote it and drop the spaces: --at {shlex.quote(joined)}")
    if value.endswith(",") or depth > 0:
        return  # a list cut after a comma is said where the stray word is met (split_at_message)
    strays = []
    for word in rest:
        if not looks_like_an_at_value(word):
            break
        strays.append(word)
    if strays:
        raise UsageProblem(f"{strays[0]!r} looks like another --at value: join them with commas: "
                           f"--at {','.join([value] + strays)}")


def _depth(text: str) -> int:
    return text.count("[") + text.count("(") - text.count("]") - text.count(")")


def read_program(file: str | None, expression: str | None) -> Source:
    """The program to run: from FILE, from standard input (`-`, or when none is named and standard
    input is not a terminal, as jq reads it), or from `-e EXPR`."""
    if file is not None and looks_like_an_at_value(file):
        raise UsageProblem(split_at_message(file))
    if file is not None and expression is not None:
        raise UsageProblem("give either a FILE or -e EXPR, not both")
    if expression is not None:
        return Source(expression, "<expr>")
    if file is None and not _piped():
        raise UsageProblem("give a FILE, - to read standard input, or -e EXPR")
    if file is None or file == "-":
        if sys.stdin is None:
            raise UsageProblem("standard input is closed: give a FILE or -e EXPR")
        try:
            source = read_stream(sys.stdin.buffer, "<stdin>")
        except OSError as error:
            raise UsageProblem(f"standard input cannot be read ({error.strerror or error})") from None
        if file is None and not source.text.strip():  # nothing piped in (</dev/null): the usual advice
            raise UsageProblem("give a FILE, - to read standard input, or -e EXPR")
        return source
    try:
        return read_file(file)
    except InputProblem as problem:
        if _looks_like_a_program(file):
            import shlex

            raise InputProblem(f"{problem.message}; to give the program itself, use -e: -e {shlex.quote(file)}") \
                from None
        raise


def _looks_like_a_program(text: str) -> bool:
    """`x**2 + 1` where a FILE was expected: no such file, more than a file's name would hold (an
    operator other than / and -, a bracket, a space), and a program."""
    import os
    import re

    if os.path.lexists(text) or re.fullmatch(r"[\w./\\-]+", text):  # a file's name, as `examples/x.expr`
        return False
    from ..language import ProgramError, parse

    try:
        parse(Source(text, "<expr>"))
    except ProgramError:
        return False
    return True


def read_inputs(file, expr, at) -> tuple:
    """(the program's Source, its --at values) from a command's FILE, -e and --at options."""
    return read_program(file, expr), parse_at(at)


def _piped() -> bool:
    """Standard input is a pipe or a file, not a terminal (nor closed)."""
    try:
        return sys.stdin is not None and not sys.stdin.isatty()
    except (OSError, ValueError):
        return False


def parse_at(options: list[str]) -> dict:
    """`--at a=2,b=3 --at W=[[1,2],[3,4]]` as {name: value}, each a NumPy array: the run makes
    the tensors, in its dtype and on its device. Commas inside brackets belong to values."""
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
            values[name] = _at_value(text.strip(), name)
    return values


def _at_value(text: str, name: str):
    """A number or a [list] is read as a literal (autodiff/codec.py); anything else (`2*pi`,
    a ragged list, a name) as the language reads a value, which says what is wrong where."""
    import numpy as np

    from .. import codec
    from ..language import parse_value

    try:
        return np.asarray(codec.parse(text))  # a ragged list is a ValueError too
    except codec.OutOfRange as error:
        raise InputProblem(f"--at {name}: {error}") from None
    except ValueError:
        value = parse_value(text, f"--at {name}")  # a number, or a tensor of what the language made
        return np.asarray(value.numpy(force=True) if hasattr(value, "numpy") else value)


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


def parse_shapes(options: list | None) -> dict | None:
    """`--shape x=n --shape A=n,n --shape c=` as {"x": ("n",), "A": ("n", "n"), "c": ()}: each
    size a name or a whole number."""
    if not options:
        return None
    import unicodedata  # only for --shape: not part of every start

    shapes: dict = {}
    for text in options:
        name, equals, dims = text.partition("=")
        name = name.strip()
        if not equals or not name.isidentifier():
            raise UsageProblem(f"--shape takes NAME=SIZES, as --shape A=n,n (a size a name or a number), not {text!r}")
        name = unicodedata.normalize("NFKC", name)  # names are compared as Python compares them
        sizes = []
        for size in (s.strip() for s in dims.split(",")) if dims.strip() else ():
            if size.isidentifier():
                sizes.append(unicodedata.normalize("NFKC", size))
            elif size.isascii() and size.isdigit():
                sizes.append(int(size))
            else:
                raise UsageProblem(f"--shape {name}=...: a size is a name or a whole number, not {size!r}"
                                   + (" (two commas in a row)" if not size else ""))
        if name in shapes:
            raise UsageProblem(f"--shape gives {name!r} twice")
        shapes[name] = tuple(sizes)
    return shapes

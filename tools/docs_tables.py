"""The table of the expression language's functions in docs/language.md, written from the
catalogue itself (`autodiff.language.builtins.FUNCTIONS`): one row per function, with its other
names, its signature and the first paragraph of its docstring.

    python tools/docs_tables.py          print the table
    python tools/docs_tables.py --write  rewrite it in docs/language.md, between its markers

tests/test_docs_functions.py fails when the table in the doc is not what this prints.
"""

from __future__ import annotations

import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "language.md"
BEGIN = "<!-- functions: written by tools/docs_tables.py; do not edit by hand -->"
END = "<!-- end of functions -->"


def signature(function) -> str:
    """`(input, dim=None, keepdim=False)`: the parameters, without their annotations."""
    try:
        found = inspect.signature(function)
    except (TypeError, ValueError):
        return "(...)"
    plain = [p.replace(annotation=inspect.Parameter.empty) for p in found.parameters.values()]
    return str(found.replace(parameters=plain, return_annotation=inspect.Signature.empty))


def summary(name: str, function) -> str:
    """The first paragraph of the docstring, on one line; a `_like` function without one is
    its base function in the shape of `input`."""
    doc = inspect.getdoc(function) or ""
    if doc:
        return " ".join(doc.split("\n\n")[0].split())
    if name.endswith("_like"):
        return f"`{name[:-len('_like')]}` in the shape of `input`."
    return ""


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def table() -> str:
    from autodiff.language.builtins import FUNCTIONS

    names: dict = {}  # one function -> its names, the first declared first
    for name, function in FUNCTIONS.items():
        names.setdefault(id(function), (function, []))[1].append(name)
    rows = ["| function | signature | what it does |", "|---|---|---|"]
    for function, (first, *others) in names.values():
        also = f" (also {', '.join(f'`{n}`' for n in others)})" if others else ""
        rows.append(f"| `{first}`{also} | `{cell(first + signature(function))}` | {cell(summary(first, function))} |")
    return "\n".join(rows) + "\n"


def in_doc(text: str) -> str:
    """The table between the markers of docs/language.md's text."""
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip("\n") + "\n"


def write() -> None:
    text = DOC.read_text()
    begin, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:begin] + "\n" + table() + text[end:])


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        sys.stdout.write(table())

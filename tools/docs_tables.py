"""The docs' lists of functions, written from the catalogue itself
(`autodiff.language.builtins.FUNCTIONS`), so that no list drifts from the code:

- docs/language.md's table: one row per function, with its other names, its signature and the
  first paragraph of its docstring;
- the README's "What autodiff claims" and docs/python-api.md's "Functions": the functions by
  kind, each kind the ops modules that declare them.

    python tools/docs_tables.py          print them
    python tools/docs_tables.py --write  rewrite them in the docs, between their markers

tests/test_docs_functions.py fails when a doc is not what this writes.
"""

from __future__ import annotations

import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "language.md"
BEGIN = "<!-- functions: written by tools/docs_tables.py; do not edit by hand -->"
END = "<!-- end of functions -->"
README = ROOT / "README.md"
PYTHON_API = ROOT / "docs" / "python-api.md"
LISTS_BEGIN = "<!-- function lists: written by tools/docs_tables.py; do not edit by hand -->"
LISTS_END = "<!-- end of function lists -->"

# The kinds of function, each the modules that declare them (in the order the lists show them).
KINDS = [
    ("Creating tensors", ("autodiff.creation",), ""),
    ("Arithmetic", ("autodiff.ops.arithmetic",), ", and the operators `+ - * / // % ** @`"),
    ("Elementwise", ("autodiff.ops.pointwise", "autodiff.ops.selection"), ""),
    ("Special functions", ("autodiff.ops.special",), ""),
    ("Activations and losses", ("autodiff.nn.functional", "autodiff.ops.activation", "autodiff.ops.loss"),
     " (`torch.nn.functional`'s; `autodiff.nn.functional` in Python)"),
    ("Shape and indexing", ("autodiff.ops.shape", "autodiff.ops.indexing", "autodiff.ops.rearrange",
                            "autodiff.ops.pieces", "autodiff.ops.gathering", "autodiff.ops.matrices"),
     ", and indexing `x[i, 1:3]`"),
    ("Comparison and logic", ("autodiff.ops.comparison",), ""),
    ("Reductions and statistics", ("autodiff.ops.reduction", "autodiff.ops.statistics", "autodiff.ops.ordering"), ""),
    ("Linear algebra", ("autodiff.ops.products", "autodiff.ops.decompositions", "autodiff.ops.spectral"), ""),
]


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


def _declared_in(function) -> str:
    """The module that declares a function: an op's forward's, or the function's own."""
    forward = getattr(function, "_forward", None)
    return (forward if forward is not None else inspect.unwrap(function)).__module__


def kinds() -> dict:
    """{kind: [names]} of the language's functions, each function under its first name; the
    other names of one function under "Other names" (torch.linalg's under its own)."""
    from autodiff.language.builtins import FUNCTIONS

    out = {kind: [] for kind, _, _ in KINDS}
    out["Other names"] = []
    seen = set()
    for name, function in FUNCTIONS.items():
        module = _declared_in(function)
        kind = next((k for k, modules, _ in KINDS if module in modules), None)
        if id(function) in seen and not name.startswith("linalg_"):
            out["Other names"].append(name)
            continue
        seen.add(id(function))
        if kind is None:
            raise SystemExit(f"{name} is declared in {module}, which no kind of tools/docs_tables.py lists")
        out[kind].append(name)
    return out


def _wrapped(text: str, width: int = 100, indent: str = "  ") -> str:
    """Words on lines of at most `width`, the first as they come, the rest indented."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = indent + word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join(lines + [line])


def lists() -> str:
    """The functions by kind, as the README's claims and the Python API's list give them."""
    found = kinds()
    bullets = []
    for kind, _, note in KINDS + [("Other names", (), " PyTorch and NumPy give the same functions")]:
        names = found[kind]
        if kind == "Linear algebra":
            top = [n for n in names if not n.startswith("linalg_")]
            linalg = [n.removeprefix("linalg_") for n in names if n.startswith("linalg_")]
            text = (f"- **{kind}**: `{' '.join(top)}`, and `torch.linalg`'s `{' '.join(linalg)}` (`linalg_det` in the "
                    "language, `autodiff.linalg.det` in Python).")
        elif note.startswith(","):  # said after the names
            text = f"- **{kind}**: `{' '.join(names)}`{note}."
        else:
            text = f"- **{kind}**{note}: `{' '.join(names)}`."
        bullets.append(_wrapped(text))
    return "\n".join(bullets) + "\n"


def in_doc(text: str, begin: str = BEGIN, end: str = END) -> str:
    """What stands between a doc's markers."""
    return text[text.index(begin) + len(begin):text.index(end)].lstrip("\n").rstrip() + "\n"


def nested(text: str) -> str:
    """A list as the items of another (the Python API's "Functions")."""
    return "".join(f"  {line}\n" if line else "\n" for line in text.splitlines())


def _rewritten(path: pathlib.Path, begin: str, end: str, body: str) -> None:
    text = path.read_text()
    start, stop = text.index(begin) + len(begin), text.index(end)
    indent = text[text.rfind("\n", 0, stop) + 1:stop]  # the end marker's own, kept
    path.write_text(text[:start] + "\n" + body + indent + text[stop:])


def write() -> None:
    _rewritten(DOC, BEGIN, END, table())
    _rewritten(README, LISTS_BEGIN, LISTS_END, lists())
    _rewritten(PYTHON_API, LISTS_BEGIN, LISTS_END, nested(lists()))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        sys.stdout.write(table() + "\n" + lists())

"""`autodiff derive` in every format. The texts come from program/derive.py; here they are
only chosen and laid out. Formulas are our own text (names, numbers, operators), but a
variable's name came from the user: it is escaped and never read as markup."""

from __future__ import annotations

from ...program import derive as D
from .values import plain_text


def plain(d) -> str:
    lines = [f"{left} = {right}" for left, right in D.readable_lines(d)]
    lines += [f"assuming {a.condition}  ({a.where})" for a in d.assumptions]
    lines += [D.only_at(d)] if d.fixed else []
    lines += check_lines(d)
    return "\n".join(lines) + "\n"


def check_lines(d) -> list:
    if d.check is None:
        return []
    where = "the --at point" if d.check.points == 1 else f"{d.check.points} random points"
    if d.check.passed:
        return [f"check: the derived program agrees with the engine at {where}"]
    return [f"check FAILED: {name} at point {p}: engine {plain_text(a)}, derived {plain_text(b)}"
            for p, name, a, b in d.check.mismatches]


def rich(d, console) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    for left, right in D.readable_lines(d):
        table.add_row(Text(left), Text("= " + right))
    console.print(table)
    for a in d.assumptions:
        console.print(Text(f"assuming {a.condition}  ({a.where})", style="yellow"))
    if d.fixed:
        console.print(Text(D.only_at(d), style="yellow"))
    for line in check_lines(d):
        console.print(Text(line, style="green" if d.check.passed else "red"))


def json_(d) -> str:
    import json

    return json.dumps(D.for_json(d), ensure_ascii=False) + "\n"


def latex(d) -> str:
    return D.latex(d)


def markdown(d) -> str:
    return D.markdown(d)


def expr(d) -> str:
    return D.expr_program(d)


def python(d) -> str:
    return D.python_module(d)

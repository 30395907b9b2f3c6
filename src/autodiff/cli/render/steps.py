"""`autodiff derive --steps` in every format: the steps come from program/steps.py; here they
are laid out. Formulas and rule names are our own text, but names came from the user: they are
escaped (LaTeX) and never read as markup (Rich)."""

from __future__ import annotations

from ...program import steps as S


def plain(d) -> str:
    out = []
    for kind, line in S.lines(d):
        if kind == "step":
            number, label, text = line
            out.append(f"  {number} {label}   {text}")
        elif kind == "where":
            out.append(f"       {line}")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def rich(d, console) -> None:
    from rich.text import Text

    for kind, line in S.lines(d):
        if kind == "step":
            number, label, text = line
            row = Text(f"  {number} ", style="dim")
            row.append(label, style="bold cyan")
            row.append(f"   {text}")
            console.print(row)
        elif kind == "head":
            console.print(Text(line, style="bold"))
        elif kind == "assume":
            console.print(Text(line, style="yellow"))
        elif kind == "where":
            console.print(Text(f"       {line}"))
        else:
            console.print(Text(line))


def json_(d) -> str:
    import json

    return json.dumps(S.for_json(d), ensure_ascii=False) + "\n"


def latex(d) -> str:
    from ...program import steps_latex

    return steps_latex.latex(d)


def markdown(d) -> str:
    from ...program import steps_latex

    return steps_latex.markdown(d)

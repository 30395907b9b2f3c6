"""`autodiff explain` as text: rich (a terminal, down to 60 columns), plain, JSON, Markdown, LaTeX.

The plain text is the symbolic layer's own (chain_rule/), so `print(autodiff.explain(...))`
and `--format plain` agree."""

from __future__ import annotations

import re

from ...chain_rule import (grad_label, number_text, plain as plain_text, product_text, seed_text, seeded,
                                 step_lines, values_text)
from ..._text import escape, latex_text
from ...symbolic.text_latex import fraction_latex as _fraction, math_latex as _math
from ...program.values import for_json

_HOW = "Multiply the local derivatives along each path from the output to the input, then add up the paths."


def plain(explanation) -> str:
    return plain_text(explanation)


def json_(explanation) -> str:
    import json  # here: the other formats have no use for it (a millisecond of explain's start)

    return json.dumps(explanation.to_dict(for_json), allow_nan=False, separators=(", ", ": "), ensure_ascii=False) + "\n"


def _paths_note(item, output: str) -> str:
    count = f"{item.paths_count:,} path{'s' if item.paths_count != 1 else ''}"
    shown = f"; the {len(item.paths)} largest shown" if len(item.paths) < item.paths_count else ""
    return f"{count} from {output} to {item.name}{shown}"


def _rest_note(item) -> str | None:
    if len(item.paths) >= item.paths_count:
        return None
    note = "" if item.exhaustive else " (found by a heuristic search: not certainly the largest)"
    return f"the other {item.paths_count - len(item.paths):,} paths add up to {values_text(item.rest)}{note}"


# -- Markdown ------------------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(explanation) -> str:
    out = [f"**{explanation.output} = {values_text(explanation.value)}**", "", _HOW]
    if seeded(explanation):
        out += ["", seed_text(explanation)[0].upper() + seed_text(explanation)[1:] + "."]
    for name, item in explanation.inputs.items():
        out += ["", f"### {grad_label(explanation, name)} = {values_text(item.grad)}", ""]
        if item.why:
            out += [f"*Why:* {item.why}", ""]
        if item.grad is None:
            continue
        out += [_paths_note(item, explanation.output) + ".", "", "| # | path | share |", "|---|---|---|"]
        for k, path in enumerate(item.paths, 1):
            formulas = "<br>".join(f"`{_cell(e.formula)}`" for e in path.edges)
            out.append(f"| {k} | {_cell(product_text(path, item.scalar))}<br>{formulas} | "
                       f"{_cell(values_text(path.product))} |")
        rest = _rest_note(item)
        if rest:
            out += ["", rest[0].upper() + rest[1:] + "."]
    if explanation.steps:
        out += ["", "### Backward, step by step", ""]
        for line in step_lines(explanation.steps):
            stripped = line.strip()
            out.append(f"{stripped}" if re.match(r"\d+\.", stripped) else f"   - {stripped}")
    return "\n".join(out) + "\n"


# -- LaTeX -----------------------------------------------------------------------------------------------------

def latex(explanation) -> str:
    output = explanation.output
    out = [f"% autodiff explain: {escape(explanation.source)}",  # a comment: a line break is all it fears
           f"$${_math(output)} = {_math(values_text(explanation.value))}$$"]
    for name, item in explanation.inputs.items():
        label = grad_label(explanation, name)
        head = _math(label.partition("∂")[0]) + _fraction(f"∂{output}/∂{name}")  # g·, gᵀ· before ∂y/∂x
        if item.grad is None or not item.paths:
            out.append(f"$${head} = {_math(values_text(item.grad))}$$")
            if item.why:
                out.append(latex_text(item.why.replace("`", "")))
            continue
        out.append(f"% {_paths_note(item, output)}")
        out.append("\\begin{align*}")
        terms = []
        for path in item.paths:
            factors = " ".join(_fraction(e.formula.split(" = ")[0].split(":")[0]) for e in path.edges)
            terms.append(head.partition("\\frac")[0] * (not item.scalar) + (factors or "1"))  # gᵀ· on each
        rows = [f"{head} &= " + " \\\\\n  &\\quad + ".join(terms)]
        if item.scalar:
            numbers = " + ".join(" \\times ".join(number_text(e.local) for e in p.edges) or "1" for p in item.paths)
            rows.append(f"  &= {numbers}")
        rest = " + \\text{(the other paths: }" + _math(values_text(item.rest)) + ")" if _rest_note(item) else ""
        rows.append(f"  &= {_math(values_text(item.grad))}" if not rest else f"  &= {_math(values_text(item.grad))}")
        if rest:
            rows[-2] += rest
        out.append(" \\\\\n".join(rows))
        out.append("\\end{align*}")
        locals_ = {e.formula: e for p in item.paths for e in p.edges if " = " in e.formula}
        if locals_:
            out.append("where")
            out.append("\\begin{align*}")
            out.append(" \\\\\n".join(f"{_fraction(f.split(' = ')[0])} &= {locals_[f].latex or _math(f.split(' = ', 1)[1])}"
                                     for f in sorted(locals_)))
            out.append("\\end{align*}")
    return "\n".join(out) + "\n"


# -- Rich ----------------------------------------------------------------------------------------------------


def rich(explanation, console) -> None:
    from rich.text import Text


    console.print(Text.assemble((explanation.output, "bold"), " = ", (values_text(explanation.value), "bold"),
                                (f"   ({explanation.source})" if explanation.source else "", "dim")))
    console.print(Text(_HOW, style="dim"))
    if seeded(explanation):
        console.print(Text(seed_text(explanation), style="dim"))
    for name, item in explanation.inputs.items():
        console.print()
        console.print(Text.assemble((grad_label(explanation, name), "bold cyan"), " = ",
                                    (values_text(item.grad), "bold magenta")))
        if item.why:
            console.print(Text(f"why: {item.why}", style="yellow"))
        if item.grad is None:
            continue
        console.print(Text(_paths_note(item, explanation.output), style="dim"))
        for k, path in enumerate(item.paths, 1):
            _hanging(console, Text(f"{k}. ", style="bold"), Text(product_text(path, item.scalar)))
            for e in path.edges:
                line = Text()
                line.append(e.formula, style="green")
                if e.local is not None and not e.formula.endswith(f" = {values_text(e.local)}"):
                    line.append(f" = {values_text(e.local)}")
                line.append(f"  {e.op}", style="dim")
                _hanging(console, Text("     "), line)
        rest = _rest_note(item)
        if rest:
            console.print(Text(rest, style="dim"))
    if explanation.steps:
        console.print()
        console.print(Text("backward, step by step (the engine's order)", style="bold"))
        for line in step_lines(explanation.steps):
            numbered = re.match(r"\s*(\d+\. )(.*)", line)
            if numbered:
                _hanging(console, Text(numbered.group(1)), Text(numbered.group(2)))
            else:
                _hanging(console, Text("   "), Text(line.strip(), style="dim"))


def _hanging(console, head, body) -> None:
    """`head` then `body`, the body's wrapped lines indented under its first (never at column 0)."""
    from rich.text import Text

    room = max(20, console.width - len(head))
    for k, line in enumerate(body.wrap(console, room)):
        line.rstrip()
        console.print(Text.assemble(head if k == 0 else " " * len(head), line), soft_wrap=True)

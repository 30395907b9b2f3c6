"""A derivation written for people and for other programs: the readable lines (`∂e/∂a =
...`), LaTeX, Markdown, JSON, and the `expr` program that `autodiff eval` runs."""

from __future__ import annotations

from .._text import latex_text
from ..language.builtins import KNOWN_NAMES
from ..language.foreign import MODULES
from ..symbolic.statements import Statements
from .derived import Derivation, Derived, only_at




def _symbolic_name(output: str, wrt: tuple) -> str:
    if len(wrt) == 1:
        return f"∂{output}/∂{wrt[0]}"
    a, b = wrt
    return f"∂²{output}/∂{a}²" if a == b else f"∂²{output}/∂{a}∂{b}"



def readable_lines(d: Derivation) -> list:
    """[(left, right)]: the shared statements, then `∂e/∂a = formula` for each derivative, in the
    notation of a page of mathematics (Aᵀ, X⁻¹)."""
    from ..symbolic.printing import MathPrinter

    derivatives = {x.name: x for x in d.derivatives}
    program = Statements({x.name: x.expr for x in d.derivatives}, d.labels, taken=set(d.inputs))
    lines, last = [], []
    for name, _, text in program.written(MathPrinter(sizes=d.sizes)):
        x = derivatives.get(name)
        if x is None:
            lines.append((name, text))
        else:
            last.append((_symbolic_name(d.output, x.wrt), text))
    return lines + last


def latex(d: Derivation) -> str:
    """An `align*` block: shared values first, then each derivative as a fraction."""
    from ..symbolic.printing import LatexPrinter, latex_name

    derivatives = {x.name: x for x in d.derivatives}
    program = Statements({x.name: x.expr for x in d.derivatives}, d.labels, taken=set(d.inputs))
    out = latex_name(d.output)
    rows = []
    for name, _, text in program.written(LatexPrinter(sizes=d.sizes)):
        x = derivatives.get(name)
        if x is None:  # a shared value
            left = latex_name(name)
        elif len(x.wrt) == 1:
            left = rf"\frac{{\partial {out}}}{{\partial {latex_name(x.wrt[0])}}}"
        elif x.wrt[0] == x.wrt[1]:
            left = rf"\frac{{\partial^2 {out}}}{{\partial {latex_name(x.wrt[0])}^2}}"
        else:
            left = rf"\frac{{\partial^2 {out}}}{{\partial {latex_name(x.wrt[0])} \partial {latex_name(x.wrt[1])}}}"
        rows.append(f"{left} &= {text}")
    rows += [rf"&\text{{assuming }} \texttt{{{_latex_escaped(a.condition)}}} \text{{ ({a.where})}}"
             for a in d.assumptions]
    if d.fixed:
        rows.append(rf"&\text{{{_latex_escaped(only_at(d))}}}")
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}\n"


def _latex_escaped(text: str) -> str:
    """Program text inside LaTeX's \\texttt: its special characters as text."""
    return latex_text(text)



def for_json(d: Derivation) -> dict:
    out = {
        "output": d.output,
        "inputs": {x.wrt[0]: {"name": x.name, "formula": x.formula, "shape": _json_shape(d, x)}
                   for x in d.derivatives if len(x.wrt) == 1},
        "program": d.program,
        "assumptions": [{"line": a.line, "condition": a.condition, **({"turn": a.turn} if a.turn else {})}
                        for a in d.assumptions],
    }
    if d.jacobian:
        out["jacobian"] = True
    if d.order == 2:
        out["second"] = [{"wrt": list(x.wrt), "name": x.name, "formula": x.formula, "shape": _json_shape(d, x)}
                         for x in d.derivatives if len(x.wrt) == 2]
    if d.fixed:
        out["only_at"] = {n: list(shape) for n, shape in d.fixed.items()}
    if d.check is not None:
        out["check"] = d.check.for_json()
    return out


def _json_shape(d: Derivation, x: Derived) -> list:
    """A derivative's shape, its sizes by name where they are named (`["n"]`, `["m", 3]`)."""
    if not d.sizes:
        return list(x.shape)
    by_input = [list(d.shapes.get(w, d.inputs[w])) for w in x.wrt]
    if d.jacobian:
        out = [d.sizes.integer_text(v) or v for v in (d.value.shape if d.value is not None else ())]
        return out + by_input[0]
    return [size for dims in by_input for size in dims]


def expr_program(d: Derivation) -> str:
    """A program `autodiff eval` runs: inputs with defaults declared, then the statements; where
    it holds only at some sizes, the inputs are declared with them, so other sizes are refused."""
    head = "".join(f"{n}: input{list(d.fixed[n]) if n in d.fixed else ''} = {text}\n" for n, text in d.declared.items())
    head += "".join(f"{n}: input{list(shape)}\n" for n, shape in d.fixed.items() if n not in d.declared and shape)
    # an input called as a library (np, math) or a function of the language is: declared, so that
    # `np.T` and `exp * 2` read the input
    head += "".join(f"{n}: input\n" for n in d.inputs if (n in MODULES or n in KNOWN_NAMES) and n not in d.declared
                    and n not in d.fixed)
    notes = "".join(f"# assumes ({a.where}): {_comment_text(a.condition)}\n" for a in d.assumptions)
    if d.fixed:
        notes += f"# {only_at(d)}\n"
    return notes + head + d.program


def _comment_text(text: str) -> str:
    """User text on one comment line: a line break or other control character as an escape."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def markdown(d: Derivation) -> str:
    rows = [f"| `{left}` | `{right}` |" for left, right in readable_lines(d)]
    text = f"Derivatives of `{d.output}` ({d.source})\n\n| | formula |\n|---|---|\n" + "\n".join(rows) + "\n"
    if d.assumptions:
        text += "\nAssumptions (the path `--at` chose):\n\n" + "".join(
            f"- {a.where}: `{_comment_text(a.condition)}`\n" for a in d.assumptions)
    if d.fixed:
        text += f"\nThe formulas {only_at(d)}.\n"
    return text

"""`derive --steps` as LaTeX and Markdown: each step one row of aligned equations.

The steps are language text (program/steps.py); each is read back with the language's own parser
(it is text we wrote) and written as LaTeX by one walk over its tree, with an explicit stack:
`\\frac` for a quotient, powers raised, each function as its op's spelling declares it
(ops/spelling.py), and each placeholder as the derivative it stands for.
"""

from __future__ import annotations

from ..language import Source, parse
from ..language import ast
from ..ops.spelling import ATOM, CALL, COMPARE, POWER, PRODUCT, SPELLINGS, SUM, UNARY
from ..symbolic.printing import latex_name
from . import steps as S
from .derived_text import _latex_escaped

_COMPARISONS = {"<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "==": "=", "!=": r"\ne"}


def formula(text: str, placeholders: dict | None = None) -> str:
    """Language text as LaTeX; `placeholders` ({name: LaTeX}) writes those names as given."""
    tree = parse(Source(text, "<steps>")).body[-1].value
    try:
        return _latex(tree, placeholders or {})[0]
    except _NoLatex:  # a form the steps do not write (an index, an attribute): the text as it is
        return rf"\texttt{{{_latex_escaped(text)}}}"


class _NoLatex(Exception):
    pass


def _latex(root, placeholders: dict) -> tuple:
    done: dict = {}
    work = [(root, False)]
    while work:
        node, ready = work.pop()
        if id(node) in done:
            continue
        kids = _children(node)
        if not ready and kids:
            work.append((node, True))
            work.extend((k, False) for k in kids if id(k) not in done)
            continue
        done[id(node)] = _write(node, [done[id(k)] for k in kids], placeholders)
    return done[id(root)]


def _children(node) -> list:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Call):
        return list(node.args) + [k.value for k in node.keywords]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.BoolOp):
        return [node.left, node.right]
    return []


def _wrap(part: tuple, level: int) -> str:
    text, own = part
    return rf"\left({text}\right)" if own < level else text


def _write(node, parts: list, placeholders: dict) -> tuple:
    if isinstance(node, ast.Name):
        found = placeholders.get(node.id)
        return (found, ATOM) if found is not None else (latex_name(node.id), ATOM)
    if isinstance(node, ast.Number):
        return node.text, ATOM
    if isinstance(node, ast.Constant):
        return rf"\mathrm{{{node.value}}}", ATOM
    if isinstance(node, ast.UnaryOp):
        if node.op == "-":
            return "-" + _wrap(parts[0], UNARY), UNARY
        return rf"\operatorname{{{node.op}}}\ " + _wrap(parts[0], UNARY), UNARY
    if isinstance(node, ast.BinOp):
        left, right = parts
        op = node.op
        if op == "+":
            return f"{_wrap(left, SUM)} + {_wrap(right, SUM)}", SUM
        if op == "-":
            return f"{_wrap(left, SUM)} - {_wrap(right, PRODUCT)}", SUM
        if op == "*":
            return rf"{_wrap(left, PRODUCT)} \cdot {_wrap(right, PRODUCT + 1)}", PRODUCT
        if op == "/":
            return rf"\frac{{{left[0]}}}{{{right[0]}}}", UNARY
        if op == "**":
            return f"{_wrap(left, POWER + 1)}^{{{right[0]}}}", POWER
        return rf"{_wrap(left, PRODUCT)} \mathbin{{{_latex_escaped(op)}}} {_wrap(right, PRODUCT + 1)}", PRODUCT
    if isinstance(node, ast.Compare):
        text = _wrap(parts[0], SUM)
        for op, part in zip(node.ops, parts[1:]):
            text += f" {_COMPARISONS.get(op, _latex_escaped(op))} {_wrap(part, SUM)}"
        return text, COMPARE
    if isinstance(node, ast.BoolOp):
        symbol = r"\land" if node.op == "and" else r"\lor"
        return f"{_wrap(parts[0], SUM)} {symbol} {_wrap(parts[1], SUM)}", COMPARE
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _call(node.func.id, [p[0] for p in parts]), ATOM
    raise _NoLatex(type(node).__name__)


def _call(name: str, args: list) -> str:
    if name == "sqrt" and len(args) == 1:
        return rf"\sqrt{{{args[0]}}}"
    spelling = SPELLINGS.get(name)
    form = spelling.latex if spelling is not None else CALL
    inside = r"\left(" + ", ".join(args) + r"\right)"
    if isinstance(form, str) and "{0}" in form:
        try:
            return form.format(*args)
        except (IndexError, KeyError):
            pass
    elif isinstance(form, str):
        return form + inside
    return r"\operatorname{" + name.replace("_", r"\_") + "}" + inside


def _derivative(x: str, step, d) -> str:
    """∂/∂x [of] (or ∂u/∂x for a name's step) in LaTeX."""
    wrt = latex_name(x)
    if step.name:
        return rf"\frac{{\partial {latex_name(step.of)}}}{{\partial {wrt}}}"
    return rf"\frac{{\partial}}{{\partial {wrt}}}\left[{formula(step.of)}\right]"


def rows(d) -> list:
    """The rows of the aligned equations, every input's steps in turn."""
    out = []
    for block in d.inputs:
        x, steps = block.wrt, block.steps
        placeholders = {d.placeholder(s.id): _derivative(x, s, d) for s in steps if s.rule != S.SIMPLIFY}
        for s in steps:
            label = rf"&& \text{{{s.id}. {_latex_escaped(S.rule_label(s))}}}"
            if s.rule == S.SIMPLIFY:
                left = rf"\frac{{\partial {latex_name(d.output)}}}{{\partial {latex_name(x)}}}"
                out.append(f"{left} &= {formula(s.result[0])} {label}")
                for name, value in S.shared_statements(d, s.result[0]):
                    out.append(rf"{latex_name(name)} &= {formula(value)} && \text{{where}}")
                continue
            text = "".join(d.placeholder(p) if isinstance(p, int) else p for p in s.result)
            out.append(f"{_derivative(x, s, d)} &= {formula(text, placeholders)} {label}")
    out += [rf"&\text{{assuming }} \texttt{{{_latex_escaped(a.condition)}}} \text{{ ({a.where})}}"
            for a in d.derived.assumptions]
    return out


def latex(d) -> str:
    return "\\begin{align*}\n" + " \\\\\n".join(rows(d)) + "\n\\end{align*}\n"


def markdown(d) -> str:
    source = d.derived.source.replace("`", "'")
    head = f"Steps of the derivatives of `{d.output}` ({source})\n\n"
    return head + "$$\n\\begin{aligned}\n" + " \\\\\n".join(rows(d)) + "\n\\end{aligned}\n$$\n"

"""Text of the language as LaTeX math, for what is not an expression of the algebra: names
(`x₃`, `t⁽²⁾`), source snippets, values and `∂u/∂a` heads. An expression's own LaTeX is the
symbolic printer's (printing.LatexPrinter), as derive writes it; explain writes its local
derivatives through that printer too, and only their operands' names through this."""

from __future__ import annotations

import re

from .._text import latex_text

_SYMBOLS = {"·": r" \cdot ", "×": r" \times ", "²": "^2", "σ": r"\sigma", "↦": r" \mapsto ", "ᵀ": r"^\top",
            "≤": r" \le ", "½": r"\tfrac12", "⊗": r" \otimes ", "Σ": r"\sum ", "∂": r"\partial ", "→": r" \to ",
            "…": r"\dots", "*": r" \cdot ", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "{": r"\{", "}": r"\}"}
_FUNCTIONS = {"exp", "log", "sin", "cos", "tan", "tanh", "sqrt", "sign"}


_TOKENS = r"\*\*|\.T\b|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?|\s+|."


def math_latex(text: str) -> str:
    """Formula text (the language's) as LaTeX math: `x ** 2` as a power, `A @ x` as a product,
    `A.T` transposed, a called name upright, other names italic, markup characters as text."""
    tokens = re.findall(_TOKENS, text)
    pieces = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "**":  # the exponent: the next atom, or the parenthesized group that follows
            while i < len(tokens) and tokens[i].isspace():
                i += 1
            if i < len(tokens) and tokens[i] == "(":
                depth, j = 0, i
                while j < len(tokens):
                    depth += tokens[j] == "("
                    depth -= tokens[j] == ")"
                    j += 1
                    if depth == 0:
                        break
                pieces.append("^{" + math_latex("".join(tokens[i:j])) + "}")
                i = j
            elif i < len(tokens):
                pieces.append("^{" + math_latex(tokens[i]) + "}")
                i += 1
        elif token == ".T":
            pieces.append(r"^{\top}")
        elif token == "@":
            pieces.append(r" \, ")
        elif token in _FUNCTIONS or (re.fullmatch(r"[A-Za-z_]\w*", token) and i < len(tokens) and tokens[i] == "("):
            pieces.append(f"\\operatorname{{{token.replace('_', chr(92) + '_')}}}")
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token):
            escaped = token.replace("_", r"\_")
            pieces.append(escaped if len(token) == 1 else f"\\mathit{{{escaped}}}")
        elif token.isspace():
            pieces.append(" ")
        else:
            safe = latex_text(token)  # a character LaTeX reads as markup: as text
            pieces.append(_SYMBOLS[token] if token in _SYMBOLS else token if safe == token or token in "<>"
                          else rf"\text{{{safe}}}")
    return "".join(pieces)


def fraction_latex(head: str) -> str:
    """`∂(t * c)/∂t` as \\frac{\\partial (t * c)}{\\partial t}."""
    top, _, bottom = head.partition("/∂")
    return f"\\frac{{{math_latex(top)}}}{{\\partial {math_latex(bottom)}}}"

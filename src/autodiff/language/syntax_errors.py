"""Syntax errors in words: a token the parser rejects, explained from where it stands.

An unclosed bracket, a Python construct the language lacks, an indent, a missing expression or
operator, an assignment to something other than a name; otherwise the token and, in words,
what the grammar expected there.
"""

from __future__ import annotations

from .errors import SyntaxProblem
from .foreign import PYTHON_CONSTRUCTS, assignment_advice
from .grammar import tables
from .source import Source
from .tokenizer import Token


_STARTS_EXPRESSION = {"NAME", "NUMBER", "LPAR", "LSQB", "MINUS", "PLUS", "NOT", "TRUE", "FALSE", "NONE"}
_DESCRIBE = {
    "NAME": "a name", "NUMBER": "a number", "_NL": "the end of the line", "$END": "the end of the program",
    "_INDENT": "an indented block", "_DEDENT": "the end of a block", "COMPARE": "a comparison",
    "POWER": "'**'", "AUGASSIGN": "'+='",
}


def _describe_token(token: Token) -> str:
    if token.type == "NAME":
        return f"name {token.value!r}"
    if token.type == "NUMBER":
        return f"number {token.value}"
    if token.type in ("_NL", "$END", "_DEDENT"):
        return _DESCRIBE[token.type].removeprefix("the ")  # "unexpected end of the line"
    if token.type in ("COMPARE", "POWER", "AUGASSIGN") or token.value:
        return repr(token.value)
    return _DESCRIBE.get(token.type, repr(token.value))


def _describe_expected(expected: set, literal_names: dict) -> str:
    words = []
    if {"NUMBER", "LPAR"} <= expected:
        words.append("an expression")
        expected = expected - _STARTS_EXPRESSION
    for name in sorted(expected):
        if name in _DESCRIBE:
            words.append(_DESCRIBE[name])
        elif name in literal_names:
            words.append(repr(literal_names[name]))
    if not words:
        return "something else"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _open_bracket_before(tokens: list, index: int):
    """The innermost bracket still open where the parser stopped (None when all are closed)."""
    stack = []
    for token in tokens[:index]:
        if token.value in ("(", "[") and token.type != "NAME":
            stack.append(token)
        elif token.value in (")", "]") and token.type != "NAME" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _python_construct(tokens: list, index: int):
    """The Python keyword the language lacks (`while`, `import`, `lambda`, `class`...) that the
    failing statement starts with, or that stands just before the place (`f = lambda x: x`)."""
    start = index
    while start > 0 and tokens[start - 1].type not in ("_NL", "_INDENT", "_DEDENT"):
        start -= 1
    for candidate in (tokens[start], tokens[index - 1] if index else None, tokens[index]):
        if candidate is not None and candidate.type == "NAME" and candidate.value in PYTHON_CONSTRUCTS:
            return candidate
    return None


def _attribute_assignment(source: Source, tokens: list, index: int) -> str | None:
    """`a.requires_grad = False` (the '=' at `index`): what to write instead, or None."""
    if index < 3 or tokens[index - 1].type != "NAME" or tokens[index - 2].value != ".":
        return None
    start = index - 2
    while start > 0 and tokens[start - 1].type not in ("_NL", "_INDENT", "_DEDENT"):
        start -= 1
    end = index + 1
    while end < len(tokens) and tokens[end].type not in ("_NL", "$END", "_DEDENT"):
        end += 1
    receiver = source.text[tokens[start].start:tokens[index - 2].start].strip()
    value = source.text[tokens[index].end:tokens[end - 1].end].strip() if end > index + 1 else ""
    return assignment_advice(receiver, tokens[index - 1].value, value)


def syntax_error(source: Source, tokens: list, index: int, row: dict) -> SyntaxProblem:
    token = tokens[index]
    previous = tokens[index - 1] if index else None
    expected = {symbol for symbol in row if symbol.isupper() or symbol.startswith("_") or symbol == "$END"}
    expected -= {symbol for symbol in expected if symbol.startswith("__")}
    literal_names = {name: text for text, name in tables().literals.items()}
    at = (token.start, max(token.end, token.start + 1))
    unclosed = _open_bracket_before(tokens, index)
    if unclosed is not None and source.line_column(unclosed.start)[0] < source.line_column(token.start)[0]:
        # Inside brackets lines join, so a forgotten ')' shows up as nonsense on a later line:
        # the bracket is the mistake to point at (as Python's "'(' was never closed").
        return SyntaxProblem(f"unclosed {unclosed.value!r}", source, unclosed.start, unclosed.start + 1)
    construct = _python_construct(tokens, index)
    if construct is not None:
        return SyntaxProblem(PYTHON_CONSTRUCTS[construct.value], source, construct.start, construct.end)
    if token.type == "_INDENT":
        return SyntaxProblem("unexpected indent", source, token.end, token.end + 1)
    if "_INDENT" in expected and previous is not None:
        return SyntaxProblem("expected an indented block after ':'", source, previous.start, previous.end)
    if token.type in ("_NL", "$END", "_DEDENT", "$ERROR") and previous is not None and expected & _STARTS_EXPRESSION:
        wanted = "an expression" if {"NUMBER", "LPAR"} <= expected else "a name"
        return SyntaxProblem(f"expected {wanted} after {previous.value!r}", source, previous.start, previous.end)
    if token.type in _STARTS_EXPRESSION and "_NL" in expected and previous is not None:
        return SyntaxProblem(
            f"unexpected {_describe_token(token)}: is an operator or a comma missing before it?", source, *at
        )
    if token.type == "EQUAL" and previous is not None:
        advice = _attribute_assignment(source, tokens, index)
        if advice is not None:
            return SyntaxProblem(advice, source, *at)
        return SyntaxProblem("cannot assign to an expression: only a name can be assigned (a = ...)", source, *at)
    if token.type == "AUGASSIGN":
        return SyntaxProblem(f"only a name can be updated with {token.value!r}", source, *at)
    return SyntaxProblem(
        f"unexpected {_describe_token(token)}; expected {_describe_expected(expected, literal_names)}", source, *at
    )

"""Lark's own LALR parser, with a Transformer that builds the same syntax tree as parser.py.

The reference that parser.py's driver is tested against (tests/language/test_lark_differential.py)
and measured against (bench/parse.py). Both read the tokens of tokenizer.py, Lark's through a
custom lexer, so the two differ only in how they run the grammar. Lark's tree is turned into
nodes by the same BUILDERS name table; only binary operators, whose operator token Lark drops,
find it again in the text. Needs Lark, so nothing imports this module when a program runs.
"""

from __future__ import annotations

from lark import Lark, Transformer
from lark import Token as LarkToken
from lark.exceptions import LarkError
from lark.lexer import Lexer

from . import ast
from .builders import BINARY_OPERATORS, _Late, builder
from .errors import SyntaxProblem
from .grammar import grammar_text, tables
from .source import Source
from .tokenizer import Token, tokenize


class _Tokens(Lexer):
    """Hands Lark the tokens of tokenizer.py (the text to parse is the token list)."""

    def __init__(self, lexer_conf) -> None:
        pass

    def lex(self, tokens):
        for token in tokens:
            if token.type == "$ERROR":
                raise token.error
            if token.type != "$END":
                yield LarkToken(token.type, token.value, start_pos=token.start, end_pos=token.end)


class _Build(Transformer):
    """Lark's tree to syntax nodes, with builders.py's BUILDERS."""

    def __init__(self, text: str) -> None:
        super().__init__(visit_tokens=True)
        self.text = text

    def __default_token__(self, token):
        return Token(token.type, token.value, token.start_pos, token.end_pos)

    def __default__(self, data, children, meta):
        # A `( test )` atom is inlined, but widens its child's span to the brackets: its "container".
        start = getattr(meta, "container_start_pos", getattr(meta, "start_pos", None))
        end = getattr(meta, "container_end_pos", getattr(meta, "end_pos", None))
        if data in BINARY_OPERATORS:
            op_start = _skip_to_operator(self.text, children[0].end)
            return ast.BinOp(BINARY_OPERATORS[data], children[0], children[1], op_start, start, end)
        return builder(data)(children, None, start, end)


def _skip_to_operator(text: str, pos: int) -> int:
    """Where the operator after a left operand is: past closing brackets, spaces and comments."""
    while pos < len(text):
        ch = text[pos]
        if ch == "#":
            while pos < len(text) and text[pos] not in "\r\n":
                pos += 1
        elif ch in " \t\f\r\n\\)]":
            pos += 1
        else:
            break
    return pos


class LarkReference:
    """parse(text) -> ast.Program, with Lark's LALR parser; any rejection is a SyntaxProblem."""

    def __init__(self) -> None:
        self.grammar = tables()
        self.lark = Lark(grammar_text(), parser="lalr", lexer=_Tokens, maybe_placeholders=True,
                         propagate_positions=True)

    def parse(self, text) -> ast.Program:
        source = text if isinstance(text, Source) else Source(text)
        tokens = tokenize(source, self.grammar)
        try:
            tree = self.lark.parse(tokens)
            return _Build(source.text).transform(tree)
        except _Late as late:
            raise SyntaxProblem(late.message, source, late.node.start, late.node.end) from None
        except LarkError as error:
            raise SyntaxProblem(f"Lark: {type(error).__name__}", source) from None

"""parser.py's fast driver against Lark's own LALR parser, on programs drawn from the grammar.

Both read the tokens of tokenizer.py; Lark's tree goes through a Transformer that builds the
same nodes (language/lark_reference.py). They must build the same tree, or both reject.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from autodiff.language import SyntaxProblem, ast, dump, parse
from autodiff.language.grammar import lark_parser
from autodiff.language.lark_reference import LarkReference

from .test_fuzz import _well_formed
from .test_syntax import GOLDEN

GRAMMAR = lark_parser()
REFERENCE = LarkReference()


def _terminals():
    """Strategies for the terminals, so that drawn programs tokenise more often than not:
    a word is followed by a space (`for x in y`, not `forxiny`), names and numbers are few."""
    explicit = {
        "_NL": st.just("\n"), "_INDENT": st.just("    "), "_DEDENT": st.just(""),
        "NAME": st.sampled_from(["a", "b", "x", "f", "no_grad", "sum", "input", "const"]).map(lambda s: s + " "),
        "NUMBER": st.sampled_from(["0", "1", "2.5", ".5", "1e-3", "1_000"]).map(lambda s: s + " "),
    }
    for terminal in GRAMMAR.terminals:
        if terminal.pattern.type == "str" and terminal.pattern.value.isidentifier():
            explicit[terminal.name] = st.just(terminal.pattern.value + " ")
    return explicit


PROGRAMS = from_lark(GRAMMAR, explicit=_terminals())

# The driver ends a block statement's span where its header ends (its body is a tuple with no
# place); Lark's positions run to the end of the body. Every other node's place must agree.
_BLOCKS = (ast.If, ast.For, ast.With, ast.FunctionDef, ast.Program)


def _outcome(parser, text):
    try:
        return parser(text)
    except SyntaxProblem:
        return None


def assert_same(text: str) -> None:
    ours, lark = _outcome(parse, text), _outcome(REFERENCE.parse, text)
    assert (ours is None) == (lark is None), f"only {'ours' if ours is None else 'Lark'} rejects {text!r}"
    if ours is None:
        return
    assert dump(ours) == dump(lark)
    for mine, theirs in zip(ast.walk(ours), ast.walk(lark)):
        if not isinstance(mine, _BLOCKS):
            places = [tuple(getattr(node, name) for name in node._fields if name in ast.POSITION_FIELDS)
                      for node in (mine, theirs)]
            assert places[0] == places[1], (type(mine).__name__, text)


@settings(max_examples=100, deadline=None)  # drawing from the grammar is the slow part
@given(PROGRAMS)
def test_programs_drawn_from_the_grammar_parse_as_lark_parses_them(text):
    assert_same(text)


@settings(max_examples=200, deadline=None)
@given(_well_formed())
def test_larger_expressions_parse_as_lark_parses_them(text):
    assert_same(text)


@pytest.mark.parametrize("text", [program for program, _ in GOLDEN])
def test_the_golden_programs_parse_as_lark_parses_them(text):
    assert_same(text)


@pytest.mark.parametrize("text", ["1 +", "(1 + 2", "f(a=1, 2)", "a = = 1", "if a:\nb\n", "x[1:2:3:4]", "a $ b"])
def test_both_reject_the_same_programs(text):
    assert _outcome(parse, text) is None
    assert _outcome(REFERENCE.parse, text) is None

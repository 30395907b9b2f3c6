"""The parser's fast tokenizer gives the careful tokenizer's tokens, or gives way to it."""

from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff.language.grammar import tables
from autodiff.language.source import Source
from autodiff.language.tokenizer import fast_tokens, tokenize

# Pieces that exercise layout, operators, numbers and the errors the careful tokenizer words.
PIECES = ["\t", "\f", " ", "    ", "\n", "\r\n", "\r", "# c", "\\\n", "\\", "x", "if a:", "(", ")", "[", "]",
          "1", ".5", "1e3", "1_0", "2x", "\u2212", "'", "=", "**", "**=", "<=", "==", "//", "^", "pass", "and",
          "\u00a0", "\u221a", "\u00e9", "\n  "]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=20).map("".join))
def test_fast_tokens_are_the_careful_tokens_or_none(text):
    source = Source(text)
    fast = fast_tokens(source, tables())
    if fast is not None:
        assert fast == [token.as_tuple() for token in tokenize(source, tables())]


def test_fast_tokens_read_ordinary_programs():
    text = "def f(a, b=2):\n    if a <= b:  # c\n\n        return a ** 2\n    return -b\ny = f(1.5e3, [x for_ in 0])\n"
    assert fast_tokens(Source(text), tables()) == [token.as_tuple() for token in tokenize(Source(text), tables())]

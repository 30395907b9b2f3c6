"""Text to tokens, with Python's layout rules.

The terminals (names, numbers, operators, keywords) are the grammar's own; this module adds
what Python's tokenizer adds: end-of-line tokens, indentation as _INDENT/_DEDENT, lines joined
inside brackets and after a backslash, comments skipped. It also enforces the lexical limits
and explains characters that cannot start a token.

`tokenize` is the careful tokenizer: Token objects, and every lexical error in words. The parser
first tries `fast_tokens`: the same tokens as plain (type, text, start, end) tuples, read from
one `findall` (no match object, no Token per token). It gives up (None) on anything the careful
tokenizer must explain, and on backslash continuations, which are rare; the parser then takes
the careful tokenizer's tokens.
"""

from __future__ import annotations

import re

from .errors import SyntaxProblem
from .grammar import Tables
from .source import Source

MAX_NESTING = 200  # brackets inside brackets, as CPython's own limit
MAX_INDENT_LEVELS = 100
MAX_NUMBER_LENGTH = 100  # characters in one number literal

OPENERS = {"(": ")", "[": "]"}
CLOSERS = {")": "(", "]": "["}

# Characters people paste from documents, and what they meant.
LOOKALIKES = {
    "\u2212": "-", "\u2013": "-", "\u2014": "-", "\u00d7": "*", "\u22c5": "*", "\u00b7": "*",
    "\u00f7": "/", "\u2215": "/", "\u2264": "<=", "\u2265": ">=", "\u2260": "!=", "\u00a0": " ",
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00b2": "**2", "\u00b3": "**3",
    "\uff08": "(", "\uff09": ")", "\uff0c": ",",
}

# Symbols of written maths that have a spelling here.
MATH_SYMBOLS = {"\u221a": "write sqrt(x)", "\u221b": "write x ** (1/3)", "\u2211": "write sum(x)",
                "\u220f": "write prod(x)", "\u2202": "autodiff computes derivatives itself: write the function",
                "\u221e": "write inf"}


class Token:
    """A token: its grammar terminal, its text and its offsets in the source."""

    __slots__ = ("type", "value", "start", "end")

    def __init__(self, type: str, value: str, start: int, end: int) -> None:
        self.type = type
        self.value = value
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r}, {self.start}, {self.end})"

    def as_tuple(self) -> tuple:
        """The form `fast_tokens` gives: (type, text, start, end)."""
        return (self.type, self.value, self.start, self.end)


def _alternatives(tables: Tables) -> list:
    """(name, regular expression) of each kind of token, in the order they are tried.

    Names and numbers come first (nothing else starts like them), then the operators: the
    terminals defined by a pattern, then every literal operator in one group (longest first,
    single characters as one class; its terminal is looked up by its text), since the regex
    engine skips a plain alternative by its first character but must enter every named group.
    A line break takes the blank and comment-only lines after it, so that the next match is the
    next line's first token and the spaces before it are that line's indentation.
    """
    parts = [(name, tables.patterns[name]) for name in ("NAME", "NUMBER")]
    operators = sorted((name for name in tables.patterns if name not in ("NAME", "NUMBER")),
                       key=lambda name: -len(tables.patterns[name]))
    parts += [(name, tables.patterns[name]) for name in operators]
    literals = sorted((text for text in tables.literals if text not in tables.keywords), key=len, reverse=True)
    longer = [re.escape(text) for text in literals if len(text) > 1]
    single = "".join(re.escape(text) for text in literals if len(text) == 1)
    parts.append(("OPERATOR", "|".join(longer + [f"[{single}]"])))
    newline = r"(?:\r\n|\r|\n)"
    parts += [("_LINE", rf"{newline}(?:[ \t\f]*(?:\#[^\r\n]*)?{newline})*"), ("_COMMENT", r"\#[^\r\n]*"),
              ("_JOIN", rf"\\{newline}"), ("_END", r"\Z"), ("_BAD", ".")]
    return parts


def _master_pattern(tables: Tables) -> re.Pattern:
    """One regular expression for every token, skipping the spaces before it in the same match."""
    groups = "|".join(f"(?P<{name}>{regex})" for name, regex in _alternatives(tables))
    return re.compile(r"[ \t\f]*(?:" + groups + ")", re.DOTALL)


_PATTERNS: dict = {}


class ErrorToken(Token):
    """Ends the tokens of a text with a lexical error; the parser raises it on reaching it,
    so that an earlier syntax error is reported first."""

    __slots__ = ("error",)

    def __init__(self, error: SyntaxProblem) -> None:
        super().__init__("$ERROR", "", error.start, error.end)
        self.error = error


def tokenize(source: Source, tables: Tables) -> list:
    """All tokens of `source`, ending with `$END`, or with an ErrorToken at a lexical error."""
    tokens: list = []
    try:
        _tokenize(source, tables, tokens)
    except SyntaxProblem as error:
        tokens.append(ErrorToken(error))
    return tokens


def _tokenize(source: Source, tables: Tables, tokens: list) -> None:
    pattern = _PATTERNS.get(id(tables))
    if pattern is None:
        pattern = _PATTERNS[id(tables)] = _master_pattern(tables)
    text = source.text
    keywords = tables.literals
    keyword_set = tables.keywords
    append = tokens.append
    brackets: list = []  # (character, offset) of each open bracket
    indents = [0]
    size = len(text)
    line_start = 0  # the offset where the current line starts, while no token of it is seen
    line_has_tokens = False

    for m in pattern.finditer(text):
        kind = m.lastgroup
        if line_start is not None and not brackets and kind != "_LINE" and kind != "_COMMENT" and kind != "_END":
            _indentation(source, line_start, m.start(kind), indents, tokens)
            line_start = None
        if kind == "NAME":
            pos, end = m.span(kind)
            value = m[kind]
            if not value.isascii():
                value = normalized_name(value)
            append(Token(keywords[value] if value in keyword_set else "NAME", value, pos, end))
            line_has_tokens = True
        elif kind == "OPERATOR":
            pos, end = m.span(kind)
            value = m[kind]
            if value in OPENERS:
                if len(brackets) >= MAX_NESTING:
                    raise SyntaxProblem(f"too many nested brackets: more than {MAX_NESTING} levels", source, pos, end)
                brackets.append((value, pos))
            elif value in CLOSERS:
                if not brackets:
                    raise SyntaxProblem(f"unmatched {value!r}", source, pos, end)
                opener, opened_at = brackets.pop()
                if CLOSERS[value] != opener:
                    raise SyntaxProblem(
                        f"closing {value!r} does not match the opening {opener!r} at "
                        f"line {source.line_column(opened_at)[0]}",
                        source, pos, end,
                    )
            append(Token(keywords[value], value, pos, end))
            line_has_tokens = True
        elif kind == "_LINE":
            if not brackets:
                if line_has_tokens:
                    pos = m.start(kind)
                    append(Token("_NL", "", pos, pos))
                    line_has_tokens = False
                line_start = m.end()
        elif kind == "NUMBER":
            pos, end = m.span(kind)
            if end - pos > MAX_NUMBER_LENGTH:
                raise SyntaxProblem(
                    f"number literal is too long: {end - pos} characters (at most {MAX_NUMBER_LENGTH})",
                    source, pos, end,
                )
            if end < size and (text[end].isalpha() or text[end] == "_"):
                raise _implicit_product(source, pos, end)
            append(Token("NUMBER", m[kind], pos, end))
            line_has_tokens = True
        elif kind == "_BAD":
            raise _bad_character(source, m.start(kind))
        elif kind == "_COMMENT" or kind == "_JOIN" or kind == "_END":
            pass
        else:  # an operator defined by a pattern (COMPARE, POWER...)
            pos, end = m.span(kind)
            append(Token(kind, m[kind], pos, end))
            line_has_tokens = True

    if brackets:
        opener, opened_at = brackets[-1]
        raise SyntaxProblem(f"unclosed {opener!r}", source, opened_at, opened_at + 1)
    if line_has_tokens:
        append(Token("_NL", "", size, size))
    while len(indents) > 1:
        indents.pop()
        append(Token("_DEDENT", "", size, size))
    append(Token("$END", "", size, size))


class _GiveUp(Exception):
    """Raised inside fast_tokens: this text needs the careful tokenizer."""


class _FastPattern:
    """The master pattern's alternatives as findall groups: (spaces, name, number, operator,
    line break, other), where other is a comment, a backslash continuation, the end ('') or a
    character that starts no token. The alternatives keep the master pattern's order, so each
    match is the same text; an operator's terminal is the first of its alternatives that
    matches its text whole, remembered per text (operators are few)."""

    def __init__(self, tables: Tables) -> None:
        alternatives = _alternatives(tables)
        names = [name for name, _ in alternatives]
        operators = alternatives[2:names.index("_LINE")]
        groups = [alternatives[0][1], alternatives[1][1], "|".join(f"(?:{regex})" for _, regex in operators),
                  dict(alternatives)["_LINE"], "|".join(regex for name, regex in alternatives[names.index("_COMMENT"):])]
        self.regex = re.compile(r"([ \t\f]*)(?:" + "|".join(f"({regex})" for regex in groups) + ")", re.DOTALL)
        self.operators = [(name, re.compile(regex, re.DOTALL)) for name, regex in operators]
        self.literals = tables.literals
        self.kinds = {text: kind for text, kind in tables.literals.items() if text in tables.keywords}

    def operator_kind(self, text: str) -> str:
        for name, regex in self.operators:
            if regex.fullmatch(text):
                kind = self.literals[text] if name == "OPERATOR" else name
                self.kinds[text] = kind
                return kind
        raise AssertionError(f"{text!r} matched no operator")  # findall matched it as one


_FAST: dict = {}


def _as_tuple(*fields) -> tuple:
    return fields


def fast_tokens(source: Source, tables: Tables) -> list | None:
    """The tokens `tokenize` gives, as (type, text, start, end) tuples; None where the text has
    a lexical error or a backslash continuation (the careful tokenizer's work)."""
    fast = _FAST.get(id(tables))
    if fast is None:
        fast = _FAST[id(tables)] = _FastPattern(tables)
    tokens: list = []
    try:
        _fast_tokens(source, fast, tokens)
    except (_GiveUp, SyntaxProblem):
        return None
    return tokens


def normalized_name(name: str) -> str:
    """A name as Python reads it: NFKC-normalised, so that `𝐱` is `x` (PEP 3131)."""
    import unicodedata  # only for a name that is not ASCII

    # what Python refuses as a name (x²) is left as written, for the error that says what to write
    return unicodedata.normalize("NFKC", name) if name.isidentifier() else name


def _fast_tokens(source: Source, fast: _FastPattern, tokens: list) -> None:
    """tokenize's loop over findall's groups (see there); anything unusual raises _GiveUp."""
    text = source.text
    kinds = fast.kinds
    append = tokens.append
    brackets: list = []  # the open brackets' characters
    indents = [0]
    size = len(text)
    pos = 0  # where the last match ended
    line_start = 0  # as in tokenize
    line_has_tokens = False

    for spaces, name, number, operator, line, other in fast.regex.findall(text):
        start = pos + len(spaces)
        if line_start is not None and not brackets and not line and (name or number or operator):
            if start != line_start or len(indents) > 1:  # nothing to measure at column 0 outside blocks
                _indentation(source, line_start, start, indents, tokens, _as_tuple)
            line_start = None
        if name:
            pos = start + len(name)
            if not name.isascii():
                name = normalized_name(name)
            append((kinds[name] if name in kinds else "NAME", name, start, pos))
            line_has_tokens = True
        elif operator:
            pos = start + len(operator)
            kind = kinds[operator] if operator in kinds else fast.operator_kind(operator)
            if operator in OPENERS:
                if len(brackets) >= MAX_NESTING:
                    raise _GiveUp
                brackets.append(operator)
            elif operator in CLOSERS:
                if not brackets or CLOSERS[operator] != brackets.pop():
                    raise _GiveUp
            append((kind, operator, start, pos))
            line_has_tokens = True
        elif number:
            pos = start + len(number)
            if pos - start > MAX_NUMBER_LENGTH or pos < size and (text[pos].isalpha() or text[pos] == "_"):
                raise _GiveUp
            append(("NUMBER", number, start, pos))
            line_has_tokens = True
        elif line:
            pos = start + len(line)
            if not brackets:
                if line_has_tokens:
                    append(("_NL", "", start, start))
                    line_has_tokens = False
                line_start = pos
        elif other.startswith("#"):
            pos = start + len(other)
        elif other:  # a backslash continuation or a character that starts no token
            raise _GiveUp

    if brackets:
        raise _GiveUp
    if line_has_tokens:
        append(("_NL", "", size, size))
    for _ in indents[1:]:
        append(("_DEDENT", "", size, size))
    append(("$END", "", size, size))


def _indentation(source: Source, start: int, pos: int, indents: list, tokens: list, make=Token) -> None:
    """At the first token of a line (at `pos`, the line starting at `start`): measure its
    indentation and emit _INDENT/_DEDENT tokens, made by `make`. Blank and comment-only lines
    never get here."""
    column = pos - start
    if column and source.text.count(" ", start, pos) != column:  # tabs and form feeds, as Python counts them
        column = 0
        for ch in source.text[start:pos]:
            column = column + 8 - column % 8 if ch == "\t" else (0 if ch == "\f" else column + 1)
    if column > indents[-1]:
        if len(indents) > MAX_INDENT_LEVELS:
            raise SyntaxProblem(f"too many levels of indentation (at most {MAX_INDENT_LEVELS})", source, pos, pos + 1)
        indents.append(column)
        tokens.append(make("_INDENT", "", start, pos))
    elif column < indents[-1]:
        while column < indents[-1]:
            indents.pop()
            tokens.append(make("_DEDENT", "", pos, pos))
        if column != indents[-1]:
            raise SyntaxProblem("unindent does not match any outer indentation level", source, pos, pos + 1)


def _bad_character(source: Source, pos: int) -> SyntaxProblem:
    ch = source.text[pos]
    if ch in "'\"" or ch in "\u2018\u2019\u201c\u201d":
        if re.search(r"\breduction\s*=\s*$", source.text[max(0, pos - 40):pos]):  # PyTorch's reduction='sum'
            return SyntaxProblem("strings are not supported: write the reduction as a word, without quotes: "
                                 "reduction=mean, reduction=sum or reduction=none", source, pos, pos + 1)
        return SyntaxProblem("strings are not supported: expressions use numbers, names and [lists]", source, pos, pos + 1)
    if ch in LOOKALIKES:
        return SyntaxProblem(
            f"unexpected character {ch!r} ({_char_name(ch)}); did you mean {LOOKALIKES[ch]!r}?", source, pos, pos + 1
        )
    if ch == "\\":
        return SyntaxProblem("a backslash must end the line it continues", source, pos, pos + 1)
    if ch in MATH_SYMBOLS:
        advice = MATH_SYMBOLS[ch]
        operand = re.match(r"\w+", source.text[pos + 1:])
        if operand and "(x)" in advice:
            advice = advice.replace("(x)", f"({operand.group(0)})")
        return SyntaxProblem(f"unexpected character {ch!r} ({_char_name(ch)}): {advice}", source, pos, pos + 1)
    if ch.isprintable() and ord(ch) < 128:
        return SyntaxProblem(f"unexpected character {ch!r}", source, pos, pos + 1)
    return SyntaxProblem(f"unexpected character {ch!r} ({_char_name(ch)})", source, pos, pos + 1)


def _implicit_product(source: Source, pos: int, end: int) -> SyntaxProblem:
    """`2x`: a number written against a name, as in maths; `0x1f` and `1j` are Python's, not ours."""
    text = source.text
    name_end = end
    while name_end < len(text) and (text[name_end].isalnum() or text[name_end] == "_"):
        name_end += 1
    number, name = text[pos:end], text[end:name_end]
    if name[0] in "xXoObB" and number == "0" or name in ("j", "J"):
        return SyntaxProblem(f"invalid number literal {text[pos:end + 1]!r}...", source, pos, end + 1)
    shown = "pi" if name == "π" else name
    return SyntaxProblem(f"a number against a name is not a product here: write {number}*{shown}", source, pos,
                         name_end)


def _char_name(ch: str) -> str:
    import unicodedata  # only to name a stray character

    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')}"

"""Text from users and files, made safe to show: the one place that escapes it.

File names, identifiers, option values, comments and record contents may hold control
characters (an escape sequence that recolours or clears a terminal, a newline that forges a
line of output, a tab that adds a field). `shown` writes them as `ls` and git quote them —
\\t \\n \\r \\x1b \\u2028 — and cuts a long text to `limit` characters with an ellipsis.
Rich markup is a separate matter: where Rich draws text, it is given as a Text object or
through rich.markup.escape, never as markup.
"""

from __future__ import annotations

import re

NAME_LIMIT = 200  # characters of an echoed name or value

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\x08": "\\b", "\x07": "\\a"}
# C0 and C1 controls, DEL, line and paragraph separators, bidirectional overrides, lone surrogates.
# Patterns as text: re compiles one on first use (and keeps it), not on every start of autodiff.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_UNSAFE_BUT_TAB = "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def _escape(match) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text, keep_tabs: bool = False) -> str:
    """`text` with its control characters written as escapes (tabs kept when asked)."""
    text = str(text)
    if text.isascii() and text.isprintable():  # no control character: the pattern need not be compiled
        return text
    return re.sub(_UNSAFE_BUT_TAB if keep_tabs else _UNSAFE, _escape, text)


def shown(text, limit: int | None = NAME_LIMIT) -> str:
    """A name or value from outside, as a message shows it: escaped, and cut to `limit`."""
    text = escape(text)
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


_LONG_WORD = r"\w{%d,}" % (NAME_LIMIT + 1)


def short_words(text: str) -> str:
    """A message with each run of name characters longer than NAME_LIMIT (a name of a megabyte,
    a number of thousands of digits) cut to its start and an ellipsis, as `shown` cuts a name."""
    if len(text) <= NAME_LIMIT:
        return text
    return re.sub(_LONG_WORD, lambda m: m.group()[: NAME_LIMIT - 1] + "…", text)


def escape_lines(text: str) -> str:
    """A message of several lines: each line escaped, the line breaks kept."""
    return "\n".join(escape(line, keep_tabs=True) for line in str(text).split("\n"))


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_", "%": r"\%", "&": r"\&",
                  "#": r"\#", "$": r"\$", "^": r"\^{}", "~": r"\~{}", "<": r"\textless{}", ">": r"\textgreater{}"}


def latex_text(text) -> str:
    """Text from outside inside LaTeX, as text: control characters (a line break too) written as
    escapes first, then every character LaTeX reads as markup written as itself."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in escape(text))

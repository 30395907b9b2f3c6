"""Comparing printed output with a recorded copy on any CPU.

BLAS picks its kernels per CPU and may sum in another order, so a matmul's last bits, and the
digits printed from them, differ between machines (`-0.29527762236291805` on one,
`-0.295277622362918` on another). A recorded transcript therefore matches when its words are the
same and every number is the same up to a relative 2e-9: enough for a 10-significant-digit print
that crossed a rounding boundary, far too little for any real change of value. Numbers of other
lengths shift table columns, so runs of spaces (and of a table's rule) count as one.
"""

from __future__ import annotations

import math
import re

RTOL, ATOL = 2e-9, 1e-12
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
SPACING = re.compile(r" +|─+")


def _pieces(line: str) -> tuple:
    """A line's words (numbers cut out, spacing made one) and its numbers."""
    words = SPACING.sub(lambda m: m.group(0)[0], NUMBER.sub("#", line.rstrip()))
    return words, [float(n) for n in NUMBER.findall(line)]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL) or (math.isnan(a) and math.isnan(b))


def first_difference(actual: str, expected: str) -> str | None:
    """None when `actual` prints what `expected` does (numbers within RTOL); else where it differs."""
    got, want = actual.splitlines(), expected.splitlines()
    if len(got) != len(want):
        return f"{len(got)} lines printed, {len(want)} recorded"
    for number, (line, recorded) in enumerate(zip(got, want), 1):
        if line == recorded:
            continue
        (words, values), (recorded_words, recorded_values) = _pieces(line), _pieces(recorded)
        if words != recorded_words or len(values) != len(recorded_values) or \
                not all(close(a, b) for a, b in zip(values, recorded_values)):
            return f"line {number}:\n  printed:  {line}\n  recorded: {recorded}"
    return None


def matches_with_gaps(expected: list, actual: str) -> bool:
    """`actual`'s lines against `expected`'s, where a line `...` stands for any number of lines
    (as the README and the docs write their sessions); each other line as first_difference compares them."""
    lines = actual.splitlines()
    pieces = [[]]
    for line in expected:
        if line == "...":
            pieces.append([])
        else:
            pieces[-1].append(line)

    def same(at: int, piece: list) -> bool:
        return at + len(piece) <= len(lines) and \
            first_difference("\n".join(lines[at:at + len(piece)]), "\n".join(piece)) is None

    if len(pieces) == 1:
        return len(lines) == len(pieces[0]) and same(0, pieces[0])
    first, *middle, last = pieces
    if not same(0, first) or len(lines) < len(first) + len(last) or not same(len(lines) - len(last), last):
        return False
    at, end = len(first), len(lines) - len(last)
    for piece in middle:  # the earliest place each piece fits leaves the most room for the rest
        while at + len(piece) <= end and not same(at, piece):
            at += 1
        if at + len(piece) > end:
            return False
        at += len(piece)
    return True

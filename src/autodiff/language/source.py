"""Program text and positions: offsets in, (line, column) and the line's text out."""

from __future__ import annotations

import bisect
from dataclasses import field

from .._record import record


@record
class Source:
    """A program's text and the name to report it by (a path, `<stdin>` or `<expr>`)."""

    text: str
    name: str = "<expr>"
    _line_starts: list = field(default=None, init=False, repr=False)

    def _starts(self) -> list:
        if self._line_starts is None:  # computed on first use: most runs never need positions
            starts = [0]
            find = self.text.find
            index = find("\n")
            while index != -1:
                starts.append(index + 1)
                index = find("\n", index + 1)
            self._line_starts = starts
        return self._line_starts

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        starts = self._starts()
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def line_text(self, line: int) -> str:
        starts = self._starts()
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def snippet(self, start: int, end: int | None = None) -> str:
        """The source text of a span, on one line."""
        end = start + 1 if end is None else end
        return " ".join(self.text[start:end].split())

"""Tables that fit the terminal they are drawn on: what matters least folds first.

Values and gradients are never dropped and never split inside a number. When a table is too
wide, first the columns whose cells are all the same (`requires_grad yes` on every row) become
one note under it, then long labels (grad_fn names) are cut with an ellipsis, and last the
table turns into one block per row, where a matrix wraps between its numbers, never inside one.
"""

from __future__ import annotations


import numpy as np

from ..._record import record

GAP = 3  # the space between two columns of a SIMPLE_HEAD table without edges
LABEL_MIN = 8  # a label cut shorter than this says nothing


@record
class Column:
    """A column of a table fitted to the terminal: its header, alignment and how it may shrink."""

    header: str
    justify: str = "left"
    kind: str = "detail"  # key: the row's name; number: values, kept whole; detail: may fold; label: may be cut


@record
class Number:
    """A cell of numbers: laid out for the width it gets (a matrix keeps its rows whole where it can)."""

    value: object
    style: str = ""

    def text(self, width: int | None = None) -> str:
        from .values import human_text

        if isinstance(self.value, str):
            return self.value
        return numbers_text(self.value, width, human_text)


def numbers_text(value, width, human_text, indent: int = 0) -> str:
    """`human_text` with each row of a matrix on one line (width None), or wrapped between
    numbers within `width` columns (where one number fits)."""
    if not (isinstance(value, np.ndarray) and value.ndim > 0):
        return human_text(value, indent)
    if width is None:
        return _laid_out(value, 1 << 30, human_text, indent)
    # PyTorch's layout counts the numbers, not the commas and brackets after a row's last one:
    # the line width it is given shrinks by what a line still overflows, until every line fits.
    linewidth = max(1, width)
    while True:
        text = _laid_out(value, linewidth, human_text, indent)
        over = max(len(line) for line in text.split("\n")) - width
        if over <= 0 or linewidth == 1:
            return text
        linewidth = max(1, linewidth - over)


def _laid_out(value, linewidth: int, human_text, indent: int) -> str:
    from ... import _formatting

    saved = _formatting.OPTIONS.linewidth
    _formatting.OPTIONS.linewidth = linewidth
    try:
        return human_text(value, indent)
    finally:
        _formatting.OPTIONS.linewidth = saved


def _cell_text(cell, width=None) -> str:
    if isinstance(cell, Number):
        return cell.text(width)
    return cell.plain if hasattr(cell, "plain") else str(cell)


def _cell_width(cell) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in _cell_text(cell).split("\n")), default=0)


def _renderable(cell, width=None):
    from rich.text import Text

    if isinstance(cell, Number):
        return Text(cell.text(width), style=cell.style)
    return cell if isinstance(cell, Text) else Text(str(cell))


def _constant(column_index: int, column: Column, rows) -> bool:
    if column.kind == "key" or not rows:
        return False
    cells = [_cell_text(row[column_index]) for row in rows]
    if column.kind == "number":  # only a column of one note ("not retained"), never of numbers
        return all(isinstance(row[column_index], Number) and isinstance(row[column_index].value, str)
                   for row in rows) and len(set(cells)) == 1
    return len(set(cells)) == 1


def fitted(columns: list, rows: list, width: int, noun: str):
    """The table (or blocks) for `rows`, and the note of folded columns, fitted to `width`."""
    from rich.console import Group
    from rich.text import Text

    widths = [max([_cell_width(c.header)] + [_cell_width(row[i]) for row in rows]) for i, c in enumerate(columns)]
    shown = list(range(len(columns)))
    folded: list = []

    def total(indices):
        return sum(widths[i] for i in indices) + GAP * (len(indices) - 1)

    def note():
        if not folded:
            return None
        parts = [f"{columns[i].header} {_cell_text(rows[0][i])}" for i in sorted(folded)]
        parts = [f"every {noun}: {parts[0]}"] + parts[1:]
        return Text("\n".join(pack([p + "," for p in parts[:-1]] + parts[-1:], width, " ")), style="dim")

    def with_note(table):
        extra = note()
        return table if extra is None else Group(table, extra)

    if total(shown) <= width:
        return with_note(_table(columns, rows, shown, {}))
    # 1. constant columns become a note, least telling first (the details, then a column of one note)
    for kinds in (("detail", "label"), ("number",)):
        for i in list(shown):
            if columns[i].kind in kinds and _constant(i, columns[i], rows):
                shown.remove(i)
                folded.append(i)
        if total(shown) <= width:
            return with_note(_table(columns, rows, shown, {}))
    # 2. long labels are cut
    labels = [i for i in shown if columns[i].kind == "label"]
    if labels:
        room = width - total([i for i in shown if i not in labels]) - GAP * len(labels)
        each = room // len(labels)
        if each >= LABEL_MIN:
            return with_note(_table(columns, rows, shown, {i: min(each, widths[i]) for i in labels}))
    # 3. one block per row: the name, then each column as `header value`, numbers wrapped between numbers
    return with_note(_blocks(columns, rows, [i for i in shown], width))


def _table(columns, rows, shown, cut: dict):
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i in shown:
        column = columns[i]
        # a cell is never cut silently: one that does not fit (it should) ends in an ellipsis
        table.add_column(column.header, justify=column.justify, no_wrap=True, overflow="ellipsis",
                         max_width=cut.get(i))
    for row in rows:
        table.add_row(*(_renderable(row[i]) for i in shown))
    return table


def _blocks(columns, rows, shown, width):
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    key = next((i for i in shown if columns[i].kind == "key"), shown[0])
    rest = [i for i in shown if i != key]
    label_width = max(len(columns[i].header) for i in rest) if rest else 0
    parts = []
    for row in rows:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="ellipsis")  # wrapped between numbers; one number wider than the room ends in …
        for i in rest:
            cell = row[i]
            room = max(8, width - 2 - label_width - 2)
            grid.add_row(Text("  " + columns[i].header, style="dim"), _renderable(cell, room))
        parts.append(Group(_renderable(row[key]), grid))
    return Group(*parts)


def pack(pieces: list, width: int, separator: str = "   ") -> list:
    """Lines of at most `width` (where pieces allow) made of `pieces`, never breaking one."""
    lines, current = [], ""
    for piece in pieces:
        if current and len(current) + len(separator) + len(piece) > width:
            lines.append(current)
            current = "  " + piece
        else:
            current = current + separator + piece if current else piece
    if current:
        lines.append(current)
    return lines

"""`autodiff test`'s report: plain lines, one JSON object, or Rich tables for people; and its
progress bar on a terminal. The results are testing/reporting.py's RunSummary."""

from __future__ import annotations

import json
import time

from ..._text import escape, shown
from ...testing.one_file import ERRORED, FAILED, NEW, PASSED, PENDING, UPDATED
from ...testing.records import to_record
from ...testing.reporting import NOT_RUN, RunSummary, point_text, value_text


# -- plain ------------------------------------------------------------------------------------------------


def plain(summary: RunSummary) -> str:
    """One line per file (status, path, message); one per mismatch; a summary line.

        failed	tests/f.expr
        mismatch	tests/f.expr	x=1.0	grad x	2.0	3.0	max abs 1, rel 0.5
        summary	passed 4	failed 1	errored 0	new 0
    """
    lines = []
    for result in summary.results:
        if summary.quiet and result.status == PASSED and not result.changes:
            continue
        lines.append("\t".join(filter(None, (result.status, shown(result.path), _clean(result.message)))))
        for m in result.changes:  # --update: what moved, old then new
            where = "record" if m.quantity.startswith("setting ") else point_text(m.point)
            lines.append("\t".join(("changed", shown(result.path), _clean(where), _clean(m.quantity),
                                    _clean(value_text(m.expected)), _clean(value_text(m.got)), _clean(m.difference))))
        for kind, points in (("added", result.added), ("dropped", result.dropped)):
            lines.extend("\t".join((kind, shown(result.path), _clean(point_text(at)))) for at in points)
    for result in summary.results:
        for m in result.mismatches:
            lines.append("\t".join(("mismatch", shown(result.path), _clean(point_text(m.point)), _clean(m.quantity),
                                    _clean(value_text(m.expected)), _clean(value_text(m.got)), _clean(m.difference))))
    for path, point, reason in summary.unused_lines():
        lines.append("\t".join(("unused", shown(path), _clean(point), _clean(reason))))
    lines.append("\t".join(["summary"] + [f"{status} {count}" for status, count in summary.counts.items()]))
    return "\n".join(lines) + "\n"


def _clean(text: str) -> str:
    """A field of a plain line: control characters escaped (a tab or newline stays in its field)."""
    return escape(text)


# -- JSON -------------------------------------------------------------------------------------------------


def json_(summary: RunSummary) -> str:
    files = []
    for result in summary.results:
        files.append({
            "path": result.path, "status": result.status, "message": result.message, "points": result.points,
            "seconds": round(result.seconds, 6),
            "mismatches": [_mismatch(m) for m in result.mismatches],
            "changes": [_mismatch(m) for m in result.changes],
            "added": [to_record(at) for at in result.added], "dropped": [to_record(at) for at in result.dropped],
            "unused": [{"point": to_record(at), "reason": reason} for at, reason in result.unused],
        })
    counts = {key.replace(" ", "_"): count for key, count in summary.counts.items()}
    body = {"summary": {**counts, "files": len(summary.results), "seconds": round(summary.seconds, 6),
                        "passed_all": summary.succeeded},
            "files": files,
            "unused": [{"path": str(path), "reason": reason} for path, reason in summary.unused_records]}
    return json.dumps(body, allow_nan=False, separators=(", ", ": ")) + "\n"


def _mismatch(m) -> dict:
    found = {"point": to_record(m.point), "quantity": m.quantity, "expected": to_record(m.expected),
             "got": to_record(m.got), "difference": m.difference}
    if m.index is not None:
        found["index"] = m.index
    return found


# -- Rich -------------------------------------------------------------------------------------------------


def rich(summary: RunSummary, console) -> None:
    from rich.text import Text

    spaced = True  # is the last thing printed followed by a blank line?
    for result in summary.results:
        if result.status == FAILED:
            console.print(Text.assemble(("FAILED ", "bold red"), (shown(result.path), "bold")))
            console.print(_failures(result.mismatches, console.width))
            if result.message:  # a pending record that waits for review, say
                console.print(Text(f"  {escape(result.message)}"))
            console.print()
            spaced = True
        elif result.status in (ERRORED, NEW, UPDATED, PENDING) or (summary.verbose and result.status == PASSED):
            style = {"errored": "bold red", "new": "bold yellow", "updated": "bold cyan", "pending": "bold magenta",
                     "passed": "bold green"}[result.status]
            console.print(Text.assemble((f"{result.status.upper()} ", style), (shown(result.path), "bold"),
                                        f"  {escape(result.message)}" if result.message else ""))
            for line in result.excerpt.splitlines():  # the line of the file and a caret, as `autodiff grad` shows them
                console.print(Text(escape(line, keep_tabs=True)), soft_wrap=True)  # unwrapped: the caret stays under
            for m in result.changes:
                console.print(Text(escape(f"  {m.quantity} at {point_text(m.point)}: {_short(m.expected)} -> "
                                          f"{_short(m.got)}  ({m.difference})")))
            for kind, points in (("added", result.added), ("dropped", result.dropped)):
                for at in points:
                    console.print(Text(escape(f"  {kind} point {point_text(at)}")))
            spaced = False
    for path, point, reason in summary.unused_lines():
        console.print(Text.assemble(("UNUSED ", "bold yellow"), (shown(path), "bold"),
                                    escape(f"  {point}: {reason}" if point != "record" else f"  {reason}")))
        spaced = False
    if not spaced:
        console.print()
    console.print(_summary_table(summary, console.width))
    if any(r.status == NEW for r in summary.results):
        console.print(Text("new files have no golden record yet: autodiff test --update writes them", style="yellow"))
    if any(r.status == PENDING for r in summary.results):
        console.print(Text("pending records: autodiff test review, or autodiff test accept / reject", style="magenta"))


def _summary_table(summary: RunSummary, width: int):
    """The counts as a table, or, where it does not fit, as lines that break between counts."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    styles = {"passed": "green", "failed": "red", "errored": "red", "new": "yellow", "updated": "cyan",
              "pending": "magenta", "unused": "yellow", NOT_RUN: "yellow"}
    rate = len(summary.results) / summary.seconds if summary.seconds > 0 else 0.0
    cells = [(status, str(count), f"bold {styles[status]}") for status, count in summary.counts.items()]
    cells += [("files", str(len(summary.results)), ""), ("time", f"{summary.seconds:.2f} s ({rate:,.0f} files/s)", "")]
    if sum(max(len(header), len(cell)) for header, cell, _ in cells) + _GAP * (len(cells) - 1) > width:
        lines, column = Text(), 0
        for header, cell, style in cells:
            piece = f"{header} {cell}"
            if column and column + 2 + len(piece) > width:
                lines.append(",\n")
                column = 0
            elif column:
                lines.append(", ")
                column += 2
            lines.append(header, style=style).append(" " + cell)
            column += len(piece)
        return lines
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for header, _, style in cells:
        table.add_column(header, justify="right", header_style=style or None, no_wrap=True, overflow="ellipsis")
    table.add_row(*(cell for _, cell, _ in cells))
    return table


_FAILURE_COLUMNS = (("point", "left"), ("quantity", "left"), ("expected", "right"), ("got", "right"),
                    ("difference", "left"))
_GAP = 3  # between two columns of a SIMPLE_HEAD table without edges


def _failures(mismatches, width: int):
    """A file's mismatches: a table where it fits with every number whole, else one block each;
    a number is never split over two lines nor cut (a value is shortened, with …, at 60 characters)."""
    from rich.cells import cell_len
    from rich.text import Text

    # cells are Text, never markup: a record's strings are shown as written
    rows = [[escape(cell) for cell in (point_text(m.point), m.quantity, _short(m.expected), _short(m.got),
                                       m.difference)] for m in mismatches]
    whole = [max(cell_len(header), *(cell_len(row[i]) for row in rows)) for i, (header, _) in
             enumerate(_FAILURE_COLUMNS[:-1])]
    words = max(cell_len(word) for row in rows for word in ["difference", *row[-1].split()])
    if sum(whole) + words + _GAP * (len(_FAILURE_COLUMNS) - 1) <= width:
        return _failure_table(rows)
    return _failure_blocks(rows, Text)


def _failure_table(rows):
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column, justify in _FAILURE_COLUMNS:
        # everything stays whole; only the difference wraps, at spaces (there is room for its longest word)
        table.add_column(column, justify=justify, no_wrap=column != "difference", overflow="ellipsis")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def _failure_blocks(rows, Text):
    """`grad a at a=2.0, b=3.0`, then expected, got and difference, each on its own line, wrapped at spaces."""
    from rich.console import Group
    from rich.table import Table

    blocks = []
    for point, quantity, expected, got, difference in rows:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="ellipsis")
        for label, cell in (("expected", expected), ("got", got), ("difference", difference)):
            grid.add_row(Text("  " + label, style="dim"), Text(cell))
        blocks.append(Group(Text(f"{quantity} at {point.replace(',', ', ')}", style="bold"), grid))
    return Group(*blocks)


def _short(value, limit: int = 60) -> str:
    text = value_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Progress:
    """A progress bar on standard error while files run (only when it is a terminal)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        if not enabled or total < 2:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn

        # No refresh thread: the bar redraws as results arrive, and worker processes are
        # forked from a process that runs no other thread.
        self.bar = Bar(TextColumn("testing"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]}"),
                       TimeElapsedColumn(), console=Console(stderr=True), transient=True, auto_refresh=False)
        self.task = self.bar.add_task("files", total=total, failed="")
        self.failed = 0
        self.drawn = 0.0
        self.bar.start()

    def advance(self, result) -> None:
        if self.bar is None:
            return
        if result.status not in (PASSED, UPDATED):
            self.failed += 1
        self.bar.update(self.task, advance=1, failed=f"[red]{self.failed} not passed" if self.failed else "")
        now = time.monotonic()
        if now - self.drawn >= 0.1:  # ten frames a second at most: thousands of files finish in a blink
            self.bar.refresh()
            self.drawn = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


# -- what `autodiff test` and its subcommands say beside the report ----------------------------------------


def nothing_in_shard(shard, collected: int) -> str:
    return f"autodiff: shard {shard[0]}/{shard[1]} has none of the {collected} file(s) collected: nothing to run here"


def no_files(paths, globs, keyword, collected: int) -> str:
    why = f"none of the {collected} file(s) matches -k {keyword}" if collected else \
        f"no file under {' '.join(paths)} matches {', '.join(globs)}"
    return f"autodiff: no files collected: {why}"


UNUSED_KEPT = "autodiff: unused records and points were not deleted: the run did not pass"


def deleted(path, reason: str) -> str:
    return f"autodiff: deleted {path} ({reason})"


def not_deleted(path, why: str) -> str:
    return f"autodiff: cannot delete {path} ({why})"


def dropped(count: int, path) -> str:
    return f"autodiff: dropped {count} unused point(s) from the record of {path}"


def settled(word: str, pending) -> str:
    """`accepted\tpath` (or rejected): one line of standard output per pending record."""
    return f"{word}\t{shown(str(pending))}"


def settled_count(word: str, count: int) -> str:
    return f"{word} {count} pending record(s)" if count else "nothing pending"


REVIEW_NEEDS_A_TERMINAL = ("autodiff: error: autodiff test review asks at a terminal, and standard input is not one: "
                           "use autodiff test accept or autodiff test reject")


def review_heading(number: int, total: int, pending) -> str:
    return f"[{number}/{total}] {shown(str(pending))}"


def review_line(line: str, width: int) -> str:
    """One change of a pending record, wrapped at spaces to `width` (a word longer than a line
    stays whole), its continuation lines indented under it."""
    import textwrap

    return "\n".join(textwrap.wrap(line, max(20, width - 1), initial_indent="  ", subsequent_indent="      ",
                                    break_long_words=False, break_on_hyphens=False)) or "  "


def review_kept(problem: str) -> str:
    return f"  not accepted, the record is kept: {problem}"


def review_counts(counts: dict) -> str:
    return ", ".join(f"{what} {count}" for what, count in counts.items())


def merged(missing: list, duplicated: list, unexpected: list, ran, expected: int, reports: int) -> str:
    """`autodiff test merge`'s lines: each file missing, run twice or unexpected, then a summary."""
    lines = []
    for kind, paths in (("missing", missing), ("duplicated", duplicated), ("unexpected", unexpected)):
        for path in paths:
            extra = f"\tran {ran[path]} times" if kind == "duplicated" else ""
            lines.append(f"{kind}\t{shown(path)}{extra}")
    if missing or duplicated:
        lines.append(f"summary\tfiles {expected}\tmissing {len(missing)}\tduplicated {len(duplicated)}")
    else:
        lines.append(f"summary\tfiles {expected}\tran once each in {reports} report(s)")
    return "\n".join(lines) + "\n"

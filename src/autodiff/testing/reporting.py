"""What `autodiff test` prints: plain lines, one JSON object, or Rich tables for people.

Files are reported in path order whatever the order they finished in, so a run's report is
the same with any -j.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass

from .._text import escape, shown
from .one_file import ERRORED, FAILED, NEW, PASSED, UPDATED
from .records import to_record

STATUSES = (PASSED, FAILED, ERRORED, NEW, UPDATED)


@dataclass
class RunSummary:
    results: list
    seconds: float
    update: bool = False

    @property
    def counts(self) -> dict:
        counted = Counter(result.status for result in self.results)
        shown = STATUSES if self.update else STATUSES[:4]
        return {status: counted.get(status, 0) for status in shown}

    @property
    def succeeded(self) -> bool:
        """Exit 0: every file passed (or, with --update, was recorded)."""
        return all(result.status in (PASSED, UPDATED) for result in self.results)


def value_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(to_record(value), separators=(", ", ": "))


def point_text(at: dict) -> str:
    return "defaults" if not at else json.dumps(to_record(at), separators=(",", "="))[1:-1].replace('"', "")


# -- plain ------------------------------------------------------------------------------------------------


def plain(summary: RunSummary) -> str:
    """One line per file (status, path, message); one per mismatch; a summary line.

        failed	tests/f.expr
        mismatch	tests/f.expr	x=1.0	grad x	2.0	3.0	max abs 1, rel 0.5
        summary	passed 4	failed 1	errored 0	new 0
    """
    lines = []
    for result in summary.results:
        lines.append("\t".join(filter(None, (result.status, shown(result.path), _clean(result.message)))))
    for result in summary.results:
        for m in result.mismatches:
            lines.append("\t".join(("mismatch", shown(result.path), _clean(point_text(m.point)), _clean(m.quantity),
                                    _clean(value_text(m.expected)), _clean(value_text(m.got)), _clean(m.difference))))
    lines.append("\t".join(["summary"] + [f"{status} {count}" for status, count in summary.counts.items()]))
    return "\n".join(lines) + "\n"


def _clean(text: str) -> str:
    """A field of a plain line: control characters escaped (a tab or newline stays in its field)."""
    return escape(text)


# -- JSON -------------------------------------------------------------------------------------------------


def as_json(summary: RunSummary) -> str:
    files = []
    for result in summary.results:
        files.append({
            "path": result.path, "status": result.status, "message": result.message, "points": result.points,
            "seconds": round(result.seconds, 6),
            "mismatches": [{"point": to_record(m.point), "quantity": m.quantity, "expected": to_record(m.expected),
                            "got": to_record(m.got), "difference": m.difference} for m in result.mismatches],
        })
    body = {"summary": {**summary.counts, "files": len(summary.results), "seconds": round(summary.seconds, 6),
                        "passed_all": summary.succeeded},
            "files": files}
    return json.dumps(body, allow_nan=False, separators=(", ", ": ")) + "\n"


# -- Rich -------------------------------------------------------------------------------------------------


def rich(summary: RunSummary, console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    spaced = True  # is the last thing printed followed by a blank line?
    for result in summary.results:
        if result.status == FAILED:
            table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, title_justify="left",
                          title=Text.assemble(("FAILED ", "bold red"), (shown(result.path), "bold")))
            for column, justify in (("point", "left"), ("quantity", "left"), ("expected", "right"),
                                    ("got", "right"), ("difference", "left")):
                # names and points stay whole; long numbers fold; the difference wraps at spaces
                table.add_column(column, justify=justify, no_wrap=column in ("point", "quantity"),
                                 overflow="fold" if column in ("expected", "got") else "ellipsis")
            for m in result.mismatches:
                # cells are Text, never markup: a record's strings are shown as written
                table.add_row(*(Text(escape(cell)) for cell in (point_text(m.point), m.quantity, _short(m.expected),
                                                                _short(m.got), m.difference)))
            console.print(table)
            console.print()
            spaced = True
        elif result.status in (ERRORED, NEW, UPDATED):
            style = {"errored": "bold red", "new": "bold yellow", "updated": "bold cyan"}[result.status]
            console.print(Text.assemble((f"{result.status.upper()} ", style), (shown(result.path), "bold"),
                                        f"  {escape(result.message)}"))
            spaced = False
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    styles = {"passed": "green", "failed": "red", "errored": "red", "new": "yellow", "updated": "cyan"}
    for status in summary.counts:
        table.add_column(status, justify="right", header_style=f"bold {styles[status]}")
    table.add_column("files", justify="right")
    table.add_column("time", justify="right")
    rate = len(summary.results) / summary.seconds if summary.seconds > 0 else 0.0
    table.add_row(*(str(count) for count in summary.counts.values()), str(len(summary.results)),
                  f"{summary.seconds:.2f} s ({rate:,.0f} files/s)")
    if not spaced:
        console.print()
    console.print(table)
    if any(r.status == NEW for r in summary.results):
        console.print(Text("new files have no golden record yet: autodiff test --update writes them", style="yellow"))


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

"""`autodiff test`'s sub-commands, which Typer alone runs: pending records settled (review,
accept, reject), and the JUnit reports of CI shards checked against their suite (merge)."""

from __future__ import annotations

import os
import shutil
import sys
from typing import List, Optional

import typer

from ..._text import shown
from ..console import say, write
from ..exit_codes import ExitCode
from ..options import PATHS, words
from ..render import suite as words_


def _pending(paths) -> list:
    from ...testing.discover import pending_records

    return pending_records(paths or ["."])


def _unreadable(pending) -> str | None:
    """Why a pending record cannot replace its record (edited into text that is not a record:
    merge-conflict markers, a cut file), or None when it can."""
    from ...testing.records import PENDING_SUFFIX, RecordProblem, load

    try:
        load(str(pending)[: -len(PENDING_SUFFIX)], where=pending)
    except RecordProblem as problem:
        return str(problem)
    return None


def _settle(pending, accept: bool) -> None:
    """Install a pending record over its record, or delete it; WriteProblem (exit 2, one line)
    where the folder does not let it (read-only)."""
    from ...testing.files import WriteProblem, locked
    from ...testing.records import PENDING_SUFFIX, RECORD_SUFFIX

    owner = str(pending)[: -len(PENDING_SUFFIX)]
    try:
        if accept:
            with locked(owner):  # not between another run's reading of the record and its writing
                os.replace(pending, owner + RECORD_SUFFIX)
        else:
            os.remove(pending)
    except OSError as exc:
        word = "accepted" if accept else "rejected"
        raise WriteProblem(f"{shown(str(pending))}: cannot be {word} ({exc.strerror or exc}); the record is as it "
                           "was") from None


def accept(paths: Optional[List[str]] = PATHS) -> None:
    """Accept pending records (x.expr.golden.new): each replaces its record."""
    _settle_all(paths, accept=True)


def reject(paths: Optional[List[str]] = PATHS) -> None:
    """Reject pending records (x.expr.golden.new): each is deleted; the records stay as they are."""
    _settle_all(paths, accept=False)


def _settle_all(paths, *, accept: bool) -> None:
    from ...testing.discover import SuiteProblem

    word = "accepted" if accept else "rejected"
    found = _pending(paths)
    if accept:  # every pending record is a record before any is installed: a bad one changes nothing
        for pending in found:
            problem = _unreadable(pending)
            if problem is not None:
                raise SuiteProblem(f"not accepted, every record is kept: {problem} (fix it, or autodiff test "
                                   f"reject {shown(str(pending))})")
    for pending in found:
        _settle(pending, accept=accept)
        write(words_.settled(word, pending) + "\n")
    say(words_.settled_count(word, len(found)))


def review(paths: Optional[List[str]] = PATHS) -> None:
    """Review pending records one by one: what changed, then accept, reject or skip."""
    from ...testing.review import describe

    if not sys.stdin.isatty():
        say(words_.REVIEW_NEEDS_A_TERMINAL)
        raise typer.Exit(ExitCode.USAGE)
    found = _pending(paths)
    if not found:
        write(words_.settled_count("", 0) + "\n")
        return
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    width = shutil.get_terminal_size().columns
    for number, pending in enumerate(found, 1):
        write(words_.review_heading(number, len(found), pending) + "\n")
        for line in describe(pending):
            write(words_.review_line(line, width) + "\n")
        while True:
            answer = typer.prompt("accept, reject or skip? [a/r/s]", default="s", show_default=False).strip().lower()
            if answer in ("a", "accept", "r", "reject", "s", "skip"):
                break
        problem = _unreadable(pending) if answer.startswith("a") else None
        if problem is not None:
            write(words_.review_kept(problem) + "\n")
            counts["skipped"] += 1
        elif answer.startswith("a"):
            _settle(pending, accept=True)
            counts["accepted"] += 1
        elif answer.startswith("r"):
            _settle(pending, accept=False)
            counts["rejected"] += 1
        else:
            counts["skipped"] += 1
    write(words_.review_counts(counts) + "\n")


def merge(
    reports: List[str] = typer.Argument(..., metavar="REPORT.xml...", click_type=words(),
                                        help="The JUnit reports of the shards."),
    expect: List[str] = typer.Option(..., "--expect", metavar="PATH",
                                     help="The suite the shards split (repeatable): every file it collects must have "
                                          "run exactly once."),
    glob: List[str] = typer.Option([], "--glob", metavar="PATTERN", help="File names to take, as autodiff test."),
) -> None:
    """Check that the JUnit reports of CI shards together ran every file exactly once."""
    from collections import Counter

    from ...testing import discover as finding
    from ...testing.config import find_config
    from ...testing.discover import SuiteProblem
    from ...testing.files import ReadProblem, read_regular
    from ...testing.junit import files_in_report

    def key(path: str) -> str:
        return finding.relative(path, os.getcwd())

    ran: Counter = Counter()
    for report in reports:
        try:
            data = read_regular(report, 256 * 1024 * 1024)
        except ReadProblem as exc:
            raise SuiteProblem(f"{report}: {exc}") from None
        if data is None:
            raise SuiteProblem(f"{report}: no such file")
        try:
            ran.update(key(path) for path in files_in_report(data, report))
        except ValueError as exc:
            raise SuiteProblem(str(exc)) from None
    globs = tuple(glob) or find_config(expect[0]).patterns
    expected = {key(str(path)) for path in finding.discover(expect, globs)}
    missing = sorted(expected - set(ran))
    duplicated = sorted(path for path, count in ran.items() if count > 1)
    unexpected = sorted(set(ran) - expected)
    write(words_.merged(missing, duplicated, unexpected, ran, len(expected), len(reports)))
    if missing or duplicated:
        raise typer.Exit(ExitCode.CHECK_FAILED)

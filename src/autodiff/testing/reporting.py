"""A suite run's results, as `autodiff test` and the pytest plugin report them (the command's
renderers are in cli/render/suite.py), and the short texts of points and values they share.

Files are reported in path order whatever the order they finished in, so a run's report is
the same with any -j.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import field

from .._record import record
from .one_file import ERRORED, FAILED, NEW, PASSED, PENDING, UPDATED
from .records import to_record

STATUSES = (PASSED, FAILED, ERRORED, NEW, UPDATED, PENDING)
NOT_RUN = "not run"  # a count of the summary (not_run in JSON), not a file's status


@record
class RunSummary:
    """A suite's run as a whole: each file's result, the counts, and the records nothing uses."""

    results: list
    seconds: float
    update: bool = False
    pending: bool = False
    unused_records: list = field(default_factory=list)  # (record path, reason): records no file owns
    unused_fails: bool = False  # --unused fail
    quiet: bool = False  # -q: passing files are not listed
    verbose: bool = False  # -v: every file is listed, on a terminal too
    not_run: int = 0  # -x: files left out after the first that did not pass

    @property
    def unused_count(self) -> int:
        return len(self.unused_records) + sum(len(r.unused) for r in self.results)

    @property
    def counts(self) -> dict:
        counted = Counter(result.status for result in self.results)
        shown = list(STATUSES[:4])
        if self.update:
            shown.append(PENDING if self.pending else UPDATED)
        counts = {status: counted.get(status, 0) for status in shown}
        if self.unused_count:
            counts["unused"] = self.unused_count
        if self.not_run:
            counts[NOT_RUN] = self.not_run
        return counts

    @property
    def succeeded(self) -> bool:
        """Exit 0: every file passed (or, with --update, was recorded); unused records and points
        only warn, unless --unused fail."""
        if self.unused_fails and self.unused_count:
            return False
        return all(result.status in (PASSED, UPDATED) for result in self.results)

    def unused_lines(self) -> list:
        """(path, point or "record", reason) for everything recorded that no longer applies."""
        lines = [(str(path), "record", reason) for path, reason in self.unused_records]
        for result in self.results:
            lines.extend((result.path, point_text(at), reason) for at, reason in result.unused)
        return lines


def value_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(to_record(value), separators=(", ", ": "))


def point_text(at: dict) -> str:
    return "defaults" if not at else json.dumps(to_record(at), separators=(",", "="))[1:-1].replace('"', "")

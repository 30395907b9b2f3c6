"""Every example runs as its own header says (`#   autodiff grad examples/x.expr ...`), in each
output format, and prints exactly what is recorded in tests/cli/recorded/.

After a deliberate change of output, record again and review the diff:
    AUTODIFF_RECORD=1 python -m pytest tests/cli/test_examples_recorded.py
"""

from __future__ import annotations

import os
import re
import shlex

import pytest

from console import ROOT, run_autodiff
from printed import first_difference

EXAMPLES = sorted((ROOT / "examples").glob("*.expr"))
RECORDED = ROOT / "tests" / "cli" / "recorded"
FORMATS = ("plain", "json", "rich")


def header_command(path) -> list:
    """The command an example's comments tell its reader to run."""
    pattern = re.compile(rf"^#\s+autodiff (grad|eval|graph|explain) examples/{re.escape(path.name)}(.*)$", re.MULTILINE)
    match = pattern.search(path.read_text())
    assert match, f"{path.name} has no '#   autodiff grad examples/{path.name} ...' line to show how it runs"
    return [match.group(1), f"examples/{path.name}", *shlex.split(match.group(2))]


def transcript(path) -> str:
    parts = []
    for fmt in FORMATS:
        args = header_command(path) + ["--format", fmt]
        result = run_autodiff(*args)
        parts.append(f"$ autodiff {shlex.join(args)}\n")
        parts.append(result.stdout)
        parts.extend(f"stderr| {line}\n" for line in result.stderr.splitlines())
        parts.append(f"(exit {result.code})\n\n")
    return "".join(parts)


def test_there_are_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_prints_what_is_recorded(path):
    actual = transcript(path)
    record = RECORDED / f"{path.stem}.txt"
    if os.environ.get("AUTODIFF_RECORD"):
        RECORDED.mkdir(exist_ok=True)
        record.write_text(actual)
    assert record.exists(), f"nothing recorded for {path.name}: run with AUTODIFF_RECORD=1 and review"
    difference = first_difference(actual, record.read_text())  # numbers within 2e-9: BLAS digits vary by CPU
    assert difference is None, f"{path.name} prints other than tests/cli/recorded/{record.name}: {difference}"
    assert "(exit 0)" in actual


def test_every_record_belongs_to_an_example():
    assert {p.stem for p in RECORDED.glob("*.txt")} == {p.stem for p in EXAMPLES}

"""Every example runs, and prints what was recorded beside it."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
PYTHON_EXAMPLES = sorted((EXAMPLES / "python").glob("*.py"))


@pytest.mark.parametrize("script", PYTHON_EXAMPLES, ids=[p.name for p in PYTHON_EXAMPLES])
def test_python_example_prints_its_recorded_output(script):
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == script.with_suffix(".out").read_text()


def test_there_are_python_examples():
    assert PYTHON_EXAMPLES

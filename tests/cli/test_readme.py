"""The README's shell sessions are real: each `$ command` runs in a terminal (a pseudo-terminal,
so `--format auto` is the rich table a reader sees) and prints what the README shows.

A line `...` in the README stands for any number of lines it leaves out.
"""

from __future__ import annotations

import re
import shlex
import shutil

import pytest

from console import ROOT, run_in_terminal
from printed import matches_with_gaps

pytest.importorskip("pty", reason="needs POSIX terminals")

README = ROOT / "README.md"


def sessions() -> list:
    """Every fenced block that is a shell session: a list of (command, expected lines)."""
    found = []
    for block in re.findall(r"^```\n(.*?)^```$", README.read_text(), re.MULTILINE | re.DOTALL):
        if not block.startswith("$ "):
            continue
        steps = []
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
        found.append(steps)
    return found


def matches(expected: list, actual: str) -> bool:
    """Printed numbers are compared as numbers (tests/printed.py: BLAS digits vary by CPU)."""
    actual = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", actual)  # colours some tools (jq) add on a terminal
    return matches_with_gaps(expected, actual)


def programs_in(command: str) -> list:
    """The programs of a pipeline: the first word, and each word after a `|`."""
    words = list(shlex.shlex(command, posix=True, punctuation_chars="|&;<>"))
    return [words[0]] + [words[i + 1] for i, word in enumerate(words[:-1]) if word == "|"]


SESSIONS = sessions()


def test_the_readme_has_sessions():
    assert len(SESSIONS) >= 8


@pytest.mark.parametrize("steps", SESSIONS, ids=[steps[0][0][:60] for steps in SESSIONS])
def test_readme_session(steps, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # a copy: sessions may change files
    last_code = 0
    for command, expected in steps:
        if command == "echo $?":
            assert expected == [str(last_code)], f"{command}: the README says {expected}, the status was {last_code}"
            continue
        missing = [p for p in programs_in(command) if p != "autodiff" and shutil.which(p) is None]
        if missing:
            continue  # a tool the README pipes into (dot...) is not installed here
        last_code, output = run_in_terminal(command, tmp_path)
        assert matches(expected, output), f"$ {command}\n--- README:\n" + "\n".join(expected) + \
            f"\n--- actual:\n{output}"


def test_ci_runs_exactly_the_readmes_two_commands():
    text = README.read_text()
    install = re.search(r"^python3 -m venv .*$", text, re.MULTILINE).group(0)
    test = re.search(r"Run the whole test suite.*:\n\n```\n(.*)\n```", text).group(1)
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install in ci and test in ci
    assert "autodiff grad examples/" in install  # the first command runs the tool on an example
    assert test.endswith("autodiff test examples")  # the second runs the examples as a regression suite


NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def numbers(text: str) -> set:
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return set(NUMBER.findall(text))


@pytest.mark.parametrize("steps", SESSIONS, ids=[steps[0][0][:60] for steps in SESSIONS])
def test_readme_session_in_colour_at_60_columns(steps, tmp_path):
    """The same sessions, in colour and on a narrow terminal: they run, and no number is lost
    (the layout may differ; the numbers may not)."""
    wide, narrow = tmp_path / "wide", tmp_path / "narrow"
    for where in (wide, narrow):
        shutil.copytree(ROOT / "examples", where / "examples")
    for command, _ in steps:
        if command == "echo $?" or any(p != "autodiff" and shutil.which(p) is None for p in programs_in(command)):
            continue
        code, output = run_in_terminal(command, wide)
        narrow_code, narrow_output = run_in_terminal(f"export COLUMNS=60 FORCE_COLOR=1; unset NO_COLOR; {command}", narrow)
        assert narrow_code == code, f"$ {command}\n{narrow_output}"
        assert "Traceback" not in narrow_output
        lost = numbers(output) - numbers(narrow_output)
        assert not lost, f"$ {command}: at 60 columns in colour these numbers are missing: {lost}\n{narrow_output}"


def test_every_bracketed_at_value_is_quoted():
    """zsh refuses `--at W=[[1,2]]` (no matches found) and bash may glob it: the README quotes them."""
    unquoted = re.findall(r"--at [^'\s`]*\[", README.read_text())
    assert not unquoted, unquoted


def test_example_files_are_shown_in_full():
    """A file the README shows is shown whole, so the line numbers in the outputs match it."""
    text = README.read_text()
    for path in (ROOT / "examples").glob("*.expr"):
        tail = "\n".join(path.read_text().strip().splitlines()[-3:])
        if tail in text:
            assert path.read_text().strip() in text, f"{path.name} is shown in part"

"""The shell sessions of the README and the docs (docs/*.md, ARCHITECTURE.md) are real: each
`$ command` runs in a terminal (a pseudo-terminal, so `--format auto` is the rich table a
reader sees) and prints what the page shows.

A line `...` in a session stands for any number of lines it leaves out.
"""

from __future__ import annotations

import pathlib
import re
import shlex
import shutil

import pytest

from console import ROOT, run_in_terminal
from printed import matches_with_gaps

pytest.importorskip("pty", reason="needs POSIX terminals")

README = ROOT / "README.md"
DOCS = [README, ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(text: str) -> list:
    """The fenced blocks of a page that name no language (```, not ```python): their text."""
    found, language, lines = [], None, []
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            if language is None:
                language, lines = line.lstrip()[3:], []
            else:
                if not language:
                    found.append("".join(f"{line}\n" for line in lines))
                language = None
        elif language is not None:
            lines.append(line)
    return found


def sessions(page: pathlib.Path) -> list:
    """Every fenced block of `page` that is a shell session: a list of (command, expected lines)."""
    found = []
    for block in blocks(page.read_text()):
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


SESSIONS = [(page, steps) for page in DOCS for steps in sessions(page)]
IDS = [f"{page.name}:{steps[0][0][:60]}" for page, steps in SESSIONS]


def test_the_docs_have_sessions():
    assert len(sessions(README)) >= 9
    assert len(sessions(ROOT / "docs" / "guide.md")) >= 15
    assert len(SESSIONS) >= 25


@pytest.mark.parametrize("page, steps", SESSIONS, ids=IDS)
def test_session(page, steps, tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # a copy: sessions may change files
    last_code = 0
    for command, expected in steps:
        if command == "echo $?":
            assert expected == [str(last_code)], f"{command}: {page.name} says {expected}, the status was {last_code}"
            continue
        missing = [p for p in programs_in(command) if p != "autodiff" and shutil.which(p) is None]
        if missing:
            continue  # a tool the page pipes into (dot...) is not installed here
        last_code, output = run_in_terminal(command, tmp_path)
        assert matches(expected, output), f"$ {command}\n--- {page.name}:\n" + "\n".join(expected) + \
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


@pytest.mark.parametrize("page, steps", SESSIONS, ids=IDS)
def test_session_in_colour_at_60_columns(page, steps, tmp_path):
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


@pytest.mark.parametrize("page", DOCS, ids=[page.name for page in DOCS])
def test_every_bracketed_at_value_is_quoted(page):
    """zsh refuses `--at W=[[1,2]]` (no matches found) and bash may glob it: the docs quote them."""
    unquoted = re.findall(r"--at [^'\s`]*\[", page.read_text())
    assert not unquoted, unquoted


@pytest.mark.parametrize("page", DOCS, ids=[page.name for page in DOCS])
def test_example_files_are_shown_in_full(page):
    """A file a page shows is shown whole, so the line numbers in the outputs match it (a
    notebook cell, in a python block, is not a file)."""
    text = "\n".join(blocks(page.read_text()))
    for path in (ROOT / "examples").glob("*.expr"):
        tail = "\n".join(path.read_text().strip().splitlines()[-3:])
        if tail in text:
            assert path.read_text().strip() in text, f"{path.name} is shown in part"


def anchor(title: str) -> str:
    """A heading's anchor, as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(page: pathlib.Path) -> set:
    text = re.sub(r"^```.*?^```$", "", page.read_text(), flags=re.MULTILINE | re.DOTALL)  # not `# comments` in code
    return {anchor(title) for title in re.findall(r"^#+ (.*)$", text, re.MULTILINE)}


@pytest.mark.parametrize("page", DOCS, ids=[page.name for page in DOCS])
def test_links_between_the_docs_lead_somewhere(page):
    """Every relative link names a file that exists, and a heading of it where it names one."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (fragment and fragment not in anchors(linked)):
            broken.append(target)
    assert not broken, broken


def test_the_layout_is_the_real_tree():
    """ARCHITECTURE.md's Layout names every file and folder at the top of src/autodiff, and every
    file it names exists."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    layout = text[text.index("## Layout"):]
    layout = layout[layout.index("```\n") + 4:layout.index("\n```", layout.index("```\n") + 4)]
    package = ROOT / "src" / "autodiff"
    top = [p.name + ("/" if p.is_dir() else "") for p in package.iterdir() if p.name != "__pycache__"
           and (p.is_dir() or p.suffix == ".py")]
    assert not [name for name in top if not re.search(rf"^  {re.escape(name)}\s", layout, re.MULTILINE)]
    checkout = [p for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")]  # not .venv's thousands
    existing = {p.name for folder in checkout for p in folder.rglob("*.py")} | {p.name for p in ROOT.glob("*.py")} | \
        {p.name for p in package.rglob("*")}
    named = set(re.findall(r"[\w.]+\.(?:py|lark|json)\b", layout))
    assert sorted(named - existing) == []

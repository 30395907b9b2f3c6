"""Which files a test run covers: files, directories and everything below them, glob
patterns, and deterministic shards so CI machines can split a suite between them."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from .records import RECORD_SUFFIX

DEFAULT_GLOBS = ("*.expr", "*.txt")
SKIPPED_DIRECTORIES = ("__pycache__", "node_modules")  # and every directory whose name starts with "."


class SuiteProblem(Exception):
    """A test run that cannot start as asked (exit 2)."""


def discover(paths: list, globs=DEFAULT_GLOBS) -> list:
    """The expression files under `paths`, sorted, each once. A file named on the command line
    is taken whatever its name; in directories, names must match one of `globs`."""
    found: dict = {}
    for given in paths:
        path = Path(given)
        if path.is_file():
            found.setdefault(_key(path), path)
        elif path.is_dir():
            for file in _search(path, globs):
                found.setdefault(_key(file), file)
        elif path.exists():
            raise SuiteProblem(f"{given}: not a file or a directory")
        else:
            raise SuiteProblem(f"{given}: no such file or directory")
    return [found[key] for key in sorted(found)]


def _key(path: Path) -> str:
    return Path(os.path.normpath(path)).as_posix()


def _search(root: Path, globs) -> list:
    files = []
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise SuiteProblem(f"{directory}: cannot be read ({exc.strerror or exc})") from None
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith(".") and entry.name not in SKIPPED_DIRECTORIES:
                    stack.append(Path(entry.path))
            elif entry.is_file() and not entry.name.endswith(RECORD_SUFFIX):
                if any(fnmatch.fnmatch(entry.name, pattern) for pattern in globs):
                    files.append(Path(entry.path))
    return files


def parse_shard(text: str) -> tuple:
    """`--shard 2/3` as (2, 3): the second of three slices, counted from 1 as Jest and Playwright do."""
    index, slash, count = text.partition("/")
    try:
        index, count = int(index), int(count)
    except ValueError:
        raise SuiteProblem(f"--shard {text}: expected I/N, as 1/3") from None
    if not slash or count < 1 or not 1 <= index <= count:
        raise SuiteProblem(f"--shard {text}: expected I/N with 1 <= I <= N, as 1/3")
    return index, count


def shard(files: list, index: int, count: int) -> list:
    """Every count-th file from the index-th: slices are disjoint, cover every file, and differ
    in size by at most one, whatever the order in which machines run them."""
    return files[index - 1 :: count]

"""Which files a test run covers: files, directories and everything below them, name
patterns, `-k` selection, and shards that CI machines drive; and the records no file owns.

`autodiff test` and the pytest plugin collect through `is_collected`, with the patterns of
`[tool.autodiff]` (config.py), so that both take exactly the same files.
"""

from __future__ import annotations

import fnmatch
import os
import re

from .config import DEFAULT_PATTERNS
from .files import path_text
from .records import PENDING_SUFFIX, RECORD_SUFFIX

DEFAULT_GLOBS = DEFAULT_PATTERNS
# Directories never searched: hidden ones (a name starting with "."), and those pytest skips by default.
SKIPPED_DIRECTORIES = ("__pycache__", "node_modules", "build", "dist", "venv", "_darcs", "CVS", "{arch}")


class SuiteProblem(Exception):
    """A test run that cannot start as asked (exit 2)."""


def skipped_directory(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_DIRECTORIES or name.endswith(".egg")


def is_collected(name: str, globs) -> bool:
    """Whether a file of this name, met in a searched directory, is an expression file."""
    if name.endswith(RECORD_SUFFIX) or name.endswith(PENDING_SUFFIX):
        return False
    return any(fnmatch.fnmatch(name, pattern) for pattern in globs)


def discover(paths: list, globs=DEFAULT_GLOBS) -> list:
    """The expression files under `paths`, sorted, each once (as path_text writes them). A file
    named on the command line is taken whatever its name; in directories, names must match one
    of `globs`."""
    found: dict = {}
    for given in paths:
        path = path_text(given)
        if os.path.isfile(path):
            found.setdefault(_key(path), path)
        elif os.path.isdir(path):
            for file in _search(path, lambda name: is_collected(name, globs)):
                found.setdefault(_key(file), file)
        elif os.path.exists(path):
            raise SuiteProblem(f"{given}: not a file or a directory")
        elif os.path.islink(path):  # to nothing, or round in a loop
            raise SuiteProblem(f"{given}: a symbolic link that cannot be followed ({_stat_error(path)})")
        else:
            raise SuiteProblem(f"{given}: {_absent_why(path)}")
    return [found[key] for key in sorted(found)]


def _key(path) -> str:
    """A path written one way: normalised, with / (what Path(os.path.normpath(p)).as_posix() gives)."""
    return _posix(os.path.normpath(path))


def _posix(text: str) -> str:
    """A path's text with / between its parts, whatever this system's separator."""
    return text if os.sep == "/" else text.replace(os.sep, "/")


def _search(root: str, wanted, make=path_text) -> list:
    """The files below `root` whose names are `wanted`, as make(path text)."""
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
                if not skipped_directory(entry.name):
                    stack.append(path_text(entry.path))
            elif wanted(entry.name) and _is_file(entry):
                files.append(make(entry.path))
    return files


def _stat_failure(path) -> OSError | None:
    """What os.stat(path) raises (None where it succeeds): os.path's answers hide it as False."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc
    return None


_MISSING = (FileNotFoundError, NotADirectoryError)


def _hidden(path) -> bool:
    """Whether `path` may exist but cannot be looked at (a folder on the way that may not be
    searched, a name too long), rather than simply not exist."""
    error = _stat_failure(path)
    return error is not None and not isinstance(error, _MISSING)


def _absent_why(path) -> str:
    """Why a path given is not there: missing, or not to be looked at (and why)."""
    error = _stat_failure(path)
    if error is None or isinstance(error, _MISSING):
        return "no such file or directory"
    return f"cannot be looked at ({error.strerror or error})"


def _stat_error(path) -> str:
    error = _stat_failure(path)
    return "it changed while being looked at" if error is None else error.strerror or str(error)


def _is_file(entry) -> bool:
    """Whether an entry is a file or a link to one. A link that cannot be followed (one that
    loops: is_file() raises for it, where a dangling link is just not a file) is taken as a
    file: reading it fails, and that costs this entry only, as any unreadable file does."""
    try:
        return entry.is_file()
    except OSError:
        return True


def unused_records(paths: list, globs, files: list) -> list:
    """(record, reason) for each record under `paths` that no collected file owns: its
    expression file is gone, or is no longer collected."""
    collected = {_key(f) for f in files}
    unused = []
    for given in paths:
        path = path_text(given)
        if not os.path.isdir(path):
            continue
        for found in _search(path, lambda name: name.endswith(RECORD_SUFFIX), make=str):  # most are owned
            if _key(found[: -len(RECORD_SUFFIX)]) in collected:
                continue
            found = path_text(found)
            owner = found[: -len(RECORD_SUFFIX)]
            name = os.path.basename(owner)
            if not os.path.exists(owner):
                if not _hidden(owner):  # gone, not merely hidden from this run: unused
                    unused.append((found, f"its file {name} does not exist"))
            elif not is_collected(name, globs):
                unused.append((found, f"its file {name} is not collected (patterns: {', '.join(globs)})"))
    unique = {_key(r): (r, why) for r, why in unused}
    return [unique[k] for k in sorted(unique)]


def pending_records(paths: list) -> list:
    """The pending records (`x.expr.golden.new`) under `paths`: directories searched, files
    named as the expression file, its record or the pending record itself."""
    found = {}
    for given in paths:
        path = path_text(given)
        if os.path.isdir(path):
            for pending in _search(path, lambda name: name.endswith(PENDING_SUFFIX)):
                found[_key(pending)] = pending
            continue
        text = path
        for suffix in (RECORD_SUFFIX, PENDING_SUFFIX):
            if text.endswith(suffix):
                text = text[: -len(suffix)]
        candidate = path_text(text + PENDING_SUFFIX)
        if os.path.isfile(candidate):
            found[_key(candidate)] = candidate
        elif not os.path.exists(path):
            raise SuiteProblem(f"{given}: {_absent_why(path)}")
    return [found[k] for k in sorted(found)]


# -- -k ----------------------------------------------------------------------------------------------------


def select(files: list, expression: str, root) -> list:
    """The files whose path (relative to the root) matches a -k expression: words matched as
    substrings, combined with `not`, `and`, `or` and parentheses, as pytest's -k."""
    matcher = _parse_k(expression)
    return [f for f in files if matcher(relative(f, root))]


def _parse_k(expression: str):
    tokens = re.findall(r"\(|\)|[^\s()]+", expression)
    if not tokens:
        raise SuiteProblem("-k: an empty expression")
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take():
        nonlocal position
        position += 1
        return tokens[position - 1]

    def either():
        left = both()
        while peek() == "or":
            take()
            right = both()
            left = (lambda a, b: lambda s: a(s) or b(s))(left, right)
        return left

    def both():
        left = negation()
        while peek() == "and":
            take()
            right = negation()
            left = (lambda a, b: lambda s: a(s) and b(s))(left, right)
        return left

    def negation():
        if peek() == "not":
            take()
            inner = negation()
            return lambda s: not inner(s)
        return atom()

    def atom():
        token = peek()
        if token is None or token in ("and", "or", ")"):
            raise SuiteProblem(f"-k {expression}: expected a word at {'the end' if token is None else repr(token)}")
        take()
        if token == "(":
            inner = either()
            if peek() != ")":
                raise SuiteProblem(f"-k {expression}: a '(' is not closed")
            take()
            return inner
        word = token.lower()
        return lambda s: word in s.lower()

    matcher = either()
    if peek() is not None:
        raise SuiteProblem(f"-k {expression}: unexpected {peek()!r}")
    return matcher


# -- shards ------------------------------------------------------------------------------------------------


def relative(path, root) -> str:
    """A file's path relative to the suite's root, with / (what shards hash and -k matches)."""
    absolute = os.path.abspath(path)
    try:
        text = path_text(os.path.relpath(absolute, os.path.abspath(root)))
    except ValueError:  # another drive (Windows)
        text = path_text(absolute)
    return _posix(text)


def parse_shard(text: str) -> tuple:
    """`--shard 2/3` as (2, 3): the second of three slices, counted from 1 as Jest and Playwright do."""
    index, slash, count = text.partition("/")
    try:
        index, count = int(index), int(count)
    except ValueError:
        raise SuiteProblem(f"--shard {text}: expected I/N, as 1/3, or auto") from None
    if not slash or count < 1 or not 1 <= index <= count:
        raise SuiteProblem(f"--shard {text}: expected I/N with 1 <= I <= N, as 1/3")
    return index, count


# (index variable, total variable, the index of the first shard, the CI system)
AUTO_SHARDS = (("CI_NODE_INDEX", "CI_NODE_TOTAL", 1, "GitLab CI"),
               ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0, "CircleCI"),
               ("TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", 0, "Bazel"))


def shard_from_environment(option: str | None, environ=None) -> tuple | None:
    """(index counted from 1, count, where it came from) for this run, or None for every file.

    `--shard I/N` wins; `--shard auto` reads GitLab's CI_NODE_INDEX/CI_NODE_TOTAL (from 1),
    CircleCI's CIRCLE_NODE_INDEX/CIRCLE_NODE_TOTAL (from 0), then Bazel's; with no --shard,
    Bazel's TEST_SHARD_INDEX/TEST_TOTAL_SHARDS (from 0) are honoured, as Bazel's test runners must."""
    environ = os.environ if environ is None else environ
    if option is not None and option != "auto":
        return (*parse_shard(option), "--shard")
    systems = AUTO_SHARDS if option == "auto" else AUTO_SHARDS[2:]
    for index_name, total_name, first, system in systems:
        if environ.get(total_name, "") == "" and environ.get(index_name, "") == "":
            continue
        index_text, total_text = environ.get(index_name, ""), environ.get(total_name, "")
        try:
            index, total = int(index_text), int(total_text)
        except ValueError:
            raise SuiteProblem(f"{system}: {index_name}={index_text!r} and {total_name}={total_text!r} "
                               "must both be integers") from None
        if total < 1 or not first <= index < first + total:
            raise SuiteProblem(f"{system}: {index_name}={index} is out of range for {total_name}={total} "
                               f"(counted from {first})")
        return index - first + 1, total, f"{index_name}/{total_name}"
    return None


def shard_of(path, root, count: int) -> int:
    """The shard (from 1) of a file: a stable hash of its path relative to the root, so that
    adding or removing a file never moves another one."""
    import hashlib  # only for shards: its import loads OpenSSL

    digest = hashlib.sha1(relative(path, root).encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard(files: list, index: int, count: int, root=".") -> list:
    """The files of the index-th of `count` shards; shards are disjoint and cover every file."""
    return [f for f in files if shard_of(f, root, count) == index]


def touch_shard_status_file(environ=None) -> None:
    """Bazel asks a test runner that shards to touch TEST_SHARD_STATUS_FILE."""
    environ = os.environ if environ is None else environ
    where = environ.get("TEST_SHARD_STATUS_FILE")
    if where:
        try:  # as Path.touch(): the time of an existing file, else a new empty one
            try:
                os.utime(where)
            except FileNotFoundError:
                os.close(os.open(where, os.O_WRONLY | os.O_CREAT, 0o666))
        except OSError:
            pass

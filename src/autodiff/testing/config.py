"""The `[tool.autodiff]` table of pyproject.toml, read by `autodiff test` and the pytest plugin
alike, so that both collect the same files and compare with the same tolerances:

    [tool.autodiff]
    patterns = ["*.expr", "*.formula"]   # file names collected in directories (default: *.expr)
    rtol = 1e-9                          # default tolerances (a record's own win)
    atol = 1e-12

The table is found as pytest finds its own: walking up from the starting directory, the first
pyproject.toml that has a `[tool.autodiff]` table. Its directory is the suite's root: shards
hash paths relative to it. Python 3.11 reads TOML with tomllib; on 3.10 a small reader takes
this table's simple values (strings, numbers, lists of strings) and refuses anything else with
a clear message.
"""

from __future__ import annotations

import os
import re
from dataclasses import field

from .._record import record
from .files import path_text

DEFAULT_PATTERNS = ("*.expr",)
KEYS = ("patterns", "rtol", "atol")


class ConfigProblem(Exception):
    """A [tool.autodiff] table that cannot be used (exit 2)."""


def in_ci(environ=None) -> bool:
    """Whether a CI system runs us: the `CI` variable set to anything but 0, false, no, off or empty."""
    environ = os.environ if environ is None else environ
    return environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def ci_refusal(option: str) -> str:
    """Why `option` (which writes or deletes records) is refused in CI: there, nothing is ever rewritten."""
    return (f"{option} writes records, and CI is set: in CI nothing is ever rewritten (a record must come "
            "from where you work, reviewed and committed)")


@record
class SuiteConfig:
    """A suite's own settings, from [tool.autodiff] in its pyproject.toml."""

    patterns: tuple = DEFAULT_PATTERNS
    rtol: float | None = None  # None: the built-in default
    atol: float | None = None
    root: str = field(default_factory=os.getcwd)
    source: str | None = None  # the pyproject.toml read, if any


def find_config(start=None) -> SuiteConfig:
    """The configuration that applies from `start` (a directory or a file; default: the current
    directory): the nearest pyproject.toml above it with a [tool.autodiff] table."""
    here = path_text(os.path.join(os.getcwd(), start if start is not None else ""))  # as Path.absolute()
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    folder = here
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            table = _table(candidate)
            if table is not None:
                return _config(table, folder, candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            return SuiteConfig(root=os.getcwd())
        folder = parent


def _table(path: str):
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigProblem(f"{path}: cannot be read ({exc})") from None
    if not re.search(r"^\s*\[\s*tool\s*\.\s*autodiff\s*\]", text, re.MULTILINE):
        return None
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return _small_reader(text, path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigProblem(f"{path}: not valid TOML ({exc})") from None
    return data.get("tool", {}).get("autodiff", {})


def _small_reader(text: str, path: str) -> dict:
    """[tool.autodiff] alone, for Pythons without tomllib: `key = value` lines whose value is a
    string, a number or a one-line list of strings."""
    table, inside = {}, False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.split("#", 1)[0].strip() if '"' not in line else line.strip()
        if stripped.startswith("["):
            inside = re.fullmatch(r"\[\s*tool\s*\.\s*autodiff\s*\]", stripped) is not None
            continue
        if not inside or not stripped or stripped.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z_][\w-]*)\s*=\s*(.+?)\s*(#.*)?", stripped)
        if not match:
            raise ConfigProblem(f"{path}:{number}: [tool.autodiff] is read without tomllib on this Python: write "
                                "one `key = value` per line (or use Python 3.11)")
        key, value = match.group(1), match.group(2)
        if value.startswith("["):
            items = re.findall(r'"([^"]*)"|\'([^\']*)\'', value)
            table[key] = [a or b for a, b in items]
        elif value[:1] in "\"'":
            table[key] = value[1:-1]
        else:
            try:
                table[key] = float(value)
            except ValueError:
                raise ConfigProblem(f"{path}:{number}: {key}: cannot read {value!r} without tomllib") from None
    return table


def _config(table, folder: str, source: str) -> SuiteConfig:
    if not isinstance(table, dict):
        raise ConfigProblem(f"{source}: [tool.autodiff] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigProblem(f"{source}: [tool.autodiff] has {', '.join(unknown)}; it may have {', '.join(KEYS)}")
    patterns = table.get("patterns", list(DEFAULT_PATTERNS))
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise ConfigProblem(f"{source}: [tool.autodiff] patterns must be a list of file name patterns")
    tolerances = {}
    for key in ("rtol", "atol"):
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise ConfigProblem(f"{source}: [tool.autodiff] {key} must be a finite number >= 0")
            tolerances[key] = float(value)
    return SuiteConfig(tuple(patterns), tolerances.get("rtol"), tolerances.get("atol"), folder, source)

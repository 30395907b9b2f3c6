"""The golden record of an expression file: `name.expr.golden.json`, beside it.

    {
      "format": 1,
      "points": [
        {
          "at": {
            "a": 2.0,
            "b": 3.0
          },
          "grads": {
            "a": 3.0,
            "b": 2.0
          },
          "output": "e",
          "value": 6.0
        },
        {
          "at": {},
          "error": {
            "class": "RuntimeError",
            "message": "grad can be implicitly created only for scalar outputs"
          }
        }
      ]
    }

Written for people and diffs: keys sorted, one key per line, every number in the shortest
text that reads back to the same float, tensors as one-line lists, nan and infinities as the
strings "nan", "inf", "-inf". A point may be written by hand with only its "at": the next
`autodiff test --update` fills in its results.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

RECORD_SUFFIX = ".golden.json"
FORMAT = 1


class RecordProblem(Exception):
    """A record that cannot be read: not JSON, or not shaped as a record."""


def record_path(path) -> Path:
    return Path(str(path) + RECORD_SUFFIX)


def load(path) -> dict | None:
    """The record of an expression file, or None when it has none."""
    where = record_path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordProblem(f"{where}: cannot be read ({exc})") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordProblem(f"{where}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    _validate(record, where)
    return record


def _validate(record, where) -> None:
    if not isinstance(record, dict) or not isinstance(record.get("points", []), list):
        raise RecordProblem(f"{where}: a record is an object with a list of \"points\"")
    if record.get("format", FORMAT) != FORMAT:
        raise RecordProblem(f"{where}: record format {record.get('format')!r}; this autodiff reads format {FORMAT}")
    for number, point in enumerate(record.get("points", []), 1):
        if not isinstance(point, dict) or not isinstance(point.get("at", {}), dict):
            raise RecordProblem(f"{where}: point {number} must be an object with an \"at\" object of input values")


def point_key(at: dict) -> str:
    """The identity of a point: its input values, written canonically (2 and 2.0 are one point)."""
    return json.dumps(to_record(as_floats(at)), sort_keys=True)


def as_floats(value):
    """Input values as the engine takes them: numbers are floats (2 -> 2.0), at any depth."""
    if isinstance(value, dict):
        return {key: as_floats(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_floats(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def write(path, record: dict) -> bool:
    """Write the record of `path` if it changed; True when the file was written. The new text
    replaces the old in one step, so an interrupted run never leaves half a record."""
    where = record_path(path)
    text = dumps(record)
    try:
        if where.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    handle, temporary = tempfile.mkstemp(prefix=where.name + ".", dir=where.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, where)
    except BaseException:
        os.unlink(temporary)
        raise
    return True


# -- stable text -------------------------------------------------------------------------------------


def to_record(value):
    """Numbers and nested lists as a record holds them (nan and infinities as strings)."""
    if isinstance(value, dict):
        return {key: to_record(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_record(item) for item in value]  # nesting is bounded by a tensor's dimensions
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def from_record(value):
    """The inverse of to_record: "nan", "inf", "-inf" back to floats."""
    if isinstance(value, list):
        return [from_record(item) for item in value]
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    return value


def dumps(record: dict) -> str:
    """Objects one key per line with sorted keys; lists of numbers on one line."""
    lines: list = []
    _emit(to_record(record), 0, lines, "")
    return "".join(lines) + "\n"


def _emit(value, depth: int, lines: list, prefix: str) -> None:
    # Records nest a few levels (record, points, point, grads): recursion is bounded by the
    # format, not by the data, since tensors are written inline by json.dumps.
    pad = "  " * depth
    if isinstance(value, dict) and value:
        lines.append(prefix + "{\n")
        keys = sorted(value)
        for i, key in enumerate(keys):
            _emit(value[key], depth + 1, lines, f"{pad}  {json.dumps(key)}: ")
            lines.append(",\n" if i < len(keys) - 1 else "\n")
        lines.append(pad + "}")
    elif isinstance(value, list) and any(isinstance(item, dict) for item in value):
        lines.append(prefix + "[\n")
        for i, item in enumerate(value):
            _emit(item, depth + 1, lines, pad + "  ")
            lines.append(",\n" if i < len(value) - 1 else "\n")
        lines.append(pad + "]")
    else:
        lines.append(prefix + json.dumps(value, allow_nan=False, separators=(", ", ": ")))

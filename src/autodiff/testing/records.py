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

Beside the points a record keeps what its results depend on, and how closely they must match:

    "settings": {"dtype": "float64", "seed": 0}   the run uses these, whatever the command line
                                                  says (a different value applies with --update,
                                                  and is then recorded)
    "rtol": 1e-6, "atol": 1e-9                    the whole record's tolerances; a point may have
                                                  its own, and "tolerances": {"grad x": {"rtol":
                                                  1e-3}} for one quantity

`--update` keeps these hand-written keys. `--pending` writes the new record beside the old one,
as `name.expr.golden.new`, for `autodiff test review` or `accept` to settle.
"""

from __future__ import annotations

import json
import sys

from .. import codec
from .files import ReadProblem, path_text, read_regular, write_replacing

RECORD_SUFFIX = ".golden.json"
PENDING_SUFFIX = ".golden.new"
FORMAT = 1
SETTINGS = {"dtype": ("float64", "float32"), "seed": None}  # what a record may fix, and the values it may take


class RecordProblem(Exception):
    """A record that cannot be read: not JSON, or not shaped as a record."""


def record_path(path) -> str:
    """The record of an expression file, written as pathlib writes paths."""
    return path_text(str(path) + RECORD_SUFFIX)


def pending_path(path) -> str:
    """The pending record of an expression file (`x.expr.golden.new`)."""
    return path_text(str(path) + PENDING_SUFFIX)


MAX_RECORD_BYTES = 16 * 1024 * 1024  # a record larger than this is refused unread
MAX_NESTING = 64  # lists in a value nest at most this deep (a tensor's dimensions)


def load(path, where=None) -> dict | None:
    """The record of an expression file, or None when it has none. A record that is not a
    regular file, too large, not JSON, or not shaped as a record in every field is a
    RecordProblem with a one-line reason. `where`: read this file instead (a pending record)."""
    where = record_path(path) if where is None else path_text(where)
    try:
        data = read_regular(where, MAX_RECORD_BYTES)
    except ReadProblem as exc:
        raise RecordProblem(f"{where}: {exc}") from None
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordProblem(f"{where}: not UTF-8 text (byte {exc.start})") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordProblem(f"{where}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise RecordProblem(f"{where}: not a record: JSON nested too deeply") from None
    except ValueError:  # not JSONDecodeError: an integer longer than Python converts (4300 digits)
        raise RecordProblem(f"{where}: not a record: an integer of more than {_digit_limit()} digits") from None
    _validate(record, where)
    return record


def _digit_limit() -> int:
    return getattr(sys, "get_int_max_str_digits", lambda: 4300)()


def _validate(record, where) -> None:
    if not isinstance(record, dict) or not isinstance(record.get("points", []), list):
        raise RecordProblem(f"{where}: a record is an object with a list of \"points\"")
    if record.get("format", FORMAT) != FORMAT or isinstance(record.get("format"), bool):
        raise RecordProblem(f"{where}: record format {_brief(record.get('format'))}; this autodiff reads format {FORMAT}")
    problem = _tolerance_problem(record)
    if problem:
        raise RecordProblem(f"{where}: {problem}")
    settings = record.get("settings", {})
    if not isinstance(settings, dict):
        raise RecordProblem(f"{where}: \"settings\" must be an object, as {{\"dtype\": \"float64\", \"seed\": 0}}")
    for key, value in settings.items():
        if key not in SETTINGS:
            raise RecordProblem(f"{where}: \"settings\" has {_brief(key)}; a record may fix {', '.join(SETTINGS)}")
        allowed = SETTINGS[key]
        if allowed is None and not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63):
            raise RecordProblem(f"{where}: the setting {key} must be a non-negative integer, not {_brief(value)}")
        if allowed is not None and value not in allowed:
            raise RecordProblem(f"{where}: the setting {key} must be one of {', '.join(allowed)}, not {_brief(value)}")
    for number, point in enumerate(record.get("points", []), 1):
        if not isinstance(point, dict) or not isinstance(point.get("at", {}), dict):
            raise RecordProblem(f"{where}: point {number} must be an object with an \"at\" object of input values")
        problem = _point_problem(point)
        if problem:
            raise RecordProblem(f"{where}: point {number}: {problem}")


def _tolerance_problem(holder: dict) -> str:
    for key in ("rtol", "atol"):
        if key in holder:
            value = holder[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
                return f"\"{key}\" must be a finite number >= 0, not {_brief(value)}"
    return ""


def _point_problem(point: dict) -> str:
    """What is wrong with a point's fields ('' when nothing is)."""
    problem = _tolerance_problem(point)
    if problem:
        return problem
    tolerances = point.get("tolerances", {})
    if not isinstance(tolerances, dict):
        return "\"tolerances\" must be an object, as {\"grad x\": {\"rtol\": 1e-6}}"
    for quantity, held in tolerances.items():
        if not isinstance(held, dict) or set(held) - {"rtol", "atol"}:
            return f"\"tolerances\" of {_brief(quantity)} must be an object of \"rtol\" and \"atol\""
        problem = _tolerance_problem(held)
        if problem:
            return f"\"tolerances\" of {_brief(quantity)}: {problem}"
    for name, value in point.get("at", {}).items():
        if not _text_ok(name) or not name.isidentifier():
            return f"\"at\" has a key that is not an input name: {_brief(name)}"
        problem = _value_problem(value, allow_null=False)
        if problem:
            return f"the value of {name} {problem}"
    if "output" in point and not (isinstance(point["output"], str) and _text_ok(point["output"])):
        return f"\"output\" must be a name, not {_brief(point['output'])}"
    if "value" in point:
        problem = _value_problem(point["value"], allow_null=True)
        if problem:
            return f"\"value\" {problem}"
    if "grads" in point:
        if not isinstance(point["grads"], dict):
            return "\"grads\" must be an object of input names"
        for name, value in point["grads"].items():
            if not _text_ok(name) or not name.isidentifier():
                return f"\"grads\" has a key that is not an input name: {_brief(name)}"
            problem = _value_problem(value, allow_null=True)
            if problem:
                return f"the gradient of {name} {problem}"
    if "error" in point:
        error = point["error"]
        if not (isinstance(error, dict) and all(isinstance(error.get(k), str) and _text_ok(error[k])
                                                for k in ("class", "message"))):
            return "\"error\" must be an object with the strings \"class\" and \"message\""
    return ""


def _value_problem(value, allow_null: bool) -> str:
    """'' for a number, "nan"/"inf"/"-inf", or nested lists of them; else what is wrong."""
    if type(value) is float:
        return ""  # most values of most records
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            return f"nests lists more than {MAX_NESTING} deep"
        if isinstance(item, list):
            stack.extend((x, depth + 1) for x in item)
        elif isinstance(item, bool):
            return "must be a number, not true or false"
        elif isinstance(item, int):
            try:
                float(item)
            except OverflowError:
                return "is an integer too large for a float"
        elif isinstance(item, float):
            pass
        elif isinstance(item, str):
            if item not in codec.NOT_FINITE:
                return f"must be a number, not the string {_brief(item)}"
        elif item is None:
            if not (allow_null and depth == 0):
                return "must be a number, not null"
        else:
            return f"must be a number or a list of numbers, not {type(item).__name__}"
    return ""


def _text_ok(text) -> bool:
    """A string that can be written out again: no lone surrogates (JSON's "\\ud800")."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _brief(value) -> str:
    """A value from a hostile record, as a message may quote it: short, ASCII, escaped."""
    text = json.dumps(value, ensure_ascii=True) if not isinstance(value, (dict, list)) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def point_key(at: dict) -> str:
    """The identity of a point: its input values, written canonically (2 and 2.0 are one point)."""
    if not at:
        return "{}"  # the file's own defaults: most points of most suites
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


def write(path, record: dict, where=None) -> bool:
    """Write the record of `path` if it changed; True when the file was written. The new text
    replaces the old in one step, so an interrupted run never leaves half a record.
    `where`: write this file instead (a pending record)."""
    where = record_path(path) if where is None else path_text(where)
    text = dumps(record)
    try:
        if read_regular(where, MAX_RECORD_BYTES) == text.encode("utf-8"):
            return False
    except ReadProblem:
        pass
    write_replacing(where, text.encode("utf-8"), "record")
    return True


# -- stable text -------------------------------------------------------------------------------------


# Numbers and nested lists as a record holds them, nan and the infinities as words, and back.
to_record = codec.to_json
from_record = codec.from_json


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

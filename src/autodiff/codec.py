"""Values as text and as JSON, in one place: what `--at`, `--points`, golden records, explain's
and every command's JSON, and the notebook read and write.

- a value is a Python number, a nested list of numbers, or a NumPy array; a run makes the only
  Tensor of it (the language's inputs);
- JSON has no number for NaN and the infinities, so every format spells them with the words
  of NOT_FINITE, which the language reads too (its constants `nan` and `inf`);
- `parse` reads a literal (a number, one of those words, or a JSON list of them): the
  plain values of `--at` and `--points`, with no program run to read them.

Nesting follows a tensor's dimensions (at most 64), so the recursion here stays shallow.
"""

from __future__ import annotations

import math

import numpy as np

from ._text import shown

NOT_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
# what Python's float() reads besides: a cell or an --at value may say them too
_ALSO_READ = {"infinity", "-infinity"}


def word(value: float) -> str | None:
    """The word of a float JSON has no number for ("nan", "inf", "-inf"); None for a finite one."""
    if math.isfinite(value):
        return None
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def to_python(value):
    """A host array or number as Python numbers and nested lists, at its own precision.

    float32 values keep their shortest float32 text (0.1, not 0.10000000149011612).
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and value.dtype.itemsize < 8:
            # str() of a float32 scalar is its shortest text; as a Python float it would be 1.100000023841858
            shortest = [float(str(v)) for v in value.reshape(-1)]
            return np.array(shortest, dtype=object).reshape(value.shape).tolist()
        return value.tolist()
    if isinstance(value, np.generic):
        if value.dtype.kind == "f" and value.dtype.itemsize < 8:
            return float(str(value))
        return value.item()
    return value


def to_json(value):
    """A value (array, number, nested lists and tuples, dict) ready for json.dumps: Python
    numbers and lists, with the words of NOT_FINITE for what JSON has no number for."""
    value = to_python(value)
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, float):
        return word(value) or value
    return value


def from_json(value):
    """to_json's inverse: the words back to floats, in nested lists too."""
    if isinstance(value, list):
        return [from_json(item) for item in value]
    if isinstance(value, str) and value in NOT_FINITE:
        return NOT_FINITE[value]
    return value


def number(value) -> float | None:
    """A JSON scalar as a float (a float or one of the words); None for anything else."""
    if type(value) is float:
        return value
    if type(value) is str:
        return NOT_FINITE.get(value)
    return None


def text(value) -> str:
    """One value on one line, exactly: a number as Python writes it (the words for nan and the
    infinities), true or false, a list as compact JSON."""
    value = to_python(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return word(value) or repr(value)
    if isinstance(value, (list, tuple)):
        import json

        return json.dumps(to_json(value), separators=(", ", ": "))
    return str(value)


def json_text(value) -> str:
    """A value as JSON text (the words for what JSON has no number for)."""
    import json

    return json.dumps(to_json(value), allow_nan=False, separators=(", ", ": "))


class OutOfRange(ValueError):
    """A number written beyond float64's range (`1e400`): it would be read as inf without a word."""


def _overflow(text: str) -> OutOfRange:
    text = text.strip()
    shortened = text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"
    sign = "-" if text.startswith("-") else ""
    return OutOfRange(f"{shown(shortened)} is beyond the range of float64 (at most about 1.8e308): write {sign}inf "
                      f"for {'minus ' if sign else ''}infinity")


def parse(literal: str):
    """A literal as a number or nested lists of floats: a number (`2`, `-1.5e3`, `nan`, `inf`) or
    a JSON list of numbers and those words. ValueError says what is wrong; OutOfRange, a number
    beyond float64's range (only the words are infinite)."""
    literal = literal.strip()
    if not literal:
        raise ValueError("the value is missing")
    if literal[0] == "[":
        return parse_json(loads(literal))
    if literal.lstrip("+-").isdigit():
        if len(literal.lstrip("+-0")) > 308 and abs(int(literal)) > MAX_FLOAT:
            raise _overflow(literal)
        return int(literal)  # an integer stays one, as Python and the language read it
    value = float(literal)  # Python's reading: also "Infinity", "1e3"
    if math.isinf(value) and literal.lstrip("+-").lower() not in ("inf", "infinity"):
        raise _overflow(literal)
    return value


def parse_json(value):
    """A value read from JSON (a JSON Lines point) as floats: numbers, the words, nested lists."""
    if isinstance(value, list):
        return [parse_json(v) for v in value]
    if isinstance(value, str):
        if value.lower() in NOT_FINITE or value.lower() in _ALSO_READ:
            return float(value)
        raise ValueError(f"{shown(value)!r} is not a number")
    if value is None:
        raise ValueError("the value is missing (null)")
    if isinstance(value, bool):
        import json

        raise ValueError(f"{json.dumps(value)} is not a number")
    if not isinstance(value, (int, float)):
        raise ValueError(f"{shown(str(value))} is not a number")
    if isinstance(value, int) and abs(value) > MAX_FLOAT:
        raise _overflow(str(value))
    return float(value)


MAX_FLOAT = 1.7976931348623157e308


def _json_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # JSON has no infinite number: 1e400 was written
        raise _overflow(text)
    return value


def loads(text: str):
    """JSON text as Python values, a number beyond float64's range refused (OutOfRange)."""
    import json

    return json.loads(text, parse_float=_json_float)

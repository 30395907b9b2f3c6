"""Numbers as scripts read them: shortest exact text, and NaN/infinity as strings in JSON."""

from __future__ import annotations

import math

import numpy as np


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


def for_json(value):
    """Like to_python, with nan and infinities as the strings "nan", "inf", "-inf"."""
    value = to_python(value)
    if isinstance(value, list):
        return [for_json(v) for v in value]  # nesting is bounded by the number of dimensions
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def scalar_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    return str(value)


def plain_text(value) -> str:
    """One value on one line: a number as Python writes it, a tensor as a JSON list."""
    import json

    if value is None:
        return "null"
    python = to_python(value)
    if isinstance(python, list):
        return json.dumps(for_json(python), separators=(", ", ": "))
    if isinstance(python, tuple):
        return json.dumps(list(python))
    return scalar_text(python)


def human_text(value, indent: int = 0) -> str:
    """A value for people: numbers with 10 significant digits, tensors laid out as PyTorch prints them."""
    from ..._formatting import values_str

    if value is None:
        return "—"
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return values_str(value, indent)
    python = to_python(value)
    if isinstance(python, float):
        return scalar_text(python) if not math.isfinite(python) else f"{python:.10g}"
    if isinstance(python, tuple):
        return str(python)
    return scalar_text(python)

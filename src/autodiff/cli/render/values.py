"""Numbers as text: shortest exact text for scripts, 10 digits for people (the plain values are program/values.py)."""

from __future__ import annotations

import math

import numpy as np

from ...program.values import for_json, to_python


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

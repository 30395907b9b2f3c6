"""Results as plain Python: numbers and nested lists at their own precision, and NaN and
infinities spelled as the strings "nan", "inf", "-inf" where a format has no word for them."""

from __future__ import annotations

import math

import numpy as np


def host(value):
    """A tensor's values as a NumPy array on the host (or None)."""
    if value is None:
        return None
    return value.numpy(force=True)  # force: whether it requires grad or not, as detach().numpy() would


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

"""Numbers as text: shortest exact text for scripts (autodiff/codec.py's), 10 digits for people."""

from __future__ import annotations

import math

import numpy as np

from ... import codec
from ...codec import to_python


scalar_text = codec.text


def plain_text(value) -> str:
    """One value on one line: a number as Python writes it, a tensor as a JSON list."""
    return "null" if value is None else codec.text(value)


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

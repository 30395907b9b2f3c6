"""A point's results against its record: names exactly, numbers within tolerances.

Numbers match when |got - expected| <= atol + rtol * |expected|, element by element, with
nan matching nan and infinities matching themselves (numpy.isclose with equal_nan). The
defaults are tight for float64, loose enough for a different BLAS or CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .records import from_record

DEFAULT_RTOL = 1e-9
DEFAULT_ATOL = 1e-12


@dataclass
class Mismatch:
    point: dict  # the input values of the point ({}: the file's own defaults)
    quantity: str  # "value", "grad a", "output", "error", "point"
    expected: object
    got: object
    difference: str  # in words: "max abs 2.1e-06, rel 3.5e-07", "shape [2] vs [3]"...


def compare_point(at: dict, expected: dict, got: dict, rtol: float, atol: float) -> list:
    """Mismatches between a recorded point and a new evaluation of it (empty when they agree)."""
    found = []

    def differ(quantity, want, have, difference):
        found.append(Mismatch(at, quantity, want, have, difference))

    if "error" in expected or "error" in got:
        want, have = expected.get("error"), got.get("error")
        if want != have:
            if want is None:
                differ("error", "no error", _error_text(have), "an error instead of results")
            elif have is None:
                differ("error", _error_text(want), "no error", "results instead of the expected error")
            else:
                differ("error", _error_text(want), _error_text(have), "a different error")
        return found
    if expected.get("output") != got.get("output"):
        differ("output", expected.get("output"), got.get("output"), "another output variable")
    difference = _numbers_differ(expected.get("value"), got.get("value"), rtol, atol)
    if difference:
        differ("value", expected.get("value"), got.get("value"), difference)
    want_grads, have_grads = expected.get("grads", {}), got.get("grads", {})
    for name in sorted(set(want_grads) | set(have_grads)):
        if name not in have_grads:
            differ(f"grad {name}", want_grads[name], "(not an input any more)", "input missing")
        elif name not in want_grads:
            differ(f"grad {name}", "(not recorded)", have_grads[name], "a new input")
        else:
            difference = _numbers_differ(want_grads[name], have_grads[name], rtol, atol)
            if difference:
                differ(f"grad {name}", want_grads[name], have_grads[name], difference)
    return found


def _error_text(error: dict) -> str:
    return f"{error.get('class')}: {error.get('message')}"


def _numbers_differ(expected, got, rtol: float, atol: float) -> str:
    """'' when the two agree; otherwise how they differ, in words."""
    if expected is None or got is None:
        return "" if expected is None and got is None else ("null vs a value" if expected is None else "a value vs null")
    try:
        want = np.asarray(from_record(expected), dtype=np.float64)
        have = np.asarray(from_record(got), dtype=np.float64)
    except (TypeError, ValueError):
        return "" if expected == got else "not numbers"
    if want.shape != have.shape:
        return f"shape {list(have.shape)}, recorded {list(want.shape)}"
    close = np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return ""
    both_finite = np.isfinite(want) & np.isfinite(have)
    if not np.array_equal(np.isfinite(want), np.isfinite(have)) or not both_finite[~close].all():
        return f"{int((~close).sum())} of {close.size} element(s) differ in nan/inf"
    gap = np.abs(have - want)[~close]
    scale = np.abs(want)[~close]
    relative = np.max(np.where(scale > 0, gap / np.where(scale > 0, scale, 1), np.inf))
    where = "" if close.size == 1 else f" in {int((~close).sum())} of {close.size} elements"
    return f"max abs {np.max(gap):.3g}, rel {relative:.3g}{where}"

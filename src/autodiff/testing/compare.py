"""A point's results against its record: names exactly, numbers within tolerances.

Numbers match when |got - expected| <= atol + rtol * |expected|, element by element, with
nan matching nan and infinities matching themselves (numpy.isclose with equal_nan). The
defaults are tight for float64, loose enough for a different BLAS or CPU.

Tolerances come, most specific first, from the quantity (`"tolerances": {"grad x": {"rtol":
1e-6}}` in a point), the point (`"rtol"`/`"atol"` in it), the record (the same keys at its top
level), then the run (`--rtol`/`--atol`, `[tool.autodiff]`, the defaults below).

A difference is told, never shown as a wall of numbers: how many elements differ, the worst
one's index, expected and got, the absolute and relative error and the distance in units in
the last place (ULPs of float64).
"""

from __future__ import annotations

import math

import numpy as np

from .. import codec
from .._record import record
from .records import from_record

DEFAULT_RTOL = 1e-9
DEFAULT_ATOL = 1e-12


@record
class Mismatch:
    """One quantity at one point that differs from its record beyond the tolerances."""

    point: dict  # the input values of the point ({}: the file's own defaults)
    quantity: str  # "value", "grad a", "output", "error", "point"
    expected: object  # for a tensor: its worst element
    got: object
    difference: str  # in words: "abs 2.1e-06, rel 3.5e-07, 1.2e+09 ulp", "shape [2] vs [3]"...
    index: list | None = None  # the worst element of a tensor


@record
class Difference:
    """How two values differ, in words, with the values themselves where they help."""

    text: str
    expected: object = None
    got: object = None
    index: list | None = None


def tolerance_for(quantity: str, point: dict, record: dict, rtol: float, atol: float) -> tuple:
    """The (rtol, atol) a quantity of a recorded point is compared with."""
    for layer in (record, point, (point.get("tolerances") or {}).get(quantity) or {}):
        rtol = float(layer.get("rtol", rtol))
        atol = float(layer.get("atol", atol))
    return rtol, atol


def _tolerances(point: dict, record: dict, rtol: float, atol: float):
    """tolerance_for(quantity, point, record, rtol, atol) as a function of the quantity, with
    the record's and the point's layers worked out once."""
    for layer in (record, point):
        rtol = float(layer.get("rtol", rtol))
        atol = float(layer.get("atol", atol))
    by_quantity = point.get("tolerances")
    if not by_quantity:
        return lambda quantity: (rtol, atol)
    return lambda quantity: tolerance_for(quantity, {}, by_quantity.get(quantity) or {}, rtol, atol)


def compare_point(at: dict, expected: dict, got: dict, rtol: float, atol: float, record: dict | None = None) -> list:
    """Mismatches between a recorded point and a new evaluation of it (empty when they agree)."""
    found = []
    record = record or {}

    def differ(quantity, want, have, difference, index=None):
        found.append(Mismatch(at, quantity, want, have, difference, index))

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

    tolerances = _tolerances(expected, record, rtol, atol)

    def numbers(quantity, want, have):
        found_rtol, found_atol = tolerances(quantity)
        difference = numbers_differ(want, have, found_rtol, found_atol)
        if difference:
            if difference.expected is not None:
                differ(quantity, difference.expected, difference.got, difference.text, difference.index)
            else:
                differ(quantity, want, have, difference.text)

    numbers("value", expected.get("value"), got.get("value"))
    want_grads, have_grads = expected.get("grads", {}), got.get("grads", {})
    for name in sorted(set(want_grads) | set(have_grads)):
        if name not in have_grads:
            differ(f"grad {name}", want_grads[name], "(not an input any more)", "input missing")
        elif name not in want_grads:
            differ(f"grad {name}", "(not recorded)", have_grads[name], "a new input")
        else:
            numbers(f"grad {name}", want_grads[name], have_grads[name])
    return found


def _error_text(error: dict) -> str:
    return f"{error.get('class')}: {error.get('message')}"


def ulps(a, b) -> np.ndarray:
    """The distance between float64 values in units in the last place: how many representable
    doubles lie between them (0 for equal values, +0 and -0 included). Computed on int64 views
    of the bits, mapped so that the integers are ordered as the floats are."""
    shape = np.shape(a)
    a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
    b = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)

    def ordered(x):
        bits = x.view(np.int64).astype(object)  # Python ints: the difference may not fit 64 bits
        return np.where(bits < 0, -(bits & 0x7FFFFFFFFFFFFFFF), bits)

    return np.abs(ordered(a) - ordered(b)).reshape(shape)


def numbers_differ(expected, got, rtol: float, atol: float) -> Difference | None:
    """None when the two agree; otherwise how they differ."""
    want, have = _number(expected), _number(got)
    if want is not None and have is not None and scalars_close(want, have, rtol, atol):
        return None  # two numbers that agree, told without NumPy (most of what a run compares)
    return _arrays_differ(expected, got, rtol, atol)


_number = codec.number  # a record's scalar as a float (the words for nan and the infinities too), else None


def scalars_close(want: float, have: float, rtol: float, atol: float) -> bool:
    """numpy.isclose(have, want, rtol, atol, equal_nan=True) for two floats, in plain Python
    (a fiftieth of the time): |have - want| <= atol + rtol * |want| where want is finite,
    infinities equal to themselves only, nan equal to nan."""
    return ((abs(have - want) <= atol + rtol * abs(want) and math.isfinite(want)) or have == want
            or (have != have and want != want))


def _arrays_differ(expected, got, rtol: float, atol: float) -> Difference | None:
    """numbers_differ for every shape, with NumPy."""
    if expected is None or got is None:
        if expected is None and got is None:
            return None
        return Difference("null vs a value" if expected is None else "a value vs null")
    try:
        want = np.asarray(from_record(expected), dtype=np.float64)
        have = np.asarray(from_record(got), dtype=np.float64)
    except (TypeError, ValueError):
        return None if expected == got else Difference("not numbers")
    if want.shape != have.shape:
        return Difference(f"shape {list(have.shape)}, recorded {list(want.shape)}")
    close = np.isclose(have, want, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = ~close
    count, total = int(bad.sum()), close.size
    finite = np.isfinite(want) & np.isfinite(have)
    gap = np.where(bad & finite, np.abs(have - want), -1.0)
    if (bad & ~finite).any():  # nan or infinity where the other has a number: the worst of all
        worst = np.argwhere(bad & ~finite)[0]
    else:
        worst = np.unravel_index(int(np.argmax(gap)), gap.shape)
    worst = tuple(int(i) for i in worst)
    w, h = float(want[worst]), float(have[worst])
    if np.isfinite(w) and np.isfinite(h):
        absolute = abs(h - w)
        relative = absolute / abs(w) if w != 0 else float("inf")
        distance = int(ulps([w], [h])[0])
        text = f"abs {absolute:.3g}, rel {relative:.3g}, {_ulp_text(distance)} ulp"
    else:
        text = "nan/inf differs"
    if total > 1:
        text = f"{count} of {total} elements differ, worst at {list(worst)}: {text}"
    return Difference(text, w, h, list(worst) if want.ndim else None)


def _ulp_text(distance: int) -> str:
    return str(distance) if distance < 100_000 else f"{float(distance):.3g}"

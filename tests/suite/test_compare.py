"""Comparison with a record: tolerances at their edges, nan, shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autodiff.testing.compare import (_arrays_differ, _tolerances, compare_point, numbers_differ, scalars_close,
                                      tolerance_for)
from autodiff.testing.records import to_record

RECORDED = {"output": "e", "value": 100.0, "grads": {"a": [1.0, 0.0], "b": "nan"}}


def got(**changes):
    return {**RECORDED, **changes}


def test_identical_results_agree():
    assert compare_point({}, RECORDED, got(), 1e-9, 1e-12) == []


@pytest.mark.parametrize("value, agrees", [
    (100.0 + 1e-7 + 1e-12, True),  # |diff| <= atol + rtol * |expected|, just
    (100.0 + 1.1e-7, False),
    (100.0 - 1e-7, True),
])
def test_tolerance_edges(value, agrees):
    mismatches = compare_point({}, RECORDED, got(value=value), rtol=1e-9, atol=1e-12)
    assert (mismatches == []) is agrees
    if not agrees:
        assert mismatches[0].quantity == "value" and mismatches[0].difference.startswith("abs 1.1e-07, rel 1.1e-09, ")


def test_atol_governs_near_zero():
    assert compare_point({}, RECORDED, got(grads={"a": [1.0, 5e-13], "b": "nan"}), 1e-9, 1e-12) == []
    [m] = compare_point({}, RECORDED, got(grads={"a": [1.0, 2e-12], "b": "nan"}), 1e-9, 1e-12)
    assert (m.quantity, m.difference) == ("grad a", "1 of 2 elements differ, worst at [1]: abs 2e-12, rel inf, "
                                                    "4.43e+18 ulp")
    assert (m.expected, m.got, m.index) == (0.0, 2e-12, [1])  # the worst element, never the whole tensor


def test_nan_matches_nan_only():
    [m] = compare_point({}, RECORDED, got(grads={"a": [1.0, 0.0], "b": 1.0}), 1e-9, 1e-12)
    assert (m.quantity, m.difference) == ("grad b", "nan/inf differs")
    [m] = compare_point({}, RECORDED, got(value="inf"), 1e-9, 1e-12)
    assert m.difference == "nan/inf differs"


def test_shapes_names_and_inputs():
    [m] = compare_point({}, RECORDED, got(grads={"a": [1.0, 0.0, 0.0], "b": "nan"}), 1e-9, 1e-12)
    assert m.difference == "shape [3], recorded [2]"
    [m] = compare_point({}, RECORDED, got(output="f"), 1e-9, 1e-12)
    assert (m.quantity, m.expected, m.got) == ("output", "e", "f")
    kinds = {m.quantity: m.difference for m in compare_point({}, RECORDED, got(grads={"a": [1.0, 0.0], "c": 1.0}),
                                                             1e-9, 1e-12)}
    assert kinds == {"grad b": "input missing", "grad c": "a new input"}


def test_expected_errors():
    error = {"error": {"class": "RuntimeError", "message": "grad can be implicitly created only for scalar outputs"}}
    assert compare_point({}, error, dict(error), 1e-9, 1e-12) == []
    [m] = compare_point({}, error, RECORDED, 1e-9, 1e-12)
    assert m.difference == "results instead of the expected error"
    [m] = compare_point({}, RECORDED, error, 1e-9, 1e-12)
    assert (m.expected, m.difference) == ("no error", "an error instead of results")
    other = {"error": {"class": "EvaluationProblem", "message": "'+' of shapes [2] and [3]"}}
    [m] = compare_point({}, error, other, 1e-9, 1e-12)
    assert m.got == "EvaluationProblem: '+' of shapes [2] and [3]" and m.difference == "a different error"


# -- the scalar fast path ---------------------------------------------------------------------------------

EDGES = [0.0, -0.0, 1.0, -1.0, 5e-324, 1e-300, 1e300, 1.7976931348623157e308, float("inf"), float("-inf"),
         float("nan")]
finite_tolerances = st.floats(min_value=0.0, max_value=1e300, allow_nan=False, allow_infinity=False)


@given(want=st.floats() | st.sampled_from(EDGES), have=st.floats() | st.sampled_from(EDGES),
       rtol=finite_tolerances | st.sampled_from([0.0, 1e-9, 1e-3, 1.0]),
       atol=finite_tolerances | st.sampled_from([0.0, 1e-12, 5e-324, 1.0]))
@settings(max_examples=500, deadline=None)
def test_scalar_fast_path_agrees_with_numpy(want, have, rtol, atol):
    """Two numbers are close exactly when numpy.isclose says so (nan, infinities, overflow
    of the tolerance, subnormals), and a difference is told as the general path tells it."""
    with np.errstate(all="ignore"):  # rtol * |want| may overflow: inf, in NumPy as in Python
        assert scalars_close(want, have, rtol, atol) is bool(np.isclose(have, want, rtol=rtol, atol=atol,
                                                                        equal_nan=True))
        stored = [to_record(want), to_record(have)]  # as records hold them: nan and infinities as strings
        assert repr(numbers_differ(*stored, rtol, atol)) == repr(_arrays_differ(*stored, rtol, atol))  # nan: by text


@pytest.mark.parametrize("expected, got", [(1, 1.0), (True, 1.0), ([1.0], [1.0]), (None, 1.0), ("x", "x"),
                                          (1.0, [1.0]), ("nan", "nan"), ("inf", 1e308)])
def test_other_values_take_the_general_path(expected, got):
    assert repr(numbers_differ(expected, got, 1e-9, 1e-12)) == repr(_arrays_differ(expected, got, 1e-9, 1e-12))


@pytest.mark.parametrize("record", [{}, {"rtol": 1e-6}, {"rtol": 1e-6, "atol": 1e-3}])
@pytest.mark.parametrize("point", [{}, {"atol": 2e-9}, {"tolerances": {"grad x": {"rtol": 0.5}}},
                                   {"rtol": 1, "tolerances": {"value": {"atol": 3}, "grad y": {}}}])
def test_tolerances_worked_out_once_per_point_are_tolerance_for(record, point):
    tolerances = _tolerances(point, record, 1e-9, 1e-12)
    for quantity in ("value", "grad x", "grad y"):
        assert tolerances(quantity) == tolerance_for(quantity, point, record, 1e-9, 1e-12)

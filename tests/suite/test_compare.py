"""Comparison with a record: tolerances at their edges, nan, shapes, errors."""

from __future__ import annotations

import pytest

from autodiff.testing.compare import compare_point

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

"""Golden records: stable, diff-friendly text that reads back to the same numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autodiff.testing.records import RecordProblem, dumps, from_record, load, point_key, record_path, write

RECORD = {
    "format": 1,
    "points": [
        {"at": {"b": 3.0, "a": 2.0}, "output": "e", "value": 6.0, "grads": {"b": 2.0, "a": [3.0, float("nan")]}},
        {"at": {}, "error": {"class": "RuntimeError", "message": "grad can be implicitly created only for scalar outputs"}},
    ],
}


def test_records_are_sorted_one_key_per_line_with_lists_inline():
    assert dumps(RECORD) == """\
{
  "format": 1,
  "points": [
    {
      "at": {
        "a": 2.0,
        "b": 3.0
      },
      "grads": {
        "a": [3.0, "nan"],
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
"""


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=6))
def test_every_float_reads_back_exactly(values):
    text = dumps({"points": [{"at": {}, "value": values}]})
    back = from_record(json.loads(text)["points"][0]["value"])
    assert all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(values, back))
    assert dumps(json.loads(text)) == text  # and writing what was read changes nothing


def test_the_same_point_whatever_the_number_type():
    assert point_key({"x": 2, "y": [1, 2]}) == point_key({"y": [1.0, 2.0], "x": 2.0})
    assert point_key({"x": 2}) != point_key({"x": 3})


def test_write_replaces_only_when_the_text_changes(tmp_path):
    path = tmp_path / "f.expr"
    assert write(path, RECORD) is True
    assert write(path, RECORD) is False
    assert load(path)["points"][0]["output"] == "e"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.expr.golden.json"]  # no temporary file left


def test_missing_record_is_none(tmp_path):
    assert load(tmp_path / "nothing.expr") is None


@pytest.mark.parametrize("text, message", [
    ("{", r"f\.expr\.golden\.json:1:2: not valid JSON"),
    ("[1, 2]", "a record is an object with a list of \"points\""),
    ('{"points": {}}', "a record is an object with a list of \"points\""),
    ('{"points": [3]}', "point 1 must be an object"),
    ('{"points": [{"at": 3}]}', "point 1 must be an object"),
    ('{"format": 99, "points": []}', "record format 99; this autodiff reads format 1"),
    ('{"points": [{"at": {"x": 1' + "0" * 5000 + '}}]}', "not a record: an integer of more than 4300 digits"),
])
def test_broken_records_are_reported(tmp_path, text, message):
    path = tmp_path / "f.expr"
    Path(record_path(path)).write_text(text)
    with pytest.raises(RecordProblem, match=message):
        load(path)

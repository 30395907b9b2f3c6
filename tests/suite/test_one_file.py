"""One file against its record: pass, fail, expected errors, new files, --update round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autodiff.testing.one_file import ERRORED, FAILED, NEW, PASSED, UPDATED, Settings, run_file
from autodiff.testing.records import load, record_path

from .conftest import NONSCALAR, TUTORIAL, WITH_DEFAULTS

UPDATE = Settings(update=True)
CHECK = Settings()


def test_a_new_file_until_recorded_then_it_passes(suite):
    path = suite.write("f.expr", WITH_DEFAULTS)
    result = run_file(path, CHECK)
    assert (result.status, result.message) == (NEW, "no golden record: run autodiff test --update to write one")
    assert run_file(path, UPDATE).status == UPDATED
    [point] = load(path)["points"]
    assert point["at"] == {} and point["output"] == "z" and set(point["grads"]) == {"x", "y"}
    assert run_file(path, CHECK).status == PASSED
    assert run_file(path, UPDATE).message == "record unchanged"


def test_a_changed_formula_fails_with_what_changed(suite):
    path = suite.write("f.expr", WITH_DEFAULTS)
    run_file(path, UPDATE)
    path.write_text(WITH_DEFAULTS.replace("sin(x)", "cos(x)"))
    result = run_file(path, CHECK)
    assert result.status == FAILED
    assert [(m.quantity, m.point) for m in result.mismatches] == [("value", {}), ("grad x", {})]
    assert result.mismatches[1].expected == 3.0 + __import__("math").cos(2.0)
    assert run_file(path, UPDATE).status == UPDATED
    assert run_file(path, CHECK).status == PASSED


def test_points_from_at_go_to_files_that_take_those_inputs(suite):
    tutorial = suite.write("t.expr", TUTORIAL)
    other = suite.write("o.expr", WITH_DEFAULTS)
    settings = Settings(update=True, extra_points=[{"a": 2, "b": 3, "c": 5, "d": 10}, {"x": 1.0}])
    assert run_file(tutorial, settings).message == "recorded 1 point(s)"
    assert run_file(other, settings).message == "recorded 2 point(s)"  # its defaults, and x = 1
    [point] = load(tutorial)["points"]
    assert point["at"] == {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}
    assert point["grads"] == {"a": 3.0, "b": 2.0, "c": 2.302585092994046, "d": 0.5}
    assert [p["at"] for p in load(other)["points"]] == [{}, {"x": 1.0}]
    assert run_file(tutorial, CHECK).status == PASSED and run_file(other, CHECK).status == PASSED


def test_a_file_that_needs_values_has_no_points_until_given_some(suite):
    path = suite.write("t.expr", TUTORIAL)
    result = run_file(path, UPDATE)
    assert result.status == ERRORED
    assert result.message.startswith("no points to record: the file needs values for a, b, d, c; give them with --at")
    assert not Path(record_path(path)).exists()


def test_points_written_by_hand_are_filled_in_by_update(suite):
    path = suite.write("t.expr", TUTORIAL)
    Path(record_path(path)).write_text(json.dumps({"points": [{"at": {"a": 1, "b": 1, "c": 1, "d": 1}}]}))
    result = run_file(path, CHECK)
    assert result.status == FAILED
    assert result.mismatches[0].difference == "not recorded yet: run autodiff test --update"
    run_file(path, UPDATE)
    assert load(path)["points"][0]["value"] == 1.0
    assert run_file(path, CHECK).status == PASSED


def test_an_expected_error_passes_while_it_stays_the_same(suite):
    path = suite.write("n.expr", NONSCALAR)
    run_file(path, UPDATE)
    assert load(path)["points"][0]["error"] == {
        "class": "RuntimeError", "message": "grad can be implicitly created only for scalar outputs"}
    assert run_file(path, CHECK).status == PASSED
    path.write_text(NONSCALAR.replace("y = x * x", "y = x * [1, 2]"))
    result = run_file(path, CHECK)  # another error than the comment expects: an error, not a pass
    assert result.status == ERRORED
    assert result.message.startswith(f"{path}:3:7: RuntimeError: '*' of shapes [3] and [2]")  # PyTorch's class
    assert result.excerpt == "    y = x * [1, 2]\n          ^"  # the line, and a caret under the place
    path.write_text(NONSCALAR.replace("y = x * x", "y = sum(x * x)"))
    result = run_file(path, CHECK)
    assert result.status == FAILED
    assert result.mismatches[0].difference == "results instead of the error its expect-error comment expects"


def test_a_syntax_error_is_never_an_expected_result(suite):
    for text in ("x = (1 +\n", "# expect-error: SyntaxProblem\nx = (1 +\n", "# expect-error: NameProblem\ny = lgo(2)\n"):
        path = suite.write("s.expr", text)
        result = run_file(path, UPDATE)
        assert result.status == ERRORED and "an invalid program never passes" in result.message
        assert not Path(record_path(path)).exists()
        assert run_file(path, CHECK).status == ERRORED


def test_broken_files_and_records_are_errors_not_crashes(suite):
    path = suite.write("f.expr", WITH_DEFAULTS)
    Path(record_path(path)).write_text("{not json")
    result = run_file(path, CHECK)
    assert result.status == ERRORED and "not valid JSON" in result.message
    binary = suite.root / "b.expr"
    binary.write_bytes(b"x = \xff\n")
    assert run_file(binary, CHECK).status == ERRORED
    assert run_file(suite.root / "missing.expr", CHECK).status == ERRORED


def test_a_record_without_points_for_a_file_without_defaults(suite):
    path = suite.write("t.expr", TUTORIAL)
    Path(record_path(path)).write_text('{"format": 1, "points": []}')
    result = run_file(path, CHECK)
    assert (result.status, result.message) == (
        ERRORED, "nothing to test: the file needs values for a, b, d, c and its record lists no points")


def test_tolerances_decide(suite):
    path = suite.write("f.expr", "x: input = 1.0\ny = x * 1.0\n")
    run_file(path, UPDATE)
    path.write_text("x: input = 1.0\ny = x * 1.000001\n")
    assert run_file(path, Settings(rtol=1e-9)).status == FAILED
    assert run_file(path, Settings(rtol=1e-5)).status == PASSED


# A program failing while it runs, the same in PyTorch, and the class both raise: what
# `# expect-error:` names and the record keeps (test_the_classes_are_pytorchs checks them).
RAISED = [
    ("y = ones(2, 3) @ ones(4)", lambda torch: torch.ones(2, 3) @ torch.ones(4), "RuntimeError"),
    ("y = ones(2, 3) + ones(4)", lambda torch: torch.ones(2, 3) + torch.ones(4), "RuntimeError"),
    ("y = reshape(ones(6), [4, 2])", lambda torch: torch.ones(6).reshape(4, 2), "RuntimeError"),
    ("y = 1 if ones(3) else 2", lambda torch: 1 if torch.ones(3) else 2, "RuntimeError"),
    ("y = ones(3)[5]", lambda torch: torch.ones(3)[5], "IndexError"),
    ("y = sum(ones(3), 4)", lambda torch: torch.ones(3).sum(4), "IndexError"),
    ("y = ones(3)[1.5]", lambda torch: torch.ones(3)[1.5], "IndexError"),
    ("y = ones(2) @ 2", lambda torch: torch.ones(2) @ 2, "TypeError"),
    ("for i in sum(ones(2)):\n    y = i", lambda torch: [i for i in torch.ones(2).sum()], "TypeError"),
]


@pytest.mark.parametrize("program, _, raised", RAISED)
def test_an_evaluation_error_is_named_by_pytorchs_class(suite, program, _, raised):
    path = suite.write("e.expr", f"# expect-error: {raised}\n{program}\n")
    assert run_file(path, UPDATE).status == UPDATED
    assert load(path)["points"][0]["error"]["class"] == raised
    assert run_file(path, CHECK).status == PASSED


@pytest.mark.torch
@pytest.mark.parametrize("_, pytorch, raised", RAISED)
def test_the_classes_are_pytorchs(_, pytorch, raised):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as caught:
        pytorch(torch)
    assert type(caught.value).__name__ == raised


def test_records_and_comments_of_the_old_class_name(suite):
    path = suite.write("m.expr", "# expect-error: RuntimeError: size mismatch\ny = ones(2, 3) @ ones(4)\n")
    run_file(path, UPDATE)
    record = load(path)
    record["points"][0]["error"]["class"] = "EvaluationProblem"  # as records were written before
    Path(record_path(path)).write_text(json.dumps(record))
    assert run_file(path, CHECK).status == PASSED  # the same error, by its message
    updated = run_file(path, UPDATE)
    assert [(m.expected, m.got) for m in updated.changes] == [(
        "EvaluationProblem: '@' of shapes [2, 3] and [4]: size mismatch, got input (2), mat (2x3), vec (4)",
        "RuntimeError: '@' of shapes [2, 3] and [4]: size mismatch, got input (2), mat (2x3), vec (4)")]
    assert load(path)["points"][0]["error"]["class"] == "RuntimeError"
    path.write_text("# expect-error: EvaluationProblem: size mismatch\ny = ones(2, 3) @ ones(4)\n")
    result = run_file(path, CHECK)
    assert result.status == ERRORED
    assert result.message == (f"{path}:2:16: RuntimeError: '@' of shapes [2, 3] and [4]: size mismatch, got input "
                              "(2), mat (2x3), vec (4) (not expected: expected errors are named by PyTorch's classes, "
                              "not EvaluationProblem: # expect-error: RuntimeError: '@' of shapes [2, 3] and [4]: size "
                              "mismatch, got input (2), mat (2x3), vec (4))")


def test_an_expect_error_comment_that_does_not_match_says_what_it_expected(suite):
    """The comment was found: the message says what it expects and why this error is not it."""
    path = suite.write("m.expr", "# expect-error: RuntimeError: size mismatch\ny = ones(2, 2) @ ones(1, 3)\n")
    result = run_file(path, CHECK)
    assert result.status == ERRORED
    assert result.message == (
        f"{path}:2:16: RuntimeError: '@' of shapes [2, 2] and [1, 3]: mat1 and mat2 shapes cannot be multiplied "
        "(2x2 and 1x3) (not the error its expect-error comment expects (RuntimeError: size mismatch): the class must "
        "be the same and the message must contain the comment's text; to expect this one, write # expect-error: "
        "RuntimeError: '@' of shapes [2, 2] and [1, 3]: mat1 and mat2 shapes cannot be multiplied (2x2 and 1x3))")

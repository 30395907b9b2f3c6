"""The program layer: a program run at a point and differentiated, checked, drawn, as plain data."""

import math

import numpy as np
import pytest

from autodiff import Tensor
from autodiff.language import Options, Source
from autodiff.program import (GradientProblem, NotATensor, UsageProblem, build_graph, check, differentiate, for_json,
                              forward, record, to_python)

TUTORIAL = "u = a * b\nt = log(d)\ne = u + t * c"
POINT = {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}


def test_differentiate_gives_the_value_and_every_gradient():
    run = differentiate(TUTORIAL, POINT)
    assert run.output.name == "e" and run.output.value == pytest.approx(6 + 5 * math.log(10))
    assert {k: float(v) for k, v in run.grads.items()} == pytest.approx(
        {"a": 3.0, "b": 2.0, "c": math.log(10), "d": 0.5})
    assert [q.name for q in run.inputs] == ["a", "b", "c", "d"]
    assert run.warnings == [] and run.hessian is None and run.graph is None and run.check is None


def test_the_run_after_backward_is_kept_for_callers_that_go_further():
    run = differentiate(Source(TUTORIAL, "tutorial.expr"), POINT)
    assert run.source == "tutorial.expr"
    assert isinstance(run.tensor, Tensor) and run.tensor is run.evaluation.output
    assert run.evaluation.inputs["d"].grad.item() == pytest.approx(0.5)
    assert run.differentiable and run.seed is None


def test_retained_gradients_and_notes():
    run = differentiate(TUTORIAL, POINT, retain=["u"])
    variables = {q.name: q for q in run.variables}
    assert float(variables["u"].grad) == 1.0 and variables["u"].note == ""
    assert variables["t"].grad is None and variables["t"].note == "not retained"
    every = differentiate(TUTORIAL, POINT, retain=["all"])
    assert float({q.name: q for q in every.variables}["t"].grad) == 5.0
    with pytest.raises(UsageProblem, match="does not assign"):
        differentiate(TUTORIAL, POINT, retain=["nope"])


def test_hessian_of_a_scalar_output():
    run = differentiate("x**3 * y", {"x": 2.0, "y": 3.0}, order=2)
    assert float(run.hessian[("x", "x")]) == pytest.approx(6 * 2 * 3)
    assert float(run.hessian[("x", "y")]) == pytest.approx(3 * 4)
    assert float(run.hessian[("y", "y")]) == 0.0
    with pytest.raises(UsageProblem):
        differentiate("x", {"x": 1.0}, order=3)


def test_wrt_constants_and_outputs_that_cannot_be_differentiated():
    run = differentiate(TUTORIAL, POINT, wrt=["a"])
    assert set(run.grads) == {"a"} and {q.name: q.note for q in run.inputs}["b"] == "not asked for (wrt)"
    constant = differentiate("1 + 2", {})
    assert constant.output.value == 3.0 and not constant.differentiable and constant.warnings
    with pytest.raises(GradientProblem, match="only for scalar outputs"):
        differentiate("x * 2", {"x": [1.0, 2.0]})
    ones = differentiate("x * 2", {"x": [1.0, 2.0]}, grad_output="ones")
    assert ones.grads["x"].tolist() == [2.0, 2.0]
    with pytest.raises(NotATensor):
        differentiate("def f(x):\n    return x\nf", {})


def test_check_against_finite_differences():
    run = differentiate(TUTORIAL, POINT)
    report = check(run)
    assert report.passed and run.check is report
    assert [e.name for e in report.entries] == ["a", "b", "c", "d"]
    cut = differentiate("y = detach(x) * x\ny", {"x": 3.0})
    assert not check(cut).passed
    assert any("stops gradients" in w.message for w in cut.warnings)


KINKED = [  # program, point, what the hint names, the slopes from the right and the left
    ("h = x * 2\ny = relu(h) + exp(x)", {"x": 0.0}, "relu of 0", (3.0, 1.0)),
    ("y = sum(abs(v) * [1, 3])", {"v": [0.0, 1.0]}, None, None),  # abs at 0: PyTorch's 0 is the mean, it passes
    ("y = 2 * x if x > 0 else x", {"x": 0.0}, None, (2.0, 1.0)),  # a branch: a kink with no op to name
]


@pytest.mark.parametrize("program,point,named,sides", KINKED)
def test_check_failing_at_a_kink_says_so_from_the_two_sides(program, point, named, sides):
    run = differentiate(program, point)
    report = check(run)
    assert report.passed == (sides is None)
    if sides is None:
        return
    [entry] = report.entries
    assert entry.sides == pytest.approx(sides, abs=1e-4)
    assert any("not differentiable in x at this point (a kink)" in w.message for w in run.warnings)
    located = [w for w in run.warnings if w.start is not None]
    assert [w.message for w in located] == ([f"check: {named} here"] if named else [])
    if named:
        assert run.evaluation.source.text[located[0].start:located[0].end] == "relu(h)"


def test_check_failing_at_a_jump_says_the_output_is_not_continuous():
    """floor at 1: from the left the difference quotient is 1/eps, so it grows tenfold as eps
    shrinks tenfold: a jump, not a kink (whose gap stays) and not a curve (whose gap shrinks)."""
    run = differentiate("y = floor(x)", {"x": 1.0})
    report = check(run)
    [entry] = report.entries
    assert not report.passed and entry.jump
    assert entry.sides == pytest.approx((0.0, 1 / report.eps), rel=1e-6)
    [hint] = [w.message for w in run.warnings if "jump" in w.message]
    assert hint.startswith("check: the output is not continuous in x at this point (a jump)")
    assert not any("kink" in w.message for w in run.warnings)


def test_check_failing_on_a_smooth_curve_claims_no_kink():
    """A gradient cut on purpose fails --check; the curve bends so fast that its one-sided slopes
    differ at eps, but they meet as the step shrinks: no kink is claimed."""
    run = differentiate("y = 10000 * detach(x) + sin(10000 * x)", {"x": math.pi / 40000})
    report = check(run)
    assert not report.passed and report.entries[0].sides is None
    assert not any("kink" in w.message for w in run.warnings)


def test_check_with_no_tolerance_takes_rounding_for_no_kink():
    run = differentiate("y = x * x * x", {"x": 0.3})
    report = check(run, atol=0.0, rtol=0.0)
    assert not report.passed and report.entries[0].sides is None  # the last digits differ, the slopes agree
    assert not any("kink" in w.message for w in run.warnings)


def test_the_graph_model():
    run = differentiate(TUTORIAL, POINT, graph=True)
    ops = [node.op for node in run.graph.nodes]
    assert ops[0] == "AddBackward0" and ops.count("AccumulateGrad") == 4
    assert run.graph.nodes[0].name == "e" and run.graph.children(0)
    again = build_graph(run.evaluation, run.tensor, limit=2)
    assert len(again.nodes) == 2 and again.left_out > 0
    drawn = record(TUTORIAL, POINT, backward=True)
    assert drawn.backward and [n.op for n in drawn.graph.nodes] == ops


def test_forward_records_nothing():
    run = forward(TUTORIAL, POINT, options=Options(seed=1))
    assert run.output.value == pytest.approx(6 + 5 * math.log(10))
    assert run.output.grad_fn is None and not run.output.requires_grad


def test_results_as_plain_python():
    values = to_python(np.array([1.5, np.nan]))
    assert values[0] == 1.5 and math.isnan(values[1]) and type(values[1]) is float
    assert to_python(np.float32(0.1)) == 0.1 and to_python(np.array(2.0)) == 2.0
    assert to_python(np.array([0.1], dtype=np.float32)) == [0.1]
    assert for_json(np.array([np.nan, np.inf, -np.inf, 1.0])) == ["nan", "inf", "-inf", 1.0]
    assert for_json(float("-inf")) == "-inf" and for_json(np.float64(np.nan)) == "nan"
    grads = differentiate("log(x)", {"x": 0.0}).grads
    assert for_json(grads["x"]) == "inf"


@pytest.mark.parametrize("values", [1.0, float("nan"), float("inf"), float("-inf"), [1.0, 2.0], [1.0, float("nan")],
                                    [[float("inf")], [0.0]]])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_gradient_warning_checks_numbers_as_numpy_does(values, dtype):
    from autodiff.program.run import _all_finite

    array = np.array(values, dtype=dtype)
    assert _all_finite(array) is bool(np.isfinite(array).all())


PLANCK = """h = 6.62607015e-34
c = 299792458.0
k = 1.380649e-23
B = 2 * h * c**2 / lam**5 / (exp(h * c / (lam * k * T)) - 1)
"""

RIGHT_BUT_HARD = [  # correct gradients that a fixed step of 1e-6 failed
    (PLANCK, {"lam": 500e-9, "T": 5000.0}),  # a wavelength of 5e-7: 1e-6 steps past zero
    ("sqrt(x)", {"x": 1e-9}),  # 1e-9 - 1e-6 is negative: nan
    ("sin(x)", {"x": 1e8}),  # 1e8 + 1e-6 is held 0.6% off
    ("x ** 2", {"x": 1e12}),  # 1e12 + 1e-6 == 1e12
    ("sum(exp(x) * x)", {"x": [1e-12, -3e-7, 0.0, 2.5, -40.0]}),  # each element its own step
]


@pytest.mark.parametrize("program,point", RIGHT_BUT_HARD, ids=["planck", "sqrt", "sin", "square", "tensor"])
def test_a_correct_gradient_passes_the_check_at_any_magnitude(program, point):
    run = differentiate(program, point)
    report = check(run)
    assert report.passed, [(e.name, e.analytical, e.numerical) for e in report.entries]


@pytest.mark.parametrize("program,point", RIGHT_BUT_HARD[1:4], ids=["sqrt", "sin", "square"])
def test_a_wrong_gradient_still_fails_the_check_at_that_magnitude(program, point):
    """Ten per cent off the gradient, at the same points: the check that passes the right one fails it."""
    [(name, value)] = point.items()
    run = differentiate(f"y = {program} + 0.1 * detach({program})", point)
    assert not check(run).passed


def test_each_elements_step_follows_its_magnitude():
    from autodiff.program.check import steps

    x = np.array([1e-9, -0.5, 0.0, 1.0, -3.0, 1e8, 1e12, 5e-324])
    step, raised = steps(x, 1e-6)
    assert step.tolist() == pytest.approx([1e-15, 5e-7, 1e-6, 1e-6, 1e-6, 2 ** 12 * 2 ** -52 * 1e8, 2 ** -40 * 1e12,
                                           1e-6], rel=1e-12)
    assert raised.tolist() == ["", "", "", "", "", "value", "value", ""]
    assert steps(x.astype(np.float32), 1e-3)[0][5] == pytest.approx(2 ** 8 * 2 ** -23 * 1e8, rel=1e-6)
    assert steps(x, 1e-3)[0][:4].tolist() == pytest.approx([1e-12, 5e-4, 1e-3, 1e-3])
    # where the output is large beside the gradient, its rounding sets the least step
    step, raised = steps(np.array([1e-12, 2.0]), 1e-6, output_rounding=1e-14, slope=np.array([1.0, 1e9]))
    assert step.tolist() == pytest.approx([16e-14 / (1e-5 + 1e-3), 1e-6]) and raised.tolist() == ["output", ""]


def test_a_step_near_its_values_scale_is_noted():
    run = differentiate("sin(x)", {"x": 1e8})
    check(run)
    assert [w.message for w in run.warnings] == [
        "check: x = 1e+08 moves by 9.09e-05, not by 1e-06, which is too fine for its rounding: a function that "
        "turns within 9.09e-05 of it cannot be checked there by finite differences"]
    assert run.warnings[0].kind == "note" and run.check.entries[0].step == pytest.approx(2 ** -40 * 1e8)
    square = differentiate("x ** 2", {"x": 1e12})
    check(square)
    assert [w.message for w in square.warnings] == [
        "check: x = 1e+12 moves by 1.78, not by 1e-06, which is too fine for its rounding and the output's (1e+24): "
        "a function that turns within 1.78 of it cannot be checked there by finite differences"]
    small = differentiate("sum(exp(x) * x)", {"x": [1e-12, 2.5]})
    check(small)
    assert [w.message for w in small.warnings] == [
        "check: x[0] = 1e-12 moves by 1.07e-10, not by 1e-18, whose difference would drown in the rounding of the "
        "output (30.5): a function that turns within 1.07e-10 of it cannot be checked there by finite differences"]
    large = differentiate("sum(v ** 2)", {"v": [3.0, -40.0, 0.5]})
    check(large, eps=0.05)
    assert [w.message for w in large.warnings] == [
        "check: v[0] = 3 (and 1 more) moves by 0.05, 2% of its magnitude: finite differences measure a secant there, "
        "not the slope; a smaller eps measures the slope"]
    quiet = differentiate("sum(v ** 2)", {"v": [3.0, -40.0, 0.5, 0.01]})
    check(quiet)
    assert quiet.warnings == []


def test_eps_is_a_step_above_0_and_below_1():
    from autodiff.program.errors import UsageProblem

    run = differentiate("x ** 2", {"x": 3.0})
    assert check(run, eps=1e-4).eps == 1e-4
    for eps in (0.0, -1e-6, 1.0, float("nan")):
        with pytest.raises(UsageProblem, match="the step relative to each value must be above 0 and below 1"):
            check(run, eps=eps)

"""`derive` never prints a wrong formula: each class of wrong formula once found, with the test
that would have caught it. The oracle is the engine at a *second* point: a formula that holds
only where it was derived (a value frozen in, a branch not checked) fails there."""

from __future__ import annotations

import math
import types
import warnings

import numpy as np
import pytest

from autodiff.program import derive as D
from autodiff.program import differentiate
from autodiff.symbolic import expr as E
from autodiff.symbolic.printing import to_text

from .test_derive import run_derived


def module_of(d) -> types.ModuleType:
    """The derived python module, imported (our own generated code, never a user's)."""
    module = types.ModuleType("derived")
    exec(compile(D.python_module(d), "<derived module>", "exec"), module.__dict__)  # noqa: S102
    return module


def engine_at(text: str, at: dict, order: int = 1):
    return differentiate(text, at, order=order)


def assert_holds_at(d, text: str, at: dict) -> None:
    """The derived module and the derived `expr` program, run at `at`, give grad's numbers there."""
    run = engine_at(text, at)
    value, grads = module_of(d).value_and_grad(**{n: at[n] for n in d.inputs})
    assert math.isclose(float(value), float(run.output.value), rel_tol=1e-12, abs_tol=1e-15)
    derived = run_derived(d, at)
    for x in d.derivatives:
        want = run.grads[x.wrt[0]]
        want = np.zeros(x.shape) if want is None else np.asarray(want, dtype=float)
        np.testing.assert_allclose(grads[x.wrt[0]], want, rtol=1e-10, atol=1e-13, err_msg=x.name)
        np.testing.assert_allclose(derived[x.name], want, rtol=1e-10, atol=1e-13, err_msg=x.name)


# -- values frozen into formulas -----------------------------------------------------------------------


@pytest.mark.parametrize("text, at, elsewhere", [
    ("y = x**2 + detach(x)", {"x": 3.0}, {"x": -1.25}),
    ("y = sum(x * detach(x))", {"x": [1.0, 2.0, 3.0]}, {"x": [0.5, -2.0, 4.0]}),
    ("y = x * x.detach() + x", {"x": 2.0}, {"x": 0.3}),
    ("with no_grad:\n    s = x * 2\ny = x * s", {"x": 1.5}, {"x": -0.75}),
])
def test_a_detached_value_stays_a_formula_never_a_number(text, at, elsewhere):
    d = D.derive(text, at)
    for x in d.derivatives:
        assert "detach(" in d.program or "no_grad" not in text
    assert_holds_at(d, text, elsewhere)


def test_detach_is_written_as_detach():
    d = D.derive("y = x**2 + detach(x)", {"x": 3.0})
    assert d.formula("x") == "2 * x"
    assert "x ** 2 + detach(x)" in D.python_module(d).replace("np.asarray(x)", "detach(x)")
    assert "3" not in D.python_module(d).split("def value_and_grad")[1]


def test_what_no_grad_computes_is_detached_as_a_whole():
    d = D.derive("with no_grad:\n    s = x * 2 + 1\ny = x * s", {"x": 1.5})
    assert d.formula("x") == "detach(2 * x + 1)"
    assert "s = detach(2 * x + 1)\n    y = x * s\n" in D.python_module(d).replace("np.asarray(", "detach(")


def test_a_class_label_is_a_symbol_of_the_formula():
    text = "y = cross_entropy(z, k)"
    at = {"z": [[1.0, 2.0, 3.0], [0.5, 0.1, 2.0]], "k": [2.0, 0.0]}
    d = D.derive(text, at)
    assert "k" in d.formula("z")
    assert_holds_at(d, text, {"z": [[0.3, -1.0, 2.0], [1.5, 0.2, 0.1]], "k": [0.0, 1.0]})


# -- seeds and non-finite points ----------------------------------------------------------------------


@pytest.mark.parametrize("text, at", [
    ("1/(x-y)", None),  # without --at every input is 0.75: x - y is 0
    ("log(x) * z", {"x": 0.0, "z": 1.0}),
    ("log(x) * z", {"x": -1.0, "z": 1.0}),
])
def test_a_formula_holds_no_nan_or_inf_the_program_did_not_write(text, at):
    d = D.derive(text, at)
    for x in d.derivatives:
        for node in E.postorder([x.expr]):
            if node.op == "const":
                assert math.isfinite(node.number), (x.name, x.formula)
            assert node.op != "tensor", (x.name, x.formula)
    module_of(d)  # imports: no np.array([nan]) to choke on
    assert d.formula("x") in ("-1 / t1 ** 2", "z / x")


def test_a_point_where_the_output_is_not_finite_is_warned_of_and_the_formulas_stay_symbolic():
    d = D.derive("log(x) * z", {"x": 0.0, "z": 1.0})
    assert any("not finite" in w.message for w in d.warnings)
    assert D.derive("log(x) * z", {"x": 2.0, "z": 1.0}).warnings == []


def test_without_values_nothing_is_warned_of_the_made_up_point():
    assert D.derive("1/(x-y)").warnings == []


def test_deriving_writes_no_numpy_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for text in ("1/(x-y)", "log(x) * z", "sqrt(x - y) + 1 / (x - y)"):
            d = D.derive(text, {"x": 1.0, "y": 1.0, "z": 2.0} if "z" in text else {"x": 1.0, "y": 1.0}, order=2)
            D.python_module(d), D.latex(d), D.markdown(d), D.expr_program(d)


# -- a sum's term that is a product with a number of its own ----------------------------------------------


def test_a_term_kept_whole_keeps_its_own_number_when_printed():
    x = [E.symbol(n) for n in "abcdef"]
    inner = E.mul(E.const(-2.0), *[E.call("exp", (s,), ()) for s in x])  # more factors than FLATTEN
    assert inner.op == "mul" and inner.args[0] == -2.0
    term = E.mul(E.const(2.0), inner)
    total = E.add(term, E.call("sin", (x[0],), ()))
    text = to_text(total)
    assert text.startswith("sin(a) - 4 * exp(a)") or text.startswith("-4 * exp(a)"), text


def test_the_smallest_wrong_second_derivative_found_is_right():
    text = "y = (1 + tanh(sqrt(x ** 2 + 0.5)) ** 2) ** 2"
    d = D.derive(text, {"x": 0.7}, order=2)
    hessian = engine_at(text, {"x": 0.7}, order=2).hessian[("x", "x")]
    assert math.isclose(hessian, 0.47303589911518906, rel_tol=1e-12)  # PyTorch's torch.autograd.functional.hessian
    assert math.isclose(float(run_derived(d, {"x": 0.7})["d2y_dx_dx"]), hessian, rel_tol=1e-12)
    assert math.isclose(float(module_of(d).hessian(0.7)["x"]["x"]), hessian, rel_tol=1e-12)


# -- code that guards itself -------------------------------------------------------------------------------

LOOP = """\
y = x
for i in range(3):
    if y > 1:
        y = y * 0.5 + log(y)
    else:
        y = y ** 2
"""


def test_a_condition_tested_on_each_turn_is_one_assumption_per_turn():
    d = D.derive(LOOP, {"x": 1.2})
    assert [(a.line, a.turn, a.condition) for a in d.assumptions] == [
        (3, 1, "y > 1"), (3, 2, "not (y > 1)"), (3, 3, "not (y > 1)")]
    assert D.for_json(d)["assumptions"][1] == {"line": 3, "condition": "not (y > 1)", "turn": 2}
    for text in (D.expr_program(d), D.markdown(d), D.latex(d)):
        assert text.count("turn 2") == 1 and text.count("turn 3") == 1
    module = D.python_module(d)
    assert module.count("(line 3, turn 2)") == 2  # stated in the docstring, checked at each call


def test_a_condition_tested_once_has_no_turn():
    d = D.derive("if x > 0:\n    y = x\nelse:\n    y = -x", {"x": 2.0})
    assert [(a.line, a.turn, a.condition) for a in d.assumptions] == [(1, None, "x > 0")]
    assert ", turn" not in D.python_module(d)


def test_the_module_refuses_a_point_on_another_path():
    d = D.derive(LOOP, {"x": 1.2})
    module = module_of(d)
    assert_holds_at(d, LOOP, {"x": 1.25})  # the same path: y > 1, then not, then not
    with pytest.raises(ValueError, match=r"^derived assuming not \(y > 1\) \(line 3, turn 2\); at this point "
                                         r"not \(y > 1\) is False$"):
        module.value_and_grad(1.6)  # y > 1 on the second turn too
    with pytest.raises(ValueError, match=r"derived assuming y > 1 \(line 3, turn 1\)"):
        module.value_and_grad(x=0.5)


def test_the_example_with_a_dynamic_graph_holds_or_refuses_away_from_its_point():
    with open("examples/dynamic.expr") as f:
        text = f.read()
    d = D.derive(text, {"x": 1.2})
    with pytest.raises(ValueError, match="derived assuming"):
        module_of(d).value_and_grad(1.6)
    assert_holds_at(d, text, {"x": 1.1})


def test_a_loop_count_read_from_an_input_is_checked():
    text = "y = 0\nfor i in range(n):\n    y = y + x * i"
    d = D.derive(text, {"x": 2.0, "n": 3.0})
    module = module_of(d)
    assert float(module.value_and_grad(x=5.0, n=3.0)[1]["x"]) == 3.0
    with pytest.raises(ValueError, match="derived assuming n == 3"):
        module.value_and_grad(x=5.0, n=4.0)


def test_the_module_checks_each_inputs_shape():
    text = "loss = mean((X @ w) ** 2)"
    d = D.derive(text, {"X": np.ones((4, 2)).tolist(), "w": [1.0, 2.0]})
    module = module_of(d)
    module.value_and_grad(np.ones((4, 2)), [0.5, 0.5])
    assert_holds_at(d, text, {"X": [[1.0, 2.0], [0.5, -1.0]], "w": [0.5, 0.25]})  # mean's 1/n is n's, not 1/4
    with pytest.raises(ValueError, match=r"^w has shape \[3\]; derived for shape \[m\] with m = 2$"):
        module.value_and_grad(X=np.ones((4, 2)), w=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"^X has shape \[4\]; derived for shape \[n, m\]$"):
        module.value_and_grad(np.ones(4), [0.5, 0.5])


def test_literal_sizes_are_checked_where_the_sizes_could_not_be_named():
    d = D.derive("y = sum(x[:2] * 3)", {"x": [1.0, 2.0, 3.0]})
    assert d.sizes is None or "3" not in d.formula("x")
    module = module_of(D.derive("y = sum(x ** 2)", {"x": 2.0}))
    with pytest.raises(ValueError, match=r"^x has shape \[2\]; derived for shape \[\]$"):
        module.value_and_grad([1.0, 2.0])


def test_with_order_2_the_module_has_the_hessian():
    text = "y = x ** 3 * z + sin(x * z)"
    at = {"x": 0.4, "z": 1.3}
    d = D.derive(text, at, order=2)
    hessian = module_of(d).hessian(**at)
    engine = engine_at(text, at, order=2).hessian
    for a in at:
        for b in at:
            want = engine.get((a, b), engine.get((b, a)))
            assert math.isclose(float(hessian[a][b]), want, rel_tol=1e-12), (a, b)
    assert "hessian" not in dir(module_of(D.derive(text, at)))


def test_a_mask_read_as_an_index_is_an_assumption():
    text = "y = sum(x[x > 0] ** 2)"
    d = D.derive(text, {"x": [1.0, -2.0, 3.0]})
    assert [a.condition for a in d.assumptions] == ["(x > 0) == [True, False, True]"]
    assert_holds_at(d, text, {"x": [0.5, -1.0, 2.0]})  # the same places
    with pytest.raises(ValueError, match=r"derived assuming \(x > 0\) == \[True, False, True\]"):
        module_of(d).value_and_grad([0.5, 1.0, 2.0])


def test_a_base_that_is_never_zero_drops_pows_guard_at_zero():
    """pow's gradient guards `base == 0`; x * x + 0.5 never is (nan and inf neither), and the
    formula says so. x alone may be: the guard stays."""
    d = D.derive("y = (x * x + 0.5) ** z", {"x": 0.5, "z": 1.5})
    assert "where" not in d.formula("z") and "t1 == 0" not in d.program
    kept = D.derive("y = x ** z", {"x": 0.5, "z": 1.5})
    assert "x == 0" in kept.program


def test_an_even_power_alone_may_be_zero():
    from autodiff.symbolic.build import build

    x = E.symbol("x")
    assert build("eq", [x ** 2.0, 0.0], ()).op == "eq"  # 0 at x = 0: not folded
    assert build("eq", [x ** 2.0 + 0.5, 0.0], ()).op == "tensor"  # never 0
    assert build("eq", [E.call("exp", (x,), ()), 0.0], ()).op == "eq"  # exp(-inf) is 0

"""`derive`: symbolic derivatives from the engine's own formulas, against SymPy, the engine
and PyTorch, and every point of the contract (SPEC.md, `autodiff derive`)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from autodiff.language import InputProblem, Source, evaluate, parse
from autodiff.program import derive as D
from autodiff.program.errors import GradientProblem, UsageProblem

from differential.symbolic_programs import as_sympy, straight_program


def formulas(text, **kw):
    d = D.derive(text, **kw)
    return {x.wrt[0] if len(x.wrt) == 1 else x.wrt: x.formula for x in d.derivatives}, d


def run_derived(d, at):
    """The derived program's named values at `at`, run by the language (as `autodiff eval`)."""
    text = D.expr_program(d)
    used = {n: v for n, v in at.items() if n in d.inputs}
    variables = evaluate(parse(Source(text, "<derived>")), Source(text, "<derived>"), at=used).variables
    return {n: np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=float) for n, v in variables.items()}


# -- closed forms -----------------------------------------------------------------------------------------


def test_powers_and_products_come_out_simplified():
    f, _ = formulas("x**3 * y", wrt=["x"])
    assert f == {"x": "3 * x ** 2 * y"}


@pytest.mark.parametrize("text, wrt, expected", [
    ("sin(x) * x", "x", "sin(x) + x * cos(x)"),
    ("x / y", "y", "-x / y ** 2"),
    ("x * x * x - 2 * x", "x", "3 * x ** 2 - 2"),
    ("x + x + y", "x", "2"),
    ("log(x)", "x", "1 / x"),
    ("sqrt(x)", "x", "1 / (2 * sqrt(x))"),
    ("exp(2 * x)", "x", "2 * exp(2 * x)"),
])
def test_closed_forms(text, wrt, expected):
    f, _ = formulas(text, wrt=[wrt])
    assert f[wrt] == expected


def test_the_tutorial_as_the_spec_writes_it():
    f, d = formulas("u = a * b\nt = log(d)\ne = u + t * c")
    assert f == {"a": "b", "b": "a", "d": "c / d", "c": "log(d)"}
    assert [x.name for x in d.derivatives] == ["de_da", "de_db", "de_dd", "de_dc"]
    assert d.program.endswith("de_dc = log(d)\n")


def test_shared_subexpressions_are_computed_once_and_named_after_the_users_variables():
    _, d = formulas("h = tanh(x * w + b)\ne = h * h")
    names = [n for n, _ in d.statements]
    assert names[0] == "h" and len(names) == len(set(names))
    assert all("tanh" not in text for n, text in d.statements[1:])


def test_a_formula_does_not_depend_on_what_was_derived_before():
    # factors are written in the order this derivation met them, whatever earlier ones met first
    formulas("e = b * a")
    f, _ = formulas("e = a * b * c", wrt=["c"])
    assert f == {"c": "a * b"}


def test_a_derivative_name_that_is_taken_gets_a_suffix():
    _, d = formulas("de_dx = x * 2\ne = de_dx * x")
    assert [x.name for x in d.derivatives] == ["de_dx_2"]


# -- kinks: PyTorch's choice as a formula ------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("relu(x)", "where(x <= 0, 0, 1)"),
    ("abs(x)", "sign(x)"),
])
def test_kinks_are_formulas_not_a_path(text, expected):
    f, _ = formulas(text)
    assert f["x"] == expected


def test_maximum_splits_the_gradient_at_a_tie_as_pytorch():
    _, d = formulas("maximum(a, b)")
    for point in ({"a": 1.0, "b": 2.0}, {"a": 2.0, "b": 1.0}, {"a": 1.5, "b": 1.5}):
        values = run_derived(d, point)
        want = (0.5, 0.5) if point["a"] == point["b"] else ((1.0, 0.0) if point["a"] > point["b"] else (0.0, 1.0))
        assert (float(values["doutput_da"]), float(values["doutput_db"])) == want


# -- tensors and broadcasting --------------------------------------------------------------------------------


def test_sum_of_a_matrix_vector_product_is_an_outer_product_of_ones_and_x():
    at = {"W": [[1.0, 2.0], [3.0, 4.0]], "x": [1.0, -1.0]}
    d = D.derive("sum(W @ x)", at)
    values = run_derived(d, at)
    np.testing.assert_array_equal(values["doutput_dW"], np.outer(np.ones(2), at["x"]))
    assert d.derivatives[0].shape == (2, 2)


@pytest.mark.parametrize("x_shape, y_shape", [((), (3,)), ((3,), ()), ((1, 3), (2, 1)), ((2, 1), (2, 3)),
                                              ((3,), (2, 3)), ((), (2, 2))])
def test_broadcast_operands_under_a_reduction_scaled_by_a_symbol(x_shape, y_shape):
    # the gradient of sum(...) is a symbol spread over the shape; summing it back to a smaller
    # operand must count its copies (the random programs never scale a sum by a symbol)
    rng = np.random.default_rng(len(x_shape) * 7 + len(y_shape))
    at = {"x": rng.uniform(0.5, 1.5, x_shape).tolist(), "y": rng.uniform(0.5, 1.5, y_shape).tolist()}
    text = "u = sum(x * y)\ne = sum(x + y) * u + mean(x - y) * u"
    d = D.derive(text, at)
    assert D.check(d, text, at).passed


def test_a_negative_product_on_the_right_of_matmul_keeps_its_parentheses():
    # `a @ -2 * x` would be (a @ -2) * x: the derived program must say a @ (-2 * x)
    text = "v = dot(W @ x, y)\ne = v * -0.5"
    at = {"W": [[1.0], [2.0], [3.0]], "x": [0.5], "y": [1.0, -2.0, 0.25]}
    f, d = formulas(text, at=at)
    assert f["x"] == "-(W.T @ y) / 2"  # the number leaves the product, as the Cookbook writes it
    assert D.check(d, text, at).passed
    from autodiff.symbolic import expr as E
    from autodiff.symbolic.printing import to_text

    a, x = E.symbol("a", (2, 3)), E.symbol("x", (3,))
    assert to_text(E.call("mv", (a, E.mul(E.const(-2.0), x)), (2,))) == "a @ (-2 * x)"


def test_a_number_broadcast_into_a_vector_gets_the_sum_of_its_copies():
    # sum(c + a) counts a once per element of c: its derivative is 3 * u, not u
    f, d = formulas("u = a * b\ne = sum(c + a) * u", at={"a": 2.0, "b": 3.0, "c": [1.0, 2.0, 3.0]})
    assert f["a"] == "n * u + b * t1" and "n = size(c, 0)" in d.program  # n copies, whatever n is
    assert D.check(d, "u = a * b\ne = sum(c + a) * u", {"a": 2.0, "b": 3.0, "c": [1.0, 2.0, 3.0]}).passed


def test_a_broadcast_input_gets_its_derivative_summed_back_to_its_shape():
    at = {"x": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "b": [0.5, 1.0, 2.0]}
    d = D.derive("sum((x + b) ** 2)", at)
    values = run_derived(d, at)
    x, b = np.array(at["x"]), np.array(at["b"])
    np.testing.assert_allclose(values["doutput_db"], (2 * (x + b)).sum(0))
    assert values["doutput_db"].shape == (3,)


def test_a_bias_gradient_is_one_sum_not_a_sum_kept_then_reshaped():
    at = {"x": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "b": [0.5, 1.0, 2.0]}
    d = D.derive("sum(tanh(x + b))", at)
    assert d.formula("b") == "sum_to(t1, (m,))"  # the engine records sum_to (1, m) then a view to (m,)
    assert "doutput_db = np.sum(t2, axis=(0,))\n" in D.python_module(d)
    values = run_derived(d, at)
    x, b = np.array(at["x"]), np.array(at["b"])
    np.testing.assert_allclose(values["doutput_db"], (1 - np.tanh(x + b) ** 2).sum(0))


def test_a_tensor_output_derives_its_jacobian():
    d = D.derive("x * 2", {"x": [1.0, 2.0]})
    assert d.jacobian and d.formula("x") == "2 * eye(n)"


def test_a_jacobian_with_no_matrix_formula_is_refused_naming_forward_mode():
    with pytest.raises(GradientProblem, match="--mode forward"):
        D.derive("cumprod(x, 0)", {"x": [1.0, 2.0, 3.0]}, wrt=["x"])


# -- control flow: traced at --at, conditions stated ---------------------------------------------------------


def test_a_branch_on_an_input_is_refused_without_at_naming_the_line():
    with pytest.raises(InputProblem) as caught:
        D.derive("y = x * 2\nif x > 0:\n    y = x * x\ny")
    assert caught.value.location == (2, 4)


def test_a_branch_taken_at_the_point_is_an_assumption():
    d = D.derive("y = x * 2\nif x > 0:\n    y = x * x\ny", {"x": 3.0})
    assert d.formula("x") == "2 * x"
    assert [(a.line, a.condition) for a in d.assumptions] == [(2, "x > 0")]
    d = D.derive("y = x * 2\nif x > 0:\n    y = x * x\ny", {"x": -3.0})
    assert d.formula("x") == "2"
    assert [(a.line, a.condition) for a in d.assumptions] == [(2, "not (x > 0)")]


def test_a_loop_bound_from_an_input_is_an_assumption():
    d = D.derive("y = x\nfor i in range(n):\n    y = y * x\ny", {"n": 3, "x": 2.0}, wrt=["x"])
    assert d.formula("x") == "4 * x ** 3"
    assert d.assumptions and d.assumptions[0].line == 2 and "3" in d.assumptions[0].condition


def test_a_branch_on_constants_needs_no_values():
    d = D.derive("y = x\nfor i in range(3):\n    y = y * x\ny")
    assert d.formula("x") == "4 * x ** 3" and d.assumptions == []


# -- order 2, check ------------------------------------------------------------------------------------------


def test_second_derivatives():
    _, d = formulas("x**3 * y", order=2)
    second = {x.wrt: x.formula for x in d.derivatives if len(x.wrt) == 2}
    assert second == {("x", "x"): "6 * x * y", ("x", "y"): "3 * x ** 2", ("y", "y"): "0"}
    assert [x.name for x in d.derivatives if len(x.wrt) == 2] == ["d2output_dx_dx", "d2output_dx_dy",
                                                                  "d2output_dy_dy"]


def test_check_passes_at_random_points_and_at_the_point():
    text = "h = tanh(x * w + b)\ne = h * h + log(x * x + 1)"
    d = D.derive(text)
    assert D.check(d, text, None).passed and D.check(d, text, None).points == D.RANDOM_POINTS
    at = {"x": 0.5, "w": -1.0, "b": 2.0}
    assert D.check(D.derive(text, at), text, at).points == 1


def test_check_finds_a_wrong_derivative():
    text = "e = x * x"
    d = D.derive(text)
    d.statements[-1] = ("de_dx", "3 * x")  # as a wrong formula would write it
    assert not D.check(d, text, None).passed


# -- formats -------------------------------------------------------------------------------------------------


def test_json_has_the_spec_keys():
    d = D.derive("u = a * b\nt = log(d)\ne = u + t * c")
    out = D.for_json(d)
    assert set(out) >= {"output", "inputs", "program", "assumptions"}
    assert out["inputs"]["d"] == {"name": "de_dd", "formula": "c / d", "shape": []}
    for name, entry in out["inputs"].items():
        assert f"{entry['name']} = {entry['formula']}\n" in out["program"]


def test_the_python_module_needs_only_numpy_and_agrees_with_the_engine(tmp_path):
    at = {"W": [[0.5, -1.0], [2.0, 0.25]], "x": [1.0, 3.0], "b": [0.1, -0.2]}
    text = "h = tanh(W @ x + b)\nloss = sum(h * h) / 2"
    d = D.derive(text, at)
    assert_module_agrees_with_grad(D.python_module(d), text, at, tmp_path)


def assert_module_agrees_with_grad(module: str, text: str, at: dict, folder) -> None:
    """The derived module, run in a process where importing autodiff or torch fails, gives
    grad's value and gradients."""
    import json
    import subprocess
    import sys

    from autodiff.program import differentiate

    (folder / "derived.py").write_text(module)
    code = ("import sys, json; sys.modules['autodiff'] = None; sys.modules['torch'] = None\n"
            "import numpy as np, derived\n"
            f"value, grads = derived.value_and_grad(**{at!r})\n"
            "print(json.dumps({'value': float(value), **{k: np.asarray(v).tolist() for k, v in grads.items()}}))")
    out = json.loads(subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True,
                                    check=True).stdout)
    run = differentiate(text, at)
    assert math.isclose(out["value"], float(run.output.value), rel_tol=1e-12)
    for name, grad in run.grads.items():
        np.testing.assert_allclose(out[name], grad, rtol=1e-12)


def test_latex_and_markdown():
    d = D.derive("x**3 * y / z")
    tex = D.latex(d)
    assert tex.startswith("\\begin{align*}") and "\\frac{\\partial \\mathrm{output}}{\\partial x}" in tex
    assert "\\frac{" in tex
    md = D.markdown(d)
    assert "| `∂output/∂x` |" in md


def test_order_2_with_a_tensor_input_gives_its_hessian_block():
    d = D.derive("sum(x * x)", {"x": [1.0, 2.0]}, order=2)
    assert d.formula(("x", "x")) == "2 * eye(n)"


def test_order_2_with_a_tensor_output_is_refused():
    with pytest.raises(UsageProblem, match="second derivatives of a number"):
        D.derive("x * x", {"x": [1.0, 2.0]}, order=2)


# -- agreement on random programs -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_random_scalar_programs_agree_with_sympy_and_the_engine(seed):
    import sympy

    text, at = straight_program(random.Random(seed), statements=5)
    d = D.derive(text)
    expression, symbols = as_sympy(text)
    values = run_derived(d, at)
    point = {symbols[n]: v for n, v in at.items()}
    for x in d.derivatives:
        want = float(sympy.diff(expression, symbols[x.wrt[0]]).evalf(subs=point))
        assert math.isclose(float(values[x.name]), want, rel_tol=1e-9, abs_tol=1e-12), (text, x.name)
    assert D.check(d, text, None).passed, text


@pytest.mark.parametrize("seed", range(25))
def test_random_programs_with_control_flow_agree_with_the_engine(seed):
    from differential.scalar import scalar_program

    from autodiff.language import ProgramError, run

    program = scalar_program(random.Random(seed))
    try:
        run(program.text, at=program.inputs)
    except ProgramError:  # a name bound on a branch not taken (the generator makes some): refused too
        with pytest.raises(ProgramError):
            D.derive(program.text, program.inputs)
        return
    d = D.derive(program.text, program.inputs)
    assert D.check(d, program.text, program.inputs).passed, program.text


@pytest.mark.parametrize("seed", range(30))
def test_random_tensor_programs_agree_with_pytorch(seed):
    import torch

    from differential.oracle import run_torch
    from differential.programs import tensor_program

    rng = random.Random(seed)
    category = rng.choice(("elementwise", "reduction", "matmul", "shape", "control", "function"))
    program = tensor_program(rng, category)
    weights = program.weights
    loss_text = program.text + f"\n__loss = sum({program.output} * {weights!r})\n" if weights is not None else \
        program.text + f"\n__loss = sum({program.output})\n"
    try:
        d = D.derive(loss_text, program.inputs, output="__loss")
    except GradientProblem:
        pytest.skip("a program whose derivative needs a value read in a formula")
    out, inputs = run_torch(program)
    w = torch.tensor(weights, dtype=out.dtype) if weights is not None else torch.ones_like(out)
    loss = (out * w).sum()
    grads = torch.autograd.grad(loss, list(inputs.values()), allow_unused=True)
    values = run_derived(d, program.inputs)
    for (name, _), g in zip(inputs.items(), grads):
        derived = next(x for x in d.derivatives if x.wrt == (name,))
        want = np.zeros(np.shape(program.inputs[name])) if g is None else g.numpy()
        np.testing.assert_allclose(values[derived.name], want, rtol=1e-9, atol=1e-12, err_msg=loss_text)


def test_the_python_api_is_autodiff_derive():
    import autodiff

    d = autodiff.derive("u = a * b\nt = log(d)\ne = u + t * c")
    assert d.formula("d") == "c / d" and d.output == "e"


def test_derive_simplifies_as_algebra_does_where_the_engine_makes_nan():
    """docs/guide.md, "Where autodiff differs": x / x is 1 for derive; the engine's 0/0 is nan."""
    from autodiff.program import differentiate

    d = D.derive("x / x * y")
    assert d.formula("y") == "1"
    assert np.isnan(differentiate("x / x * y", {"x": 0.0, "y": 1.0}).grads["y"])


def test_indexing_derivatives_are_written_in_the_language():
    at = {"W": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}
    text = "sum(W[1] * W[:, 0][:2])"
    d = D.derive(text, at)
    assert "cat((" in d.formula("W") and D.check(d, text, at).passed


def test_a_strided_slice_is_written_with_the_positions_it_takes():
    text = "sum(x[::2] ** 2)"
    at = {"x": [1.0, 2.0, 3.0]}
    d = D.derive(text, at)
    assert "index_select(x, 0, [0, 2])" in d.program and "scatter(" in d.program
    assert D.check(d, text, at).passed


def test_an_operation_with_no_spelling_is_refused_not_written(monkeypatch):
    from autodiff.ops import spelling

    monkeypatch.setitem(spelling.SPELLINGS, "sin", spelling.INTERNAL)
    with pytest.raises(GradientProblem, match=r"derive cannot write sin\(\) in the expression language"):
        D.derive("sin(x) * x", {"x": 1.0})


# -- the elementwise functions, written in NumPy ------------------------------------------------


def test_the_python_module_writes_issue_24s_functions_in_numpy(tmp_path):
    at = {"a": 0.3, "b": 1.7, "c": [0.5, -1.2, 2.0]}
    text = ("u = asin(a) * atan2(a, b) + hypot(a, b) * sinh(b) + xlogy(b, a + 1) + log2(b) * erf(a)\n"
            "v = sum(logaddexp(c, a) * clamp_min(c, 0.1) + atanh(a) * rsqrt(b) * c + trunc(c) + frac(c) * exp2(a))\n"
            "loss = u * v")
    d = D.derive(text, at)
    module = D.python_module(d)
    assert "np.arcsin(" in module and "np.arctan2(" in module and "_vectorized(math.erf, " in module
    assert_module_agrees_with_grad(module, text, at, tmp_path)


@pytest.mark.parametrize("text", ["xlogy(2, x) + xlogy(x, 3) + clamp_max(x, 2)", "atan2(x, 2) * acosh(x + 2)",
                                  "lgamma(x) + erfc(x)", "polygamma(1, x) + digamma(x) + erfinv(x / 3)"])
def test_issue_24s_functions_derive_and_check(text):
    at = {"x": 0.7}
    d = D.derive(text, at)
    assert D.check(d, text, at).passed


# -- gather, scatter, scatter_add, index_select: derivatives that read back -----------------------


@pytest.mark.parametrize("text", [
    "sum(gather(x, 0, [1, 0]) * 2)",
    "sum(index_select(x, 0, [2, 2, 0]) ** 2)",
    "sum(scatter(x, 0, [1, 0], y) ** 2)",
    "sum(scatter(x, 0, [2], 4) ** 2)",
    "sum(scatter_add(x, 0, [1, 1], y) ** 2)",
])
def test_gathers_and_scatters_derived_read_back_as_grad(text):
    at = {"x": [1.0, 2.0, 3.0], "y": [4.0, -5.0]}
    d = D.derive(text, at)
    assert D.check(d, text, at).passed
    assert run_derived(d, at)  # the printed program runs under eval


# -- linear algebra (linalg_<name>, torch.linalg's functions): derivatives that read back ------------

LINALG_AT = {"A": [[2.0, 0.5], [0.3, 1.0]], "S": [[2.0, 0.5], [0.5, 1.0]], "b": [1.0, -2.0],
             "B": [[1.0, 2.0], [3.0, -4.0], [0.5, 6.0]], "T": [[1.0, -0.5], [0.3, 0.8], [-0.6, 0.4]]}


@pytest.mark.parametrize("text", [
    "det(A)", "linalg_slogdet(A).logabsdet", "logdet(A)", "sum(linalg_inv(A) ** 2)",
    "sum(linalg_solve(A, b) ** 2)", "sum(linalg_solve(A, B, left=False) ** 2)",
    "sum(linalg_cholesky(S) * [[1, 2], [3, 4]])", "sum(linalg_cholesky(S, upper=True) ** 2)",
    "sum(linalg_eigh(S).eigenvalues * [1, 3])", "sum(linalg_eigh(S)[1] ** 2 * [[1, 2], [3, 4]])",
    "sum(linalg_svd(T, full_matrices=False).U ** 2 * [[1, 2], [3, 4], [5, 6]])", "linalg_matrix_norm(T, ord=nuc)",
    "sum(linalg_qr(T)[0] * [[1, 2], [3, 4], [5, 6]]) + sum(linalg_qr(T).R)",
    "sum(linalg_pinv(T) ** 2)", "sum(linalg_matrix_exp(A) * [[1, 2], [3, 4]])",
])
def test_linear_algebra_derived_reads_back_as_grad(text):
    d = D.derive(text, LINALG_AT)
    assert D.check(d, text, LINALG_AT).passed
    assert run_derived(d, LINALG_AT)  # the printed program runs under eval


def test_linear_algebra_derived_as_numpy_agrees_with_grad(tmp_path):
    text = ("det(A) + linalg_slogdet(A)[1] + sum(linalg_solve(A, b)) + sum(linalg_eigh(S)[1] ** 2 * [[1, 2], [3, 4]])"
            " + sum(linalg_svd(T, full_matrices=False)[2] ** 2) + sum(linalg_qr(T).R) + sum(linalg_cholesky(S, upper=True))")
    at = {k: v for k, v in LINALG_AT.items() if k in ("A", "S", "b", "T")}
    d = D.derive(text, at)
    assert "np.linalg.eigh(S)[1]" in D.python_module(d)
    assert_module_agrees_with_grad(D.python_module(d), text, at, tmp_path)


def test_a_result_of_several_is_written_as_the_call_indexed():
    found, d = formulas("sum(linalg_eigh(S).eigenvalues * [1, 3])", at=LINALG_AT)
    assert ("t1", "linalg_eigh(S)[1]") in d.statements
    assert found["S"] == "t1 * [[1, 3]] @ t1.T"
    found, _ = formulas("sum(linalg_svdvals(T))", at=LINALG_AT)
    assert found["T"] == "linalg_svd(T, full_matrices=False)[0] @ linalg_svd(T, full_matrices=False)[2]"


# -- ordering: values gathered at the indices found, the indices as the call that finds them --------

ORDERING_AT = {"x": [3.0, 1.0, 2.0], "y": [4.0, -5.0, 0.5], "X": [[1.0, 5.0, 2.0], [4.0, 0.0, 6.0]]}
ELSEWHERE = {"x": [1.5, 2.5, -1.0], "y": [0.5, 2.0, -3.0], "X": [[6.0, -1.0, 0.5], [2.0, 3.0, 1.0]]}  # other orders


@pytest.mark.parametrize("text", [
    "sum(sort(x).values * y)",
    "v, i = sort(x, descending=True, stable=True)\nloss = sum(v ** 2 * y)",
    "sum(msort(X) * X)",
    "sum(topk(x, 2).values * y[:2])",
    "sum(cummax(x, 0).values * y) + sum(cummin(x, 0)[0] ** 2)",
    "sum(median(X, 1).values ** 2) + median(x) * sum(y)",
    "sum(kthvalue(X, 2, 0, True).values) + sum(kthvalue(X, 1, 1).values * y[:2])",
    "sum(cross(x, y, 0) ** 2) + sum(kron(x, y) * 2) + sum(diag(x) ** 2)",
])
def test_ordering_derived_holds_where_the_order_differs(text):
    used = {n: v for n, v in ORDERING_AT.items() if n in text}
    d = D.derive(text, used)
    assert D.check(d, text, used).passed
    assert D.check(d, text, {n: ELSEWHERE[n] for n in used}).passed  # the indices are found again there
    assert run_derived(d, used)


def test_sorts_derivative_is_written_with_argsort():
    f, _ = formulas("sum(sort(x).values * y)", at={"x": [3.0, 1.0, 2.0], "y": [1.0, 2.0, 3.0]})
    assert f == {"x": "scatter_add(zeros_like(x), 0, t1, y)", "y": "gather(x, 0, t1)"}
    _, d = formulas("sum(sort(x).values * y)", at={"x": [3.0, 1.0, 2.0], "y": [1.0, 2.0, 3.0]})
    assert "t1 = argsort(x, 0, False)" in d.program


def test_the_diagonal_of_a_matrix_derives_to_its_place_among_zeros():
    text = "sum(diag(X) * y[:2])"
    at = {"X": ORDERING_AT["X"], "y": ORDERING_AT["y"]}
    d = D.derive(text, at)
    assert "diagonal(X, 0, 0, 1)" in d.program and D.check(d, text, at).passed


@pytest.mark.torch
@pytest.mark.parametrize("seed", range(60))
def test_second_derivatives_of_random_nested_programs_agree_with_pytorch(seed):
    """The class of the wrong second derivatives once found: nested powers and compositions, at
    order 2, against torch.autograd.functional.hessian (bench/derive.py runs thousands)."""
    pytest.importorskip("torch")
    from differential.symbolic_programs import nested_program, torch_hessian

    text, at = nested_program(random.Random(seed))
    d = D.derive(text, at, order=2)
    values = run_derived(d, at)
    want = torch_hessian(text, at)
    for x in d.derivatives:
        if len(x.wrt) == 2:
            assert math.isclose(float(values[x.name]), want[x.wrt], rel_tol=1e-9, abs_tol=1e-12), (text, x.name)

"""`autodiff explain` at the program level: every number from the engine's own formulas.

The paths add up to the gradient `grad` prints (to rounding), the steps reproduce it exactly,
the path count is exact without listing, and --why names the cause with its line."""

from __future__ import annotations

import math
import pathlib
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autodiff
from autodiff.chain_rule import count_paths, explain_graph
from autodiff.program import differentiate
from autodiff.program.explain import explain

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
TUTORIAL = {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}


def example(name: str) -> str:
    return (EXAMPLES / name).read_text()


def leaf_totals(explanation) -> dict:
    return {s.leaf: s.total for s in explanation.steps if s.leaf is not None}


# -- the tutorials' examples ----------------------------------------------------------------------------------


def test_the_tutorial_graph_as_paths_and_steps():
    result = explain(example("tutorial.expr"), TUTORIAL)
    d = result.inputs["d"]
    assert d.paths_count == 1 and d.grad == pytest.approx(0.5)
    (path,) = d.paths
    assert path.nodes == ["e", "t * c", "t", "d"]
    assert [e.formula for e in path.edges] == ["∂e/∂(t * c) = 1", "∂(t * c)/∂t = c", "∂t/∂d = 1 / d"]
    assert [e.local for e in path.edges] == pytest.approx([1, 5, 0.1])
    assert [e.op for e in path.edges] == ["AddBackward0", "MulBackward0", "LogBackward0"]
    assert path.product == pytest.approx(0.5) and d.rest == pytest.approx(0)
    assert result.inputs["a"].paths[0].edges[-1].formula == "∂u/∂a = b"
    # steps: newest node first, as the engine runs them; each leaf accumulates once
    assert [s.op for s in result.steps][:3] == ["AddBackward0", "MulBackward0", "AccumulateGrad"] or \
        result.steps[0].op == "AddBackward0"
    assert leaf_totals(result) == pytest.approx({"a": 3.0, "b": 2.0, "c": math.log(10), "d": 0.5})
    step = next(s for s in result.steps if s.node == "t")
    assert step.line == 4 and step.grad == pytest.approx(5) and step.passes[0].value == pytest.approx(0.5)
    assert "∂e/∂(t * c) · ∂(t * c)/∂t · ∂t/∂d = 1 × 5 × 0.1 = 0.5" in str(result)


def test_the_linear_example():
    result = explain(example("linear.expr"), {"x": 1.0, "y": 2.0, "z": 5.0})
    assert {n: float(i.grad) for n, i in result.inputs.items()} == {"x": 2.0, "y": -2.0, "z": 1.0}
    y = result.inputs["y"].paths[0]
    assert [e.local for e in y.edges] == [1, 2, -1]
    assert y.edges[-1].formula == "∂(x - y)/∂y = -1"


def test_the_matrix_network_example():
    result = explain(example("matrix.expr"))
    x = result.inputs["x"]
    assert x.paths_count == 1 and not x.scalar
    np.testing.assert_array_equal(x.grad, np.full((3, 3), -2.0))
    np.testing.assert_array_equal(x.paths[0].product, x.grad)
    locals_ = [e.local for e in x.paths[0].edges]
    np.testing.assert_array_equal(locals_[0], np.ones((3, 3)))  # sum: its Jacobian's one row
    np.testing.assert_array_equal(locals_[1], np.full((3, 3), -1.0))
    np.testing.assert_array_equal(locals_[2], np.full((3, 3), 2.0))
    assert x.paths[0].edges[0].formula == "∂total/∂L = 1"  # for each element: g broadcast


def test_a_seed_other_than_one_is_an_edge_of_its_own():
    result = explain("y = x * 3", {"x": 2.0}, grad_output="2")
    (path,) = result.inputs["x"].paths
    assert [e.local for e in path.edges] == [2.0, 3.0] and path.product == 6.0


# -- paths -----------------------------------------------------------------------------------------------------


EXPONENTIAL = "x = a\n" + "x = x * a + x\n" * 40


def test_an_exponential_number_of_paths_is_counted_and_searched_quickly():
    started = time.perf_counter()
    result = explain(EXPONENTIAL, {"a": 1.5}, limit=10)
    elapsed = time.perf_counter() - started
    a = result.inputs["a"]
    assert a.paths_count == 2**41 - 1
    assert len(a.paths) == 10 and a.exhaustive
    products = [p.product for p in a.paths]
    assert products == sorted(products, key=abs, reverse=True)
    assert sum(products) + a.rest == pytest.approx(float(a.grad), rel=1e-9)
    assert elapsed < 5  # generous: about 0.05 s here


def test_the_largest_paths_come_first_as_a_full_listing_says():
    program = "x = a * b\ny = x * a + sin(x) * b\nz = y * x - exp(a) * y"
    few = explain(program, {"a": 0.7, "b": -1.3}, limit=3).inputs["a"]
    every = explain(program, {"a": 0.7, "b": -1.3}, limit=1000).inputs["a"]
    assert len(every.paths) == every.paths_count > 3
    ranked = sorted((abs(p.product) for p in every.paths), reverse=True)
    assert [abs(p.product) for p in few.paths] == pytest.approx(ranked[:3])
    assert math.fsum(p.product for p in every.paths) == pytest.approx(float(every.grad), rel=1e-12)
    assert every.rest == pytest.approx(0, abs=1e-12)


def test_counting_paths_is_exact_and_needs_no_listing():
    a = autodiff.tensor(1.0, requires_grad=True)
    x = a
    for _ in range(200):
        x = x * a + x
    from autodiff.chain_rule import _Graph

    graph = _Graph(x.grad_fn, np.ones(()), lambda node: None)
    assert count_paths(graph, a.grad_fn if a.grad_fn else next(iter(
        n for n in graph.order if type(n).__name__ == "AccumulateGrad"))) == 2**201 - 1


# -- random programs ------------------------------------------------------------------------------------------

NAMES = ("a", "b", "c")
UNARY = ("sin({})", "tanh({})", "exp({} * 0.1)", "log({} * {} + 1)", "({}) ** 2", "-({})", "abs({})", "relu({})")
BINARY = ("{} + {}", "{} - {}", "{} * {}", "{} / ({} * {} + 1)", "maximum({}, {})")


@st.composite
def programs(draw):
    """A few statements over a, b, c, each reusing what came before (so paths multiply)."""
    known = list(NAMES)
    lines = []
    for k in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            form = draw(st.sampled_from(UNARY))
            operand = draw(st.sampled_from(known))
            text = form.format(*([operand] * form.count("{}")))
        else:
            form = draw(st.sampled_from(BINARY))
            left, right = draw(st.sampled_from(known)), draw(st.sampled_from(known))
            text = form.format(left, right, right) if form.count("{}") == 3 else form.format(left, right)
        lines.append(f"v{k} = {text}")
        known.append(f"v{k}")
    lines.append(f"out = sum({' + '.join(known[-2:])})")
    return "\n".join(lines)


values = st.floats(-2, 2, allow_nan=False).filter(lambda v: abs(v) > 1e-3)


def _check(program: str, point: dict) -> None:
    grads = differentiate(program, point).grads
    result = explain(program, point, limit=4)
    totals = leaf_totals(result)
    for name, item in result.inputs.items():
        if grads[name] is None:
            assert item.grad is None and name not in totals
            continue
        np.testing.assert_array_equal(totals[name], grads[name])  # the steps reproduce it exactly
        shares = sum((np.asarray(p.product, dtype=float) for p in item.paths), np.zeros_like(grads[name]))
        np.testing.assert_allclose(shares + item.rest, grads[name], rtol=1e-9, atol=1e-9)
        if item.paths_count <= len(item.paths):  # every path shown: they alone add up to the gradient
            np.testing.assert_allclose(shares, grads[name], rtol=1e-7, atol=1e-9)
        if item.scalar:
            for path in item.paths:
                assert path.product == pytest.approx(math.prod(e.local for e in path.edges), rel=1e-12, abs=1e-300)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), values, values, values)
def test_paths_add_up_to_the_gradient_on_random_scalar_programs(program, a, b, c):
    _check(program, {"a": a, "b": b, "c": c})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.lists(values, min_size=3, max_size=3), values, st.lists(values, min_size=3, max_size=3))
def test_paths_add_up_to_the_gradient_on_random_tensor_programs(program, a, b, c):
    _check(program, {"a": a, "b": b, "c": c})


def test_every_path_of_a_tensor_program_adds_up_exactly_enough():
    program = "W: input = [[1, 2], [3, 4]]\nx: input = [0.5, -1]\nh = tanh(W @ x)\ny = sum(h * h + h * x)"
    result = explain(program)
    grads = differentiate(program).grads
    for name in ("W", "x"):
        item = result.inputs[name]
        assert item.paths_count <= len(item.paths)
        shares = sum(np.asarray(p.product) for p in item.paths)
        np.testing.assert_allclose(shares, grads[name], rtol=1e-12)
        assert all(np.shape(p.product) == np.shape(grads[name]) for p in item.paths)


# -- why ------------------------------------------------------------------------------------------------------

WHY = """\
with no_grad:
    s = a * 2
u = detach(b) * 3
v = relu(c) + abs(d) + maximum(f, 10)
w = g * 2
k: const = 4
out = s + u + v + h + k
"""
POINT = {"a": 1.0, "b": 2.0, "c": -1.0, "d": 0.0, "f": 1.0, "g": 1.0, "h": 1.0}


@pytest.mark.parametrize("name, words", [
    ("a", "a is used only under no_grad (line 1): `s = a * 2` on line 2"),
    ("b", "b is cut by detach (line 3)"),
    ("c", "relu at a value that is not positive: `relu(c)` on line 4"),
    ("d", "abs at 0: `abs(d)` on line 4"),
    ("f", "the losing side of maximum: `maximum(f, 10)` on line 4"),
    ("g", "out does not use g: it is used on line 5 (`w = g * 2`)"),
    ("k", "k is a constant"),
    ("h", "h has a gradient"),
])
def test_why_names_the_cause_and_its_line(name, words):
    result = explain(WHY, POINT, why=name)
    assert words in result.inputs[name].why


def test_why_not_in_wrt_and_not_used():
    assert "not in wrt" in explain("y = a * b", {"a": 1.0, "b": 2.0}, wrt=["a"], why="b").inputs["b"].why
    assert "cancel" in explain("y = a - a", {"a": 1.0}, why="a").inputs["a"].why


def test_why_an_unknown_name_is_a_usage_error():
    from autodiff.program import UsageProblem

    with pytest.raises(UsageProblem, match="not an input"):
        explain("y = a * 2", {"a": 1.0}, why="q")


# -- from Python ----------------------------------------------------------------------------------------------


def test_autodiff_explain_from_python_leaves_grad_alone():
    a = autodiff.tensor(2.0, requires_grad=True)
    d = autodiff.tensor(10.0, requires_grad=True)
    e = a * 3 + autodiff.log(d) * 5
    result = autodiff.explain(e, {"a": a, "d": d})
    assert a.grad is None and d.grad is None
    assert result.inputs["d"].grad == pytest.approx(0.5)
    assert "∂output/∂d = 0.5" in str(result) and repr(result) == str(result)
    assert result.to_dict()["inputs"]["a"]["paths_count"] == 1
    assert explain_graph(e, {"a": a}).inputs["a"].paths[0].product == pytest.approx(3)


def test_a_tensor_graph_with_many_paths_is_searched_not_listed():
    program = "x = a\n" + "x = x * a + x\n" * 30 + "y = sum(x)"
    started = time.perf_counter()
    item = explain(program, {"a": [0.5, -0.25, 0.1]}, limit=5).inputs["a"]
    assert time.perf_counter() - started < 10  # generous: about 0.2 s here
    assert item.paths_count == 2**31 - 1 and len(item.paths) == 5 and not item.exhaustive
    grad = differentiate(program, {"a": [0.5, -0.25, 0.1]}).grads["a"]
    np.testing.assert_allclose(sum(np.asarray(p.product) for p in item.paths) + item.rest, grad, rtol=1e-12)


# -- every op has a formula; every step is true arithmetic --------------------------------------


def test_every_registered_op_has_a_formula_written_in_what_its_node_keeps():
    """Each differentiable argument of each op has a formula (traced from its own `defop`
    declaration: tests/engine/test_formulas.py checks its values) whose symbols are the edge's
    own input, the saved values its derivative takes, or, where the result is saved, the
    arguments it is made of: the explanation can write each as a name, a source text or a
    value, never as a bare word."""
    from autodiff.ops.registry import REGISTRY
    from autodiff.symbolic.formulas import RESULT, SEED, local_formula

    from engine.op_samples import SAMPLES  # tests/ is on the path (rootdir, no __init__ there)

    for name, op in REGISTRY.items():
        sample = SAMPLES[name]()[0] if op.formulas else None
        for position, formula in zip(op.diff_positions, op.formulas):
            argument = op.arg_names[position]
            traced = local_formula(name, argument, sample.args)
            assert traced is not None, f"{name}: no formula for {argument}"
            wanted = set(op._wanted(formula))
            allowed = wanted | {argument}
            if "result" in wanted:  # tanh(input): the result as the op of its arguments
                allowed |= {op.arg_names[i] for i in op.tensor_positions}
            assert set(traced.symbols) <= allowed, (name, argument, traced.symbols)
            assert RESULT not in traced.symbols and SEED not in traced.symbols, (name, argument)


def _sample_explanations():
    from autodiff.ops.registry import REGISTRY

    from engine.op_samples import SAMPLES, op_samples  # tests/ is on the path (rootdir, no __init__ there)

    for name in sorted(set(SAMPLES) & set(REGISTRY)):
        sample = op_samples(name)[0]
        out = REGISTRY[name].apply(*sample.args)
        out = out[0] if isinstance(out, tuple) else out
        if not out.requires_grad:
            continue
        leaves = {f"t{k}": t for k, t in enumerate(sample.tensors)}
        seed = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
        yield name, REGISTRY[name], autodiff.explain(out, leaves, gradient=seed)


def test_every_op_in_a_graph_shows_a_formula_in_its_operands():
    """The explanation of every registered op (from its gradient-check samples) shows a formula
    for each edge, never the node's class name and never an argument's bare name."""
    import re

    checked = 0
    for name, op, explanation in _sample_explanations():
        words = {op.arg_names[i] for i in op.tensor_positions}  # its tensor arguments' names
        for step in explanation.steps:
            for passed in step.passes:
                body = passed.formula.split(" = ", 1)[1]
                assert "Backward" not in body, (name, passed.formula)
                bare = words & set(re.findall(r"[A-Za-z_]\w*", body))
                assert not bare, (name, passed.formula)
                checked += 1
    assert checked >= 80


def test_every_step_shown_is_true_arithmetic():
    """For every step of every registered op's explanation: where a step prints
    `g × local = value`, g × local (broadcast) is value; where it does not, it prints `g ↦ value`."""
    from autodiff.chain_rule import passed_text

    for name, _, explanation in _sample_explanations():
        for step in explanation.steps:
            for passed in step.passes:
                text = passed_text(step.grad, passed)
                if passed.local is None:
                    assert " ↦ " in text and " = " not in text, (name, text)
                    continue
                assert " × " in text and " = " in text, (name, text)
                product = np.asarray(step.grad, dtype=float) * np.asarray(passed.local, dtype=float)
                np.testing.assert_allclose(product, np.asarray(passed.value, dtype=float), rtol=1e-12,
                                           atol=1e-12, err_msg=f"{name}: {text}")


def test_a_reduction_step_multiplies_by_its_jacobian_row():
    result = explain("y = mean(x * 2)", {"x": [1.0, 2.0, 3.0]})
    (passed,) = result.steps[0].passes
    np.testing.assert_allclose(passed.local, [1 / 3] * 3)
    assert "1 × [0.3333333333, 0.3333333333, 0.3333333333] = [0.3333333333" in str(result)


def test_a_constant_operand_is_written_as_its_source_text():
    result = explain("c = zeros(3); y = sum((1 - c) * x)", {"x": [1.0, 2.0, 3.0]})
    assert result.inputs["x"].paths[0].edges[-1].formula == "∂((1 - c) * x)/∂x = 1 - c"
    swapped = explain("c = zeros(3); y = sum(x * (1 - c))", {"x": [1.0, 2.0, 3.0]})
    assert swapped.inputs["x"].paths[0].edges[-1].formula == "∂(x * (1 - c))/∂x = 1 - c"


def test_a_vector_matmul_shows_a_formula_for_each_node():
    result = explain("z = sum(x @ w + b)", {"x": [1.0, 2.0], "w": [[1.0, 2, 3], [4, 5, 6]], "b": [1.0, 1, 1]})
    formulas = [e.formula for e in result.inputs["x"].paths[0].edges]
    assert all(" = " in f for f in formulas) and not any(": ∂" in f for f in formulas), formulas
    assert any(f.endswith("= g ↦ reshape(g, (1, 3))") for f in formulas), formulas
    # the steps inside `x @ w` have no source text of their own: they read as calls of their inputs
    assert not any("Backward" in f for f in formulas), formulas
    assert "∂mm(unsqueeze(x), w)/∂w = g ↦ unsqueeze(x).T @ g" in {e.formula for e in result.inputs["w"].paths[0].edges}


def test_a_graph_built_in_python_reads_as_calls_of_its_inputs():
    a = autodiff.tensor(2.0, requires_grad=True)
    b = autodiff.tensor(3.0, requires_grad=True)
    result = autodiff.explain((a * b + autodiff.log(a)) * 2, {"a": a, "b": b})
    assert [s.node for s in result.steps[:2]] == ["output", "add(mul(a, b), log(a))"]


def _path_text(path) -> str:
    from autodiff.chain_rule import product_text

    return "\n".join([product_text(path, True)] + [e.formula for e in path.edges])


def test_loop_turns_and_repeated_arguments_are_told_apart():
    """examples/dynamic.expr assigns y on line 12 in two turns, and v * v takes one node twice:
    every path reads differently, and each turn's nodes carry their turn."""
    result = explain(example("dynamic.expr"))
    paths = result.inputs["x"].paths
    assert len(paths) == 8
    texts = [_path_text(p) for p in paths]
    assert len(set(texts)) == len(texts)
    nodes = [s.node for s in result.steps]
    assert {"y₁₂⁽¹⁾", "y₁₂⁽²⁾", "log(y)⁽¹⁾", "(y * 0.5)⁽²⁾"} <= set(nodes), nodes
    assert len(set(nodes)) == len(nodes)  # no two steps name the same thing
    formulas = {e.formula for p in paths for e in p.edges}
    assert {"∂(v * v)/∂y₁₂⁽²⁾ (argument 1) = y₁₂⁽²⁾", "∂(v * v)/∂y₁₂⁽²⁾ (argument 2) = y₁₂⁽²⁾"} <= formulas


def test_a_tensor_prints_nested_in_its_shape():
    from autodiff.chain_rule import values_text

    assert values_text(np.arange(15).reshape(5, 3)) == "[[0, 1, 2], [3, 4, 5], …, [9, 10, 11], [12, 13, 14]] (shape [5, 3])"
    assert values_text(np.arange(4).reshape(2, 2)) == "[[0, 1], [2, 3]]"
    result = explain("y = sum(x * x)", {"x": np.ones((5, 3)).tolist()})
    assert "∂y/∂x = [[2, 2, 2], [2, 2, 2], …, [2, 2, 2], [2, 2, 2]] (shape [5, 3])" in str(result)


def test_a_started_gradient_is_named_for_what_it_gives():
    """From a gradient g other than 1, .grad holds gᵀ·∂y/∂x (a vector–Jacobian product), not ∂y/∂x."""
    vector = str(explain("y = x * 3", {"x": [1.0, 2.0]}, grad_output="[1, 2]"))
    assert "backward starts from the gradient g = [1, 2]: what follows are vector–Jacobian products" in vector
    assert "\ngᵀ·∂y/∂x = [3, 6]\n" in vector and "\n∂y/∂x =" not in vector
    number = str(explain("y = x * 3", {"x": 2.0}, grad_output="2"))
    assert "\ng·∂y/∂x = 6\n" in number
    assert "\n∂y/∂x = 3\n" in str(explain("y = x * 3", {"x": 2.0}))


def test_an_operand_is_parenthesized_only_where_the_operators_around_it_need():
    result = explain("y = sqrt(x + 1) + tanh(x * 2) + log(x - 1)", {"x": 3.0})
    formulas = {e.formula for p in result.inputs["x"].paths for e in p.edges}
    assert {"∂sqrt(x + 1)/∂(x + 1) = 1 / (2 * sqrt(x + 1))", "∂tanh(x * 2)/∂(x * 2) = 1 - tanh(x * 2) ** 2",
            "∂log(x - 1)/∂(x - 1) = 1 / (x - 1)"} <= formulas


# -- linear algebra, its formulas written as the language writes them ----------------------------------


def test_linear_algebra_edges_read_as_formulas_and_add_up_to_the_gradient():
    at = {"A": [[2.0, 0.5], [0.3, 1.0]], "S": [[2.0, 1.0], [1.0, 2.0]]}
    result = explain("d = det(A)\nr = linalg_eigh(S)\ny = d * 2 + sum(r.eigenvalues * [1, 3])", at)
    A, S = result.inputs["A"], result.inputs["S"]
    np.testing.assert_allclose(A.grad, 2 * np.linalg.det(at["A"]) * np.linalg.inv(at["A"]).T, rtol=1e-12)
    np.testing.assert_allclose(S.grad, [[2.0, 1.0], [1.0, 2.0]], rtol=1e-12)  # V diag(1, 3) V^T
    assert A.paths[0].edges[-1].formula == ("∂d/∂A = g ↦ linalg_solve(transpose(A, -2, -1), reshape(linalg_det(A) * g, "
                                           "(1, 1)) * eye(2))")
    assert S.paths[0].edges[-1].op == "LinalgEighBackward0"
    assert S.paths[0].edges[-1].formula.endswith("linalg_eigh(S)[1] * reshape(g, (1, 2)) @ "
                                                 "transpose(linalg_eigh(S)[1], -2, -1)")
    np.testing.assert_allclose(S.paths[0].product, S.grad, rtol=1e-12)


def test_a_leaf_the_program_made_is_named_by_its_variable():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explanation = explain("w = randn(3, 2, requires_grad=True)\nx: input\ne = sum(w * x)", {"x": 2.0})
    text = str(explanation)
    assert "AccumulateGrad *" not in text and "w.grad +=" in text and "sum_to(w * g, ())" in text

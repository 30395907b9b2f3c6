"""Running programs: inputs, outputs, declarations, control flow, functions, limits, warnings."""

import math

import numpy as np
import pytest

import autodiff
from autodiff.language import EvaluationProblem, InputProblem, LimitProblem, NameProblem, Options, ProgramError, run
from autodiff.language.builtins import FUNCTIONS

TUTORIAL = "u = a * b\nt = log(d)\ne = u + t * c\n"
AT = {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}


def grads(evaluation):
    evaluation.output.backward()
    return {name: (t.grad.tolist() if t.grad is not None else None) for name, t in evaluation.inputs.items()}


# -- the core ---------------------------------------------------------------------------------------


def test_tutorial_expression():
    ev = run(TUTORIAL, at=AT)
    assert ev.output_name == "e"
    assert ev.output.item() == pytest.approx(6 + 5 * math.log(10))
    assert list(ev.inputs) == ["a", "b", "d", "c"]  # in order of first use
    assert grads(ev) == {"a": 3.0, "b": 2.0, "d": 0.5, "c": pytest.approx(math.log(10))}


def test_s_equals_two_x_minus_y_plus_z():
    ev = run("s = 2*(x - y) + z", at={"x": 1, "y": 2, "z": 5})
    assert ev.output.item() == 3.0
    assert grads(ev) == {"x": 2.0, "y": -2.0, "z": 1.0}


def test_three_by_three_needs_a_sum():
    text = "d = x * 2\nL = 10 - d\ntotal = sum(L)"
    ev = run(text, at={"x": np.arange(1.0, 10.0).reshape(3, 3)})
    assert ev.output_name == "total"
    assert grads(ev)["x"] == [[-2.0] * 3] * 3
    ev = run(text, at={"x": np.ones((3, 3))}, output="L")
    assert ev.output.shape == (3, 3)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        ev.output.backward()


def test_the_output_is_the_last_statement_or_a_chosen_name():
    assert run("a * 2", at={"a": 1}).output_name == "output"
    ev = run(TUTORIAL, at=AT, output="u")
    assert ev.output_name == "u" and ev.output.item() == 6.0
    with pytest.raises(InputProblem, match="the program has no variable 'uu'; did you mean 'u'"):
        run(TUTORIAL, at=AT, output="uu")


def test_assignments_name_their_tensors_and_nodes_know_their_source():
    ev = run(TUTORIAL, at=AT)
    labels = {node.name(): name for node, name in ev.labels.items()}
    assert labels == {"MulBackward0": "u", "LogBackward0": "t", "AddBackward0": "e"}
    origin = ev.origins[ev.output.grad_fn]
    assert ev.source.text[origin.start : origin.end] == "u + t * c"
    assert set(ev.variables) == {"u", "t", "e"}


def test_names_assigned_later_are_not_inputs():
    with pytest.raises(EvaluationProblem, match="'x' is used before it is assigned"):
        run("y = x\nx = 2\ny")


def test_at_values_for_names_that_are_not_inputs_are_unused_with_a_warning():
    ev = run(TUTORIAL, at={**AT, "aa": 1, "u": 7})
    assert [w.message for w in ev.warnings] == [
        "at gives 'aa', which is not an input of the program (its inputs: a, b, d, c): the value is not used;"
        " did you mean 'a'?",
        "at gives 'u', which is not an input of the program (its inputs: a, b, d, c): the value is not used",
    ]
    assert ev.variables["u"].item() == 6.0 and "aa" not in ev.inputs


def test_values_may_be_lists_arrays_or_tensors():
    ev = run("sum(W @ x)", at={"W": [[1, 2], [3, 4]], "x": np.array([1.0, 1.0])})
    assert ev.output.item() == 10.0
    ev = run("sum(x * x)", at={"x": autodiff.tensor([1.0, 2.0])})
    assert grads(ev) == {"x": [2.0, 4.0]}


# -- beyond the core: declarations, wrt ----------------------------------------------------------


def test_declared_inputs_with_defaults_and_constants():
    text = "a: input = 2\ng: const = 9.81\ny = a * g"
    ev = run(text)
    assert ev.output.item() == pytest.approx(19.62)
    assert list(ev.inputs) == ["a"] and list(ev.constants) == ["g"]
    assert not ev.constants["g"].requires_grad
    assert grads(ev) == {"a": pytest.approx(9.81)}


def test_at_overrides_defaults():
    ev = run("a: input = 2\ng: const = 9.81\ny = a * g", at={"a": 3, "g": 10})
    assert ev.output.item() == 30.0


def test_a_declared_input_without_default_needs_a_value():
    with pytest.raises(InputProblem, match=r"no value for input 'x': give one with at=\{'x': VALUE\}"):
        run("x: input\ny = x * 2")
    assert run("x: input\ny = x * 2", at={"x": 4}).output.item() == 8.0


def test_wrt_limits_which_inputs_require_grad():
    ev = run(TUTORIAL, at=AT, wrt=["a", "d"])
    assert ev.inputs["a"].requires_grad and ev.inputs["d"].requires_grad
    assert not ev.inputs["b"].requires_grad and not ev.inputs["c"].requires_grad
    assert grads(ev) == {"a": 3.0, "b": None, "d": 0.5, "c": None}
    with pytest.raises(InputProblem, match="wrt names 'q'"):
        run(TUTORIAL, at=AT, wrt=["q"])
    with pytest.raises(InputProblem, match="line 1 declares it a constant; .* declare it an input: `g: input = 9.81`"):
        run("g: const = 9.81\ny = g * x", at={"x": 1}, wrt=["g"])


# -- calls, indexing -------------------------------------------------------------------------------------


def test_keyword_and_positional_arguments_and_numpy_spellings():
    W = [[1.0, 2.0], [3.0, 4.0]]
    assert run("sum(W, 1)", at={"W": W}).output.tolist() == [3.0, 7.0]
    assert run("sum(W, axis=0)", at={"W": W}).output.tolist() == [4.0, 6.0]
    assert run("mean(W, axis=1, keepdims=True)", at={"W": W}).output.tolist() == [[1.5], [3.5]]
    assert run("max(W, dim=1)", at={"W": W}).output.tolist() == [2.0, 4.0]  # the values, as NumPy
    assert run("W.sum(dim=0)", at={"W": W}).output.tolist() == [4.0, 6.0]


def test_indexing_slicing_and_transpose():
    W = np.arange(12.0).reshape(3, 4)
    assert run("W[0]", at={"W": W}).output.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert run("W[:, 1]", at={"W": W}).output.tolist() == [1.0, 5.0, 9.0]
    assert run("W[1:3, ::2]", at={"W": W}).output.tolist() == [[4.0, 6.0], [8.0, 10.0]]
    assert run("W[-1, [0, 3]]", at={"W": W}).output.tolist() == [8.0, 11.0]
    assert run("W.T", at={"W": W}).output.shape == (4, 3)
    ev = run("sum(W[:, 1] * 2)", at={"W": W})
    assert grads(ev)["W"] == [[0.0, 2.0, 0.0, 0.0]] * 3


def test_every_engine_function_is_callable_by_name():
    from autodiff.language.analysis import analyze
    from autodiff.language import Source, parse

    for name in FUNCTIONS:
        source = Source(f"{name}(x)")
        analyze(parse(source), source)  # resolves: no unknown function
    for name in ["exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "abs", "log1p", "expm1",
                 "square", "reciprocal", "neg", "sign", "sum", "mean", "prod", "max", "min", "logsumexp",
                 "softmax", "log_softmax", "clone", "detach", "t", "flatten", "squeeze"]:
        x = [0.5, 1.5]
        ours = run(f"{name}(x)", at={"x": x}).output
        theirs = getattr(autodiff, name)(autodiff.tensor(x))
        np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), err_msg=name)


# nn.functional's losses by name, with PyTorch's arguments; `reduction` is a word (no strings).
X, Y = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], [[0.0, 1.0, 1.0], [1.0, 0.0, 0.5]]
LOSS_AT = {"x": X, "y": Y, "k": [2, 0], "w": [[1.0, -2.0, 0.5], [0.5, 1.0, 1.0]]}
LOSSES = [
    ("mse_loss(x, y)", lambda F, T, v: F.mse_loss(v["x"], v["y"])),
    ("mse_loss(x, y, reduction=sum)", lambda F, T, v: F.mse_loss(v["x"], v["y"], reduction="sum")),
    ("mse_loss(x, y, reduction=none)", lambda F, T, v: F.mse_loss(v["x"], v["y"], reduction="none")),
    ("x.mse_loss(y)", lambda F, T, v: F.mse_loss(v["x"], v["y"])),
    ("l1_loss(x, y, reduction=sum)", lambda F, T, v: F.l1_loss(v["x"], v["y"], reduction="sum")),
    ("binary_cross_entropy(sigmoid(x), y, weight=[1, 2, 3])",
     lambda F, T, v: F.binary_cross_entropy(T.sigmoid(v["x"]), v["y"], weight=T.tensor([1.0, 2.0, 3.0]))),
    ("binary_cross_entropy_with_logits(x, y, pos_weight=[2, 1, 3], reduction=none)",
     lambda F, T, v: F.binary_cross_entropy_with_logits(v["x"], v["y"], pos_weight=T.tensor([2.0, 1.0, 3.0]),
                                                       reduction="none")),
    ("cross_entropy(x, k)", lambda F, T, v: F.cross_entropy(v["x"], v["k"])),
    ("cross_entropy(x, k, weight=[1, 2, 3], label_smoothing=0.1, reduction=sum)",
     lambda F, T, v: F.cross_entropy(v["x"], v["k"], weight=T.tensor([1.0, 2.0, 3.0]), label_smoothing=0.1,
                                     reduction="sum")),
    ("cross_entropy(x, softmax(y, 1))", lambda F, T, v: F.cross_entropy(v["x"], T.softmax(v["y"], 1))),
    ("nll_loss(log_softmax(x, 1), k, ignore_index=0)",
     lambda F, T, v: F.nll_loss(T.log_softmax(v["x"], 1), v["k"], ignore_index=0)),
    ("linear(x, w)", lambda F, T, v: F.linear(v["x"], v["w"])),
    # the activations, gelu's approximation a word as the reduction is
    ("gelu(x, approximate=tanh)", lambda F, T, v: F.gelu(v["x"], approximate="tanh")),
    ("gelu(x) + softplus(x, beta=2, threshold=1)", lambda F, T, v: F.gelu(v["x"]) + F.softplus(v["x"], 2, 1)),
    ("elu(x, 0.5) * silu(x) - mish(x)", lambda F, T, v: F.elu(v["x"], 0.5) * F.silu(v["x"]) - F.mish(v["x"])),
    ("leaky_relu(x, negative_slope=0.2) + hardtanh(x, -0.5, 0.7) + logsigmoid(x)",
     lambda F, T, v: F.leaky_relu(v["x"], 0.2) + F.hardtanh(v["x"], -0.5, 0.7) + F.logsigmoid(v["x"])),
]


@pytest.mark.torch
@pytest.mark.parametrize("program,theirs", LOSSES, ids=[p for p, _ in LOSSES])
def test_losses_by_name_are_pytorchs(program, theirs, torch_in_float64):
    import torch
    import torch.nn.functional as F

    ev = run(program, at=LOSS_AT)
    leaves = {n: torch.tensor(v, dtype=torch.long) if n == "k" else torch.tensor(v, requires_grad=True)
              for n, v in LOSS_AT.items()}
    expected = theirs(F, torch, leaves)
    assert type(ev.output.grad_fn).__name__ == type(expected.grad_fn).__name__
    np.testing.assert_allclose(ev.output.detach().numpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-12)
    ev.output.sum().backward()
    expected.sum().backward()
    for name, leaf in leaves.items():
        if leaf.requires_grad and leaf.grad is not None:
            np.testing.assert_allclose(ev.inputs[name].grad.numpy(), leaf.grad.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=name)


@pytest.mark.torch
def test_a_losss_warning_is_pytorchs_at_the_call():
    import warnings

    import torch
    import torch.nn.functional as F

    ev = run("s = 1\nloss = mse_loss(x, y)", "f.expr", at={"x": [1.0, 2.0], "y": [[0.0, 4.0], [1.0, 1.0]]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.mse_loss(torch.tensor([1.0, 2.0]), torch.tensor([[0.0, 4.0], [1.0, 1.0]]))
    [warning] = ev.warnings
    assert warning.message == str(caught[0].message).replace("torch.", "autodiff.")
    assert warning.location == (2, 8)


def test_a_reduction_word_is_not_an_input_and_quotes_are_answered():
    ev = run("mean = 3\nmse_loss(x, y, reduction=none) * mean", at={"x": [1.0, 2.0], "y": [0.0, 0.0]})
    assert list(ev.inputs) == ["x", "y"] and ev.output.tolist() == [3.0, 12.0]
    assert run("x.mse_loss(y, reduction=sum)", at={"x": [1.0, 2.0], "y": [0.0, 0.0]}).output.item() == 5.0
    with pytest.raises(ProgramError, match="write the reduction as a word, without quotes: reduction=mean"):
        run('mse_loss(x, y, reduction = "sum")', at={"x": 1.0, "y": 2.0})
    with pytest.raises(InputProblem, match="for the function sum, call it"):  # the words are for the losses alone
        run("def f(a, reduction=1):\n    return a * reduction\nf(x, reduction=sum)", at={"x": 1.0})


def test_class_indices_must_be_whole_numbers():
    with pytest.raises(EvaluationProblem, match=r"cross_entropy\(\): class indices must be whole numbers"):
        run("cross_entropy(x, k)", at={"x": X, "k": [2.5, 0]})


def test_whole_numbers_are_indices_of_gather_and_scatter():
    at = {"x": [1.0, 2.0, 3.0]}
    assert run("gather(x, 0, [2, 0]) + x.index_select(0, [1, 1])", at=at).output.tolist() == [5.0, 3.0]
    assert run("scatter_add(scatter(x, 0, [0], 7), 0, [2, 2], x[:2])", at=at).output.tolist() == [7.0, 2.0, 6.0]
    with pytest.raises(EvaluationProblem, match=r"the index must be whole numbers \(positions\), got \[0.5\]"):
        run("gather(x, 0, [0.5])", at=at)


def test_torch_linalgs_functions_are_linalg_names_with_words_for_their_strings():
    at = {"S": [[2.0, 1.0], [1.0, 2.0]], "T": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}
    assert run("linalg_eigh(S).eigenvalues", at=at).output.tolist() == pytest.approx([1.0, 3.0])
    assert run("linalg_eigh(S, UPLO=U)[0]", at=at).output.tolist() == pytest.approx([1.0, 3.0])
    assert run("linalg_slogdet(S).logabsdet", at=at).output.item() == pytest.approx(math.log(3.0))
    assert tuple(run("linalg_qr(T, mode=complete).Q", at=at).output.shape) == (3, 3)
    nuclear = np.linalg.svd(np.array(at["T"]), compute_uv=False).sum()
    assert run("linalg_matrix_norm(T, ord=nuc)", at=at).output.item() == pytest.approx(nuclear)
    assert run("det(S) + linalg_det(S)", at=at).output.item() == pytest.approx(6.0)
    with pytest.raises(NameProblem, match="unknown attribute 'values'"):
        run("linalg_eigh(S).values", at=at)


def test_numbers_given_to_functions_become_tensors():
    assert run("exp(0) + sqrt(4)").output.item() == 3.0


def test_creation_functions_and_seeded_random_numbers():
    ev = run("zeros(2, 3) + ones((2, 3)) + eye(3)[0] + arange(3) + full((2, 3), 1.5)")
    assert ev.output.tolist() == [[3.5, 3.5, 4.5]] * 2
    first = run("randn(3) + rand(3)").output.tolist()
    assert run("randn(3) + rand(3)").output.tolist() == first
    assert run("randn(3) + rand(3)", options=Options(seed=7)).output.tolist() != first


def test_list_literals_of_tensors_stack_and_stay_differentiable():
    ev = run("v = [x, 2 * x, x * x]\nsum(v)", at={"x": 3.0})
    assert ev.variables["v"].tolist() == [3.0, 6.0, 9.0]
    assert grads(ev) == {"x": 1 + 2 + 6.0}


# -- dynamic graphs ----------------------------------------------------------------------------------------


def test_if_else_records_the_branch_the_values_pick():
    text = "if x > 0:\n    y = x * x\nelse:\n    y = -x\ny"
    positive = run(text, at={"x": 3.0})
    negative = run(text, at={"x": -3.0})
    assert positive.output.grad_fn.name() == "MulBackward0"
    assert negative.output.grad_fn.name() == "NegBackward0"
    assert grads(positive) == {"x": 6.0} and grads(negative) == {"x": -1.0}


def test_conditional_expressions_and_boolean_logic():
    assert run("y = x if x > 0 else -x\ny", at={"x": -2.0}).output.item() == 2.0
    assert run("1 if a < b <= c and not a == c else 0", at={"a": 1, "b": 2, "c": 2}).output == 1
    assert run("1 if a < b < c else 0", at={"a": 1, "b": 3, "c": 2}).output == 0


def test_bounded_loops_unroll_into_the_graph():
    ev = run("s = 0\nfor i in range(4):\n    s += a * i\ns", at={"a": 2.0})
    assert ev.output.item() == 12.0 and grads(ev) == {"a": 6.0}
    ev = run("s = 0\nfor row in W:\n    s = s + row.sum()\ns", at={"W": [[1.0, 2.0], [3.0, 4.0]]})
    assert ev.output.item() == 10.0


def test_user_defined_functions():
    text = "def f(x, k=2):\n    return x ** k\nf(a) + f(a, 3) + f(k=1, x=a)"
    ev = run(text, at={"a": 2.0})
    assert ev.output.item() == 4 + 8 + 2
    assert grads(ev) == {"a": 4 + 12 + 1.0}
    with pytest.raises(NameProblem, match="f\\(\\) takes 2 arguments but 3 were given: def f\\(x, k\\)"):
        run("def f(x, k=2):\n    return x\nf(1, 2, 3)")


def test_functions_see_globals_and_their_own_locals():
    text = "scale = 10\ndef f(x):\n    y = x * scale\n    return y\nf(a)"
    assert run(text, at={"a": 2.0}).output.item() == 20.0


def test_detach_and_no_grad_regions():
    text = "with no_grad:\n    k = x * 2\ny = sum(k * x) + sum(detach(x))"
    ev = run(text, at={"x": [1.0, 2.0, 3.0]})
    assert not ev.variables["k"].requires_grad
    assert grads(ev) == {"x": [2.0, 4.0, 6.0]}


def test_numbers_stay_integers_where_sizes_need_them():
    assert run("zeros(2 * 3)").output.shape == (6,)
    assert run("2 ** 10").output == 1024
    ev = run("9**9**9**9")
    assert ev.output == math.inf
    assert [w.message for w in ev.warnings] == ["9**9**9 produced inf"]


# -- warnings and limits -----------------------------------------------------------------------------------


def test_nan_produced_is_a_warning_naming_its_first_line():
    ev = run("y = x * 2\nz = log(y)\nw = z + log(y)", at={"x": -1.0})
    assert math.isnan(ev.output.item())
    assert len(ev.warnings) == 1
    assert ev.warnings[0].render() == (
        "<expr>:2:5: warning: log(y) produced nan\n    z = log(y)\n        ^~~~~~"
    )


def test_a_comparison_statement_whose_value_is_thrown_away_is_a_warning():
    ev = run("y = 0\ny == x*2\nx*2 == y\nz = y + x", at={"x": 1.0})
    assert ev.output.item() == 1.0  # `y == x*2` changed nothing: said, not silent
    assert [w.render() for w in ev.warnings] == [
        "<expr>:2:1: warning: `y == x*2` is a comparison whose value is thrown away; did you mean `y = x*2`?\n"
        "    y == x*2\n    ^~~~~~~~",
        "<expr>:3:1: warning: `x*2 == y` is a comparison whose value is thrown away\n    x*2 == y\n    ^~~~~~~~",
    ]
    assert run("x == 2", at={"x": 2.0}).warnings == []  # the last statement's value is the output


def test_no_warning_when_nan_was_given():
    assert run("x * 2", at={"x": math.nan}).warnings == []


def test_element_limit_covers_broadcasts():
    with pytest.raises(LimitProblem, match="would create 100,000,000 elements"):
        run("ones(10000, 1) * ones(1, 10000)", options=Options(max_elements=1_000_000))


def test_float32_on_request():
    ev = run(TUTORIAL, at=AT, options=Options(dtype="float32"))
    assert ev.output.dtype is autodiff.float32
    ev.output.backward()
    assert ev.inputs["a"].grad.dtype is autodiff.float32
    assert autodiff.get_default_dtype() is autodiff.float64  # restored


@pytest.mark.parametrize("text, pairwise", [("max(x, 0)", "maximum(input, 0)"), ("min(x, 1)", "minimum(input, 1)"),
                                            ("max(x, 0.0)", "maximum(input, 0.0)")])
def test_max_or_min_with_a_number_is_refused_with_both_spellings(text, pairwise):
    with pytest.raises(NameProblem) as refused:
        run(text, at={"x": [[-2.0, 1.0], [3.0, -4.0]]})
    assert pairwise in refused.value.message and "dim=" in refused.value.message


# The method has one meaning, PyTorch's and NumPy's: reduce over the dimension, giving (values, indices).
METHOD_REDUCTIONS = [("x.max(0)", lambda x: x.max(0)), ("x.max(0, True)", lambda x: x.max(0, True)),
                     ("x.max(-1, keepdim=True)", lambda x: x.max(-1, keepdim=True)),
                     ("x.min(dim=1)", lambda x: x.min(dim=1))]


@pytest.mark.torch
@pytest.mark.parametrize("text, reduce", METHOD_REDUCTIONS, ids=[t for t, _ in METHOD_REDUCTIONS])
@pytest.mark.parametrize("pick", [".values", "[0]"])
def test_max_or_min_method_reduces_as_pytorch(text, reduce, pick, torch_in_float64):
    import torch

    x = [[-2.0, 1.0, 5.0], [3.0, -4.0, 0.5]]
    ev = run(f"{text}{pick} * [[1.0], [2.0]]", at={"x": x})
    ev.output.sum().backward()
    expected_x = torch.tensor(x, requires_grad=True)
    expected = reduce(expected_x)
    (expected.values * torch.tensor([[1.0], [2.0]])).sum().backward()
    assert ev.output.tolist() == (expected.values * torch.tensor([[1.0], [2.0]])).tolist()
    assert ev.inputs["x"].grad.tolist() == expected_x.grad.tolist()
    indices = run(f"{text}.indices", at={"x": x}).output
    assert indices.tolist() == expected.indices.tolist() and run(f"{text}[1]", at={"x": x}).output.tolist() == \
        expected.indices.tolist()


def test_max_method_pair_is_not_a_number():
    with pytest.raises(EvaluationProblem, match=r"pair of max\(\) \(take its \.values\)"):
        run("x.max(0) + 1", at={"x": [[1.0, 2.0]]})
    with pytest.raises(EvaluationProblem, match=r"sum\(\): expected a tensor, got the \(values, indices\) pair of "
                                                r"min\(\): take its \.values"):
        run("sum(x.min(0))", at={"x": [[1.0, 2.0]]})
    with pytest.raises(EvaluationProblem, match="out of range"):
        run("x.max(0)[2]", at={"x": [[1.0, 2.0]]})


# -- functions giving (values, indices), unpacking, methods with several sizes ----------------


@pytest.mark.torch
@pytest.mark.parametrize("text, reference", [
    ("sort(x).values", lambda torch, x: torch.sort(x).values),
    ("sort(x, 0, True)[0]", lambda torch, x: torch.sort(x, 0, True)[0]),
    ("x.topk(2).values", lambda torch, x: x.topk(2).values),
    ("cummax(x, 1)[0]", lambda torch, x: torch.cummax(x, 1)[0]),
    ("median(x, 0).values", lambda torch, x: torch.median(x, 0).values),
    ("x.kthvalue(2, 1, True).values", lambda torch, x: x.kthvalue(2, 1, True).values),
])
def test_a_pair_gives_its_values_by_name_or_place(text, reference, torch_in_float64):
    import torch

    x = [[3.0, -1.0, 2.5], [0.5, 4.0, -2.0]]
    ev = run(f"sum({text} ** 2)", at={"x": x})
    ev.output.backward()
    expected_x = torch.tensor(x, requires_grad=True)
    (reference(torch, expected_x) ** 2).sum().backward()
    assert ev.inputs["x"].grad.tolist() == expected_x.grad.tolist()


def test_a_pair_gives_its_indices_and_is_not_a_tensor():
    at = {"x": [3.0, 1.0, 2.0]}
    assert run("sort(x).indices", at=at).output.tolist() == [1, 2, 0]
    assert run("argsort(x, descending=True) + topk(x, 1)[1]", at=at).output.tolist() == [0, 2, 1]
    with pytest.raises(EvaluationProblem, match=r"got the \(values, indices\) pair of sort\(\): take its \.values"):
        run("exp(sort(x))", at=at)


def test_unpacking_a_pair_names_its_values_and_indices():
    ev = run("v, i = sort(x, descending=True)\nloss = sum(v * [1, 2, 3])", at={"x": [3.0, 1.0, 2.0]})
    assert ev.variables["v"].tolist() == [3.0, 2.0, 1.0] and ev.variables["i"].tolist() == [0, 2, 1]
    assert grads(ev) == {"x": [1.0, 3.0, 2.0]}


def test_unpacking_a_tensor_gives_its_rows_and_works_in_functions():
    ev = run("def f(y):\n    a, b, = y\n    return a * b\ntotal = sum(f(x))", at={"x": [[1.0, 2.0], [3.0, 4.0]]})
    assert ev.output.item() == 11.0
    assert grads(ev) == {"x": [[3.0, 4.0], [1.0, 2.0]]}


@pytest.mark.parametrize("text, expected", [
    ("x.repeat(2, 1)", [[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [3.0, 4.0]]),
    ("x.repeat((1, 2))", [[1.0, 2.0, 1.0, 2.0], [3.0, 4.0, 3.0, 4.0]]),
    ("x.view(4)", [1.0, 2.0, 3.0, 4.0]),
    ("x.reshape(1, 4)", [[1.0, 2.0, 3.0, 4.0]]),
    ("x.permute(1, 0)", [[1.0, 3.0], [2.0, 4.0]]),
    ("x.flip(0, 1)", [[4.0, 3.0], [2.0, 1.0]]),
    ("x.tile(1, 2)[0]", [1.0, 2.0, 1.0, 2.0]),
    ("x[0].expand(2, 2)", [[1.0, 2.0], [1.0, 2.0]]),
    ("x.where(x > 2, 0)", [[0.0, 0.0], [3.0, 4.0]]),  # PyTorch's Tensor.where(condition, other)
])
def test_a_method_takes_the_methods_arguments(text, expected):
    assert run(text, at={"x": [[1.0, 2.0], [3.0, 4.0]]}).output.tolist() == expected


# -- lists, as Python means them ----------------------------------------------------------------------


@pytest.mark.parametrize("program, python", [
    ("xs = []\nxs = xs + [1.0]\nxs", lambda: [1.0]),
    ("[1, 2] + [3]", lambda: [1, 2] + [3]),
    ("[1, 2] * 2", lambda: [1, 2] * 2),
    ("3 * [[1, 2]] + [[3, 4]]", lambda: 3 * [[1, 2]] + [[3, 4]]),
    ("[1, 2] * 0 + [5]", lambda: [1, 2] * 0 + [5]),
    ("xs = []\nfor i in range(3):\n    xs += [i * 1.5]\nxs", lambda: [i * 1.5 for i in range(3)]),
    ("def grow(v):\n    return v + [len(v)]\ngrow(grow([7]))", lambda: [7, 1, 2]),
])
def test_plus_joins_lists_and_times_an_integer_repeats_one_as_python(program, python):
    assert run(program.replace("len(v)", "size(v, 0)")).output.tolist() == python()


def test_a_list_with_a_tensor_or_a_float_is_arithmetic_and_joined_lists_keep_their_gradients():
    assert run("[1.0, 2.0] * 2.0").output.tolist() == [2.0, 4.0]
    assert run("x + [1, 2]", at={"x": [10.0, 20.0]}).output.tolist() == [11.0, 22.0]
    evaluation = run("sum(([x, 2 * x] + [x]) * 2)", at={"x": 3.0})
    assert evaluation.output.item() == 2 * (3.0 + 6.0 + 3.0)
    assert grads(evaluation) == {"x": 8.0}


def test_lists_that_python_would_leave_ragged_are_refused():
    with pytest.raises(EvaluationProblem, match="lists joined by '\\+' hold elements of one shape"):
        run("[[1, 2]] + [[3]]")
    with pytest.raises(LimitProblem, match="'\\*' of lists would create"):
        run("[1.0] * 10 ** 9")

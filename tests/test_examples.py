"""Every example runs, and prints what was recorded beside it."""

import pathlib
import re
import subprocess
import sys

import pytest

from printed import first_difference

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"
PYTHON_EXAMPLES = sorted((EXAMPLES / "python").glob("*.py"))


@pytest.mark.parametrize("script", PYTHON_EXAMPLES, ids=[p.name for p in PYTHON_EXAMPLES])
def test_python_example_prints_its_recorded_output(script):
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    recorded = without_addresses(script.with_suffix(".out").read_text())
    difference = first_difference(without_addresses(result.stdout), recorded)  # BLAS digits vary by CPU
    assert difference is None, f"{script.name} prints other than {script.with_suffix('.out').name}: {difference}"


def without_addresses(text: str) -> str:
    """Printed nodes show where they live (`<AddBackward0 object at 0x7f...>`), which varies."""
    return re.sub(r" at 0x[0-9a-f.]+>", " at 0x...>", text)


def test_there_are_python_examples():
    assert PYTHON_EXAMPLES


# -- expression files ------------------------------------------------------------------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402

from autodiff.language import run  # noqa: E402

EXPRESSIONS = sorted(EXAMPLES.glob("*.expr"))
POINTS = {"tutorial": {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}, "linear": {"x": 1.0, "y": 2.0, "z": 5.0}}


def example(stem: str, **kwargs):
    path = EXAMPLES / f"{stem}.expr"
    return run(path.read_text(), str(path), at=POINTS.get(stem, {}), **kwargs)


def gradients(evaluation) -> dict:
    evaluation.output.backward()
    return {name: t.grad.numpy() for name, t in evaluation.inputs.items() if t.grad is not None}


def test_there_are_expression_examples():
    assert {p.stem for p in EXPRESSIONS} >= {"tutorial", "linear", "matrix", "dynamic", "mlp"}


def test_tutorial_example():
    ev = example("tutorial")
    assert ev.output_name == "e" and ev.output.item() == 6 + 5 * math.log(10)
    grads = gradients(ev)
    assert (grads["a"], grads["b"], grads["d"]) == (3.0, 2.0, 0.5)
    assert grads["c"] == math.log(10)


def test_linear_example():
    ev = example("linear")
    assert ev.output.item() == 3.0
    assert {k: float(v) for k, v in gradients(ev).items()} == {"x": 2.0, "y": -2.0, "z": 1.0}


def test_matrix_example_needs_its_sum():
    ev = example("matrix")
    assert ev.output_name == "total"
    np.testing.assert_array_equal(gradients(ev)["x"], -2 * np.ones((3, 3)))
    non_scalar = example("matrix", output="L")
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        non_scalar.output.backward()


@pytest.mark.parametrize("stem", ["mlp", "tutorial", "matrix", "linear"])
def test_example_gradients_match_finite_differences(stem):
    path = EXAMPLES / f"{stem}.expr"
    text = path.read_text()
    base = example(stem)
    analytic = gradients(base)
    eps = 1e-6
    for name, leaf in base.inputs.items():
        values = leaf.detach().numpy()
        numeric = np.zeros_like(values)
        for index in np.ndindex(values.shape):
            shifted = []
            for sign in (1, -1):
                point = values.copy()
                point[index] += sign * eps
                at = {**POINTS.get(stem, {}), name: point}
                shifted.append(run(text, str(path), at=at).output.item())
            numeric[index] = (shifted[0] - shifted[1]) / (2 * eps)
        np.testing.assert_allclose(analytic[name], numeric, rtol=1e-5, atol=1e-7, err_msg=f"{stem}: {name}")


def test_the_dynamic_example_cuts_the_graph_where_it_says():
    # result = y * scale + detach(x), scale computed under no_grad: the gradient is y'(x) * scale.
    ev = example("dynamic")
    scale = ev.variables["scale"].item()
    grad = gradients(ev)["x"]
    dy = example("dynamic", output="y")
    dy.output.backward()
    assert grad == pytest.approx(dy.inputs["x"].grad.item() * scale)


def test_random_defaults_do_not_depend_on_what_is_overridden():
    text = "W1: input = randn(2)\nW2: input = randn(2)\nsum(W1 * W2)"
    plain = run(text)
    overridden = run(text, at={"W1": [1.0, 1.0]})
    assert overridden.inputs["W2"].tolist() == plain.inputs["W2"].tolist()

"""Programs as large as users make them: nothing recurses with the input's size."""

import sys

import pytest

from autodiff.language import InputProblem, SyntaxProblem, run


def test_a_100000_term_sum():
    limit = sys.getrecursionlimit()
    ev = run("s = " + " + ".join(["x"] * 100_000), at={"x": 2.0})
    ev.output.backward()
    assert ev.output.item() == 200_000.0
    assert ev.inputs["x"].grad.item() == 100_000.0
    assert sys.getrecursionlimit() == limit


@pytest.mark.slow
def test_a_100000_line_file():
    lines = ["y0 = x * 1.0"] + [f"y{i} = y{i - 1} * 0.99999 + x * 0.001" for i in range(1, 100_000)]
    ev = run("\n".join(lines), at={"x": 1.0})
    ev.output.backward()
    assert ev.output_name == "y99999"
    assert ev.inputs["x"].grad.item() == pytest.approx(ev.output.item())  # the output is linear in x


def test_deep_nesting_is_a_clear_error():
    with pytest.raises(SyntaxProblem, match="too many nested brackets: more than 200 levels"):
        run("(" * 100_000 + "x" + ")" * 100_000, at={"x": 1})
    assert run("(" * 200 + "x" + ")" * 200, at={"x": 1.0}).output.item() == 1.0


def test_long_chains_of_prefix_and_right_associative_operators():
    assert run("-" * 100_000 + "x", at={"x": 0.5}).output.item() == 0.5
    assert run("x" + " ** x" * 50_000, at={"x": 1.0}).output.item() == 1.0


def test_source_size_limit():
    with pytest.raises(InputProblem, match="the program is too large"):
        run("x = 1\n" * 1_500_000)

"""Differential tests: random programs over the whole language, autodiff against PyTorch.

Each program is generated once (tests/differential/programs.py) as text; autodiff runs it with
`autodiff.language.run`, PyTorch runs the same text with the names bound to torch functions
(float64, or float32 for that category). Output value, the gradient of every input (None vs
None too) and the output's grad_fn name must agree; the second-order category takes
`autograd.grad(..., create_graph=True)` twice and a backward through that.

Figures over many more programs: `PYTHONPATH=src python bench/differential.py 2000 --flags`.
"""

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

from .oracle import compare, compare_multi_root  # noqa: E402
from .programs import KNOWN, TENSOR_CATEGORIES, tensor_program  # noqa: E402

MAIN = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
# Known-broken constructs: a few examples, no shrinking (they are expected to fail today)
KNOWN_BROKEN = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                        phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.too_slow])
RANDOMS = st.randoms(use_true_random=False)


def _check(program, problem):
    assert problem is None, f"{problem}\n--- program ---\n{program.text}--- {program.at_text()}"


@pytest.mark.parametrize("category", TENSOR_CATEGORIES)
@MAIN
@given(rng=RANDOMS)
def test_random_programs_agree_with_pytorch(category, rng):
    program = tensor_program(rng, category)
    _check(program, compare(program))


# Each construct that once gave a wrong answer, on its own (the main generators mix it in too).

def _focused(flag, category):
    @KNOWN_BROKEN
    @given(rng=RANDOMS)
    def test(rng):
        program = tensor_program(rng, category, frozenset({flag}), statements=1)
        _check(program, compare(program))
    return test


test_view_after_flip_index_cat = _focused("view_after_copy", "shape")  # once wrong: a view after flip, index and cat
test_mixed_advanced_indexing = _focused("mixed_index", "indexing")  # once wrong: NumPy's axis order
test_narrow_negative_start = _focused("narrow_negative", "shape")  # once wrong
test_reshape_alias_grad_fn = _focused("reshape_alias", "shape")  # found by these tests


@KNOWN_BROKEN
@given(rng=RANDOMS)
def test_backward_with_dependent_roots(rng):  # once lost gradients
    program = tensor_program(rng, "elementwise")
    _check(program, compare_multi_root(program))


def test_independent_roots_backward_agrees():
    """autograd.backward([y, z]) with roots that do not depend on each other (works today)."""
    import autodiff

    grads = []
    for lib in (autodiff, torch):
        x = lib.tensor([0.5, -1.25, 2.0], dtype=lib.float64, requires_grad=True)
        y, z = (x * x).sum(), lib.sin(x).sum()
        lib.autograd.backward([y, z])
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1], rel=1e-12)

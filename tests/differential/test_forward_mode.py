"""`autodiff grad --mode forward`: random programs over the whole language give the
gradients in forward mode (one pass per input element, dual tensors) that reverse mode gives."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autodiff.program import differentiate

from .programs import TENSOR_CATEGORIES, tensor_program

FORWARD = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow])


@FORWARD
@given(rng=st.randoms(use_true_random=False),
       category=st.sampled_from([c for c in TENSOR_CATEGORIES if c not in ("second_order", "float32")]))
def test_forward_mode_gives_the_gradients_of_reverse_mode(rng, category):
    program = tensor_program(rng, category)
    text = program.text + f"loss = sum({program.output} * {program.weights})\n"
    reverse = differentiate(text, program.inputs, output="loss")
    forward = differentiate(text, program.inputs, output="loss", mode="forward")
    assert [q.name for q in forward.inputs] == [q.name for q in reverse.inputs]
    assert [w.message for w in forward.warnings] == [w.message for w in reverse.warnings]
    for a, b in zip(forward.inputs, reverse.inputs):
        assert (a.grad is None) == (b.grad is None) and a.note == b.note, (a.name, program.text)
        if b.grad is not None:
                np.testing.assert_allclose(a.grad, b.grad, rtol=1e-9, atol=1e-12, err_msg=f"{a.name}\n{program.text}")

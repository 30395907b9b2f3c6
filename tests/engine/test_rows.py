"""Families of op rows (ops/registry.py's unary_op, binary_op, elementwise_op, elementwise_nondiff,
and surface.py's along_dim): the family fills its shared keywords, and a row that lacks what its
family needs fails where it is declared, naming the op."""

import pytest

import autodiff
from autodiff.ops import surface
from autodiff.ops.batching import ELEMENTWISE
from autodiff.ops.registry import NONDIFF, REGISTRY, binary_op, elementwise_nondiff, elementwise_op, unary_op
from autodiff.ops.spelling import elementwise


@pytest.fixture
def declared(restore_op_tables):
    """The ops a test declares are gone after it."""


def _cube(xp, input):
    return input ** 3


def _cube_grad(grad, input):
    return grad * 3 * input * input


def test_a_unary_row_is_public_with_its_method_in_place_method_and_batching_rule(declared):
    op = unary_op("cube_row_for_test", _cube, doc="input ** 3", input=_cube_grad,
                  spelling=elementwise("np.power({0}, 3)"))
    assert op.batch is ELEMENTWISE and surface.PUBLIC["cube_row_for_test"] is op.apply
    x = autodiff.tensor([1.0, 2.0], requires_grad=True)
    x.cube_row_for_test().sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]
    z = autodiff.tensor([2.0])
    assert z.cube_row_for_test_() is z and z.tolist() == [8.0]


@pytest.mark.parametrize("declare, row, words", [
    (unary_op, dict(doc="d", spelling=elementwise("np.cbrt")), "needs input="),
    (unary_op, dict(doc="d", inptu=_cube_grad, spelling=elementwise("np.cbrt")), "needs input="),
    (unary_op, dict(doc="d", input=_cube_grad), "needs spelling="),
    (unary_op, dict(input=_cube_grad, spelling=elementwise("np.cbrt")), "needs doc="),
    (unary_op, dict(doc="d", input=_cube_grad, spelling=elementwise("np.cbrt"), batch=ELEMENTWISE),
     "has batch from its family"),
    (binary_op, dict(doc="d", input=lambda grad: grad, spelling=elementwise("np.add")), "needs other="),
    (elementwise_op, dict(spelling=elementwise("np.cbrt")), "needs a derivative formula"),
    (elementwise_op, dict(input=_cube_grad), "needs spelling="),
])
def test_a_row_missing_what_its_family_needs_fails_where_it_is_declared(declared, declare, row, words):
    forward = (lambda xp, input, other: input + other) if declare is binary_op else _cube
    with pytest.raises(TypeError, match=rf"op bad_row_for_test: .*{words}"):
        declare("bad_row_for_test", forward, **row)
    assert "bad_row_for_test" not in REGISTRY and "bad_row_for_test" not in surface.PUBLIC


def test_an_operation_without_gradient_needs_its_spelling_and_doc(declared):
    with pytest.raises(TypeError, match="op bad_test_for_test: .*needs spelling="):
        elementwise_nondiff("bad_test_for_test", lambda xp, input: xp.isnan(input), doc="d")
    with pytest.raises(TypeError, match="op bad_test_for_test: .*needs doc="):
        elementwise_nondiff("bad_test_for_test", lambda xp, input: xp.isnan(input), spelling=elementwise("np.isnan"))
    assert "bad_test_for_test" not in NONDIFF


"""Fixtures of the engine's tests."""

import pytest

from autodiff.ops import load_all, surface
from autodiff.ops.registry import NONDIFF, REGISTRY
from autodiff.ops.spelling import SPELLINGS


@pytest.fixture
def restore_op_tables():
    """Take every trace of the ops a test declares away again: what the op tables and Tensor's
    methods hold after it is what they held before (every op module loaded first, or the methods
    of one the test loads would go with the test's own)."""
    load_all()
    tables = (REGISTRY, NONDIFF, SPELLINGS, surface.PUBLIC)
    names = [set(table) for table in tables]
    methods = set(vars(surface.TensorMethods))
    yield
    for table, before in zip(tables, names):
        for name in set(table) - before:
            del table[name]
    for attribute in set(vars(surface.TensorMethods)) - methods:
        delattr(surface.TensorMethods, attribute)

"""ops/surface.py's parameter_names reads a plain function's parameters from its code (the ops are
declared at import, on every start of the command line): it must say what inspect says."""

import functools
import inspect

import autodiff
from autodiff.ops import PUBLIC, REGISTRY
from autodiff.ops.surface import TensorMethods, parameter_names


def _inspected(function) -> tuple:
    return tuple(inspect.signature(function).parameters)


def test_every_declared_function_and_formula_reads_as_inspect_reads_it():
    functions = [f for op in REGISTRY.values() for f in (op.forward, *op.formulas)]
    functions += list(PUBLIC.values()) + [m for m in vars(TensorMethods).values() if callable(m)]
    checked = 0
    for function in functions:
        try:
            expected = _inspected(function)
        except (TypeError, ValueError):
            continue
        assert parameter_names(function) == expected, function
        checked += 1
    assert checked > 500


def test_every_kind_of_callable():
    def plain(a, b=1, *, c, d=2):
        e = a  # noqa: F841  (a local is not a parameter)

    def variadic(a, *rest, key=None, **more):
        pass

    @functools.wraps(plain)
    def wrapper(*args, **kwargs):
        return plain(*args, **kwargs)

    def described(*args):
        pass

    described.__signature__ = inspect.signature(lambda x, y: None)

    class Called:
        def __call__(self, x, y=2):
            pass

        def method(self, p, q):
            pass

    for function in (plain, variadic, wrapper, described, lambda: None, lambda x, /, y: None, Called(), Called().method,
                     functools.partial(plain, 1), autodiff.tensor, autodiff.Tensor.sum):
        assert parameter_names(function) == _inspected(function), function

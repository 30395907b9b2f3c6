"""Every operation on tensors. Differentiable ones are declared in the registry (registry.py)."""

from .registry import REGISTRY, OpDef, ShapeError, defop  # noqa: F401  (the registry first)
from .selection import clamp, maximum, minimum, where
from .comparison import (
    all,
    any,
    eq,
    floor_divide,
    ge,
    gt,
    isfinite,
    isinf,
    isnan,
    le,
    logical_and,
    logical_not,
    logical_or,
    lt,
    ne,
    remainder,
)
from .arithmetic import add, div, mul, neg, pow, rdiv, reciprocal, rpow, rsub, square, sub
from .pointwise import abs, cos, exp, expm1, log, log1p, relu, sigmoid, sign, sin, sqrt, tan, tanh
from .shape import (
    broadcast_shapes,
    cat,
    clone,
    detach,
    expand,
    flatten,
    flip,
    permute,
    reshape,
    squeeze,
    stack,
    sum_to,
    t,
    to,
    to_device,
    to_dtype,
    transpose,
    unsqueeze,
    view,
)
from .indexing import getitem, index_put, narrow, select
from .reduction import argmax, argmin, log_softmax, logsumexp, max, mean, min, prod, softmax, sum
from .linalg import bmm, dot, matmul, mm, mv
from .. import creation
from . import arithmetic, comparison, indexing, linalg, pointwise, reduction, selection, shape

# Every function a user may call by name: what each module lists in __all__, plus tensor
# creation. The expression language calls these and nothing else.
FUNCTIONS = {
    name: getattr(module, name)
    for module in (pointwise, arithmetic, reduction, linalg, shape, indexing, selection, comparison)
    for name in module.__all__
}
FUNCTIONS.update(
    {name: getattr(creation, name) for name in (
        "zeros", "ones", "full", "eye", "arange", "linspace", "rand", "randn",
        "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    )}
)
zeros_like = creation.zeros_like  # the engine's materialize_grads uses it

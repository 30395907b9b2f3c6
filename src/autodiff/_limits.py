"""The element limit: the one place where a result's size is checked before it is allocated.

The library sets no limit; the expression language sets one (`--max-elements`) for the
length of a run. Creation functions check the shape they are asked for; registry ops check
the shape their result will have, computed from their operands' shapes (broadcasting,
batched products, joins, expand) before the forward runs. With no limit set the ops test
one attribute and go on.
"""

from __future__ import annotations

import math


class ElementLimitError(RuntimeError):
    """An operation would create more elements than the current limit allows."""


class _State:
    __slots__ = ("limit",)

    def __init__(self) -> None:
        self.limit: int | None = None


STATE = _State()


def check_elements(count, what: str) -> None:
    limit = STATE.limit
    if limit is not None and count > limit:
        raise ElementLimitError(f"{what} would create {count:,} elements; the limit is {limit:,}")


# Ops whose result may be larger than their largest operand: each maps its operands'
# arrays (and parameters) to the result's number of elements, or None when the op itself
# will refuse the shapes.
def _broadcast_count(arrays) -> tuple:
    shapes = [tuple(a.shape) for a in arrays if hasattr(a, "shape")]
    if len(shapes) < 2:
        return None, shapes
    try:
        shape = _broadcast_shapes(shapes)
    except ValueError:
        return None, shapes
    return math.prod(shape), shapes


def _broadcast_shapes(shapes) -> tuple:
    ndim = max(len(s) for s in shapes)
    out = []
    for d in range(ndim):
        size = 1
        for s in shapes:
            i = d - (ndim - len(s))
            if i < 0 or s[i] == 1:
                continue
            if size not in (1, s[i]):
                raise ValueError("shapes do not broadcast")
            size = s[i]
        out.append(size)
    return tuple(out)


def _matmul_count(a, b):
    a, b = tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ()))
    if not a or not b:
        return None
    rows = a[-2] if len(a) >= 2 else 1
    cols = b[-1] if len(b) >= 2 else 1
    try:
        batch = _broadcast_shapes([a[:-2], b[:-2]]) if len(a) > 2 or len(b) > 2 else ()
    except ValueError:
        return None
    return math.prod(batch) * rows * cols


def check_op(name: str, arrays, params=()) -> None:
    """Refuse, before it runs, an op whose result would pass the limit (ElementLimitError)."""
    limit = STATE.limit
    if limit is None:
        return
    if name in ("mm", "bmm", "matmul", "mv", "dot"):
        count = _matmul_count(arrays[0], arrays[1])
        shapes = [tuple(getattr(a, "shape", ())) for a in arrays[:2]]
    elif name in ("cat", "stack"):
        shapes = [tuple(a.shape) for a in arrays]
        count = sum(math.prod(s) for s in shapes)
    elif name == "expand":
        shapes = [tuple(arrays[0].shape)]
        target = tuple(params[0]) if params else ()
        have = shapes[0]
        lead = len(target) - len(have)
        count = math.prod(have[i - lead] if size == -1 and i >= lead else max(int(size), 0)
                          for i, size in enumerate(target))
    else:
        count, shapes = _broadcast_count(arrays)
    if count is not None and count > limit:
        raise ElementLimitError(f"{name} of shapes {' and '.join(str(list(s)) for s in shapes)} would create "
                                f"{count:,} elements; the limit is {limit:,}")


GROWING_UNARY = frozenset({"expand"})  # unary ops (with parameters) whose result can outgrow the operand

"""Batching: how a leading batch dimension passes through each operation (`vmap` semantics).

A `Batched` tensor stands for many examples at once: its `physical` tensor holds them along
a leading dimension, and to the code that uses it, it looks like one example — its `shape`,
`ndim` and `numel` are those of an example, `x.sum()` sums one example. Each operation
declares how it maps onto the physical tensors, beside its declaration (`batch=` in `defop`,
`@public`, `nondiff`), with one of the rules here:

- `ELEMENTWISE`: the examples' dimensions are aligned from the right, the batch stays in front;
- `dims("dim", ...)`: the named dimension arguments move past the batch dimension;
- a function of its own for the rest (shapes, joins, matrix products);
- with no rule, the operation runs example by example and the results are stacked: slower,
  never wrong.

Results are computed on the physical tensors by the ordinary operations, so autograd records
them as usual: one backward pass gives every example its gradient. A value an example's
control flow depends on (`if x > 0`) is the same for every example or it cannot be decided:
`DataDependent` then says which examples take which value, and the caller regroups them.
"""

from __future__ import annotations

import inspect

from ..tensor import Size, Tensor, _make
from . import hooks
from .dims import normalize_dim


class DataDependent(RuntimeError):
    """A Python value (a condition, a size) read from a batch whose examples disagree on it.

    `values` holds each example's value, so a caller can group the examples that agree."""

    def __init__(self, values: list) -> None:
        super().__init__(
            "vmap: the examples of a batch disagree on a value that decides the computation (a "
            "condition, a size): run them in groups that agree, or one by one"
        )
        self.values = values


class Batched(Tensor):
    """Many examples, stacked along the leading dimension of `physical`, seen as one."""

    __slots__ = ("physical",)

    def __init__(self, physical: Tensor) -> None:  # noqa: super().__init__ is not wanted
        self.physical = physical
        self._data = physical._data  # for the code that only reads dtypes and devices
        self._requires_grad = physical._requires_grad
        self._node, self._at = physical._node, physical._at  # its place in the graph is physical's
        self._token = physical._token
        self._grad = None
        self._output_nr = 0
        self._version_log = None
        self._backward_hooks = None
        self._accumulator = None

    @property
    def batch_size(self) -> int:
        return self.physical._data.shape[0]

    # -- one example's view ----------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self.physical._data.shape[1:])

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    @property
    def ndim(self) -> int:
        return self.physical._data.ndim - 1

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(Size(self.shape).numel())

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    @property
    def grad_fn(self):
        return self.physical.grad_fn

    @grad_fn.setter
    def grad_fn(self, value) -> None:  # Tensor's own initialisation sets it; a view of physical ignores it
        pass

    @property
    def requires_grad(self) -> bool:
        return self.physical._requires_grad

    # -- Python values: the same for every example, or DataDependent -------------------------------

    def _common(self, convert):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        values = [convert(v) for v in self.physical.detach().reshape(-1).tolist()]
        if any(v != values[0] for v in values[1:]):
            raise DataDependent(values)
        return values[0]

    def item(self):
        return self._common(lambda v: v)

    def __bool__(self) -> bool:
        return self._common(bool)

    def __float__(self) -> float:
        return self._common(float)

    def __int__(self) -> int:
        return self._common(int)

    def __index__(self) -> int:
        return self._common(int)

    def tolist(self):
        raise RuntimeError("vmap: tolist() reads every example's values: return the tensor instead")

    def numpy(self, *, force: bool = False):
        raise RuntimeError("vmap: numpy() reads every example's values: return the tensor instead")

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"BatchedTensor(batch_size={self.batch_size}, value={self.physical!r})"

    def backward(self, *args, **kwargs):
        raise RuntimeError("vmap: backward() inside vmap is not supported: use autodiff.func.grad or vjp")

    def _apply_inplace(self, operation, *args, **kwargs):
        raise RuntimeError("vmap: in-place operations on a batched tensor are not supported")

    def __setitem__(self, key, value) -> None:
        self._apply_inplace(None)


def batched(physical: Tensor) -> Batched:
    return Batched(physical)


def _result(value):
    """An operation's physical result, seen as a batch again (tuples and named tuples too)."""
    if isinstance(value, Tensor):
        return Batched(value)
    if isinstance(value, tuple):
        parts = [_result(v) for v in value]
        return type(value)(*parts) if hasattr(value, "_fields") else tuple(parts)
    return value


def has_batched(args, kwargs=None) -> bool:
    for a in args:
        if a.__class__ is Batched or (a.__class__ in (list, tuple) and any(t.__class__ is Batched for t in a)):
            return True
    return bool(kwargs) and any(v.__class__ is Batched for v in kwargs.values())


def _batch_size(args, kwargs) -> int:
    sizes = set()
    for a in list(args) + list(kwargs.values()):
        for t in a if a.__class__ in (list, tuple) else (a,):
            if t.__class__ is Batched:
                sizes.add(t.batch_size)
    if len(sizes) != 1:
        raise ValueError(f"vmap: the batched tensors have different batch sizes: {sorted(sizes)}")
    return sizes.pop()


# -- the rules -------------------------------------------------------------------------------------


# The tensor classes that make an operation leave its fast path and come to `dispatch`: batched
# tensors, and while symbolic/trace.py traces, traced ones (it sets TRACER to take them).
# (forward mode adds dual tensors while a level is open). Who takes them is hooks.py's.
INTERCEPTED = {Batched}


def dispatch(rule, function, args, kwargs):
    """Run `function` on batched arguments by its rule (example by example when it has none)."""
    in_force = hooks.current()
    if in_force.tracer is not None and not has_batched(args, kwargs):
        return in_force.tracer(function, args, kwargs)
    if in_force.forward is not None and not has_batched(args, kwargs):
        return in_force.forward(function, args, kwargs)
    if rule is None:
        return by_example(function, args, kwargs)
    return rule(function, args, kwargs)


def by_example(function, args, kwargs):
    """The rule of last resort: each example alone, the results stacked."""
    from .shape import stack

    size = _batch_size(args, kwargs)

    def pick(value, i):
        if value.__class__ is Batched:
            return value.physical[i]
        if value.__class__ in (list, tuple):
            return type(value)(pick(v, i) for v in value)
        return value

    results = [function(*[pick(a, i) for a in args], **{k: pick(v, i) for k, v in kwargs.items()})
               for i in range(size)]
    first = results[0]
    if isinstance(first, tuple):
        parts = [stack([r[j] for r in results]) for j in range(len(first))]
        return _result(type(first)(*parts) if hasattr(first, "_fields") else tuple(parts))
    if not isinstance(first, Tensor):  # a Python value (allclose): the batch's, if every example has it
        if isinstance(first, (bool, int, float)) and all(type(r) is type(first) and r == first for r in results):
            return first
        raise DataDependent([r for r in results])
    return _result(stack(results))


def _aligned(value, ndim: int):
    """A batched value's physical tensor with its example dims padded to `ndim` (from the left)."""
    physical = value.physical
    missing = ndim - (physical._data.ndim - 1)
    if missing:
        shape = physical._data.shape
        physical = physical.reshape(shape[:1] + (1,) * missing + shape[1:])
    return physical


def ELEMENTWISE(function, args, kwargs):  # noqa: N802 (a rule, named like a constant)
    """Broadcasting operations: examples aligned from the right, the batch dimension in front."""
    ndim = max((_example_ndim(a) for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)), default=0)
    physical = [_aligned(a, ndim) if a.__class__ is Batched else a for a in args]
    named = {k: _aligned(v, ndim) if v.__class__ is Batched else v for k, v in kwargs.items()}
    return _result(function(*physical, **named))


def _example_ndim(value) -> int:
    return value.physical._data.ndim - 1 if value.__class__ is Batched else value._data.ndim


def _shift(dim, ndim: int):
    """An example's dim as a physical one: counted from the end it stays, from the start +1."""
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return type(dim)(_shift(d, ndim) for d in dim)
    dim = int(dim)
    if not -ndim - 1 <= dim <= max(ndim - 1, 0):
        normalize_dim(dim, ndim)  # PyTorch's error for an example's dim out of range
    return dim if dim < 0 else dim + 1


class dims:  # noqa: N801 (used as a rule: dims("dim"))
    """Operations on one tensor with dimension arguments: those move past the batch dimension.

    `every=True`: a dim of None means all of an example's dims (a reduction of the whole
    example), passed on as the tuple of them; otherwise None stays None."""

    def __init__(self, *names: str, every: bool = False, new_dims: int = 0, none_by_example: bool = False) -> None:
        self.names = names
        self.every = every
        self.new_dims = new_dims  # dims the op adds, that the dim argument may also name (unsqueeze)
        self.none_by_example = none_by_example  # max(x): the whole example has a rule of its own

    def __call__(self, function, args, kwargs):
        bound = _bind(function, args, kwargs)
        input = bound.arguments[_first(bound)]
        ndim = input.physical._data.ndim - 1 + self.new_dims if input.__class__ is Batched else 0
        if input.__class__ is not Batched or not ndim or any(
                v.__class__ is Batched for k, v in bound.arguments.items() if v is not input):
            return by_example(function, args, kwargs)  # a 0-d example has no dim to move past
        bound.apply_defaults()
        for name in self.names:
            value = bound.arguments.get(name)
            if value is None and not (self.every or self.none_by_example):
                continue
            if value is None and self.none_by_example:
                return by_example(function, args, kwargs)
            if value is None and self.every:
                bound.arguments[name] = tuple(range(1, ndim + 1))
            else:
                bound.arguments[name] = _shift(value, ndim)
        bound.arguments[_first(bound)] = input.physical
        return _result(function(*bound.args, **bound.kwargs))


def _first(bound) -> str:
    return next(iter(bound.signature.parameters))


_SIGNATURES: dict = {}


def _bind(function, args, kwargs):
    signature = _SIGNATURES.get(function)
    if signature is None:
        forward = getattr(function, "_forward", None)  # an op's apply: its forward's signature, less xp
        if forward is not None:
            whole = inspect.signature(forward)
            signature = whole.replace(parameters=list(whole.parameters.values())[1:])
        else:
            signature = inspect.signature(function)
        _SIGNATURES[function] = signature
    bound = signature.bind(*args, **kwargs)
    return bound


def shape_argument(name: str):
    """Operations whose argument `name` is an example's shape (reshape, view, expand)."""

    def rule(function, args, kwargs):
        bound = _bind(function, args, kwargs)
        input = bound.arguments[_first(bound)]
        if input.__class__ is not Batched or any(v.__class__ is Batched for v in bound.arguments.values()
                                                 if v is not input):
            return by_example(function, args, kwargs)
        bound.arguments[_first(bound)] = input.physical
        bound.arguments[name] = (input.batch_size,) + tuple(bound.arguments[name])
        return _result(function(*bound.args, **bound.kwargs))

    return rule


def joins(new_dim: bool):
    """cat and stack: unbatched tensors are repeated for every example; the dim moves past the batch."""

    def rule(function, args, kwargs):
        bound = _bind(function, args, kwargs)
        names = list(bound.signature.parameters)
        tensors = list(bound.arguments[names[0]])
        size = _batch_size(tensors, {})
        example = next(t for t in tensors if t.__class__ is Batched)
        ndim = example.physical._data.ndim - 1 + (1 if new_dim else 0)
        physical = [t.physical if t.__class__ is Batched else
                    t.unsqueeze(0).expand((size,) + tuple(t.shape)) for t in tensors]
        dim = bound.arguments.get("dim", 0)
        bound.arguments[names[0]] = physical
        bound.arguments["dim"] = _shift(dim, ndim)
        return _result(function(*bound.args, **bound.kwargs))

    return rule


def matrix_product(function, args, kwargs):
    """matmul and friends on examples: vectors made matrices, the batch aligned in front."""
    from .products import matmul

    bound = _bind(function, args, kwargs)
    names = list(bound.signature.parameters)
    left, right = bound.arguments[names[0]], bound.arguments[names[1]]
    if not (isinstance(left, Tensor) and isinstance(right, Tensor)) or len(bound.arguments) > 2:
        return by_example(function, args, kwargs)
    left_nd, right_nd = _example_ndim(left), _example_ndim(right)
    if left_nd == 0 or right_nd == 0 or function.__name__ not in ("matmul", "mm", "mv", "dot"):
        return by_example(function, args, kwargs)
    expected = {"mm": (2, 2), "mv": (2, 1), "dot": (1, 1)}.get(function.__name__)
    if expected and (left_nd, right_nd) != expected:
        return by_example(function, args, kwargs)  # the op's own error, said for one example
    # Vectors as matrices (a row on the left, a column on the right), as matmul treats them.
    a = _as_matrix(left, left_nd == 1, -2)
    b = _as_matrix(right, right_nd == 1, -1)
    a_nd, b_nd = _example_ndim(a), _example_ndim(b)
    batch_nd = max(a_nd, b_nd) - 2  # the examples' own batch dims, broadcast from the right
    a = _aligned(a, batch_nd + 2) if a.__class__ is Batched else a
    b = _aligned(b, batch_nd + 2) if b.__class__ is Batched else b
    if a.__class__ is not Batched and b.__class__ is Batched and a._data.ndim == 2:
        pass  # a plain matrix broadcasts against the batch
    product = matmul(a, b)
    if left_nd == 1:
        product = product.squeeze(-2)
    if right_nd == 1:
        product = product.squeeze(-1)
    return _result(product)


def _as_matrix(value, vector: bool, where: int):
    if not vector:
        return value
    if value.__class__ is Batched:
        return Batched(value.physical.unsqueeze(where))
    return value.unsqueeze(where)


def indexing(function, args, kwargs):
    """x[key] for examples: the batch dimension kept in front of a basic key."""
    input, key = args
    if input.__class__ is not Batched or (key.__class__ is Batched) or (
            isinstance(key, tuple) and any(k.__class__ is Batched for k in key)):
        return by_example(function, args, kwargs)
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, (list, Tensor)) or hasattr(k, "shape") for k in parts):
        return by_example(function, args, kwargs)  # tensor indices place their dims by rules of their own
    return _result(function(input.physical, (slice(None),) + parts))


def physical_of(value):
    return value.physical if value.__class__ is Batched else value


__all__ = ["Batched", "DataDependent", "ELEMENTWISE", "by_example", "dims", "dispatch", "has_batched", "indexing",
           "joins", "matrix_product", "shape_argument", "_make"]

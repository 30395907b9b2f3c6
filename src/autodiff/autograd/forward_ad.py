"""Forward-mode automatic differentiation, as `torch.autograd.forward_ad`.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)   # f(primal) and J·tangent, in one pass

A dual tensor carries a tangent beside its value. While a level is open, every operation on a
dual tensor also computes its result's tangent, the Jacobian-vector product J·t, as it runs:
one pass gives the derivative of every output along one direction of the inputs, which is what
pays when a function has few inputs and many outputs.

Each operation's J·t comes from its own derivative formulas (its `defop` declaration), with no
second table to drift: a formula computes u ↦ Jᵀu, which is linear in u, so J·t is the gradient
with respect to u of ⟨Jᵀu, t⟩. The op is run once more on stand-ins of its dual inputs and two
reverse passes over that one op give the tangent, exact wherever the formulas are. The stand-in
is the input itself when it requires grad, so that a tangent can in turn be differentiated
(reverse over forward); and because the dual tensors are what the graph saves, a backward pass
run inside a level carries tangents too (forward over reverse: a Hessian-vector product).
"""

from __future__ import annotations

from typing import NamedTuple

from .. import backend
from ..ops import batching, hooks, registry
from ..tensor import Tensor, _alias, _make
from .grad_mode import FORWARD_AD
from .grad_mode import STATE as GRAD_MODE

_NESTED_ERROR = "Nested forward mode AD is not supported at the moment"
# The slots a dual tensor copies from the tensor it stands for (all but __weakref__ and _detached_at).
_SLOTS = tuple(s for s in Tensor.__slots__ if s not in ("__weakref__", "_detached_at"))  # that one may be unset


class UnpackedDualTensor(NamedTuple):
    """`unpack_dual`'s result: the value, and its tangent (None where it has none)."""

    primal: Tensor
    tangent: Tensor | None


class Dual(Tensor):
    """A tensor with a tangent at a level (`level` is the level's own token: a tangent ends
    with its level). Outside its level it is an ordinary tensor."""

    __slots__ = ("tangent", "level")

    def _live(self) -> bool:
        return self.tangent is not None and self.level is FORWARD_AD.token

    def __repr__(self) -> str:
        text = super().__repr__()
        if not self._live():
            return text
        return f"{text[:-1]}, tangent={self.tangent!r})"

    def _apply_inplace(self, operation, *args, **kwargs) -> Tensor:
        """`d.mul_(3)`: the value changes in place and the tangent with it."""
        if not self._live():
            return super()._apply_inplace(operation, *args, **kwargs)
        tangent, level, found = self.tangent, self.level, []

        def with_tangent(alias, *a, **k):
            result = operation(_dual(alias, tangent, level), *a, **k)
            found.append(result.tangent if result.__class__ is Dual else None)
            return result

        super()._apply_inplace(with_tangent, *args, **kwargs)
        self.tangent = found[0] if found and found[0] is not None else _zeros_like(self)
        return self

    def _fill_with(self, array) -> Tensor:
        """`fill_`, `zero_`: a constant value, so a zero tangent (PyTorch's)."""
        super()._fill_with(array)
        if self._live():
            self.tangent = _zeros_like(self)
        return self


def _dual(plain: Tensor, tangent, level) -> Dual:
    """A dual tensor that is `plain` in the graph (plain is new and is not used after)."""
    d = Dual.__new__(Dual)
    for slot in _SLOTS:
        setattr(d, slot, getattr(plain, slot))
    d.tangent, d.level = tangent, level
    return d


def _zeros_like(t: Tensor) -> Tensor:
    return _make(backend.zeros_like_array(t._data))


# -- levels ---------------------------------------------------------------------------------------


def enter_dual_level() -> int:
    """Open the level that dual tensors are made at (one at a time, as in PyTorch); returns it."""
    if FORWARD_AD.token is not None:
        raise RuntimeError(_NESTED_ERROR)
    if hooks.current().tracer is not None:
        raise RuntimeError("forward mode AD cannot run while derive traces a program")
    FORWARD_AD.token = object()
    FORWARD_AD.results = {}
    FORWARD_AD.hooks = hooks.push(forward=_apply, reattach=_reattach)
    batching.INTERCEPTED.add(Dual)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the level: every tangent made in it is dropped."""
    if FORWARD_AD.token is None or level not in (None, 0):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    FORWARD_AD.token = None
    FORWARD_AD.results = {}
    batching.INTERCEPTED.discard(Dual)
    hooks.pop(FORWARD_AD.hooks)


class dual_level:
    """`with dual_level():` a level for dual tensors, closed on the way out."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc_info) -> None:
        exit_dual_level()


def _check_level(level) -> None:
    if level not in (None, 0):
        raise RuntimeError(f"Trying to use forward AD level {level} that does not exist (only level 0 does)")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """`tensor` as a dual tensor with `tangent` (the direction its derivatives are taken along):
    a view of it, as in PyTorch, whose gradient flows back to it."""
    if FORWARD_AD.token is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_level(level)
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError(f"make_dual(): expected tensors for the primal and the tangent, got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if tensor.__class__ is Dual and tensor._live():
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           "level 0 is not supported.")
    with _opaque():
        view = registry.REGISTRY["view"].apply(tensor, tuple(tensor.shape))
    return _dual(view, tangent, FORWARD_AD.token)


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(value, tangent) of a dual tensor; (the tensor, None) for any other."""
    _check_level(level)
    if tensor.__class__ is not Dual or not tensor._live():
        return UnpackedDualTensor(tensor, None)
    # The value as an ordinary tensor in the same place of the graph (PyTorch shows a view there).
    return UnpackedDualTensor(_alias(tensor), tensor.tangent)


# -- operations on dual tensors ---------------------------------------------------------------------


class _opaque:
    """Inside: dual tensors are ordinary tensors (the op computes their values, not tangents)."""

    def __enter__(self):
        self.was = Dual in batching.INTERCEPTED
        batching.INTERCEPTED.discard(Dual)

    def __exit__(self, *exc_info):
        if self.was:
            batching.INTERCEPTED.add(Dual)


def _live_duals(args, kwargs) -> list:
    """[(where, dual)] for the live dual tensors among the arguments (and in their lists)."""
    token, found = FORWARD_AD.token, []
    for where, value in [*enumerate(args), *kwargs.items()]:
        if value.__class__ is Dual and value.tangent is not None and value.level is token:
            found.append(((where, None), value))
        elif value.__class__ in (list, tuple):
            for i, v in enumerate(value):
                if v.__class__ is Dual and v.tangent is not None and v.level is token:
                    found.append(((where, i), v))
    return found


def _replaced(args, kwargs, stand_ins: dict):
    """The arguments with each (where, index) of `stand_ins` replaced."""
    args, kwargs = list(args), dict(kwargs)
    for (where, i), value in stand_ins.items():
        holder = args if isinstance(where, int) else kwargs
        if i is None:
            holder[where] = value
        else:
            items = list(holder[where])
            items[i] = value
            holder[where] = type(holder[where])(items)
    return args, kwargs


def _outputs(out) -> list:
    """The floating-point tensors among an op's results: what gets a tangent."""
    parts = out if isinstance(out, tuple) else (out,)
    return [p for p in parts if isinstance(p, Tensor) and p.dtype.is_floating_point]


def _apply(function, args: tuple, kwargs: dict):
    """An operation with dual tensors among its arguments: its value, and J·t as its tangent."""
    live = _live_duals(args, kwargs)
    with _opaque():
        out = function(*args, **kwargs)
        if not live:
            return out
        outputs = _outputs(out)
        if not outputs:
            return out
        tangents = _tangents(function, args, kwargs, live, len(outputs))
    token = FORWARD_AD.token
    duals = {id(o): _dual(o, t, token) for o, t in zip(outputs, tangents)}
    for o, d in zip(outputs, duals.values()):
        node = o.grad_fn
        if node is not None and getattr(getattr(node, "op", None), "result_index", None) is not None:
            FORWARD_AD.results[node] = d  # a formula that reads the saved result reads its tangent too
    if isinstance(out, tuple):
        parts = [duals.get(id(p), p) for p in out]
        return type(out)(*parts) if hasattr(out, "_fields") else tuple(parts)
    return duals[id(out)]


def _tangents(function, args, kwargs, live: list, count: int) -> list:
    """J·t for each of the op's `count` floating-point results, by two reverse passes over the
    op alone (see the module's docstring)."""
    from .engine import grad

    # Tangents stay differentiable where something could differentiate them.
    keep = GRAD_MODE.enabled and any(d._requires_grad or d.tangent._requires_grad for _, d in live)
    previous, GRAD_MODE.enabled = GRAD_MODE.enabled, True
    try:
        # One stand-in per dual tensor, wherever it appears (x * x: one input, used twice): a new
        # leaf, or where the tangent must stay differentiable an alias, whose gradient is this op's
        # alone (the dual itself may be upstream of another input: sin(x) * x).
        alias = registry.REGISTRY["alias"].apply
        unique = {id(d): (alias(d) if keep and d._requires_grad else _make(d._data, True), d.tangent)
                  for _, d in live}
        again_args, again_kwargs = _replaced(args, kwargs, {where: unique[id(d)][0] for where, d in live})
        results = _outputs(function(*again_args, **again_kwargs))
        wanted = [r for r in results if r._requires_grad]
        found: dict = {}
        if wanted:
            probes = [_make(backend.zeros_like_array(r._data), True) for r in wanted]
            stand_ins = [s for s, _ in unique.values()]
            vjps = grad(wanted, stand_ins, probes, create_graph=True, allow_unused=True)
            used = [(v, t) for v, (_, t) in zip(vjps, unique.values()) if v is not None and v._requires_grad]
            if used:
                jvps = grad([v for v, _ in used], probes, [t for _, t in used], create_graph=keep, allow_unused=True)
                found = {id(r): j for r, j in zip(wanted, jvps) if j is not None}
        return [found.get(id(r)) if id(r) in found else _zeros_like(r) for r in results][:count]
    finally:
        GRAD_MODE.enabled = previous


def _reattach(node, result: Tensor) -> Tensor:
    """The saved result a formula reads, with its tangent (forward over reverse)."""
    dual = FORWARD_AD.results.get(node)
    if dual is None or not dual._live():
        return result
    return _dual(result, dual.tangent, dual.level)


def apply_function(cls, args: tuple, kwargs: dict):
    """A custom Function applied while a level is open: its forward on the values, and its
    `jvp(ctx, *tangents)` for the tangents of its results (zeros for an input without one)."""
    live = _live_duals(args, {})
    with _opaque():
        out, ctx = cls._apply(args, kwargs)
    if not live:
        return out
    tangent_of = {where: d.tangent for (where, _), d in live}
    inputs = [tangent_of.get(i, _zeros_like(a)) if isinstance(a, Tensor) else None for i, a in enumerate(args)]
    ctx._in_jvp = True
    try:
        with _opaque():
            found = cls.jvp(ctx, *inputs)
    finally:
        ctx._in_jvp = False
    found = found if isinstance(found, tuple) else (found,)
    for i in ctx._not_differentiable:
        if i < len(found) and found[i] is not None:
            raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the corresponding forward "
                               "output is not a differentiable Tensor.You should return None at that position instead.")
    parts = out if isinstance(out, tuple) else (out,)
    token = FORWARD_AD.token
    made = [_dual(p, t, token) if isinstance(p, Tensor) and isinstance(t, Tensor) and p.dtype.is_floating_point
            else p for p, t in zip(parts, found)]
    made += list(parts[len(made):])
    return tuple(made) if isinstance(out, tuple) else made[0]


def is_dual(value) -> bool:
    """Whether `value` is a dual tensor of the open level (it has a tangent now)."""
    return value.__class__ is Dual and value._live()


def requiring_grad(dual: Dual) -> Dual:
    """A dual tensor with `dual`'s value and tangent that requires grad (a leaf when `dual`
    does not require grad), for a reverse-mode transform inside a forward one (a Hessian)."""
    if dual._requires_grad:
        with _opaque():
            view = registry.REGISTRY["view"].apply(dual, tuple(dual.shape))
        return _dual(view, dual.tangent, dual.level)
    return _dual(_make(dual._data, True), dual.tangent, dual.level)

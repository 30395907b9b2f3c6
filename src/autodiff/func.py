"""Function transforms with `torch.func`'s signatures: vmap, grad, grad_and_value, vjp, jacrev,
jacfwd, hessian.

`vmap(f)` runs `f` once on a whole batch: its inputs become `Batched` tensors that look like
one example, and every operation maps onto the stacked examples by its batching rule, declared
beside it in the op registry (ops/batching.py). `grad(f)` differentiates a function returning
one number per example, so `vmap(grad(f))(x)` gives every example's gradient from one backward
pass. `jacfwd` is computed in reverse mode here (the same numbers as forward mode).
"""

from __future__ import annotations

import functools

from .autograd.engine import grad as _autograd_grad
from .autograd.grad_mode import enable_grad
from .ops.batching import Batched, DataDependent
from .ops.shape import stack
from .tensor import Tensor

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jacrev", "jacfwd", "hessian", "DataDependent"]


# -- vmap ------------------------------------------------------------------------------------------------


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """`func` applied to every slice of its inputs along `in_dims`, results stacked along `out_dims`."""

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                f"structure of `inputs`. in_dims has structure {len(dims)} but inputs has structure {len(args)}."
            )
        batched = [_into_batch(a, d) for a, d in zip(args, dims)]
        sizes = {b.batch_size for b in _tensors(batched)}
        if not sizes:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor "
                "mapped over a dimension (in_dims other than None)"
            )
        if len(sizes) > 1:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Expected all tensors to have the same "
                f"size in the mapped dimension, got sizes {sorted(sizes)} for the mapped dimension"
            )
        result = func(*batched, **kwargs)
        return _out_of_batch(result, out_dims, sizes.pop())

    return mapped


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _into_batch(value, dim):
    if dim is None:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_into_batch(v, dim) for v in value)
    if isinstance(value, dict):
        return {k: _into_batch(v, dim) for k, v in value.items()}
    if not isinstance(value, Tensor):
        raise ValueError(f"vmap: in_dim={dim} was given for an input that is not a Tensor ({type(value).__name__})")
    ndim = value.ndim
    if not -ndim <= dim < ndim:
        raise ValueError(f"vmap: in_dim={dim} is out of range for a tensor of {ndim} dims")
    if dim % ndim:
        value = value.movedim(dim, 0) if hasattr(value, "movedim") else _move_to_front(value, dim % ndim)
    return Batched(value)


def _move_to_front(value: Tensor, dim: int) -> Tensor:
    order = (dim,) + tuple(d for d in range(value.ndim) if d != dim)
    return value.permute(order)


def _tensors(values):
    for v in values:
        if isinstance(v, Batched):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)
        elif isinstance(v, dict):
            yield from _tensors(v.values())


def _out_of_batch(value, out_dims, size: int):
    if isinstance(value, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(value)
        parts = [_out_of_batch(v, d, size) for v, d in zip(value, dims)]
        return type(value)(*parts) if hasattr(value, "_fields") else tuple(parts)
    if isinstance(value, list):
        return [_out_of_batch(v, out_dims, size) for v in value]
    if isinstance(value, Batched):
        physical = value.physical
    elif isinstance(value, Tensor):  # the same for every example: repeated, as vmap does
        physical = value.unsqueeze(0).expand((size,) + tuple(value.shape))
    else:
        raise ValueError(f"vmap: the function must return tensors, not {type(value).__name__}")
    if out_dims in (0, None):
        return physical
    dim = out_dims % physical.ndim
    order = tuple(range(1, dim + 1)) + (0,) + tuple(range(dim + 1, physical.ndim))
    return physical.permute(order)


# -- gradients -------------------------------------------------------------------------------------------


def _differentiable(value: Tensor) -> Tensor:
    """An input to differentiate: a fresh leaf, or (inside another transform) a differentiable
    alias of the value, so that outer transforms can differentiate through this one."""
    if isinstance(value, Batched):
        return Batched(_differentiable(value.physical))
    if value.requires_grad:
        return value.view_as(value)
    return value.detach().requires_grad_(True)


def _physical(value):
    return value.physical if isinstance(value, Batched) else value


def _argnums(argnums, count: int) -> tuple:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    for n in nums:
        if not -count <= n < count:
            raise RuntimeError(f"Got argnums={n} but only {count} positional inputs")
    return tuple(n % count for n in nums)


def _differentiated_call(func, args, kwargs, argnums, has_aux: bool, name: str):
    """func called on differentiable copies of its `argnums` inputs, with grad mode on.

    Returns (the positions, whether an outer transform differentiates through this one, the
    arguments as func got them, its output, its aux)."""
    nums = _argnums(argnums, len(args))
    outer = any(_physical(args[n]).requires_grad for n in nums)
    args = list(args)
    for n in nums:
        args[n] = _differentiable(args[n])
    output = func(*args, **kwargs)
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(f"{name}(f)(*args): output of function f should be a tuple: (output, aux) if "
                               "has_aux is True")
        output, aux = output
    return nums, outer, args, output, aux


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """(gradient of func's one-number output with respect to the `argnums` inputs, the output)."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        with enable_grad():
            nums, outer, args, output, aux = _differentiated_call(func, args, kwargs, argnums, has_aux,
                                                                  "grad_and_value")
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
            if output.numel() != 1:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            result = _physical(output)
            ones = result.new_ones(tuple(result.shape))
            inputs = [_physical(args[n]) for n in nums]
            if result.requires_grad:
                grads = _autograd_grad(result, inputs, ones, create_graph=outer, allow_unused=True)
            else:
                grads = [None] * len(inputs)
        grads = tuple(g if g is not None else x.new_zeros(tuple(x.shape)) for g, x in zip(grads, inputs))
        grads = tuple(Batched(g) if isinstance(args[n], Batched) else g for g, n in zip(grads, nums))
        if not outer:
            grads = tuple(g.detach() if not isinstance(g, Batched) else Batched(g.physical.detach()) for g in grads)
        gradient = grads if isinstance(argnums, tuple) else grads[0]
        value = output if outer else (Batched(result.detach()) if isinstance(output, Batched) else output.detach())
        aux = aux if outer else _detached(aux)
        return ((gradient, (value, aux)) if has_aux else (gradient, value))

    return run


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of func (which returns one number) with respect to its `argnums` inputs."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def run(*args, **kwargs):
        if has_aux:
            gradient, (_, aux) = both(*args, **kwargs)
            return gradient, aux
        return both(*args, **kwargs)[0]

    return run


def vjp(func, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn): vjp_fn(cotangent) gives the vector-Jacobian product per primal."""
    outer = any(_physical(p).requires_grad for p in primals if isinstance(p, Tensor))
    with enable_grad():
        inputs = [_differentiable(p) for p in primals]
        output = func(*inputs)
        aux = None
        if has_aux:
            output, aux = output

    def vjp_fn(*cotangents):
        outputs = output if isinstance(output, tuple) else (output,)
        if len(cotangents) == 1 and isinstance(cotangents[0], tuple) and isinstance(output, tuple):
            cotangents = cotangents[0]
        with enable_grad():
            grads = _autograd_grad([_physical(o) for o in outputs], [_physical(i) for i in inputs],
                                   [_physical(c) for c in cotangents], retain_graph=True, create_graph=outer,
                                   allow_unused=True)
        return tuple(g if g is not None else _physical(i).new_zeros(tuple(_physical(i).shape))
                     for g, i in zip(grads, inputs))

    shown = output if outer else _detached(output)
    return (shown, vjp_fn, aux) if has_aux else (shown, vjp_fn)


def _detached(value):
    if isinstance(value, tuple):
        return tuple(_detached(v) for v in value)
    if isinstance(value, Batched):
        return Batched(value.physical.detach())
    return value.detach() if isinstance(value, Tensor) else value


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """The Jacobian of func with respect to its `argnums` inputs, row by row in reverse mode:
    for an output of shape O and an input of shape I, a tensor of shape O + I."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        with enable_grad():
            nums, outer, args, output, aux = _differentiated_call(func, args, kwargs, argnums, has_aux, "jacrev")
            inputs = [args[n] for n in nums]
            flat = output.reshape(-1)
            rows = []
            physical_inputs = [_physical(x) for x in inputs]
            for k in range(flat.numel()):
                element = _physical(flat[k])  # one number per example
                if element.requires_grad:
                    grads = _autograd_grad(element, physical_inputs, element.new_ones(tuple(element.shape)),
                                           retain_graph=True, create_graph=True, allow_unused=True)
                else:
                    grads = [None] * len(inputs)
                rows.append([_like(x, g if g is not None else p.new_zeros(tuple(p.shape)))
                             for g, x, p in zip(grads, inputs, physical_inputs)])
        jacobians = []
        for j, x in enumerate(inputs):
            block = stack([row[j] for row in rows]) if rows else x.new_zeros((0,) + tuple(x.shape))
            block = block.reshape(tuple(output.shape) + tuple(x.shape))
            jacobians.append(block if outer else _detached(block))
        result = tuple(jacobians) if isinstance(argnums, tuple) else jacobians[0]
        return (result, aux) if has_aux else result

    return run


def _like(reference, physical: Tensor):
    """A physical result as the kind of value `reference` is: batched, or not."""
    return Batched(physical) if isinstance(reference, Batched) else physical


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian, as jacrev computes it: autodiff has no forward mode, the numbers are the same."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """Second derivatives of a function returning one number: the Jacobian of its gradient."""
    return jacfwd(jacrev(func, argnums), argnums)

"""Function transforms with `torch.func`'s signatures: vmap, grad, grad_and_value, vjp, jacrev,
jacfwd, hessian.

`vmap(f)` runs `f` once on a whole batch: its inputs become `Batched` tensors that look like
one example, and every operation maps onto the stacked examples by its batching rule, declared
beside it in the op registry (ops/batching.py). `grad(f)` differentiates a function returning
one number per example, so `vmap(grad(f))(x)` gives every example's gradient from one backward
pass. `jvp` and `jacfwd` run in forward mode (autograd/forward_ad.py): `hessian`, jacfwd of
jacrev, is forward over reverse.
"""

from __future__ import annotations

import functools
from contextlib import nullcontext

from .autograd.engine import grad as _autograd_grad
from .autograd.forward_ad import dual_level, is_dual, make_dual, requiring_grad, unpack_dual
from .autograd.grad_mode import FORWARD_AD, enable_grad
from .ops.batching import Batched, DataDependent
from .ops.shape import stack
from .tensor import Tensor

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "DataDependent"]


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
    if is_dual(value):  # inside jacfwd: the tangent goes along (forward over reverse)
        return requiring_grad(value)
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
    outer = any(_physical(args[n]).requires_grad or is_dual(args[n]) for n in nums)
    args = list(args)
    for n in nums:
        args[n] = _differentiable(args[n])
    output, aux = _split_aux(func(*args, **kwargs), has_aux, f"{name}(f)(*args)")
    return nums, outer, args, output, aux


def _split_aux(output, has_aux: bool, where: str) -> tuple:
    """(output, aux) of a function called with has_aux (aux None without), PyTorch's error otherwise."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output


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
    outer = any(_physical(p).requires_grad or is_dual(p) for p in primals if isinstance(p, Tensor))
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


# -- forward mode ------------------------------------------------------------------------------------------


def _structure(value) -> str:
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_structure(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else f"({inner})"
    return "*"


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the Jacobian-vector product along `tangents`), in one forward pass
    (forward mode, autograd/forward_ad.py)."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {_structure(primals)} and tangents with structure "
                           f"{_structure(tangents)}")
    for kind, values in (("primals", primals), ("tangents", tangents)):
        if not all(isinstance(v, Tensor) for v in values):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected {kind} to only contain Tensors")
    if any(isinstance(v, Batched) for v in (*primals, *tangents)) or FORWARD_AD.token is not None:
        output, pushed, aux = _jvp_in_reverse(func, primals, tangents, has_aux)
    else:
        output, pushed, aux = _push(func, primals, {}, dict(enumerate(tangents)), has_aux, "jvp")
    return (output, pushed, aux) if has_aux else (output, pushed)


def _jvp_in_reverse(func, primals, tangents, has_aux: bool):
    """jvp under vmap or inside a forward-mode level (levels do not nest): the vector-Jacobian
    product is linear in its vector u, so J t is its gradient along t with respect to u."""
    with enable_grad():
        nums, outer, args, output, aux = _differentiated_call(func, primals, {}, tuple(range(len(primals))), has_aux,
                                                              "jvp")
        outputs = output if isinstance(output, tuple) else (output,)
        physical = [_physical(o) for o in outputs]
        probes = [p.new_zeros(tuple(p.shape)).requires_grad_(True) for p in physical]
        wanted = [(o, u) for o, u in zip(physical, probes) if o.requires_grad]
        vjps = _autograd_grad([o for o, _ in wanted], [_physical(a) for a in args], [u for _, u in wanted],
                              create_graph=True, allow_unused=True) if wanted else [None] * len(args)
        # a tangent the same for every example (not batched) meets the batch of the vjp
        used = [(v, _physical(t).expand(tuple(v.shape))) for v, t in zip(vjps, tangents)
                if v is not None and v.requires_grad]
        pushed = _autograd_grad([v for v, _ in used], probes, [t for _, t in used], create_graph=outer,
                                allow_unused=True) if used else [None] * len(probes)
    pushed = [_like(o, j if j is not None else p.new_zeros(tuple(p.shape)))
              for o, p, j in zip(outputs, physical, pushed)]
    values = list(outputs)
    if not outer:
        pushed, values = [_detached(j) for j in pushed], [_detached(v) for v in values]
    if not isinstance(output, tuple):
        return values[0], pushed[0], (aux if outer else _detached(aux))
    return tuple(values), tuple(pushed), (aux if outer else _detached(aux))


def _push(func, args, kwargs, tangents: dict, has_aux: bool, name: str):
    """func at `args` with tangents on the positions of `tangents`: (its output, the output's
    tangents (zeros where it has none), aux); values detached unless an input requires grad."""
    outer = any(args[n].requires_grad or t.requires_grad for n, t in tangents.items())
    with enable_grad() if outer else nullcontext(), dual_level():
        args = list(args)
        for n, t in tangents.items():
            args[n] = make_dual(args[n], t)
        output, aux = _split_aux(func(*args, **kwargs), has_aux, f"{name}(f, ...)")
        outputs = output if isinstance(output, tuple) else (output,)
        for o in outputs:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{name}(f, ...): Expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o).__name__}")
        unpacked = [unpack_dual(o) for o in outputs]
    values = tuple(u.primal if outer else u.primal.detach() for u in unpacked)
    pushed = tuple((u.tangent if outer else u.tangent.detach()) if u.tangent is not None
                   else u.primal.new_zeros(tuple(u.primal.shape)) for u in unpacked)
    if not isinstance(output, tuple):
        values, pushed = values[0], pushed[0]
    return values, pushed, (aux if outer else _detached(aux))


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian of func with respect to its `argnums` inputs, column by column in forward
    mode (one pass per input element): for an output of shape O and an input of shape I, a
    tensor of shape O + I. Under vmap, or inside another forward-mode level, it is computed in
    reverse mode instead (the same numbers)."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        if any(isinstance(a, Batched) for a in _flat(args)) or FORWARD_AD.token is not None:
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        blocks, output, aux = [], None, None
        for n in nums:
            x = args[n]
            columns = []
            for k in range(x.numel()):  # one forward pass per element of x: the column J e_k
                direction = x.new_zeros((x.numel(),))
                direction[k] = 1.0
                output, pushed, aux = _push(func, args, kwargs, {n: direction.reshape(tuple(x.shape))}, has_aux,
                                            "jacfwd")
                if isinstance(pushed, tuple):
                    raise RuntimeError("jacfwd: a function returning several tensors is not supported yet; "
                                       "return one tensor (stack them)")
                columns.append(pushed)
            if not columns:  # an empty input: its Jacobian is empty
                output, _, aux = _push(func, args, kwargs, {}, has_aux, "jacfwd")
                blocks.append(output.new_zeros(tuple(output.shape) + tuple(x.shape)))
                continue
            block = stack(columns, dim=-1) if columns[0].ndim else stack(columns)
            blocks.append(block.reshape(tuple(columns[0].shape) + tuple(x.shape)))
        result = tuple(blocks) if isinstance(argnums, tuple) else blocks[0]
        return (result, aux) if has_aux else result

    return run


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def hessian(func, argnums=0):
    """Second derivatives of a function returning one number: the Jacobian of its gradient."""
    return jacfwd(jacrev(func, argnums), argnums)

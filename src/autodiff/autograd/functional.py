"""Derivatives of whole functions: jacobian, hessian, vjp, jvp, hvp, vhp (PyTorch's API).

jvp runs in forward mode (one pass with dual inputs, autograd/forward_ad.py) and hvp forward
over reverse (the gradient's tangent along v is H v). Inside a forward-mode level that is
already open (levels do not nest), both use the double-backward trick instead: the
vector-Jacobian product is linear in its vector, so differentiating it with respect to that
vector gives J v.
"""

from __future__ import annotations

from contextlib import nullcontext

from ..creation import ones_like, zeros, zeros_like
from ..ops import reshape, stack
from ..tensor import Tensor
from .engine import grad as _grad
from .forward_ad import dual_level, make_dual, unpack_dual
from .grad_mode import FORWARD_AD, enable_grad


def _as_tuple(value, arg_name: str, fn_name: str):
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            which = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"{which} has type {type(item)}.")
    return is_tuple, items


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs as fresh leaves that require grad (kept in the caller's graph with create_graph)."""
    prepared = []
    for x in inputs:
        if create_graph and x.requires_grad:
            prepared.append(x.view_as(x))
        else:
            prepared.append(x.detach().requires_grad_(True))
    return tuple(prepared)


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """autograd.grad that tolerates outputs not requiring grad and unused inputs (None)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(
        [o for o, _ in pairs], inputs, [g for _, g in pairs],
        create_graph=create_graph, retain_graph=retain_graph, allow_unused=True,
    )


def _fill_zeros(grads, refs, strict: bool, what: str) -> tuple:
    filled = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The output of the user-provided function is independent of input {i}. This is not "
                    f"allowed in strict mode{what}."
                )
            g = zeros_like(ref)
        filled.append(g)
    return tuple(filled)


def _detach_unless(values, create_graph: bool) -> tuple:
    return tuple(v if create_graph else v.detach() for v in values)


def _result(values, is_tuple: bool):
    return values if is_tuple else values[0]


def _check_vector(v, refs, fn_name: str, what: str) -> tuple:
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(
                f"The vector v can only be None if the {what} contains a single element."
                if fn_name == "jvp" else
                f"The vector v can only be None if the user-provided function returns a single Tensor with a "
                "single element."
            )
        return (ones_like(refs[0]),)
    _, v = _as_tuple(v, "v", fn_name)
    if len(v) != len(refs):
        raise RuntimeError(f"v has invalid size: should be {len(refs)} but got {len(v)}.")
    for i, (a, b) in enumerate(zip(v, refs)):
        if a.shape != b.shape:
            raise RuntimeError(
                f"Entry {i} in v has invalid size: should be {list(b.shape)} but got {list(a.shape)}."
            )
    return v


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product."""
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph)
        is_out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        v = _check_vector(v, outputs, "vjp", "outputs")
        grads = _grads(outputs, inputs, v, create_graph=create_graph)
    grads = _fill_zeros(grads, inputs, strict, "")
    return _result(_detach_unless(outputs, create_graph), is_out_tuple), _result(
        _detach_unless(grads, create_graph), is_in_tuple
    )


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product, in one forward pass."""
    if FORWARD_AD.token is not None:
        return _jvp_by_double_backward(func, inputs, v, create_graph, strict)
    with enable_grad() if create_graph else nullcontext():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph) if create_graph else tuple(x.detach() for x in inputs)
        v = _check_vector(v, inputs, "jvp", "input to the user-provided function")
        with dual_level():
            duals = [make_dual(x, t) for x, t in zip(inputs, v)]
            is_out_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided function", "jvp")
            unpacked = [unpack_dual(o) for o in outputs]
    outputs = tuple(u.primal for u in unpacked)
    products = _fill_zeros(tuple(u.tangent for u in unpacked), outputs, strict, "")
    return _result(_detach_unless(outputs, create_graph), is_out_tuple), _result(
        _detach_unless(products, create_graph), is_out_tuple
    )


def _jvp_by_double_backward(func, inputs, v, create_graph: bool, strict: bool):
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph)
        v = _check_vector(v, inputs, "jvp", "input to the user-provided function")
        is_out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        cotangents = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grads(outputs, inputs, cotangents, create_graph=True)
        used = [(g, x) for g, x in zip(grad_inputs, v) if g is not None]
        products = _grads([g for g, _ in used], cotangents, [x for _, x in used], create_graph=create_graph)
    products = _fill_zeros(products, outputs, strict, "")
    return _result(_detach_unless(outputs, create_graph), is_out_tuple), _result(
        _detach_unless(products, create_graph), is_out_tuple
    )


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian: for output o and input x, a tensor of shape o.shape + x.shape."""
    if strict and vectorize:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported together. "
            "Please either set `strict=False` or `vectorize=False`."
        )
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph)
        is_out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        table = []
        for output in outputs:
            flat = reshape(output, (-1,))
            rows: list[list] = [[] for _ in inputs]
            for j in range(flat.numel()):
                grads = _grads((flat[j],), inputs, create_graph=create_graph, retain_graph=True)
                grads = _fill_zeros(grads, inputs, strict, " when computing the Jacobian")
                for k, g in enumerate(grads):
                    rows[k].append(g)
            entry = []
            for k, x in enumerate(inputs):
                shape = tuple(output.shape) + tuple(x.shape)
                if rows[k]:
                    block = reshape(stack(rows[k]), shape)
                else:
                    block = zeros(shape, dtype=x.dtype, device=x.device)
                entry.append(block if create_graph else block.detach())
            table.append(tuple(entry))
    if is_out_tuple:
        return tuple(_result(row, is_in_tuple) for row in table)
    return _result(table[0], is_in_tuple)


def _single_output(fn_name: str, output) -> Tensor:
    if not isinstance(output, Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if output.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return output


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """Second derivatives of a scalar function: the Jacobian of its gradient."""
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        output = _single_output("hessian", func(*xs))
        return _gradient_of(output.reshape(()), xs, strict)

    table = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize)
    return table if is_in_tuple else table[0][0]


def _gradient_of(out: Tensor, xs: tuple, strict: bool) -> tuple:
    grads = _grads((out,), xs, create_graph=True)
    return _fill_zeros(grads, xs, strict, " when computing the Hessian")


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar function."""
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph)
        v = _check_vector(v, inputs, "jvp", "input to the user-provided function")
        output = _single_output("vhp", func(*inputs))
        first = _grads((output,), inputs, create_graph=True)
        used = [(g, x) for g, x in zip(first, v) if g is not None]
        second = _grads([g for g, _ in used], inputs, [x for _, x in used], create_graph=create_graph)
    second = _fill_zeros(second, inputs, strict, "")
    return (output if create_graph else output.detach()), _result(_detach_unless(second, create_graph), is_in_tuple)


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar function: forward over reverse, the tangent of the
    gradient along v."""
    if FORWARD_AD.token is not None:
        return _hvp_by_double_backward(func, inputs, v, create_graph, strict)
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph)
        v = _check_vector(v, inputs, "jvp", "input to the user-provided function")
        with dual_level():
            duals = tuple(make_dual(x, t) for x, t in zip(inputs, v))
            output = _single_output("hvp", func(*duals))
            first = _grads((output,), duals, create_graph=create_graph)
            products = tuple(None if g is None else unpack_dual(g).tangent for g in first)
            output = unpack_dual(output).primal
    products = _fill_zeros(products, inputs, strict, "")
    return (output if create_graph else output.detach()), _result(_detach_unless(products, create_graph), is_in_tuple)


def _hvp_by_double_backward(func, inputs, v, create_graph: bool, strict: bool):
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph)
        v = _check_vector(v, inputs, "jvp", "input to the user-provided function")
        output = _single_output("hvp", func(*inputs))
        first = _fill_zeros(_grads((output,), inputs, create_graph=True), inputs, False, "")
        cotangents = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        double = _grads(first, inputs, cotangents, create_graph=True)
        used = [(g, x) for g, x in zip(double, v) if g is not None]
        products = _grads([g for g, _ in used], cotangents, [x for _, x in used], create_graph=create_graph)
    products = _fill_zeros(products, inputs, strict, "")
    return (output if create_graph else output.detach()), _result(_detach_unless(products, create_graph), is_in_tuple)


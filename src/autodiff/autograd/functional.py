"""Derivatives of whole functions: jacobian, hessian, vjp, jvp, hvp, vhp (PyTorch's API).

Each follows torch.autograd.functional step by step: the same checks in the same order, so
that a misuse (a `v` of the wrong length, a function whose output does not require grad in
strict mode, a tuple returned to hessian) raises PyTorch's error with PyTorch's text. jvp and
hvp are computed in forward mode where PyTorch uses the double-backward trick (one pass with
dual inputs instead of two backward passes; the values are the same), except in strict mode,
whose checks are made on the double-backward graph and so run it, as PyTorch does, and inside
a forward-mode level already open (levels do not nest).
"""

from __future__ import annotations

from ..creation import ones_like, zeros_like
from ..ops import stack
from ..tensor import Tensor
from .engine import grad as _grad
from .forward_ad import dual_level, make_dual, unpack_dual
from .grad_mode import FORWARD_AD, enable_grad, is_grad_enabled, set_grad_enabled

_STRATEGIES = ("forward-mode", "reverse-mode")


# -- PyTorch's helpers, by their names there ---------------------------------------------------------


def _as_tuple(value, arg_name: str, fn_name: str):
    """(whether `value` was a tuple, it as a tuple of tensors); anything else is PyTorch's TypeError."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            which = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"{which} has type {type(item)}.")
    return is_tuple, items


def _tuple_postprocess(result, to_unpack):
    """Undo _as_tuple: one flag, or (outputs' flag, inputs' flag) for a table of results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            result = tuple(row[0] for row in result)
        if not to_unpack[0]:
            result = result[0]
    elif not to_unpack:
        result = result[0]
    return result


def _grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Always new tensor objects: kept in the caller's graph (a view) with create_graph, else
    fresh leaves that require grad where the computation needs a graph."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
                 for x in inputs)


def _grad_postprocess(values, create_graph: bool) -> tuple:
    """Results without history unless create_graph asked for it (tables: each row)."""
    if isinstance(values[0], Tensor):
        return values if create_graph else tuple(v.detach() for v in values)
    return tuple(_grad_postprocess(row, create_graph) for row in values)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (given, wanted) in enumerate(zip(v, other)):
        if given.size() != wanted.size():
            prepend = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {wanted.size()} but got {given.size()}.")


_STRICT = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed in "
               "a differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(values, input_type: str, strict: bool) -> None:
    """Strict mode's checks: each value is there, and requires grad."""
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:  # only gradients can be missing
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not value.requires_grad:
            raise RuntimeError(_STRICT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph: bool = False, retain_graph=None) -> tuple:
    """autograd.grad that skips outputs which are None or do not require grad (None for every
    input where none is left) and allows unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], create_graph=create_graph,
                 retain_graph=retain_graph, allow_unused=True)


_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros for the gradients that are None, or strict mode's error for the stage they came from."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _vector(v, refs: tuple, is_refs_tuple: bool, fn_name: str, create_graph: bool, of: str) -> tuple:
    """`v` as a tuple checked against `refs` (v=None: 1, where refs are one element)."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, refs, is_refs_tuple)
        return v
    if len(refs) != 1 or refs[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if {of} a single Tensor with a single element.")
    return None


_OF_OUTPUT = "the user-provided function returns"
_OF_INPUT = "the input to the user-provided function is"


def _single_output(outputs: tuple, is_tuple: bool, fn_name: str) -> Tensor:
    if is_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs[0]


# -- the functions -------------------------------------------------------------------------------------


def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _vector(v, outputs, is_outputs_tuple, "vjp", create_graph, _OF_OUTPUT)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        products = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(products, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product, in one forward pass."""
    if strict or FORWARD_AD.token is not None:
        return _jvp_by_double_backward(func, inputs, v, create_graph, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=create_graph)
        v = _vector(v, inputs, is_inputs_tuple, "jvp", create_graph, _OF_INPUT) or (ones_like(inputs[0]),)
        with dual_level():
            duals = [make_dual(x, t) for x, t in zip(inputs, v)]
            is_outputs_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided function", "jvp")
            unpacked = [unpack_dual(o) for o in outputs]
    outputs = tuple(u.primal for u in unpacked)
    products = _fill_in_zeros(tuple(u.tangent for u in unpacked), outputs, False, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(products, create_graph), is_outputs_tuple))


def _jvp_by_double_backward(func, inputs, v, create_graph: bool, strict: bool):
    """PyTorch's jvp: the vector-Jacobian product is linear in its vector, so differentiating
    it with respect to that vector gives J v."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, "jvp", create_graph, _OF_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        products = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(products, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian: for output o and input x, a tensor of shape o.shape + x.shape. With
    vectorize, PyTorch batches the products through vmap; here the rows are taken one by one
    either way (the values are the same)."""
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        table = []
        for i, out in enumerate(outputs):
            rows: tuple = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.numel()):
                products = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (row, g, x) in enumerate(zip(rows, products, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                               f"{i}. This is not allowed in strict mode when create_graph=True.")
                        row.append(g)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        row.append(zeros_like(x))
            table.append(tuple(_stacked(row, tuple(out.shape) + tuple(x.shape), x) for row, x in zip(rows, inputs)))
    return _tuple_postprocess(_grad_postprocess(tuple(table), create_graph), (is_outputs_tuple, is_inputs_tuple))


def _stacked(rows: list, shape: tuple, like: Tensor) -> Tensor:
    if not rows:  # an output of no elements
        return zeros_like(like).reshape(-1)[:0].reshape(shape)
    return stack(rows, 0).view(shape)


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    """The Jacobian by forward mode, one tangent per input element (vectorize=True only, as
    PyTorch): each output's tangents stacked, split by input, each moved to the end and shaped
    output + input, as PyTorch's vmap leaves them (so their history is PyTorch's too)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    numels = [x.numel() for x in inputs]
    tangents: list = []  # per input element (all inputs' in order): each output's tangent
    is_outputs_tuple, primals = False, ()
    for k, x in enumerate(inputs):
        for j in range(x.numel()):
            basis = zeros_like(x).reshape(-1)
            basis[j] = 1.0
            with dual_level():
                duals = [make_dual(y, basis.view_as(y) if m == k else zeros_like(y)) for m, y in enumerate(inputs)]
                is_outputs_tuple, outputs = _as_tuple(func(*duals), "outputs", "jacobian")
                unpacked = [unpack_dual(o) for o in outputs]
            primals = tuple(u.primal for u in unpacked)
            tangents.append(tuple(zeros_like(u.primal) if u.tangent is None else u.tangent for u in unpacked))
    table = []  # lists, as PyTorch returns them from this path
    for i, out in enumerate(primals):
        jac = stack([column[i] for column in tangents], 0)
        table.append([part.permute(*range(1, part.ndim), 0).reshape(tuple(out.shape) + tuple(x.shape))
                      for part, x in zip(jac.split(numels, 0), inputs)])
    return _tuple_postprocess(table, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """Second derivatives of a scalar function: the Jacobian of its gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*xs):
        out = func(*xs)
        is_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outputs, "outputs", strict)
        return _single_output(outputs, is_tuple, "hessian").squeeze()

    def jacobian_of(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        jac = jacobian(single_output, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    table = jacobian(jacobian_of, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                     strategy=outer_jacobian_strategy)
    return _tuple_postprocess(table, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H) for a scalar function."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, "vhp", create_graph, _OF_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vhp")
        _check_requires_grad(outputs, "outputs", strict)
        _single_output(outputs, is_outputs_tuple, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        products = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(products, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v) for a scalar function: forward over reverse, the tangent of the
    gradient along v."""
    if strict or FORWARD_AD.token is not None:
        return _hvp_by_double_backward(func, inputs, v, create_graph, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, "hvp", create_graph, _OF_INPUT) or (ones_like(inputs[0]),)
        with dual_level():
            duals = tuple(make_dual(x, t) for x, t in zip(inputs, v))
            is_outputs_tuple, outputs = _as_tuple(func(*duals), "outputs of the user-provided function", "hvp")
            output = _single_output(outputs, is_outputs_tuple, "hvp")
            first = _autograd_grad((output,), duals, create_graph=create_graph)
            products = tuple(None if g is None else unpack_dual(g).tangent for g in first)
            output = unpack_dual(output).primal
    products = _fill_in_zeros(products, inputs, False, create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess((output,), create_graph), False),
            _tuple_postprocess(_grad_postprocess(products, create_graph), is_inputs_tuple))


def _hvp_by_double_backward(func, inputs, v, create_graph: bool, strict: bool):
    """PyTorch's hvp: the double-backward trick on the gradient."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _vector(v, inputs, is_inputs_tuple, "hvp", create_graph, _OF_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "hvp")
        _check_requires_grad(outputs, "outputs", strict)
        _single_output(outputs, is_outputs_tuple, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        products = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(products, create_graph), is_inputs_tuple))

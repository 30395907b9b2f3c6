"""Check analytical gradients against central finite differences (PyTorch's gradcheck).

Passes when |analytical - numerical| <= atol + rtol * |numerical| for every Jacobian entry;
`fast_mode` compares one random projection v^T J u per input/output pair instead, which
scales to large tensors.
"""

from __future__ import annotations

import sys
import types
import warnings

import numpy as np

from .. import backend
from ..creation import tensor
from ..tensor import Tensor, _make, as_array
from .engine import grad
from .node import Node, _sequence, edge


class GradcheckError(RuntimeError):
    """gradcheck found analytical and numerical derivatives that disagree."""


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,) if isinstance(value, Tensor) else tuple(value)


def _floating_outputs(outputs) -> tuple:
    return tuple(o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.dtype.is_floating_point)


def _differentiable_outputs(outputs) -> tuple:
    """The outputs gradcheck compares: those that require grad, as PyTorch's."""
    return tuple(o for o in _floating_outputs(outputs) if o.requires_grad)


def _flat_numpy(t: Tensor) -> np.ndarray:
    data = t._data
    return np.asarray(data if backend.is_numpy(data) else data.get(), dtype=np.float64).reshape(-1)


def _evaluate(func, inputs, index: int, replacement, select) -> list:
    """func's outputs (those `select` keeps) as flat float64 NumPy arrays, with inputs[index]'s
    values replaced in place for the call, as PyTorch's gradcheck does: a function that closes
    over the input sees the perturbation too."""
    perturbed = inputs[index]
    values = perturbed._data
    perturbed._data = replacement.reshape(values.shape)
    try:  # read the outputs before restoring: one may be the perturbed input itself
        return [(_flat_numpy(o), o.shape, o.dtype) for o in select(func(*inputs))]
    finally:
        perturbed._data = values


def _numerical_columns(func, inputs, index: int, eps: float, directions, select=_differentiable_outputs,
                       each_element: bool = True):
    """For each direction d (a flat array over input `index`): (f(x + eps d) - f(x - eps d)) / 2eps.
    The outputs must keep their shape and dtype as the input moves (PyTorch's AssertionError
    otherwise, naming the element moved where each direction is one: `each_element`)."""
    x = inputs[index]._data
    flat = x.reshape(-1)
    xp = backend.array_module(x)
    results = []
    for k, direction in enumerate(directions):
        direction = xp.asarray(direction)  # the directions are host arrays; x may live on a GPU
        minus = _evaluate(func, inputs, index, flat - eps * direction, select)
        plus = _evaluate(func, inputs, index, flat + eps * direction, select)
        where = f"on index {tuple(int(i) for i in np.unravel_index(k, x.shape))} " if each_element else ""
        for (_, a_shape, a_dtype), (_, b_shape, b_dtype) in zip(minus, plus):
            for what, a, b in (("shape", a_shape, b_shape), ("dtype", a_dtype, b_dtype)):
                if a != b:
                    raise AssertionError(f"Expected `func` to return outputs with the same {what} when inputs are "
                                         f"perturbed {where}by {eps}, but got: {what}s {a} and {b}.")
        results.append([(p - m) / (2 * eps) for (p, _, _), (m, _, _) in zip(plus, minus)])
    return results


def _analytical_rows(outputs, diff_inputs, output_index: int, cotangents, nondet_tol: float):
    """For each cotangent v (a flat array over the output): v^T J for every differentiable input.
    Computed twice, as PyTorch does: a backward that gives other values the second time fails."""
    rows = _vjp_rows(outputs, diff_inputs, output_index, cotangents)
    again = _vjp_rows(outputs, diff_inputs, output_index, cotangents)
    for row, row_again in zip(rows, again):
        for a, b in zip(row, row_again):
            if a.size and np.abs(a - b).max() > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                    "times gives different values, although analytical gradient matches numerical gradient."
                    f"The tolerance for nondeterminism was {nondet_tol}.\n\nNOTE: if the operation is not "
                    "deterministic, this failure may be expected: call gradcheck/gradgradcheck with "
                    "`nondet_tol=<tol>`.")
    return rows


def _vjp_rows(outputs, diff_inputs, output_index: int, cotangents):
    output = outputs[output_index]
    rows = []
    for v in cotangents:
        if not output.requires_grad:
            rows.append([np.zeros(t._data.size) for t in diff_inputs])
            continue
        seed = _make(as_array(v.reshape(output._data.shape), dtype=output.dtype, device=output.device))
        grads = grad(output, diff_inputs, seed, retain_graph=True, allow_unused=True)
        rows.append([np.zeros(t._data.size) if g is None else _flat_numpy(g) for g, t in zip(grads, diff_inputs)])
    return rows


def _mismatch_text(i_out, i_in, numerical, analytical, fast: bool) -> str:
    text = (
        f"Jacobian mismatch for output {i_out} with respect to input {i_in},\n"
        f"numerical:{tensor(numerical)!r}\nanalytical:{tensor(analytical)!r}\n"
    )
    if fast:
        text += "\nThe above quantities relating the numerical and analytical jacobians are computed in fast mode.\n"
    return text


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    fast_mode: bool = False,
    seed: int = 0,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_backward_ad: bool = True,
    check_forward_ad: bool = False,
    masked=None,
) -> bool:
    """True when func's gradients match finite differences at `inputs` (else GradcheckError), its
    backward gives the same values twice (within `nondet_tol`), is zero for zero gradients, and
    copes with gradients that never arrive (`check_undefined_grad`), as PyTorch's checks."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them have "
            "requires_grad=True."
        )
    for i in diff:
        if inputs[i].dtype.name != "float64":
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. This check "
                "will likely fail if all the inputs are not of double precision floating point. ",
                UserWarning,
                stacklevel=2,
            )
    try:
        if check_backward_ad:
            _check_jacobians(func, inputs, diff, eps, atol, rtol, fast_mode, seed, nondet_tol)
        if check_forward_ad:
            _check_forward_jacobians(func, inputs, diff, eps, atol, rtol, fast_mode, seed)
        outputs = _differentiable_outputs(func(*inputs))
        if outputs and check_backward_ad:
            diff_inputs = [inputs[i] for i in diff]
            _check_zero_for_zero(outputs, diff_inputs)
            if check_undefined_grad:
                _check_undefined_grad(func, inputs, diff_inputs)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_jacobians(func, inputs, diff, eps, atol, rtol, fast_mode, seed, nondet_tol) -> None:
    outputs = _differentiable_outputs(func(*inputs))
    if not outputs:  # nothing to compare: the function must then not change with its inputs
        for i_in in diff:
            size = inputs[i_in]._data.size
            for column in _numerical_columns(func, inputs, i_in, eps, list(np.eye(size)), _floating_outputs):
                if any(not np.allclose(c, 0.0) for c in column):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    diff_inputs = [inputs[i] for i in diff]
    rng = np.random.default_rng(seed)
    for i_out, output in enumerate(outputs):
        out_size = output._data.size
        if fast_mode:
            v = rng.standard_normal(out_size)
            (rows,) = _analytical_rows(outputs, diff_inputs, i_out, [v], nondet_tol)
            for position, i_in in enumerate(diff):
                u = rng.standard_normal(inputs[i_in]._data.size)
                (numerical,) = _numerical_columns(func, inputs, i_in, eps, [u], each_element=False)
                n = float(numerical[i_out] @ v)
                a = float(rows[position] @ u)
                if abs(a - n) > atol + rtol * abs(n):
                    raise GradcheckError(_mismatch_text(i_out, i_in, n, a, True))
            continue
        analytical = _analytical_rows(outputs, diff_inputs, i_out, list(np.eye(out_size)), nondet_tol)
        for position, i_in in enumerate(diff):
            in_size = inputs[i_in]._data.size
            columns = _numerical_columns(func, inputs, i_in, eps, list(np.eye(in_size)))
            numerical = np.array([c[i_out] for c in columns]).reshape(in_size, out_size)
            a = np.array([row[position] for row in analytical]).reshape(out_size, in_size).T
            if not np.all(np.abs(a - numerical) <= atol + rtol * np.abs(numerical)) or (
                np.isnan(a).any() != np.isnan(numerical).any()
            ):
                raise GradcheckError(_mismatch_text(i_out, i_in, numerical, a, False))


def _check_forward_jacobians(func, inputs, diff, eps, atol, rtol, fast_mode, seed) -> None:
    """Forward mode against finite differences: for each direction over one input (each element,
    or one random direction in fast mode), the outputs' tangents with the inputs made dual (and
    detached, as PyTorch's check does) are the numerical directional derivatives."""
    from .forward_ad import dual_level, make_dual, unpack_dual

    requiring = [isinstance(o, Tensor) and o.requires_grad for o in _floating_outputs(func(*inputs))]
    if not any(requiring):
        return
    rng = np.random.default_rng(seed)
    for i_in in diff:
        size = inputs[i_in]._data.size
        directions = [rng.standard_normal(size)] if fast_mode else list(np.eye(size))
        numerical = _numerical_columns(func, inputs, i_in, eps, directions, each_element=not fast_mode)
        for direction, columns in zip(directions, numerical):
            with dual_level():
                duals = list(inputs)
                for i in diff:
                    tangent = direction if i == i_in else np.zeros(inputs[i]._data.size)
                    plain = inputs[i].detach()
                    duals[i] = make_dual(plain, _make(as_array(tangent.reshape(plain.shape), dtype=plain.dtype,
                                                               device=plain.device)))
                outputs = [o for o, r in zip(_floating_outputs(func(*duals)), requiring) if r]
                tangents = [unpack_dual(o).tangent for o in outputs]
            for i_out, (tangent, n) in enumerate(zip(tangents, columns)):
                a = np.zeros(n.shape) if tangent is None else _flat_numpy(tangent)
                if not np.all(np.abs(a - n) <= atol + rtol * np.abs(n)) or np.isnan(a).any() != np.isnan(n).any():
                    raise GradcheckError(_mismatch_text(i_out, i_in, n, a, fast_mode).replace(
                        "Jacobian mismatch", "Jacobian computed with forward mode mismatch", 1))


def _zeros_like(t: Tensor) -> Tensor:
    return _make(backend.array_module(t._data).zeros(t._data.shape, dtype=t._data.dtype))


def _check_zero_for_zero(outputs, diff_inputs) -> None:
    """Zero gradients for the outputs must give zero gradients for the inputs."""
    grads = grad(outputs, diff_inputs, [_zeros_like(o) for o in outputs], retain_graph=True, allow_unused=True)
    if any(g is not None and (g._data != 0).any() for g in grads):
        raise GradcheckError("backward not multiplied by grad_output")


class _UndefinedGrad(Node):
    """PyTorch's UndefinedGrad: what arrives here goes on as no gradient at all (None)."""

    __slots__ = ()

    def _apply(self, grads: list, as_tensors: bool) -> list:
        return [None]


def _undefined(output: Tensor) -> Tensor:
    """`output` seen through an _UndefinedGrad node: its own node then gets None as gradient."""
    node = object.__new__(_UndefinedGrad)
    node.next_functions = (edge(output),)
    node._seq = next(_sequence)
    node._shape, node._dtype = output._data.shape, output._data.dtype
    node._hooks = None
    node._trace = None
    return _make(output._data, True, node)


def _check_undefined_grad(func, inputs, diff_inputs) -> None:
    """A backward must cope with gradients that never arrive: all of the outputs' at once, then
    (with several outputs) each one's alone; the inputs' gradients must then be None or zero."""
    outputs = _differentiable_outputs(func(*inputs))
    cases = [[_undefined(o) for o in outputs]]
    if len(outputs) > 1:
        for k in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            cases.append([_undefined(o) if i == k else o for i, o in enumerate(fresh)])
    for case in cases:
        try:
            grads = grad(case, diff_inputs, [_zeros_like(o) for o in case], allow_unused=True)
        except RuntimeError as exc:
            _warn_new_check()
            raise GradcheckError(
                'Expected backward function to handle undefined output grads. Please look at '
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"') from exc
        if any(g is not None and (g._data != 0).any() for g in grads):
            _warn_new_check()
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are undefined or zero. "
                'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"')


def _warn_new_check() -> None:
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
                  "but it may break existing callers of this function. If this is true for you, you can call this "
                  'function with "check_undefined_grad=False" to disable the feature', stacklevel=3)


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    fast_mode: bool = False,
    seed: int = 0,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    masked: bool = False,
) -> bool:
    """gradcheck of the gradient itself: checks second derivatives."""
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed + 1)
        grad_outputs = tuple(
            _make(as_array(rng.standard_normal(o._data.shape), dtype=o.dtype, device=o.device)).requires_grad_()
            for o in outputs
        )
    else:
        grad_outputs = _as_tuple(grad_outputs)
    count = len(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivatives(*args):
        xs, cotangents = args[:count], args[count:]
        outs = _differentiable_outputs(func(*xs))
        pairs = [(o, c) for o, c in zip(outs, cotangents) if o.requires_grad]
        if not pairs:
            return ()
        grads = grad(
            [o for o, _ in pairs], [xs[i] for i in diff], [c for _, c in pairs],
            create_graph=True, allow_unused=True,
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, fast_mode=fast_mode, seed=seed, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
    )


class _CallableModule(types.ModuleType):
    """This module, callable as `gradcheck`. Python binds a module to its package's attribute
    when it is first imported, so `from autodiff.autograd.gradcheck import GradcheckError`
    before any use of `autodiff.autograd.gradcheck` would leave that name a module; PyTorch's
    `torch.autograd.gradcheck(...)` then still works here."""

    def __call__(self, *args, **kwargs):
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

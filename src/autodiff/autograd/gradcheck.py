"""Check analytical gradients against central finite differences (PyTorch's gradcheck).

Passes when |analytical - numerical| <= atol + rtol * |numerical| for every Jacobian entry;
`fast_mode` compares one random projection v^T J u per input/output pair instead, which
scales to large tensors.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import backend
from ..creation import as_array
from ..tensor import Tensor, _make
from .engine import grad


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
        return [_flat_numpy(o) for o in select(func(*inputs))]
    finally:
        perturbed._data = values


def _numerical_columns(func, inputs, index: int, eps: float, directions, select=_differentiable_outputs):
    """For each direction d (a flat array over input `index`): (f(x + eps d) - f(x - eps d)) / 2eps."""
    x = inputs[index]._data
    flat = x.reshape(-1)
    xp = backend.array_module(x)
    results = []
    for direction in directions:
        direction = xp.asarray(direction)  # the directions are host arrays; x may live on a GPU
        plus = _evaluate(func, inputs, index, flat + eps * direction, select)
        minus = _evaluate(func, inputs, index, flat - eps * direction, select)
        results.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    return results


def _analytical_rows(outputs, diff_inputs, output_index: int, cotangents):
    """For each cotangent v (a flat array over the output): v^T J for every differentiable input."""
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


def _fail(message: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def _mismatch_text(i_out, i_in, numerical, analytical, fast: bool) -> str:
    from ..creation import tensor

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
    """True when func's gradients match finite differences at `inputs` (else GradcheckError)."""
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
    outputs = _differentiable_outputs(func(*inputs))
    if not outputs:  # nothing to compare: the function must then not change with its inputs
        for i_in in diff:
            size = inputs[i_in]._data.size
            for column in _numerical_columns(func, inputs, i_in, eps, list(np.eye(size)), _floating_outputs):
                if any(not np.allclose(c, 0.0) for c in column):
                    return _fail("Numerical gradient for function expected to be zero", raise_exception)
        return True
    diff_inputs = [inputs[i] for i in diff]
    rng = np.random.default_rng(seed)
    for i_out, output in enumerate(outputs):
        out_size = output._data.size
        if fast_mode:
            v = rng.standard_normal(out_size)
            (rows,) = _analytical_rows(outputs, diff_inputs, i_out, [v])
            for position, i_in in enumerate(diff):
                u = rng.standard_normal(inputs[i_in]._data.size)
                (numerical,) = _numerical_columns(func, inputs, i_in, eps, [u])
                n = float(numerical[i_out] @ v)
                a = float(rows[position] @ u)
                if abs(a - n) > atol + rtol * abs(n):
                    return _fail(_mismatch_text(i_out, i_in, n, a, True), raise_exception)
            continue
        analytical = _analytical_rows(outputs, diff_inputs, i_out, list(np.eye(out_size)))
        for position, i_in in enumerate(diff):
            in_size = inputs[i_in]._data.size
            columns = _numerical_columns(func, inputs, i_in, eps, list(np.eye(in_size)))
            numerical = np.array([c[i_out] for c in columns]).reshape(in_size, out_size)
            a = np.array([row[position] for row in analytical]).reshape(out_size, in_size).T
            if not np.all(np.abs(a - numerical) <= atol + rtol * np.abs(numerical)) or (
                np.isnan(a).any() != np.isnan(numerical).any()
            ):
                return _fail(_mismatch_text(i_out, i_in, numerical, a, False), raise_exception)
    return True


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
        raise_exception=raise_exception, fast_mode=fast_mode, seed=seed,
    )

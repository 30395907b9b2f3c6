"""Run one generated program in autodiff and in PyTorch, and say how they differ (None: they agree)."""

from __future__ import annotations

import numpy as np
import torch

import autodiff
from autodiff.language import Options, run

from .programs import RandomProgram

torch.set_num_threads(1)  # tiny tensors: threads only cost time, and these machines have 2 shared cores


class _NoGrad:
    """`with no_grad:` as the language writes it (no call)."""

    def __enter__(self):
        self.context = torch.no_grad()
        self.context.__enter__()

    def __exit__(self, *exc):
        return self.context.__exit__(*exc)


def _values_only(function):
    def call(input, *args, **kwargs):
        result = function(input, *args, **kwargs)
        return result[0] if isinstance(result, tuple) else result
    return call


TORCH_NAMES = {
    name: getattr(torch, name) for name in (
        "exp log sqrt sin cos tanh sigmoid relu abs square reciprocal log1p expm1 clamp maximum minimum where "
        "sum mean prod logsumexp softmax log_softmax matmul mm mv dot bmm reshape transpose permute unsqueeze "
        "squeeze flatten cat stack t flip narrow detach").split()
}
TORCH_NAMES.update(max=_values_only(torch.max), min=_values_only(torch.min), view=lambda x, shape: x.view(shape),
                   no_grad=_NoGrad(), range=range)


def run_torch(program: RandomProgram):
    dtype = torch.float32 if program.dtype == "float32" else torch.float64
    inputs = {k: torch.tensor(v, dtype=dtype, requires_grad=True) for k, v in program.inputs.items()}
    namespace = dict(TORCH_NAMES)
    namespace.update(inputs)
    exec(compile(program.text, "<program>", "exec"), namespace)  # noqa: S102 - our own generated text
    return namespace[program.output], inputs


def run_autodiff(program: RandomProgram):
    evaluation = run(program.text, at=program.inputs, options=Options(dtype=program.dtype))
    return evaluation.output, evaluation.inputs


def _array(t):
    if t is None:
        return None
    try:
        return np.asarray(t.detach().tolist(), dtype=np.float64)
    except RuntimeError:  # PyTorch's efficient zero tensors have no storage
        return np.zeros(tuple(t.shape))


def _close(a, b, dtype, none_is_zero=False) -> bool:
    if none_is_zero and (a is None) != (b is None):
        a = np.zeros_like(b) if a is None else a
        b = np.zeros_like(a) if b is None else b
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape:
        return False
    rtol, atol = (2e-4, 1e-4) if dtype == "float32" else (1e-7, 1e-9)
    scale = 1.0 + float(np.max(np.abs(b[np.isfinite(b)]), initial=0.0))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol * scale, equal_nan=True))


def _name(t):
    fn = getattr(t, "grad_fn", None)
    return None if fn is None else fn.name()


def compare(program: RandomProgram, second_order=None) -> str | None:
    """None when autodiff and PyTorch agree on the program, else what differs."""
    if second_order is None:
        second_order = program.category == "second_order"
    ref_out, ref_in = run_torch(program)
    try:
        out, ins = run_autodiff(program)
    except Exception as exc:  # noqa: BLE001 - any failure is a disagreement; PyTorch ran it
        return f"autodiff raised {type(exc).__name__}: {str(exc).splitlines()[0]}"
    a, b = _array(out), _array(ref_out)
    if not _close(a, b, program.dtype):
        return f"output differs: autodiff {a.tolist() if a is not None else None} shape {getattr(a, 'shape', None)}, " \
               f"PyTorch {b.tolist()} shape {b.shape}"
    if _name(out) != _name(ref_out):
        return f"grad_fn differs: autodiff {_name(out)}, PyTorch {_name(ref_out)}"
    if program.dtype == "float32" and str(out.dtype) != "autodiff.float32":
        return f"dtype differs: autodiff {out.dtype}, PyTorch {ref_out.dtype}"
    if bool(out.requires_grad) != bool(ref_out.requires_grad):
        return f"requires_grad differs: autodiff {out.requires_grad}, PyTorch {ref_out.requires_grad}"
    if not ref_out.requires_grad:
        return None
    names = list(program.inputs)
    weights = program.weights
    if second_order:
        return _compare_second_order(program, out, ins, ref_out, ref_in, names)
    (out * autodiff.tensor(weights, dtype=out.dtype)).sum().backward()
    (ref_out * torch.tensor(weights, dtype=ref_out.dtype)).sum().backward()
    for name in names:
        ga, gb = _array(ins[name].grad), _array(ref_in[name].grad)
        if not _close(ga, gb, program.dtype):
            return f"gradient of {name} differs: autodiff {None if ga is None else ga.tolist()}, " \
                   f"PyTorch {None if gb is None else gb.tolist()}"
    return None


def _grads(lib, loss, inputs):
    return lib.autograd.grad(loss, inputs, create_graph=True, allow_unused=True)


def _compare_second_order(program, out, ins, ref_out, ref_in, names) -> str | None:
    """d/dx of sum(w * d(sum(w * out))/dx), with create_graph both times, and once more backward."""
    la = (out * autodiff.tensor(program.weights)).sum()
    lb = (ref_out * torch.tensor(program.weights, dtype=torch.float64)).sum()
    xs_a, xs_b = [ins[n] for n in names], [ref_in[n] for n in names]
    for order in (1, 2):
        ga, gb = _grads(autodiff, la, xs_a), _grads(torch, lb, xs_b)
        for name, x, y in zip(names, ga, gb):
            if not _close(_array(x), _array(y), "float64", none_is_zero=True):
                return f"order-{order} gradient of {name} differs: autodiff {_array(x)}, PyTorch {_array(y)}"
        terms_a = [(g * g).sum() for g in ga if g is not None and g.requires_grad]
        terms_b = [(g * g).sum() for g in gb if g is not None and g.requires_grad]
        # A gradient that does not require grad (autodiff: relu's) is a constant, as PyTorch's zero-derivative one
        if not terms_a or not terms_b:
            return None
        la, lb = sum(terms_a), sum(terms_b)
    la.backward()
    lb.backward()
    for name in names:
        ga, gb = _array(ins[name].grad), _array(ref_in[name].grad)
        if not _close(ga, gb, "float64", none_is_zero=True):
            return f"order-3 backward of {name} differs: autodiff {ga}, PyTorch {gb}"
    return None


def compare_multi_root(program: RandomProgram) -> str | None:
    """autograd.backward([y, z]) where z is computed from y."""
    results = []
    for lib, (out, ins) in ((autodiff, run_autodiff(program)), (torch, run_torch(program))):
        if not out.requires_grad:
            return None
        w = lib.tensor(program.weights, dtype=out.dtype)
        y = (out * w).sum()
        z = lib.sin(y) * 3.0
        lib.autograd.backward([y, z])
        results.append({n: _array(t.grad) for n, t in ins.items()})
    for name in program.inputs:
        if not _close(results[0][name], results[1][name], "float64"):
            return f"gradient of {name} after backward([y, z]) differs: autodiff {results[0][name]}, " \
                   f"PyTorch {results[1][name]}"
    return None

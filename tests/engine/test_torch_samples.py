"""Every public function that PyTorch has, on every sample of the one table (op_samples.py),
against PyTorch (`autodiff.X` against `torch.X`, `autodiff.nn.functional.X` against
`torch.nn.functional.X` for the activations that live only there, and `autodiff.linalg.X`, named
`linalg_X` as in the language, against `torch.linalg.X`): the value, the grad_fn name, the gradient for a random output gradient, and
the second derivative along a random direction. A function added with its samples is checked
here with nothing more to write. Skipped when PyTorch is not installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.nn.functional as F
from autodiff.ops import FUNCTIONS

from .op_samples import LINALG, SAMPLES, function_samples

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

# Where autodiff differs from PyTorch on purpose (the README's "Where autodiff differs"), or
# PyTorch spells a call another way: the function, and why it is not compared here.
NOT_COMPARED = {
    "floor_divide": "PyTorch's grad_fn is its C++ name, torch::autograd::NotImplemented; ours is NotImplemented",
    "logsumexp": "dim may be left out in autodiff (all dimensions); PyTorch requires it",
    "softmax": "dim may be left out in autodiff (the last); PyTorch requires it",
    # The first result is U, whose columns' signs LAPACK builds choose differently (NumPy's
    # OpenBLAS, PyTorch's MKL): compared through losses that do not read the signs, in test_linalg.py.
    "svd": "U's signs are LAPACK's choice (tests/engine/test_linalg.py compares sign-free losses)",
    "linalg_svd": "U's signs are LAPACK's choice (tests/engine/test_linalg.py compares sign-free losses)",
}


class _Prefixed:
    """torch.linalg's functions by the language's names: `linalg_det` is torch.linalg.det."""

    def __init__(self, module, prefix: str) -> None:
        self.module, self.prefix = module, prefix

    def __getattr__(self, name: str):
        if not name.startswith(self.prefix):
            raise AttributeError(name)
        return getattr(self.module, name[len(self.prefix):])



# Where each function is found: autodiff's and PyTorch's namespaces. Of nn.functional, the
# activations: the losses' samples are calls of their registry ops (tests/engine/test_nn_functional.py
# compares the losses themselves).
SPACES = {"torch": (FUNCTIONS, torch), "nn.functional": ({name: getattr(F, name) for name in F.ACTIVATIONS},
                                                         torch.nn.functional),
          "linalg": (LINALG, _Prefixed(torch.linalg, "linalg_"))}


def _cases():
    for space, (ours, theirs) in SPACES.items():
        for name in sorted(ours):
            if name in NOT_COMPARED or not hasattr(theirs, name) or name not in SAMPLES:
                continue
            if space != "torch" and name in FUNCTIONS:  # autodiff.relu is F.relu: compared once
                continue
            for index, _ in enumerate(function_samples(name)):
                yield space, name, index


CASES = list(_cases())


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


def _to_torch(value):
    if isinstance(value, autodiff.Tensor):
        array = value.detach().numpy()
        tensor = torch.tensor(array)
        return tensor.requires_grad_(value.requires_grad) if tensor.is_floating_point() else tensor
    if isinstance(value, list):
        return [_to_torch(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_torch(v) for v in value)
    return value


def _first_tensor(out, kind):
    if isinstance(out, (tuple, list)):
        return next((o for o in out if isinstance(o, kind)), None)
    return out if isinstance(out, kind) else None


def _leaves(args, kind) -> list:
    found = []
    for a in args:
        if isinstance(a, kind) and a.requires_grad:
            found.append(a)
        elif isinstance(a, list):
            found.extend(t for t in a if isinstance(t, kind) and t.requires_grad)
    return found


def _run(lib, function, args, kwargs, kind, seed: int) -> dict:
    """What a call gives in one library: value, grad_fn, gradients, second derivatives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _first_tensor(function(*args, **kwargs), kind)
    if out is None:
        return {}
    found = {"value": _array(out), "grad_fn": out.grad_fn.name() if out.grad_fn is not None else None}
    leaves = _leaves(args, kind)
    if out.grad_fn is None or not leaves or not out.is_floating_point():
        return found
    rng = np.random.default_rng(seed)
    cotangent = lib.tensor(rng.uniform(-1, 1, size=tuple(out.shape)))
    grads = lib.autograd.grad(out, leaves, cotangent, create_graph=True, allow_unused=True)
    found["grads"] = [None if g is None else _array(g) for g in grads]
    direction = [lib.tensor(rng.uniform(-1, 1, size=tuple(leaf.shape))) for leaf in leaves]
    along = sum(((g * d).sum() for g, d in zip(grads, direction) if g is not None and g.requires_grad),
                start=lib.tensor(0.0))
    seconds = lib.autograd.grad(along, leaves, allow_unused=True) if along.requires_grad else [None] * len(leaves)
    found["seconds"] = [None if s is None else _array(s) for s in seconds]  # None: no second derivative, zero
    return found


def _array(t):
    return t.detach().numpy(force=True)  # force: PyTorch's zero tensors too


def _same(ours, theirs, what):
    if theirs is None or ours is None:  # no gradient in one of them is a zero gradient in the other
        value = theirs if ours is None else ours
        assert value is None or not np.any(value), f"{what}: one is None, the other not zero"
        return
    assert np.shape(ours) == np.shape(theirs), f"{what}: shape {np.shape(ours)} != {np.shape(theirs)}"
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-11, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("space, name, index", CASES, ids=[f"{n}-{i}" for _, n, i in CASES])
def test_a_function_agrees_with_pytorch_on_its_samples(space, name, index):
    sample = function_samples(name)[index]
    seed = 7 + index
    ours_space, theirs_space = SPACES[space]
    ours = _run(autodiff, ours_space[name], sample.args, sample.kwargs, autodiff.Tensor, seed)
    theirs = _run(torch, getattr(theirs_space, name), _to_torch(sample.args),
                  {k: _to_torch(v) for k, v in sample.kwargs.items()}, torch.Tensor, seed)
    assert ours.keys() == theirs.keys(), f"{name}: {sorted(ours)} != {sorted(theirs)}"
    if not ours:
        return
    _same(ours["value"], theirs["value"], f"{name} value")
    assert ours["grad_fn"] == theirs["grad_fn"]
    for key in ("grads", "seconds"):
        for i, (a, b) in enumerate(zip(ours.get(key, []), theirs.get(key, []))):
            _same(a, b, f"{name} {key}[{i}]")


def test_the_cases_cover_most_functions():
    # a guard against the comparison quietly finding nothing to compare
    assert len({name for _, name, _ in CASES}) > 60
    assert {"softplus", "gelu", "logsigmoid"} <= {name for space, name, _ in CASES if space == "nn.functional"}

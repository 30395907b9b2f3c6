"""Every operation's batching rule against running each example alone (--points, vmap).

Automatically, as the gradient checks are, from the one sample table (tests/engine/op_samples.py):
every registered op on its samples, and every public function on its own: the samples of the op
of the same name, and its calls. A batch of three examples is run once through the rule; each
example is run alone; the values, and the gradients of a weighted sum, must agree.
"""

import numpy as np
import pytest

import autodiff
from autodiff.ops import FUNCTIONS
from autodiff.ops.batching import Batched, DataDependent
from autodiff.ops.registry import REGISTRY

from .op_samples import ALIASES, LINALG, SAMPLES, function_samples, op_samples

# Every public function: the catalogue's and autodiff.linalg's (by the language's names, linalg_det...).
CALLABLE = {**FUNCTIONS, **LINALG}

BATCH = 3
# torch.cholesky and torch.qr warn that they are deprecated, as PyTorch's do
pytestmark = pytest.mark.filterwarnings("ignore:torch.(cholesky|qr) is deprecated")
_rng = np.random.default_rng(7)


def _examples(tensor, index: int):
    """Three examples near `tensor`'s values (small relative moves keep samples in their domains)."""
    base = tensor.detach().numpy()
    return [base * (1 + 0.01 * k * (index + 1)) for k in range(BATCH)]


def _leaf(array):
    return autodiff.tensor(array, requires_grad=True)


def _build(args, batched_positions):
    """(the batched call's arguments, each example's arguments, the leaves to differentiate)."""
    batched_args, per_example = [], [[] for _ in range(BATCH)]
    leaves_batched, leaves_examples = [], [[] for _ in range(BATCH)]
    counter = iter(range(1000))

    def one(value, position):
        if isinstance(value, autodiff.Tensor) and value.dtype.is_floating_point:
            index = next(counter)
            if position in batched_positions:
                examples = [_leaf(e) for e in _examples(value, index)]
                physical = _leaf(np.stack([e.detach().numpy() for e in examples]))
                leaves_batched.append(physical)
                for k in range(BATCH):
                    leaves_examples[k].append(examples[k])
                return Batched(physical), examples
            shared = _leaf(value.detach().numpy())
            leaves_batched.append(shared)
            copies = [_leaf(value.detach().numpy()) for _ in range(BATCH)]
            for k in range(BATCH):
                leaves_examples[k].append(copies[k])
            return shared, copies
        return value, [value] * BATCH

    for position, value in enumerate(args):
        if isinstance(value, list):
            parts = [one(v, position) for v in value]
            batched_args.append([p[0] for p in parts])
            for k in range(BATCH):
                per_example[k].append([p[1][k] for p in parts])
        else:
            b, examples = one(value, position)
            batched_args.append(b)
            for k in range(BATCH):
                per_example[k].append(examples[k])
    return batched_args, per_example, leaves_batched, leaves_examples


def _outputs(value):
    if isinstance(value, tuple):
        return [v for v in value if isinstance(v, autodiff.Tensor)]
    return [value]


def _agrees(function, args, batched_positions, kwargs=None):
    kwargs = kwargs or {}
    batched_args, per_example, leaves_b, leaves_e = _build(args, batched_positions)
    alone = [_outputs(function(*per_example[k], **kwargs)) for k in range(BATCH)]
    if not isinstance(alone[0][0], autodiff.Tensor):  # a Python value (allclose): one for the batch, if they agree
        values = [a[0] for a in alone]
        if len(set(values)) == 1:
            assert function(*batched_args, **kwargs) == values[0]
        else:
            with pytest.raises(DataDependent):
                function(*batched_args, **kwargs)
        return
    result = _outputs(function(*batched_args, **kwargs))
    for j, out in enumerate(result):
        physical = out.physical if isinstance(out, Batched) else out.unsqueeze(0).expand((BATCH,) + tuple(out.shape))
        expected = np.stack([alone[k][j].detach().numpy() for k in range(BATCH)])
        assert tuple(physical.shape) == expected.shape
        np.testing.assert_allclose(physical.detach().numpy(), expected, rtol=1e-12, atol=1e-12, equal_nan=True)
    differentiable = [(j, out) for j, out in enumerate(result) if out.requires_grad]
    if not differentiable:
        return
    weights = {j: _rng.standard_normal((BATCH,) + tuple(out.shape)) for j, out in differentiable}
    total = sum(((out.physical if isinstance(out, Batched) else out) * autodiff.tensor(
        weights[j] if isinstance(out, Batched) else weights[j].sum(0))).sum() for j, out in differentiable)
    try:
        total.backward()
    except RuntimeError as error:  # an op without a derivative says so for a batch as for one example
        with pytest.raises(RuntimeError, match=str(error)):
            sum((alone[0][j] * autodiff.tensor(weights[j][0])).sum() for j, _ in differentiable).backward()
        return
    for k in range(BATCH):
        loss = sum((alone[k][j] * autodiff.tensor(weights[j][k])).sum() for j, _ in differentiable)
        if loss.requires_grad:
            loss.backward()
    for i, leaf in enumerate(leaves_b):
        grads = [leaves_e[k][i].grad for k in range(BATCH)]
        grads = [np.zeros(leaves_e[k][i].shape) if g is None else g.numpy() for k, g in enumerate(grads)]
        got = np.zeros(leaf.shape) if leaf.grad is None else leaf.grad.numpy()
        want = np.stack(grads) if leaf.shape[0:1] == (BATCH,) and got.shape == np.stack(grads).shape and \
            leaf.ndim == grads[0].ndim + 1 else np.sum(grads, axis=0)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True)


def _op_cases():
    for name in sorted(set(SAMPLES) & set(REGISTRY)):
        for index, sample in enumerate(op_samples(name)):
            yield pytest.param(name, index, id=f"{name}-{index}")


@pytest.mark.parametrize("name,index", list(_op_cases()))
def test_every_registered_op_batches_like_each_example_alone(name, index):
    sample = op_samples(name)[index]
    op = REGISTRY[name]
    positions = [i for i, a in enumerate(sample.args) if isinstance(a, (autodiff.Tensor, list))]
    _agrees(op.apply, sample.args, set(positions))  # every tensor batched
    if len(positions) > 1:
        _agrees(op.apply, sample.args, {positions[0]})  # the others shared by every example


def test_every_public_function_has_samples():
    """Every function of the catalogue has an entry in the sample table, or is another name of one."""
    assert sorted(set(CALLABLE) - set(SAMPLES) - set(ALIASES)) == []
    assert sorted(set(ALIASES) - set(FUNCTIONS)) == []
    assert {alias: name for alias, name in ALIASES.items() if FUNCTIONS[alias] is not FUNCTIONS[name]} == {}
    assert sorted(set(ALIASES) & set(SAMPLES)) == []


def _public_cases():
    for name in sorted(set(SAMPLES) & set(CALLABLE)):
        for index, sample in enumerate(function_samples(name)):
            marks = [pytest.mark.xfail(reason=sample.batching_bug, strict=True)] if sample.batching_bug else []
            yield pytest.param(name, index, id=f"{name}-{index}", marks=marks)


@pytest.mark.parametrize("name,index", list(_public_cases()))
def test_every_public_function_batches_like_each_example_alone(name, index):
    sample = function_samples(name)[index]
    args, kwargs = sample.args, sample.kwargs
    positions = [i for i, a in enumerate(args) if isinstance(a, (autodiff.Tensor, list))]
    _agrees(CALLABLE[name], args, set(positions), kwargs)
    if len(positions) > 1:
        _agrees(CALLABLE[name], args, {positions[-1]}, kwargs)


def test_an_example_looks_like_one_example():
    x = Batched(autodiff.arange(12.0).reshape(3, 2, 2))
    assert tuple(x.shape) == (2, 2) and x.ndim == 2 and x.numel() == 4 and len(x) == 2
    assert tuple(x.T.physical.shape) == (3, 2, 2) and x.T.physical[0].tolist() == [[0.0, 2.0], [1.0, 3.0]]


def test_a_value_the_examples_agree_on_is_a_python_value_and_one_they_do_not_is_data_dependent():
    same = Batched(autodiff.tensor([2.0, 2.0, 2.0]))
    assert bool(same > 1) and float(same) == 2.0 and int(same) == 2
    mixed = Batched(autodiff.tensor([1.0, -1.0, 1.0]))
    with pytest.raises(DataDependent) as raised:
        bool(mixed > 0)
    assert raised.value.values == [True, False, True]


def test_vmap_grad_matches_each_example_alone():
    f = lambda a, b, c, d: a * b + autodiff.log(d) * c  # noqa: E731
    points = _rng.uniform(1, 3, size=(4, 6))
    grads = autodiff.func.vmap(autodiff.func.grad(f, argnums=(0, 1, 2, 3)))(*[autodiff.tensor(p) for p in points])
    for k in range(6):
        leaves = [autodiff.tensor(points[i, k], requires_grad=True) for i in range(4)]
        f(*leaves).backward()
        assert [g[k].item() for g in grads] == pytest.approx([leaf.grad.item() for leaf in leaves], rel=1e-14)

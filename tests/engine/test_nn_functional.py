"""autodiff.nn.functional and einsum against PyTorch: values, gradients (first and second
order), the result's grad_fn name, warnings and error texts."""

import warnings

import numpy as np
import pytest

import autodiff
import autodiff.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.torch

REDUCTIONS = ("mean", "sum", "none")
rng = np.random.default_rng(7)


def both(array, requires_grad=True):
    """The same values as an autodiff and a torch tensor."""
    array = np.asarray(array)
    grad = requires_grad and array.dtype.kind == "f"
    return autodiff.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def name(t):
    return type(t.grad_fn).__name__ if t.grad_fn is not None else None


def compare(call, *arrays, second_order=True, rtol=1e-9):
    """Run `call(lib_functional, *tensors)` on both; compare value, node, gradients."""
    ours_in, theirs_in = zip(*(both(a) for a in arrays))
    ours, theirs = call(F, *ours_in), call(TF, *theirs_in)
    assert name(ours) == name(theirs)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    leaves = [(o, t) for o, t in zip(ours_in, theirs_in) if t.requires_grad]
    if not leaves or not theirs.requires_grad:
        return
    seed = rng.uniform(0.5, 1.5, size=tuple(theirs.shape))
    ours_g = autodiff.autograd.grad(ours, [o for o, _ in leaves], autodiff.tensor(seed), create_graph=True)
    theirs_g = torch.autograd.grad(theirs, [t for _, t in leaves], torch.tensor(seed), create_graph=True)
    for a, b in zip(ours_g, theirs_g):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=1e-12)
    if second_order and all(g.requires_grad for g in theirs_g):
        ours_total = sum((g * g).sum() for g in ours_g)
        theirs2 = torch.autograd.grad(sum((g * g).sum() for g in theirs_g), [t for _, t in leaves], allow_unused=True)
        if ours_total.requires_grad:
            ours2 = autodiff.autograd.grad(ours_total, [o for o, _ in leaves], allow_unused=True)
        else:  # the gradient does not depend on the inputs: the second order is zero
            ours2 = [None] * len(leaves)
        for a, b in zip(ours2, theirs2):
            expected = np.zeros(tuple(a.shape)) if b is None else b.numpy(force=True)
            np.testing.assert_allclose(0 * expected if a is None else a.numpy(), expected, rtol=1e-8, atol=1e-10)


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


SHAPES = [(5,), (4, 3), (2, 3, 4)]


# -- activations and linear ------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES + [()])
@pytest.mark.parametrize("fn", ["relu", "sigmoid", "tanh"])
def test_activations(fn, shape):
    compare(lambda lib, x: getattr(lib, fn)(x), rng.normal(size=shape))


@pytest.mark.parametrize("shape, dim", [((5,), 0), ((4, 3), 1), ((4, 3), 0), ((2, 3, 4), -1)])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_family(fn, shape, dim):
    compare(lambda lib, x: getattr(lib, fn)(x, dim), rng.normal(size=shape))
    compare(lambda lib, x: getattr(lib, fn)(x, dim=dim), rng.normal(size=shape))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_without_dim_warns_as_pytorch(fn):
    x = rng.normal(size=(4, 3))
    with pytest.warns(UserWarning, match="Implicit dimension choice") as ours:
        value = getattr(F, fn)(autodiff.tensor(x))
    with pytest.warns(UserWarning) as theirs:
        expected = getattr(TF, fn)(torch.tensor(x))
    assert str(ours[0].message) == str(theirs[0].message)
    np.testing.assert_allclose(value.numpy(), expected.numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 5, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(shape, bias):
    arrays = [rng.normal(size=shape), rng.normal(size=(2, 3))] + ([rng.normal(size=(2,))] if bias else [])
    compare(lambda lib, *t: lib.linear(*t), *arrays)


# -- losses ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES + [()])
@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss"])
def test_regression_losses(fn, shape, reduction):
    compare(lambda lib, x, y: getattr(lib, fn)(x, y, reduction=reduction), rng.normal(size=shape), rng.normal(size=shape))


@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss"])
def test_regression_losses_warn_and_broadcast_on_a_shape_mismatch(fn):
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(3,))
    with pytest.warns(UserWarning) as ours:
        compare(lambda lib, a, b: getattr(lib, fn)(a, b), x, y)
    messages = {str(w.message) for w in ours}
    assert (
        "Using a target size (autodiff.Size([3])) that is different to the input size (autodiff.Size([4, 3])). This will "
        "likely lead to incorrect results due to broadcasting. Please ensure they have the same size."
    ) in messages


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(shape, reduction, weighted):
    weight = rng.uniform(0.5, 2, size=shape[-1:]) if weighted else None

    def call(lib, x, y):
        w = None if weight is None else (autodiff if lib is F else torch).tensor(weight)
        return lib.binary_cross_entropy(x, y, w, reduction=reduction)

    compare(call, rng.uniform(0.05, 0.95, size=shape), rng.uniform(0, 1, size=shape))


def test_binary_cross_entropy_clamps_its_logs_at_minus_100():
    compare(lambda lib, x, y: lib.binary_cross_entropy(x, y), np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 1.0]),
            second_order=False, rtol=1e-8)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weighted", ["none", "weight", "pos_weight", "both"])
def test_binary_cross_entropy_with_logits(shape, reduction, weighted):
    x, y = rng.normal(scale=3, size=shape), rng.uniform(0, 1, size=shape)
    w, p = rng.uniform(0.5, 2, size=shape[-1:]), rng.uniform(0.5, 3, size=shape[-1:])

    def call(lib, x, y, w, p):
        return lib.binary_cross_entropy_with_logits(
            x, y, weight=w if weighted in ("weight", "both") else None,
            pos_weight=p if weighted in ("pos_weight", "both") else None, reduction=reduction,
        )

    ours = call(F, *(both(a)[0] for a in (x, y)), autodiff.tensor(w), autodiff.tensor(p))
    theirs = call(TF, *(both(a)[1] for a in (x, y)), torch.tensor(w), torch.tensor(p))
    assert name(ours) == name(theirs) == "BinaryCrossEntropyWithLogitsBackward0"
    compare(lambda lib, a, b: call(lib, a, b, (autodiff if lib is F else torch).tensor(w),
                                   (autodiff if lib is F else torch).tensor(p)), x, y)


def _classes(shape, classes=3):
    """Class-index targets for an input of `shape` ((C,), (N, C) or (N, C, d...))."""
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    return rng.integers(0, classes, size=target_shape)


CLASS_SHAPES = [(3,), (5, 3), (2, 3, 4), (2, 3, 2, 2)]


def _with_target(call, shape, target, weight=None):
    x = rng.normal(size=shape)
    ours_t, theirs_t = autodiff.tensor(target), torch.tensor(target)
    ours_w = None if weight is None else autodiff.tensor(weight)
    theirs_w = None if weight is None else torch.tensor(weight)
    compare(lambda lib, a: call(lib, a, ours_t if lib is F else theirs_t, ours_w if lib is F else theirs_w), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", CLASS_SHAPES)
@pytest.mark.parametrize("options", [{}, {"weight": True}, {"ignore_index": 1}, {"weight": True, "ignore_index": 0}])
@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
def test_class_index_losses(fn, shape, reduction, options):
    weight = np.array([0.5, 1.0, 2.0]) if options.get("weight") else None
    target = _classes(shape)
    if "ignore_index" in options and target.ndim:
        target.flat[0] = options["ignore_index"]
    kwargs = {"reduction": reduction}
    if "ignore_index" in options:
        kwargs["ignore_index"] = options["ignore_index"]
    _with_target(lambda lib, x, t, w: getattr(lib, fn)(x, t, weight=w, **kwargs), shape, target, weight)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4)])
def test_cross_entropy_with_label_smoothing(shape, reduction, weighted):
    weight = np.array([0.5, 1.0, 2.0]) if weighted else None
    target = _classes(shape)
    target.flat[1] = -100
    _with_target(lambda lib, x, t, w: lib.cross_entropy(x, t, weight=w, reduction=reduction, label_smoothing=0.2),
                 shape, target, weight)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(3,), (5, 3), (2, 3, 4)])
def test_cross_entropy_with_probability_targets(shape, reduction, smoothing, weighted):
    probabilities = rng.dirichlet(np.ones(3), size=(shape[:1] + shape[2:]) if len(shape) > 1 else None)
    probabilities = np.moveaxis(probabilities, -1, 1 if len(shape) > 1 else 0).reshape(shape)
    weight = (autodiff.tensor([0.5, 1.0, 2.0]), torch.tensor([0.5, 1.0, 2.0])) if weighted else (None, None)
    compare(lambda lib, x, p: lib.cross_entropy(x, p, weight=weight[0] if lib is F else weight[1],
                                                reduction=reduction, label_smoothing=smoothing),
            rng.normal(size=shape), probabilities)


# -- errors -----------------------------------------------------------------------------------------------


def outcome(call, lib, *arrays):
    tensors = [(autodiff if lib is F else torch).tensor(a) for a in arrays]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(lib, *tensors)
    except Exception as exc:  # the same builtin family and text, up to the module's name
        family = next(c for c in type(exc).__mro__ if c.__module__ == "builtins")
        return family.__name__, str(exc).replace("torch.", "autodiff.")
    return None


ERRORS = {
    "cross_entropy float target": (lambda lib, x, t: lib.cross_entropy(x, t), np.ones((4, 3)), np.array([0.0, 1, 2, 1])),
    "cross_entropy batch size": (lambda lib, x, t: lib.cross_entropy(x, t), np.ones((4, 3)), np.array([0, 1, 2])),
    "cross_entropy out of range": (lambda lib, x, t: lib.cross_entropy(x, t), np.ones((4, 3)), np.array([0, 1, 5, 1])),
    "nll_loss float target": (lambda lib, x, t: lib.nll_loss(x, t), np.ones((4, 3)), np.array([0.0, 1, 2, 1])),
    "nll_loss batch size": (lambda lib, x, t: lib.nll_loss(x, t), np.ones((4, 3)), np.array([0, 1, 2])),
    "bce sizes": (lambda lib, x, t: lib.binary_cross_entropy(x, t), np.full((4, 3), 0.5), np.full((3,), 0.5)),
    "bce range": (lambda lib, x, t: lib.binary_cross_entropy(x, t), np.full((4, 3), 1.5), np.full((4, 3), 0.5)),
    "bce logits sizes": (lambda lib, x, t: lib.binary_cross_entropy_with_logits(x, t), np.ones((4, 3)), np.ones(3)),
    "mse no broadcast": (lambda lib, x, t: lib.mse_loss(x, t), np.ones((4, 3)), np.ones(5)),
    "bad reduction": (lambda lib, x, t: lib.mse_loss(x, t, reduction="avg"), np.ones(3), np.ones(3)),
    "linear sizes": (lambda lib, x, w: lib.linear(x, w), np.ones((4, 3)), np.ones((2, 4))),
    "linear sizes, bias": (lambda lib, x, w: lib.linear(x, w, (autodiff if lib is F else torch).ones(2)),
                           np.ones((4, 3)), np.ones((2, 4))),
}


@pytest.mark.parametrize("case", ERRORS)
def test_error_texts_are_pytorchs(case):
    call, *arrays = ERRORS[case]
    theirs = outcome(call, TF, *arrays)
    assert theirs is not None
    assert outcome(call, F, *arrays) == theirs


# -- einsum -------------------------------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i->", [(3,), (3,)]), ("i,i", [(3,), (3,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("i,j->ij", [(3,), (2,)]), ("ij,j->i", [(2, 3), (3,)]),
    ("ij", [(2, 3)]), ("ji", [(2, 3)]), ("...ij->...ji", [(2, 2, 3)]), ("bij->b", [(2, 2, 3)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,ij->", [(2, 3), (2, 3)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("iij->j", [(2, 2, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("i,j,k->ijk", [(2,), (3,), (2,)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]), ("bij,jk->bik", [(2, 2, 3), (3, 4)]), ("iji->j", [(2, 3, 2)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]), ("i,i,i->", [(3,), (3,), (3,)]), ("ab,b->a", [(2, 1), (3,)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]), ("Ij,jK->IK", [(2, 3), (3, 4)]), ("ijk,ikl->ijl", [(2, 1, 3), (2, 3, 2)]),
    ("ii,i->i", [(3, 3), (3,)]), ("...", [(2, 3)]), ("i...->...", [(2, 3, 4)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum(equation, shapes):
    compare(lambda lib, *ops: (autodiff if lib is F else torch).einsum(equation, *ops),
            *(rng.normal(size=s) for s in shapes))


def test_einsum_takes_a_list_of_operands_too():
    a, b = autodiff.ones(2, 3), autodiff.ones(3, 4)
    assert autodiff.einsum("ij,jk->ik", [a, b]).tolist() == autodiff.einsum("ij,jk->ik", a, b).tolist()


EINSUM_ERRORS = [
    ("ij,jk->ik", [(2, 3)]), ("ijk", [(2, 3)]), ("ij,jk->ik", [(2, 3), (2, 3)]), ("ij->k", [(2, 3)]),
    ("ij->ii", [(2, 3)]), ("i1", [(2, 3)]), ("ii", [(2, 3)]), ("ij-ik", [(2, 3)]), ("i,i", [(2,), (2,), (2,)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_ERRORS, ids=[e for e, _ in EINSUM_ERRORS])
def test_einsum_error_texts_are_pytorchs(equation, shapes):
    def run(lib):
        try:
            lib.einsum(equation, *(lib.ones(s) for s in shapes))
        except Exception as exc:
            return type(exc).__name__, str(exc)
        return None

    theirs = run(torch)
    assert theirs is not None and run(autodiff) == theirs


def test_nn_is_loaded_lazily_and_both_spellings_work():
    import subprocess
    import sys

    code = (
        "import sys, autodiff; assert 'autodiff.nn' not in sys.modules;"
        "import autodiff.nn.functional as F; assert autodiff.nn.functional is F and F.relu is autodiff.relu"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("legacy", [{"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}])
@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss", "binary_cross_entropy_with_logits"])
def test_legacy_size_average_and_reduce_as_pytorch(fn, legacy):
    x, y = rng.uniform(0.1, 0.9, size=(2, 3)), rng.uniform(0.1, 0.9, size=(2, 3))
    with pytest.warns(UserWarning) as ours:
        compare(lambda lib, a, b: getattr(lib, fn)(a, b, **legacy), x, y)
    with pytest.warns(UserWarning) as theirs:
        getattr(TF, fn)(torch.tensor(x), torch.tensor(y), **legacy)
    assert str(ours[0].message) == str(theirs[0].message)

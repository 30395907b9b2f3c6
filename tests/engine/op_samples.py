"""The one table of sample inputs: every registered op and every public function, in the
spirit of PyTorch's OpInfo.

`SAMPLES[name]()` returns the Samples of `name`, which is an op of the registry
(`autodiff.ops.registry.REGISTRY`), a function of the catalogue (`autodiff.ops.FUNCTIONS`), or
both. Where a public function is the op itself (`exp`, `sum`, `cat`...), one entry serves both:

- the op's samples (`@samples`) are its positional arguments, `REGISTRY[name].apply(*args)`:
  tests/engine/test_op_gradients.py gradient-checks every op on them (first and second order),
  and tests/engine/test_batching.py checks the op's batching rule on them;
- the same samples are calls of the public function of that name, `FUNCTIONS[name](*args)`,
  whose batching tests/engine/test_batching.py checks too; a sample the function does not take
  says `function=False`;
- `@calls` adds calls of the public function alone (keywords, Python numbers where the op
  takes tensors...): `call(*args, **kwargs)`.

Public functions that are not registry ops (composites, comparisons, `einsum`, tensor
creation) have entries of calls only, in their own section below; aliases (`clip` for `clamp`)
are listed in `ALIASES`. A test fails if an op or a function has no entry, so declaring it and
giving it samples here is all it takes for it to be checked.

Shapes follow TESTING.md: (), (2,), (3,2), (1,2), (2,3,2), and broadcasting pairs
((2,1),(2,)) and ((3,1,2),(1,3,2)). Domains keep finite differences away from poles and kinks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

import autodiff
from autodiff.backend import device

SHAPES = [(), (2,), (3, 2), (1, 2), (2, 3, 2)]
BROADCAST_PAIRS = [((3, 2), (3, 2)), ((2, 1), (2,)), ((3, 1, 2), (1, 3, 2)), ((), (3,)), ((3, 2), ())]


@dataclass
class Sample:
    """Positional arguments for `op.apply` (and the public function of the same name); the
    tensors among them are what gets checked."""

    args: tuple
    note: str = ""
    check: dict = field(default_factory=dict)  # extra gradcheck keywords (tolerances)
    kwargs: dict = field(default_factory=dict)  # keywords: for the public function only
    op: bool = True  # a sample of the registry op of its name (where there is one)
    function: bool = True  # a call of the public function of its name (where there is one)
    batching_bug: str = ""  # a known bug: the function's batching check is expected to fail, for this reason
    wrap: object = None  # the gradient checks call the op on wrap(t) for each checked tensor t (`symmetric`)

    @property
    def tensors(self) -> tuple:
        found = []
        for a in self.args:
            if isinstance(a, autodiff.Tensor) and a.requires_grad:
                found.append(a)
            elif isinstance(a, list):
                found.extend(t for t in a if isinstance(t, autodiff.Tensor) and t.requires_grad)
        return tuple(found)

    def bind(self, tensors) -> tuple:
        """The arguments with the checked tensors replaced, in order, by `tensors`."""
        replacements = iter(tensors)
        out = []
        for a in self.args:
            if isinstance(a, autodiff.Tensor) and a.requires_grad:
                out.append(next(replacements))
            elif isinstance(a, list):
                out.append([next(replacements) if isinstance(t, autodiff.Tensor) and t.requires_grad else t for t in a])
            else:
                out.append(a)
        return tuple(out)

    def on(self, device) -> "Sample":
        """The same sample with its tensors (copies) on `device`."""

        def move(a):
            if isinstance(a, autodiff.Tensor):
                return a.detach().to(device).requires_grad_(a.requires_grad)
            if isinstance(a, list):
                return [move(t) for t in a]
            return a

        return replace(self, args=tuple(move(a) for a in self.args),
                       kwargs={key: move(value) for key, value in self.kwargs.items()})

    def __repr__(self) -> str:
        shapes = [tuple(a.shape) if isinstance(a, autodiff.Tensor) else a for a in self.args]
        shapes += [f"{key}={value}" for key, value in self.kwargs.items()]
        return f"Sample({self.note or shapes})"


def call(*args, note: str = "", **kwargs) -> Sample:
    """A call of the public function alone: `FUNCTIONS[name](*args, **kwargs)`."""
    return Sample(args, note=note, kwargs=kwargs, op=False)


_rng = np.random.default_rng(1234)


def leaf(shape=(), low=-2.0, high=2.0, values=None) -> autodiff.Tensor:
    """A float64 leaf that requires grad: given values, or uniform in [low, high]."""
    array = np.array(values, dtype=np.float64) if values is not None else _rng.uniform(low, high, size=shape)
    return autodiff.tensor(array, requires_grad=True)


def away_from_zero(shape=(), low=0.2, high=2.0) -> autodiff.Tensor:
    """Values with |x| in [low, high] and random signs: keeps finite differences off a kink at 0."""
    magnitudes = _rng.uniform(low, high, size=shape)
    signs = np.where(_rng.uniform(size=shape) < 0.5, -1.0, 1.0)
    return autodiff.tensor(magnitudes * signs, requires_grad=True)


def distinct(shape) -> autodiff.Tensor:
    """Values spaced at least 0.05 apart, shuffled: no ties for max/min to split."""
    size = int(np.prod(shape))
    values = _rng.permutation(np.linspace(-1.5, 1.5, max(size, 1)) if size > 1 else np.array([0.7]))[:size]
    return autodiff.tensor(values.reshape(shape), requires_grad=True)


class Entry:
    """One name's samples: those of `@samples`, then the calls of `@calls`."""

    def __init__(self):
        self.generators = []

    def __call__(self) -> list:
        return [sample for generator in self.generators for sample in generator()]


SAMPLES: dict = {}  # name -> Entry


def samples(*names):
    """`@samples("exp", ...)`: a generator of the samples of these ops (and their public functions)."""

    def register(generator):
        for name in names:
            SAMPLES.setdefault(name, Entry()).generators.append(generator)
        return generator

    return register


def calls(*names):
    """`@calls("sum")`: a generator of calls (`call(...)`) of these public functions alone."""

    def register(generator):
        samples(*names)(lambda: [replace(sample, op=False) for sample in generator()])
        return generator

    return register


def op_samples(name: str) -> list:
    """The samples of the registry op `name`: `REGISTRY[name].apply(*sample.args)`."""
    return [sample for sample in SAMPLES[name]() if sample.op]


def function_samples(name: str) -> list:
    """The calls of the public function `name`: `FUNCTIONS[name](*sample.args, **sample.kwargs)`."""
    return [sample for sample in SAMPLES[name]() if sample.function]


# -- elementwise ------------------------------------------------------------------------------------


@samples("exp", "sin", "cos", "tanh", "sigmoid", "neg", "expm1", "sign", "clone", "alias")
def _unary_any():
    return [Sample((leaf(s),)) for s in SHAPES]


@samples("floor", "ceil")
def _steps():  # away from the integers, where the step is
    return [Sample((autodiff.tensor(np.floor(leaf(s, -3, 3).detach().numpy()) + _rng.uniform(0.2, 0.8, s),
                                    requires_grad=True),)) for s in SHAPES]


@samples("remainder")
def _remainder():  # input / other stays between integers, away from the jumps
    return [Sample((leaf(a, 2.2, 2.8), leaf(b, 1.8, 2.0))) for a, b in BROADCAST_PAIRS]


@calls("remainder")
def _remainder_calls():
    return [call(leaf((3,), 1.5, 10.0), 2.0)]


@samples("remainder_scalar")
def _remainder_scalar():
    return [Sample((leaf(s, 2.2, 2.8), 2.0)) for s in SHAPES] + [Sample((leaf((3,), -2.8, -2.2), 2.0))]


@samples("log", "sqrt", "log1p")
def _unary_positive():
    return [Sample((leaf(s, 0.2, 2.0),)) for s in SHAPES]


@samples("tan")
def _tan():
    return [Sample((leaf(s, -1.2, 1.2),)) for s in SHAPES]


@samples("reciprocal", "abs", "relu")
def _unary_off_zero():
    return [Sample((away_from_zero(s),)) for s in SHAPES]


@samples("add", "sub", "mul", "maximum", "minimum")
def _binary():
    return [Sample((leaf(a), leaf(b))) for a, b in BROADCAST_PAIRS]


@calls("add")
def _add_calls():
    return [call(leaf((2,)), leaf((3, 2)), alpha=2)]


@calls("sub")
def _sub_calls():
    return [call(leaf((3,)), 2.0)]


@samples("div")
def _div():
    return [Sample((leaf(a), away_from_zero(b, 0.5, 2.0))) for a, b in BROADCAST_PAIRS]


@samples("rsub")
def _rsub():
    return [Sample((leaf(s), 10.0)) for s in SHAPES[:3]]


@samples("pow")
def _pow():
    return [Sample((leaf(s, 0.5, 2.0), e), note=f"{s} ** {e}") for s in SHAPES[:3] for e in (2, 3, 0.5, -1.5, 0)]


@calls("pow")
def _pow_calls():
    return [call(leaf((2,), 0.3, 2.0), leaf((2,)), note="tensor exponent")]


@samples("pow_tensor")
def _pow_tensor():
    return [Sample((leaf(a, 0.5, 2.0), leaf(b, -2.0, 2.0))) for a, b in BROADCAST_PAIRS]


@samples("pow_scalar_base")
def _pow_scalar_base():
    return [Sample((leaf(s), base), note=f"{base} ** {s}") for s in SHAPES[:3] for base in (2.0, 0.5)]


@samples("where")
def _where():
    cases = []
    for a, b in BROADCAST_PAIRS:
        shape = np.broadcast_shapes(a, b)
        condition = autodiff.tensor(_rng.uniform(size=shape) < 0.5)
        cases.append(Sample((condition, leaf(a), leaf(b))))
    return cases


@samples("clamp")
def _clamp():
    values = [-1.3, -0.2, 0.3, 0.9, 1.7, -0.7]
    return [
        Sample((leaf(values=values), -0.5, 0.5), note="both bounds"),
        Sample((leaf(values=values), None, 0.5), note="max only"),
        Sample((leaf(values=values), 0.0, None), note="min only"),
    ]


@calls("clamp")
def _clamp_calls():
    return [call(leaf((4,)), min=-0.5, max=0.5)]


# -- elementwise functions ------------------------------------------------------------------


@samples("atan", "sinh", "cosh", "asinh", "exp2", "sinc", "deg2rad", "rad2deg")
def _smooth_everywhere():
    return [Sample((leaf(s),)) for s in SHAPES]


@samples("rsqrt", "log2", "log10")
def _positive_domain():
    return [Sample((leaf(s, 0.2, 2.0),)) for s in SHAPES]


@samples("asin", "acos", "atanh")
def _inside_minus_one_one():  # away from ±1, where the derivative is infinite
    return [Sample((leaf(s, -0.8, 0.8),)) for s in SHAPES]


@samples("acosh")
def _above_one():
    return [Sample((leaf(s, 1.2, 3.0),)) for s in SHAPES]


@samples("trunc", "frac")
def _between_integers():  # of both signs, away from the integers where trunc jumps
    def values(s):
        return np.trunc(_rng.uniform(-3, 3, s)) + np.sign(_rng.uniform(-1, 1, s)) * _rng.uniform(0.2, 0.8, s)

    return [Sample((autodiff.tensor(values(s), requires_grad=True),)) for s in SHAPES]


@samples("round")
def _away_from_halves():  # round jumps at the halves
    return [Sample((autodiff.tensor(np.floor(leaf(s, -3, 3).detach().numpy()) + _rng.uniform(0.1, 0.4, s)
                                    + _rng.choice([0.0, 0.5], s), requires_grad=True),)) for s in SHAPES]


@samples("atan2")
def _atan2():  # input away from 0, where the angle jumps by 2 pi for other < 0
    return [Sample((away_from_zero(a), leaf(b))) for a, b in BROADCAST_PAIRS]


@samples("hypot")
def _hypot():  # away from the origin
    return [Sample((away_from_zero(a), leaf(b))) for a, b in BROADCAST_PAIRS]


@samples("logaddexp")
def _logaddexp():
    return [Sample((leaf(a), leaf(b))) for a, b in BROADCAST_PAIRS]


@samples("xlogy")
def _xlogy():
    return [Sample((leaf(a), leaf(b, 0.2, 2.0))) for a, b in BROADCAST_PAIRS]


@calls("xlogy")
def _xlogy_calls():
    return [call(leaf((3,)), 2.0, note="a number for other"),
            call(3.0, leaf((3,), 0.2, 2.0), note="a number for input")]


@samples("xlogy_by_number")
def _xlogy_by_number():
    return [Sample((leaf(s), c)) for s in SHAPES[:3] for c in (2.0, 0.5)]


@samples("xlogy_of_number")
def _xlogy_of_number():  # the tensor (other) first
    return [Sample((leaf(s, 0.2, 2.0), c)) for s in SHAPES[:3] for c in (3.0, -0.5)]


@samples("clamp_min", "clamp_max")
def _one_bound():  # away from the bound
    values = [-1.3, -0.2, 0.3, 0.9, 1.7, -0.7]
    return [Sample((leaf(values=values), 0.1)), Sample((leaf(values=values[:4]), -0.5))]


@samples("clamp_min_tensor", "clamp_max_tensor")
def _one_bound_tensor():
    return [Sample((leaf(a), leaf(b))) for a, b in BROADCAST_PAIRS]


@calls("clamp_min", "clamp_max")
def _one_bound_calls():
    return [call(leaf((3, 2)), leaf((2,)), note="a tensor bound"), call(leaf((3,)), 1, note="an int bound")]


@samples("erf", "erfc")
def _error_function():
    return [Sample((leaf(s),)) for s in SHAPES]


@samples("erfinv")
def _erfinv():  # away from ±1, where it is infinite
    return [Sample((leaf(s, -0.8, 0.8),)) for s in SHAPES]


@samples("lgamma", "digamma")
def _gamma():  # positive, and negative between the poles at the integers
    return [Sample((leaf(s, 0.2, 3.0),)) for s in SHAPES] + [Sample((leaf(values=[-0.4, -1.6, -2.3]),))]


@samples("polygamma")
def _polygamma():
    orders = [(0, ()), (1, (3, 2)), (2, (2,)), (3, (2, 3, 2))]
    return [Sample((n, leaf(s, 0.3, 3.0)), note=f"n={n} {s}") for n, s in orders] + [
        Sample((1, leaf(values=[-0.4, -1.6])), note="n=1, negative")]


# -- shapes -------------------------------------------------------------------------------------------


# autodiff.expand's batching rule (ops/batching.py, shape_argument) puts the batch size in front
# of the target shape without first giving the input the target's number of dimensions: an
# example with fewer dimensions than the target fails, or is expanded wrongly where the sizes
# happen to fit. The op itself batches right.
EXPAND_BUG = "expand's batching rule: an example with fewer dimensions than the target shape"


@samples("expand")
def _expand():
    return [
        Sample((leaf((3, 1)), (2, 3, 4)), batching_bug=EXPAND_BUG),
        Sample((leaf(()), (2,)), batching_bug=EXPAND_BUG),
        Sample((leaf((2,)), (3, 2)), batching_bug=EXPAND_BUG),
    ]


@calls("expand")
def _expand_calls():
    return [call(leaf((1, 3)), (2, 3))]


@samples("sum_to")
def _sum_to():
    return [Sample((leaf((2, 3, 4)), (3, 1))), Sample((leaf((3, 2)), ())), Sample((leaf((2, 3)), (1, 3)))]


@samples("t")
def _t():
    return [Sample((leaf(s),)) for s in [(3, 2), (2,), ()]]


@samples("transpose")
def _transpose():
    return [Sample((leaf((2, 3, 2)), 0, 2)), Sample((leaf((3, 2)), 0, 1))]


@calls("transpose")
def _transpose_calls():
    return [call(leaf((2, 3, 2)), 0, -1)]


@samples("permute")
def _permute():
    return [Sample((leaf((2, 3, 2)), (2, 0, 1))), Sample((leaf((3, 2)), (1, 0)))]


@samples("view", "unsafe_view", "reshape_alias")
def _view():
    return [Sample((leaf((3, 2)), (6,))), Sample((leaf((2, 3, 2)), (3, 4))), Sample((leaf(()), (1,)))]


@samples("unsqueeze")
def _unsqueeze():
    return [Sample((leaf((3, 2)), 1)), Sample((leaf(()), 0))]


@calls("unsqueeze")
def _unsqueeze_calls():
    return [call(leaf((3,)), -1)]


@samples("squeeze")
def _squeeze():
    return [Sample((leaf((1, 3, 1)),)), Sample((leaf((3, 2)),))]


@calls("squeeze")
def _squeeze_calls():
    return [call(leaf((1, 3)), 0)]


@samples("squeeze_dim")
def _squeeze_dim():
    return [Sample((leaf((1, 3, 1)), 0)), Sample((leaf((3, 2)), 1))]


@samples("squeeze_")
def _squeeze_matmul():
    return [Sample((leaf((1, 3)), 0))]


@samples("squeeze_dims")
def _squeeze_dims():
    return [Sample((leaf((1, 3, 1)), (0, 2)))]


@samples("flip")
def _flip():
    return [Sample((leaf((3, 2)), (0,))), Sample((leaf((2, 3, 2)), (0, 2)))]


@samples("cat")
def _cat():
    return [Sample(([leaf((2, 3)), leaf((1, 3))], 0)), Sample(([leaf((2, 1)), leaf((2, 2)), leaf((2, 1))], 1))]


@calls("cat")
def _cat_calls():
    return [call([leaf((2,)), leaf((3,))], note="default dim")]


@samples("stack")
def _stack():
    return [Sample(([leaf((2,)), leaf((2,))], 0)), Sample(([leaf((3, 2)), leaf((3, 2)), leaf((3, 2))], 1))]


@calls("stack")
def _stack_calls():
    return [call([leaf((2,)), leaf((2,))], 1)]


@samples("to_dtype")
def _to_dtype():
    return [
        Sample((leaf((3, 2)), np.dtype(np.float64)), note="float64 -> float64"),
        Sample(
            (leaf((2,)), np.dtype(np.float32)),
            note="float64 -> float32",
            check=dict(eps=1e-3, atol=1e-3, rtol=1e-2),
        ),
    ]


@samples("copy")
def _copy():
    return [
        Sample((leaf((3, 2)), leaf((3, 2)))),
        Sample((leaf((3, 2)), leaf((2,))), note="broadcast source"),
    ]


@samples("fill")
def _fill():
    return [Sample((leaf((3, 2)), 2.5)), Sample((leaf(()), -1.0), note="0-d")]


@samples("fill_tensor")
def _fill_tensor():
    return [Sample((leaf((3, 2)), leaf(()))), Sample((leaf((2,)), leaf(())), note="a vector")]


@samples("zero")
def _zero():
    return [Sample((leaf((3, 2)),)), Sample((leaf(()),), note="0-d")]


@samples("to_device")
def _to_device():
    return [Sample((leaf((3, 2)), device("cpu")))]


# -- indexing -------------------------------------------------------------------------------------------


@samples("select")
def _select():
    return [Sample((leaf((3, 2)), 0, 1)), Sample((leaf((2, 3, 2)), 1, 2))]


@samples("select_backward")
def _select_backward():
    return [Sample((leaf((2,)), (3, 2), 0, 1))]


@samples("slice")
def _slice():
    return [Sample((leaf((3, 2)), 0, 1, 3, 1)), Sample((leaf((2, 3, 2)), 1, 0, 3, 2))]


@samples("slice_backward")
def _slice_backward():
    return [Sample((leaf((2, 2)), (3, 2), 0, 1, 3, 1))]


@samples("index")
def _index():
    repeated = (np.array([0, 2, 2]),)
    return [
        Sample((leaf((4, 3)), repeated), note="repeated rows"),
        Sample((leaf((4, 3)), (np.array([0, 3]), np.array([1, 2]))), note="pairs"),
    ]


@samples("index_backward")
def _index_backward():
    return [Sample((leaf((3, 3)), (4, 3), (np.array([0, 2, 2]),)), note="repeated rows add up")]


@samples("index_put")
def _index_put():
    return [
        Sample((leaf((4, 3)), leaf((2, 3)), (np.array([0, 2]),)), note="rows"),
        Sample((leaf((4, 3)), leaf((3,)), (slice(1, 3),)), note="broadcast values"),
    ]


@samples("zero_region")
def _zero_region():
    return [Sample((leaf((3, 2)), (slice(0, 2),)))]


# -- reductions -----------------------------------------------------------------------------------------


@samples("sum", "mean")
def _full_reduction():
    return [Sample((leaf(s),)) for s in SHAPES]


@calls("sum")
def _sum_calls():
    return [call(leaf((3, 2)), dim=1), call(leaf((2, 3)), dim=(0, -1), keepdim=True)]


@calls("mean")
def _mean_calls():
    return [call(leaf((3, 2)), dim=-1)]


@samples("sum_dim", "mean_dim")
def _dim_reduction():
    return [
        Sample((leaf((3, 2)), (0,), False)),
        Sample((leaf((3, 2)), (1,), True)),
        Sample((leaf((2, 3, 2)), (0, 2), False)),
        Sample((leaf(()), (), False)),
    ]


@samples("prod")
def _prod():
    return [
        *(Sample((leaf(s, 0.5, 1.5),)) for s in SHAPES),
        Sample((leaf(values=[0.5, 0.0, 2.0, 1.5]),), note="one zero"),
        Sample((leaf(values=[0.0, 3.0, 0.0]),), note="two zeros"),
    ]


@calls("prod")
def _prod_calls():
    return [call(leaf((3, 2), 0.3, 2.0), dim=0)]


@samples("prod_dim")
def _prod_dim():
    return [
        Sample((leaf((3, 2), 0.5, 1.5), 0, False)),
        Sample((leaf((2, 3, 2), 0.5, 1.5), 1, True)),
        Sample((leaf(values=[[0.0, 2.0], [3.0, 0.0], [1.5, 0.0]]), 0, False), note="zeros"),
    ]


@samples("cumsum")
def _cumsum():
    return [
        Sample((leaf((4,)), 0)),
        Sample((leaf((3, 2)), 1)),
        Sample((leaf((2, 3, 2)), -2)),
        Sample((leaf(()), 0)),
    ]


@calls("cumsum")
def _cumsum_calls():
    return [call(leaf((3, 2)), dim=1), call(leaf((4,)), dim=-1)]


@samples("max", "min")
def _extreme():
    return [Sample((distinct(s),)) for s in SHAPES]


@calls("max")
def _max_calls():
    return [call(distinct((3, 2)), dim=1), call(distinct((3,)), distinct((3,)), note="binary")]


@calls("min")
def _min_calls():
    return [call(distinct((3, 2)), dim=0, keepdim=True)]


@samples("max_dim", "min_dim")
def _extreme_dim():
    return [Sample((distinct((3, 2)), 0, False)), Sample((distinct((2, 3, 2)), 1, True))]


@samples("logsumexp")
def _logsumexp():
    return [
        Sample((leaf((3, 2)), (0,), False)),
        Sample((leaf((2, 3, 2)), (0, 2), True)),
        Sample((leaf(()), (), False)),
    ]


@calls("logsumexp")
def _logsumexp_calls():
    return [call(leaf((3, 2)), dim=0), call(leaf((3,)), note="default dim")]


@samples("softmax", "log_softmax")
def _softmax():
    return [
        Sample((leaf((3, 2)), 0)),
        Sample((leaf((3, 2)), 1)),
        Sample((leaf((4,)), 0)),
        Sample((leaf(()), None), function=False, note="dim None: the op's, for a 0-d input"),
    ]


@calls("softmax")
def _softmax_calls():
    return [call(leaf((3, 2)), dim=1), call(leaf((4,)), note="default dim")]


@calls("log_softmax")
def _log_softmax_calls():
    return [call(leaf((2, 3)), dim=0)]


# -- linear algebra -------------------------------------------------------------------------------------


@samples("mm")
def _mm():
    return [Sample((leaf((2, 3)), leaf((3, 4))))]


@samples("mv")
def _mv():
    return [Sample((leaf((2, 3)), leaf((3,))))]


@samples("dot")
def _dot():
    return [Sample((leaf((3,)), leaf((3,))))]


@samples("bmm")
def _bmm():
    return [Sample((leaf((2, 2, 3)), leaf((2, 3, 2))))]


@samples("addmm")
def _addmm():
    return [Sample((leaf((4,)), leaf((2, 3)), leaf((3, 4)))), Sample((leaf((2, 4)), leaf((2, 3)), leaf((3, 4))))]


# -- losses (ops/loss.py) ----------------------------------------------------------------------------

REDUCTIONS = ("none", "mean", "sum")


@samples("mse_loss")
def _mse_loss():
    return [Sample((leaf(s), leaf(s), r)) for s, r in zip([(3, 2), (4,), ()], REDUCTIONS)]


@samples("binary_cross_entropy")
def _binary_cross_entropy():  # probabilities kept away from 0 and 1
    return [
        Sample((leaf((3, 2), 0.1, 0.9), leaf((3, 2), 0.0, 1.0), 1.0, r)) for r in REDUCTIONS
    ] + [Sample((leaf((2, 3), 0.1, 0.9), leaf((2, 3), 0.0, 1.0), autodiff.tensor([0.5, 1.0, 2.0]), "mean"))]


@samples("binary_cross_entropy_with_logits")
def _binary_cross_entropy_with_logits():
    weight, pos_weight = autodiff.tensor([[0.5], [2.0]]), autodiff.tensor([1.0, 3.0, 0.5])
    return [Sample((leaf((3, 2)), leaf((3, 2), 0.0, 1.0), 1.0, 1.0, r)) for r in REDUCTIONS] + [
        Sample((leaf((2, 3)), leaf((2, 3), 0.0, 1.0), weight, pos_weight, "mean")),
    ]


@samples("nll_loss")
def _nll_loss():
    target = autodiff.tensor([0, 2, 1, 2])
    weight = autodiff.tensor([0.5, 1.0, 2.0])
    return [Sample((leaf((4, 3)), target, 1.0, r, -100)) for r in REDUCTIONS] + [
        Sample((leaf((4, 3)), target, weight, "mean", 1), note="weight, ignore_index"),
        Sample((leaf((3,)), autodiff.tensor(1), 1.0, "mean", -100), note="one sample"),
    ]


@samples("nll_loss2d")
def _nll_loss2d():
    target = autodiff.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])
    return [Sample((leaf((2, 3, 2, 2)), target, 1.0, r, -100)) for r in REDUCTIONS]


@samples("div_scalar")
def _div_scalar():
    return [Sample((leaf(s), 4)) for s in [(), (3, 2)]]


# == public functions that are not registry ops ===========================================================
# Calls only (`autodiff.ops.FUNCTIONS[name]`): functions written by hand over the ops, comparisons
# and logic (no derivative), einsum, and tensor creation.


@calls("square", "detach", "isnan", "isinf", "isfinite", "logical_not", "all", "any")
def _function_of_one():
    return [call(leaf((3,)))]


@calls("eq", "lt", "gt", "logical_and", "logical_or")
def _function_of_two():
    return [call(leaf((3,)), leaf((3,)))]


@calls("isclose", "allclose")
def _closeness():
    x = leaf((3,))
    near = autodiff.tensor(x.detach().numpy() + np.array([0.0, 1e-9, 1e-3]))
    nan = autodiff.tensor([1.0, math.nan, math.inf])
    return [call(x, near), call(x, near, rtol=1e-2), call(x, near, atol=1e-2), call(nan, nan),
            call(nan, nan, equal_nan=True), call(leaf((2, 3)), leaf((3,)))]


@calls("ne", "le", "ge")
def _compared_to_a_number():
    return [call(leaf((3,)), 0.0)]


@calls("floor_divide")
def _floor_divide():
    return [call(leaf((3,), -8.0, 8.0), 2.0)]


@calls("argmax")
def _argmax():
    return [call(distinct((3, 2)), dim=1)]


@calls("argmin")
def _argmin():
    return [call(distinct((4,)))]


@calls("matmul")
def _matmul():
    return [
        call(leaf((2, 3)), leaf((3,))),
        call(leaf((3,)), leaf((3, 2))),
        call(leaf((3,)), leaf((3,))),
        call(leaf((2, 2, 3)), leaf((3, 2))),
    ]


@calls("einsum")
def _einsum():
    return [call("ij,j->i", leaf((2, 3)), leaf((3,)))]


@calls("reshape")
def _reshape():
    return [call(leaf((2, 3)), (3, 2)), call(leaf((6,)), (-1, 2))]


@calls("flatten")
def _flatten():
    return [call(leaf((2, 3, 2))), call(leaf((2, 3, 2)), 1)]


@calls("narrow")
def _narrow():
    return [call(leaf((4, 2)), 0, -3, 2)]


@calls("broadcast_shapes", "zeros", "ones", "full", "eye", "arange", "linspace", "rand", "randn")
def _sizes_only():  # they take sizes, not tensors: nothing to batch
    return []


# The creation functions "like" a tensor see a batch of examples as one tensor: under vmap,
# `zeros_like(x)` has the shape of the whole batch, not of one example.
LIKE_BUG = "zeros_like and the other *_like functions make the whole batch's shape"


@calls("zeros_like", "ones_like")
def _like():
    return [replace(call(leaf((3, 2))), batching_bug=LIKE_BUG)]


@calls("full_like")
def _full_like():
    return [replace(call(leaf((3,)), 1.5), batching_bug=LIKE_BUG)]


@calls("rand_like", "randn_like")
def _random_like():  # random: an example run alone draws other numbers
    return []


# Other names of the same functions (`FUNCTIONS[alias] is FUNCTIONS[name]`): checked as `name`.
ALIASES = {
    "absolute": "abs", "clip": "clamp", "concat": "cat", "concatenate": "cat", "divide": "div",
    "multiply": "mul", "negative": "neg", "subtract": "sub", "swapaxes": "transpose", "true_divide": "div",
}


# -- aliases of the elementwise functions
ALIASES.update({
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "fix": "trunc", "arctan2": "atan2",
})

# == torch.nn.functional's activations (ops/activation.py) ======================================
# Samples of the ops, which are also calls of autodiff.nn.functional's functions of the same names
# (tests/engine/test_torch_samples.py compares those with torch.nn.functional's).


def _off(values) -> autodiff.Tensor:
    return leaf(values=values)


@samples("silu", "mish", "logsigmoid")
def _smooth_activations():
    return [Sample((leaf(s, -3.0, 3.0),)) for s in SHAPES]


@samples("softplus")
def _softplus():
    return [Sample((leaf(s, -3.0, 3.0), 1.0, 20.0)) for s in SHAPES] + [
        Sample((_off([-1.5, 0.2, 0.8, 1.5]), 2.0, 1.0), note="beta, threshold: above it the identity"),
    ]


@samples("elu", "elu_inplace")
def _elu():
    return [Sample((away_from_zero(s), 1.0)) for s in SHAPES] + [Sample((away_from_zero((4,)), 0.5), note="alpha")]


@samples("leaky_relu", "leaky_relu_inplace")
def _leaky_relu():
    return [Sample((away_from_zero(s), 0.01)) for s in SHAPES] + [Sample((away_from_zero((4,)), 0.3))]


@samples("hardtanh")
def _hardtanh():
    return [Sample((_off([-1.6, -0.7, 0.3, 0.6, 1.4]), -1.0, 1.0)),
            Sample((_off([[-0.9, -0.2], [0.2, 0.7], [1.1, -0.8]]), -0.5, 0.5), note="min_val, max_val")]


@samples("gelu")
def _gelu():  # approximate is keyword-only in torch.nn.functional.gelu: the op's samples alone
    return [Sample((leaf(s, -3.0, 3.0), a), function=False) for s in SHAPES for a in ("none", "tanh")]


@calls("gelu")
def _gelu_calls():
    return [call(leaf((3, 2), -3.0, 3.0)), call(leaf((4,), -3.0, 3.0), approximate="tanh")]


@samples("gelu_backward")
def _gelu_backward():
    return [Sample((leaf(s), leaf(s, -3.0, 3.0), a)) for s in SHAPES[:3] for a in ("none", "tanh")]


# == rearranging values (ops/rearrange.py) ========================================================


@samples("roll")
def _roll():
    return [
        Sample((leaf((4,)), (1,), (0,))),
        Sample((leaf((3, 2)), (1, -1), (0, 1))),
        Sample((leaf((2, 3, 2)), (5,), (1,))),
        Sample((leaf((3, 2)), (2,), ()), note="no dims: the flattened tensor"),
    ]


@calls("roll")
def _roll_calls():
    return [call(leaf((3, 2)), 1), call(leaf((3, 2)), 1, -1), call(leaf((2, 3)), shifts=(1, 2), dims=(1, 0))]


@samples("repeat")
def _repeat():
    return [
        Sample((leaf((3,)), (2,))),
        Sample((leaf((3, 2)), (2, 1))),
        Sample((leaf((1, 2)), (2, 3, 1)), note="a new leading dim"),
        Sample((leaf(()), (3,))),
    ]


@calls("tile")
def _tile():
    return [call(leaf((3, 2)), (2,)), call(leaf((2,)), (2, 2))]


@calls("movedim")
def _movedim():
    return [call(leaf((2, 3, 2)), 0, -1), call(leaf((2, 3, 4)), (0, 1), (2, 0))]


@samples("tril", "triu")
def _triangles():
    return [Sample((leaf((3, 3)), 0)), Sample((leaf((3, 4)), -1)), Sample((leaf((2, 3, 2)), 1))]


@calls("tril", "triu")
def _triangle_calls():
    return [call(leaf((3, 3))), call(leaf((2, 3)), diagonal=1)]


@samples("diagonal")
def _diagonal():
    return [
        Sample((leaf((3, 3)), 0, 0, 1)),
        Sample((leaf((3, 4)), 1, 0, 1)),
        Sample((leaf((3, 4, 2)), -1, 2, 0)),
    ]


@calls("diagonal")
def _diagonal_calls():
    return [call(leaf((3, 3))), call(leaf((2, 3, 4)), offset=1, dim1=-1, dim2=1)]


@samples("diagonal_backward")
def _diagonal_backward():
    return [Sample((leaf((3,)), (3, 3), 0, 0, 1)), Sample((leaf((2, 2)), (3, 2, 4), 1, 2, 0))]


@samples("trace")
def _trace():
    return [Sample((leaf((3, 3)),)), Sample((leaf((2, 4)),))]


@calls("outer")
def _outer():
    return [call(leaf((3,)), leaf((2,))), call(leaf((1,)), leaf((4,)))]


ALIASES.update({"moveaxis": "movedim"})


@samples("masked_fill")
def _masked_fill():
    return [
        Sample((leaf((3,)), autodiff.tensor([True, False, True]), 2.0)),
        Sample((leaf((3, 2)), autodiff.tensor([False, True]), -1.5), note="a mask that broadcasts"),
        Sample((leaf((2,)), autodiff.tensor([[True, False], [False, False]]), 0.0), note="broadcast to the mask"),
    ]


# == statistics and running reductions (ops/statistics.py) ==========================================


@samples("var_correction", "std_correction")
def _spread():
    return [
        Sample((leaf((4,)), (0,), 1, False)),
        Sample((leaf((3, 2)), (0,), 0, True)),
        Sample((leaf((2, 3, 2)), (0, 2), 1, False)),
        Sample((leaf((3, 4)), (1,), 2, False), note="correction 2"),
        Sample((leaf((2, 3)), (0, 1), 0.5, False), note="a fractional correction"),
    ]


@calls("var", "std")
def _spread_calls():
    return [
        call(leaf((4,))),
        call(leaf((3, 2)), 1),
        call(leaf((3, 2)), dim=0, keepdim=True),
        call(leaf((2, 3, 2)), (0, -1), unbiased=False),
        call(leaf((3, 2)), False, note="var(input, unbiased)"),
        call(leaf((2, 3)), dim=1, correction=0),
        call(leaf((4, 2)), dim=None, correction=2, keepdim=True),
    ]


@samples("amax", "amin")
def _amax():  # no ties: finite differences would straddle the kink (the ties: test_torch_agreement.py)
    return [
        Sample((distinct((4,)), (0,), False)),
        Sample((distinct((3, 2)), (1,), True)),
        Sample((distinct((2, 3, 2)), (0, 2), False)),
        Sample((distinct(()), (), False)),
    ]


@calls("amax", "amin")
def _amax_calls():
    return [call(distinct((3, 2))), call(distinct((3, 2)), 0), call(distinct((2, 3, 2)), dim=(-1, 0), keepdim=True)]


@samples("cumprod")
def _cumprod():
    return [
        Sample((leaf((4,), 0.5, 1.5), 0)),
        Sample((leaf((3, 2)), 1)),
        Sample((leaf((2, 5, 2)), -2)),
        Sample((leaf(()), 0)),
        Sample((leaf(values=[1.5, 0.0, 2.0, -0.5, 1.2]), 0), note="one zero"),
        Sample((leaf(values=[[0.0, 2.0, 0.0, 1.5], [0.7, 0.0, 0.0, 3.0]]), 1), note="two zeros"),
    ]


@calls("cumprod")
def _cumprod_calls():
    return [call(leaf((3, 2)), dim=0), call(leaf((4,)), dim=-1)]


@samples("logcumsumexp")
def _logcumsumexp():
    return [
        Sample((leaf((4,)), 0)),
        Sample((leaf((3, 2)), 1)),
        Sample((leaf((2, 3, 2)), -2)),
        Sample((leaf(()), 0)),
        Sample((leaf(values=[-30.0, 0.5, 40.0, 39.0, -20.0]), 0), note="far apart"),
    ]


@calls("logcumsumexp")
def _logcumsumexp_calls():
    return [call(leaf((3, 2)), dim=0)]


def _distinct_sizes(shape) -> autodiff.Tensor:
    """Values whose sizes |x| differ (no ties for the inf-norms) and stay off 0."""
    size = int(np.prod(shape))
    magnitudes = _rng.permutation(np.linspace(0.3, 2.0, max(size, 1)))[:size]
    signs = np.where(_rng.uniform(size=size) < 0.5, -1.0, 1.0)
    return autodiff.tensor((magnitudes * signs).reshape(shape), requires_grad=True)


@samples("norm")
def _norm():
    return [
        *(Sample((_distinct_sizes(s), p, d, k), note=f"p={p} dims={d}") for s, d, k in
          [((4,), (0,), False), ((3, 2), (1,), True), ((2, 3, 2), (0, 2), False), ((), (), False)]
          for p in (2.0, 1.0, 3.0, 1.5, 0.5, -1.0, math.inf, -math.inf, 0.0)),
    ]


@calls("norm")
def _norm_calls():
    return [
        call(_distinct_sizes((3, 2))),
        call(_distinct_sizes((3, 2)), 1),
        call(_distinct_sizes((3, 2)), dim=0),
        call(_distinct_sizes((2, 3)), p=math.inf, dim=1, keepdim=True),
        call(_distinct_sizes((2, 3, 2)), "fro", (0, 1)),
        call(_distinct_sizes((3,)), 3),
        call(_distinct_sizes((3, 2)), "nuc", note="the nuclear norm (linalg.matrix_norm)"),
        call(_distinct_sizes((2, 3, 2)), "nuc", (2, 0), True),
    ]


# == one tensor into many (ops/pieces.py) ==================================================


@samples("unbind")
def _unbind():  # the op: one piece (dim, index); the function: every piece
    return [Sample((leaf((3, 2)), 0, 1), function=False), Sample((leaf((2, 3, 2)), 2, 0), function=False)]


@calls("unbind")
def _unbind_calls():
    return [call(leaf((3, 2))), call(leaf((2, 3, 2)), 1), call(leaf((3, 2)), dim=-1), call(leaf((4,)))]


@samples("split", "split_with_sizes")
def _split():  # the op: the piece [start, stop) along dim
    return [Sample((leaf((5, 2)), 0, 2, 4), function=False), Sample((leaf((2, 3, 2)), 1, 0, 1), function=False)]


@calls("split")
def _split_calls():
    return [
        call(leaf((5, 2)), 2, note="the last piece shorter"),
        call(leaf((4, 3)), [1, 3]),
        call(leaf((2, 5)), (2, 0, 3), dim=1, note="an empty piece"),
        call(leaf((2, 3, 2)), 1, -1),
        call(leaf((3,)), 5, note="one piece, all of it"),
    ]


@calls("chunk")
def _chunk_calls():
    return [
        call(leaf((5, 2)), 2, note="the last piece shorter"),
        call(leaf((6,)), 3),
        call(leaf((5, 2)), 4, note="fewer pieces than asked"),
        call(leaf((2, 3, 2)), 2, dim=-1),
    ]


# == picking and placing by index tensors (ops/gathering.py) =================================
# The ops take their index as an int64 array; the functions, as PyTorch, an int64 tensor.


def _ix(values) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _long(values) -> autodiff.Tensor:
    return autodiff.tensor(_ix(values))


_GATHERS = [  # (input shape, dim, index): repeated places, a smaller index, every dim
    ((3, 2), 0, [[2, 0], [1, 1]]),
    ((3, 2), 1, [[1], [0], [1]]),
    ((2, 3, 2), 2, [[[1, 0], [0, 0], [1, 1]], [[0, 1], [1, 0], [0, 0]]]),
    ((2, 3, 2), -2, [[[2, 0]], [[1, 1]]]),
    ((4,), 0, [3, 3, 0]),
]
# Scatters put each value at a place of its own (where two land on one place, PyTorch leaves which one wins open).
_SCATTERS = [
    ((3, 2), 0, [[2, 0], [0, 1]]),
    ((3, 2), 1, [[1], [0], [1]]),
    ((2, 3, 2), 1, [[[2, 0], [0, 1]], [[1, 1], [2, 0]]]),
    ((4,), 0, [3, 0]),
]


@samples("gather")
def _gather():
    return [Sample((leaf(s), d, _ix(i)), function=False) for s, d, i in _GATHERS]


@calls("gather")
def _gather_calls():
    return [call(leaf(s), d, _long(i)) for s, d, i in _GATHERS] + [call(leaf((3, 2)), dim=1, index=_long([[0, 0]]))]


@samples("scatter_add")
def _scatter_add():  # repeated places add up
    return [Sample((leaf(s), d, _ix(i), leaf(np.shape(i))), function=False) for s, d, i in _GATHERS]


@calls("scatter_add")
def _scatter_add_calls():
    return [call(leaf(s), d, _long(i), leaf(np.shape(i))) for s, d, i in _GATHERS]


@samples("scatter")
def _scatter():
    return [Sample((leaf(s), d, _ix(i), leaf(np.shape(i))), function=False) for s, d, i in _SCATTERS]


@calls("scatter")
def _scatter_calls():
    return [call(leaf(s), d, _long(i), leaf(np.shape(i))) for s, d, i in _SCATTERS] + [
        call(leaf((3, 2)), 1, _long([[1], [0], [1]]), 2.5, note="a number for src (ScatterBackward1)")]


@samples("scatter_value")
def _scatter_value():
    return [Sample((leaf(s), d, _ix(i), 2.5)) for s, d, i in _SCATTERS]


_SELECTS = [((3, 2), 0, [2, 0, 2]), ((2, 3, 2), 1, [1]), ((2, 3, 2), -1, [1, 0, 1, 1]), ((4,), 0, [])]


@samples("index_select")
def _index_select():
    return [Sample((leaf(s), d % len(s), _ix(i)), function=False) for s, d, i in _SELECTS]


@calls("index_select")
def _index_select_calls():
    return [call(leaf(s), d, _long(i)) for s, d, i in _SELECTS]


# == ordering (ops/ordering.py) ====================================================

# The ops are the input gathered at indices the functions find: their samples give the indices (int64
# arrays) that the function would; values are distinct, so that finite differences keep the order.


def _found(find, x, *args) -> np.ndarray:
    """The indices `find` (autodiff.argsort...) gives for x's values, as the op takes them."""
    return np.asarray(find(x.detach(), *args).numpy(), dtype=np.int64)


def _tied(shape) -> autodiff.Tensor:
    """Values with many ties (and a nan-free spread), for the functions' choice among equal values."""
    return autodiff.tensor(_rng.integers(0, 3, size=shape) / 2.0, requires_grad=True)


def _kept_indices(function, x, dim, *args) -> np.ndarray:
    return _found(lambda t, *a: function(t, *a, dim=dim, keepdim=True).indices, x, *args)


@samples("sort_values", "sort_values_stable")
def _sort_values():
    cases = [((3, 2), 0, False), ((2, 3, 2), 1, True), ((4,), 0, True), ((), 0, False)]
    out = []
    for shape, dim, descending in cases:
        x = distinct(shape)
        out.append(Sample((x, dim, _found(autodiff.argsort, x, dim, descending)), function=False))
    return out


@samples("topk_values")
def _topk_values():
    out = []
    for shape, k, dim in [((3, 2), 2, 0), ((2, 3, 2), 1, 1), ((5,), 3, 0), ((), 1, 0)]:
        x = distinct(shape)
        out.append(Sample((x, dim, _found(lambda t: autodiff.topk(t, k, dim).indices, x)), function=False))
    return out


@samples("cummax_values", "cummin_values")
def _running_values():
    out = []
    for shape, dim in [((4,), 0), ((3, 2), 0), ((2, 3, 2), 1), ((), 0)]:
        x = distinct(shape)
        out.append(Sample((x, dim, _found(lambda t: autodiff.cummax(t, dim).indices, x)), function=False))
    return out


@samples("median_dim")
def _median_dim():
    out = []
    for shape, dim, keepdim in [((3, 2), 0, False), ((2, 4, 2), 1, True), ((5,), 0, False), ((), 0, True)]:
        x = distinct(shape)
        out.append(Sample((x, dim, _kept_indices(autodiff.median, x, dim), keepdim), function=False))
    return out


@samples("kthvalue_values")
def _kthvalue_values():
    out = []
    for shape, k, dim, keepdim in [((3, 2), 2, 0, False), ((2, 4, 2), 3, 1, True), ((5,), 1, 0, False)]:
        x = distinct(shape)
        out.append(Sample((x, dim, _kept_indices(autodiff.kthvalue, x, dim, k), keepdim), function=False))
    return out


@samples("median")
def _median():
    return [Sample((distinct(s),)) for s in SHAPES] + [Sample((distinct((4,)),), note="an even count: the lower")]


@calls("median")
def _median_calls():
    return [
        call(distinct((3, 2)), 0), call(distinct((2, 4, 2)), 1, True), call(distinct((4,)), dim=-1),
        call(_tied((3, 5)), 1, note="ties: the one a stable sort puts in the middle"),
        call(_tied((4, 3)), note="ties share the gradient"), call(distinct(()), 0),
    ]


@calls("sort")
def _sort_calls():
    return [
        call(distinct((3, 2))), call(distinct((2, 3, 2)), 1, True), call(distinct(())),
        call(distinct((4,)), dim=0, descending=True, stable=True, note="SortBackward1"),
        call(_tied((3, 6)), note="ties keep their order"), call(_tied((5, 2)), 0, True, note="and descending"),
    ]


@calls("argsort")
def _argsort_calls():
    return [call(distinct((3, 2))), call(distinct((3, 2)), 0, True), call(_tied((2, 7)), stable=True)]


@calls("msort")
def _msort_calls():
    return [call(distinct((3, 2))), call(distinct((4,))), call(_tied((5, 2)))]


@calls("topk")
def _topk_calls():
    return [
        call(distinct((3, 4)), 2), call(distinct((2, 3, 2)), 1, 1, False), call(distinct((5,)), 3, largest=False),
        call(distinct((3, 2)), 0, dim=0, note="k = 0"), call(distinct(()), 1),
    ]


@calls("cummax", "cummin")
def _running_calls():
    return [
        call(distinct((3, 2)), 0), call(distinct((2, 3, 2)), dim=-1), call(distinct(()), 0),
        call(_tied((3, 6)), 1, note="ties: the latest"),
    ]


@calls("kthvalue")
def _kthvalue_calls():
    return [
        call(distinct((3, 4)), 2), call(distinct((2, 3, 2)), 1, 0, True), call(distinct(()), 1),
        call(_tied((4, 7)), 3, note="ties: PyTorch's quickselect decides"), call(_tied((6, 2)), 2, dim=0),
    ]


# == vectors into matrices and back, kron, cross (ops/matrices.py) ========================================


@samples("diag_embed")
def _diag_embed():
    return [Sample((leaf((3,)), 0, 0, 1)), Sample((leaf((2, 3)), 1, 0, 2)), Sample((leaf((2, 3)), -1, 2, 0))]


@calls("diag_embed")
def _diag_embed_calls():
    return [call(leaf((2, 3))), call(leaf((3,)), 1, dim1=-1, dim2=0)]


@samples("diagonal_copy")
def _diagonal_copy():
    return [Sample((leaf((3, 3)), 0, 0, 1)), Sample((leaf((3, 4)), 1, 0, 1)), Sample((leaf((3, 4)), -2, 0, 1))]


@calls("diag")
def _diag_calls():
    return [
        call(leaf((3,))), call(leaf((3,)), 1), call(leaf((2,)), diagonal=-2),
        call(leaf((3, 4))), call(leaf((3, 4)), -1), call(leaf((2, 2)), 3, note="past the corner: empty"),
    ]


@calls("kron")
def _kron_calls():
    return [
        call(leaf((2, 3)), leaf((4,))), call(leaf((2,)), leaf((2, 1, 3))), call(leaf(()), leaf((3,))),
        call(leaf((2, 2)), leaf((2, 2))),
    ]


@samples("cross")
def _cross():
    return [
        Sample((leaf((3,)), leaf((3,)), 0)),
        Sample((leaf((3, 2)), leaf((3, 1)), 0), note="broadcast"),
        Sample((leaf((4, 3)), leaf((1, 3)), 1)),
        Sample((leaf((2, 3, 3)), leaf((2, 3, 3)), 2)),
    ]


@calls("cross")
def _cross_calls():
    return [call(leaf((4, 3)), leaf((4, 3)), note="no dim: the first of size 3"), call(leaf((3, 2)), leaf((3, 2)), dim=-2)]


# -- linear algebra (ops/decompositions.py, ops/spectral.py, autodiff.linalg) ------------------
# Fixed, well-conditioned matrices (distinct singular values and eigenvalues), so that every
# draw is the same and no gradient divides by a gap near zero. The functions of autodiff.linalg
# have entries under the language's names, `linalg_<name>` (LINALG).

LINALG = {f"linalg_{name}": function for name, function in autodiff.linalg.FUNCTIONS.items()}

_SQUARE2 = [[1.2, -0.4], [0.7, 0.9]]
_SQUARE3 = [[1.1, 0.3, -0.5], [0.2, 0.9, 0.4], [-0.6, 0.1, 1.3]]
_BATCH2 = [_SQUARE2, [[0.5, 0.8], [-0.3, 1.4]]]
_NEGATIVE2 = [[0.4, 1.2], [0.9, -0.3]]  # det < 0
_SINGULAR2 = [[1.0, 2.0], [2.0, 4.0]]
_TALL = [[1.0, -0.5], [0.3, 0.8], [-0.6, 0.4]]
_WIDE = np.array(_TALL).T.tolist()
_SPD2 = [[1.5, -0.3], [-0.3, 0.8]]
_SPD3 = [[2.0, 0.3, -0.4], [0.3, 1.5, 0.2], [-0.4, 0.2, 1.1]]
_SPD_BATCH = [_SPD2, [[0.9, 0.4], [0.4, 2.1]]]
_SYMMETRIC2 = [[0.4, 1.1], [1.1, -0.7]]  # indefinite


def matrix(values) -> autodiff.Tensor:
    return leaf(values=values)


def symmetric(A):
    """PyTorch's gradcheck_wrapper_hermitian_input: cholesky and eigh read one triangle, so the
    gradient is checked along symmetric directions."""
    return (A + A.mT) / 2


@samples("linalg_det", "linalg_inv", "linalg_matrix_exp")
def _square_matrices():
    return [Sample((matrix(m),)) for m in (_SQUARE2, _SQUARE3, _BATCH2, _NEGATIVE2)]


@calls("linalg_det", "det")
def _det_singular():  # PyTorch's formula there: the adjugate through the SVD (compared with PyTorch's,
    # first and second order; finite differences of the second are not accurate beside a singular matrix)
    return [call(matrix(_SINGULAR2), note="singular"), call(matrix([_SINGULAR2, _SQUARE2]), note="one singular")]


@calls("det", "inverse", "matrix_exp", "slogdet")
def _square_calls():
    return [call(matrix(m)) for m in (_SQUARE2, _BATCH2)]


@samples("linalg_slogdet_sign", "linalg_slogdet_logabsdet")
def _slogdet():
    return [Sample((matrix(m),)) for m in (_SQUARE2, _SQUARE3, _BATCH2, _NEGATIVE2)]


@calls("logdet")
def _logdet_calls():  # nan where det < 0
    return [call(matrix(m)) for m in (_SQUARE2, _SPD3, _BATCH2, _NEGATIVE2)]


@samples("linalg_solve")
def _solve():
    return [Sample((matrix(_SQUARE2), leaf(values=[0.3, -1.2]), True), function=False),
            Sample((matrix(_SQUARE3), leaf(values=[[0.3, -1.2], [0.5, 0.1], [-0.7, 0.9]]), True), function=False),
            Sample((matrix(_BATCH2), leaf(values=[0.3, -1.2]), True), function=False, note="B broadcast"),
            Sample((matrix(_SQUARE2), leaf(values=[[0.3, -1.2], [0.5, 0.1], [-0.7, 0.9]]), False), function=False,
                   note="left=False")]


@calls("linalg_solve")
def _solve_calls():
    return [call(matrix(_SQUARE2), leaf(values=[0.3, -1.2])),
            call(matrix(_BATCH2), leaf(values=[[0.3, -1.2], [0.5, 0.1]])),  # a batch of vectors
            call(matrix(_SQUARE2), leaf(values=[[0.3, -1.2], [0.5, 0.1], [-0.7, 0.9]]), left=False)]


def _cholesky(function: bool):
    return [Sample((matrix(m), upper), wrap=symmetric, function=function) for m in (_SPD2, _SPD3, _SPD_BATCH)
            for upper in (False, True)]


samples("cholesky")(lambda: _cholesky(True))  # torch.cholesky(input, upper)
samples("linalg_cholesky")(lambda: _cholesky(False))  # upper is keyword-only in linalg.cholesky


@calls("linalg_cholesky")
def _cholesky_calls():
    return [call(matrix(_SPD3)), call(matrix(_SPD_BATCH), upper=True)]


@samples("linalg_eigvalsh", "linalg_eigh_eigenvectors")
def _eigh():
    return [Sample((matrix(m),), wrap=symmetric) for m in (_SPD2, _SPD3, _SPD_BATCH, _SYMMETRIC2)]


@calls("linalg_eigh")
def _eigh_calls():
    return [call(matrix(_SPD3)), call(matrix(_SYMMETRIC2), UPLO="U")]


@samples("linalg_svdvals")
def _svdvals():
    return [Sample((matrix(m),)) for m in (_SQUARE2, _SQUARE3, _TALL, _WIDE, _BATCH2)]


@samples("linalg_svd_u", "linalg_svd_vh")
def _singular_vectors():  # full_matrices=True only where it adds no vectors: theirs have no gradient
    return [Sample((matrix(_SQUARE2), True)), Sample((matrix(_SQUARE3), False)), Sample((matrix(_TALL), False)),
            Sample((matrix(_WIDE), False)), Sample((matrix(_BATCH2), True))]


@calls("linalg_svd")
def _svd_calls():
    return [call(matrix(_SQUARE3)), call(matrix(_TALL), full_matrices=False), call(matrix(_WIDE), False)]


@calls("svd")
def _torch_svd_calls():
    return [call(matrix(_SQUARE3)), call(matrix(_TALL)), call(matrix(_WIDE), compute_uv=False)]


@samples("linalg_qr_q", "linalg_qr_r")
def _qr():
    return [Sample((matrix(m), "reduced")) for m in (_SQUARE2, _SQUARE3, _TALL, _WIDE, _BATCH2)]


@calls("linalg_qr", "qr")
def _qr_calls():
    return [call(matrix(_SQUARE3)), call(matrix(_TALL)), call(matrix(_WIDE))]


@samples("linalg_pinv")
def _pinv():
    return [Sample((matrix(m), None, None, False), function=False) for m in (_SQUARE2, _TALL, _WIDE, _BATCH2)] + [
        Sample((matrix(_SYMMETRIC2), None, None, True), function=False, wrap=symmetric, note="hermitian")]


@calls("linalg_pinv")
def _pinv_calls():
    return [call(matrix(_TALL)), call(matrix(_SINGULAR2), atol=0.5), call(matrix(_SYMMETRIC2), hermitian=True)]


@calls("pinverse")
def _pinverse_calls():
    return [call(matrix(_WIDE)), call(matrix(_SQUARE2), 1e-3)]


@calls("linalg_eigvalsh", "linalg_svdvals", "linalg_det", "linalg_inv", "linalg_matrix_exp", "linalg_slogdet")
def _linalg_square_calls():
    return [call(matrix(_SPD3))]


@calls("linalg_matrix_norm")
def _matrix_norm_calls():
    return [call(matrix(_TALL)), call(matrix(_TALL), "nuc"), call(matrix(_WIDE), 2), call(matrix(_BATCH2), -2),
            call(matrix(_TALL), 1, keepdim=True), call(matrix(_TALL), -1), call(matrix(_WIDE), float("inf")),
            call(matrix(_TALL), -float("inf"), (1, 0)), call(matrix(_BATCH2), "nuc", (0, 2), True)]


@calls("linalg_norm")
def _linalg_norm_calls():
    return [call(matrix(_TALL)), call(matrix(_TALL), "nuc"), call(matrix(_WIDE), 2), call(leaf(values=[1.0, -2.0, 0.5]), 3),
            call(matrix(_BATCH2), dim=(1, 2)), call(matrix(_BATCH2), float("inf"), dim=(1, 2))]


@calls("linalg_vector_norm")
def _vector_norm_calls():
    return [call(matrix(_TALL)), call(matrix(_TALL), 1, dim=1), call(matrix(_BATCH2), float("inf"), (0, 2), True)]


@calls("linalg_matmul")
def _linalg_matmul_calls():
    return [call(matrix(_SQUARE2), matrix(_WIDE))]

"""Sample inputs for every registered op, in the spirit of PyTorch's OpInfo.

`SAMPLES[name]()` returns Samples for the op `name` of the registry. A test fails if an op
has none, so declaring an op and giving it samples here is all it takes for it to be
gradient-checked (first and second order).

Shapes follow TESTING.md: (), (2,), (3,2), (1,2), (2,3,2), and broadcasting pairs
((2,1),(2,)) and ((3,1,2),(1,3,2)). Domains keep finite differences away from poles and kinks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import autodiff
from autodiff.backend import device

SHAPES = [(), (2,), (3, 2), (1, 2), (2, 3, 2)]
BROADCAST_PAIRS = [((3, 2), (3, 2)), ((2, 1), (2,)), ((3, 1, 2), (1, 3, 2)), ((), (3,)), ((3, 2), ())]


@dataclass
class Sample:
    """Positional arguments for `op.apply`; the tensors among them are what gets checked."""

    args: tuple
    note: str = ""
    check: dict = field(default_factory=dict)  # extra gradcheck keywords (tolerances)

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

        return Sample(tuple(move(a) for a in self.args), self.note, self.check)

    def __repr__(self) -> str:
        shapes = [tuple(a.shape) if isinstance(a, autodiff.Tensor) else a for a in self.args]
        return f"Sample({self.note or shapes})"


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


SAMPLES: dict = {}


def samples(*names):
    def register(generator):
        for name in names:
            SAMPLES[name] = generator
        return generator

    return register


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


@samples("div")
def _div():
    return [Sample((leaf(a), away_from_zero(b, 0.5, 2.0))) for a, b in BROADCAST_PAIRS]


@samples("rsub")
def _rsub():
    return [Sample((leaf(s), 10.0)) for s in SHAPES[:3]]


@samples("pow")
def _pow():
    return [Sample((leaf(s, 0.5, 2.0), e), note=f"{s} ** {e}") for s in SHAPES[:3] for e in (2, 3, 0.5, -1.5, 0)]


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


# -- shapes -------------------------------------------------------------------------------------------


@samples("expand")
def _expand():
    return [Sample((leaf((3, 1)), (2, 3, 4))), Sample((leaf(()), (2,))), Sample((leaf((2,)), (3, 2)))]


@samples("sum_to")
def _sum_to():
    return [Sample((leaf((2, 3, 4)), (3, 1))), Sample((leaf((3, 2)), ())), Sample((leaf((2, 3)), (1, 3)))]


@samples("t")
def _t():
    return [Sample((leaf(s),)) for s in [(3, 2), (2,), ()]]


@samples("transpose")
def _transpose():
    return [Sample((leaf((2, 3, 2)), 0, 2)), Sample((leaf((3, 2)), 0, 1))]


@samples("permute")
def _permute():
    return [Sample((leaf((2, 3, 2)), (2, 0, 1))), Sample((leaf((3, 2)), (1, 0)))]


@samples("view", "unsafe_view", "reshape_alias")
def _view():
    return [Sample((leaf((3, 2)), (6,))), Sample((leaf((2, 3, 2)), (3, 4))), Sample((leaf(()), (1,)))]


@samples("unsqueeze")
def _unsqueeze():
    return [Sample((leaf((3, 2)), 1)), Sample((leaf(()), 0))]


@samples("squeeze")
def _squeeze():
    return [Sample((leaf((1, 3, 1)),)), Sample((leaf((3, 2)),))]


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


@samples("stack")
def _stack():
    return [Sample(([leaf((2,)), leaf((2,))], 0)), Sample(([leaf((3, 2)), leaf((3, 2)), leaf((3, 2))], 1))]


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


@samples("max", "min")
def _extreme():
    return [Sample((distinct(s),)) for s in SHAPES]


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


@samples("softmax", "log_softmax")
def _softmax():
    return [Sample((leaf((3, 2)), 0)), Sample((leaf((3, 2)), 1)), Sample((leaf((4,)), 0)), Sample((leaf(()), None))]


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

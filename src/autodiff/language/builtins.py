"""What a name means before a program assigns it: the engine's functions, and a few words.

Every function in the engine's catalogue (`autodiff.ops.FUNCTIONS`) is callable by its name (its
module loads on the first call: ops/catalogue.py);
calls are bound to the function's own signature, so nothing here is written per function.
NumPy's spellings `axis` and `keepdims` are accepted for `dim` and `keepdim`; `max(x, dim=1)`
gives the values (the engine also returns the indices), and `max(x, 1)` is refused as
ambiguous (Python's max, or PyTorch's reduction?). The method `x.max(1)` has one meaning, the
reduction, and gives PyTorch's `(values, indices)` pair.
"""

from __future__ import annotations

import functools
import inspect
import math
from functools import lru_cache

from .. import Tensor, creation, ops, return_types
from ..autograd import enable_grad, no_grad
from ..ops.catalogue import LazyTable
from . import ast

CONSTANTS = {"pi": math.pi, "inf": math.inf, "nan": math.nan}
KEYWORD_ALIASES = {"axis": "dim", "keepdims": "keepdim"}  # NumPy's names for the same arguments


class GradModeWord:
    """`no_grad` or `enable_grad`, for `with no_grad:` blocks."""

    def __init__(self, name: str, context) -> None:
        self.name = name
        self.context = context

    def __call__(self):
        return self

    def __repr__(self) -> str:
        return self.name


class RangeWord:
    """`range(stop)`, `range(start, stop[, step])` for `for` loops."""

    name = "range"

    def __call__(self, *args):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range expected 1 to 3 arguments, got {len(args)}")
        bounds = []
        for value in args:
            if isinstance(value, Tensor):
                if value.numel() != 1:
                    raise TypeError("range() arguments must be integers")
                value = value.item()
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"range() arguments must be integers, not {type(value).__name__}")
            bounds.append(value)
        return range(*bounds)


WORDS = {
    "range": RangeWord(),
    "no_grad": GradModeWord("no_grad", no_grad),
    "enable_grad": GradModeWord("enable_grad", enable_grad),
}


# -- torch.nn.functional's losses, activations and linear, by name, with PyTorch's arguments --------
# The language has no strings: `reduction` is written as a word, `mse_loss(x, y, reduction=sum)`,
# and so is gelu's `approximate`: `gelu(x, approximate=tanh)`.
REDUCTION_WORDS = ("mean", "sum", "none")
APPROXIMATE_WORDS = ("none", "tanh")


def reduction_word(call, keyword, defined) -> str | None:
    """'sum' for `reduction=sum` in a call of a loss, 'tanh' for `approximate=tanh` in a call of
    gelu (not one of the program's own functions, `defined`); None for any other keyword argument."""
    value = keyword.value
    if type(value) is not ast.Name:
        return None
    words, functions = WORD_ARGUMENTS.get(keyword.name, ((), ()))
    if value.id not in words:
        return None
    func = call.func
    name = func.id if type(func) is ast.Name else func.name if type(func) is ast.Attribute else None
    return value.id if name in functions and name not in defined else None


def _class_indices(target):
    """Class indices as PyTorch wants them, int64: every number of the language is a float."""
    if not isinstance(target, Tensor) or not target.dtype.is_floating_point:
        return target
    data = target.detach()
    if not bool((data == data.floor()).all()):
        raise ValueError("class indices must be whole numbers (a target of the input's shape holds probabilities)")
    return data.long()


# Functions whose `index` argument is an int64 tensor in PyTorch: a program's numbers
# are floats, so whole ones are taken as the indices they spell.
TAKING_INDICES = {"gather", "scatter", "scatter_add", "index_select"}


def _whole_indices(name: str, index):
    """`index` as int64: a float tensor (or number) of whole numbers; others refused, said plainly."""
    if isinstance(index, bool) or not isinstance(index, (int, float, Tensor)):
        return index
    if not isinstance(index, Tensor):
        index = creation.tensor(float(index))
    if not index.dtype.is_floating_point:
        return index
    data = index.detach()
    if not bool((data == data.floor()).all()):
        raise ValueError(f"the index must be whole numbers (positions), got {data.tolist()}")
    return data.long()


def _taking_class_indices(loss, always: bool):
    """`loss` with a target of class indices made int64: always (nll_loss), or where the target's
    shape differs from the input's (cross_entropy; the same shape holds probabilities)."""

    @functools.wraps(loss)
    def with_indices(input, target, *args, **kwargs):
        if always or isinstance(target, Tensor) and isinstance(input, Tensor) and target.shape != input.shape:
            target = _class_indices(target)
        return loss(input, target, *args, **kwargs)

    return with_indices


def _nn_functional():
    from ..nn import functional  # with the losses' and activations' op modules: loaded on first use

    return functional


def _loss(name: str):
    loss = getattr(_nn_functional(), name)
    if name in ("nll_loss", "cross_entropy"):
        return _taking_class_indices(loss, always=name == "nll_loss")
    return loss


# The language's functions load their modules on first use (ops/catalogue.py): the names are known
# here without them (tests/engine/test_catalogue.py holds these lists to nn.functional's and linalg's).
LOSSES = LazyTable(("mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
                    "cross_entropy"), _loss)


def size(input, dim=None):
    """The size of `input` along `dim`, a number (all its sizes when `dim` is None): what derive's
    programs bind their named sizes to, `n = size(x, 0)`."""
    if not isinstance(input, Tensor):
        raise TypeError(f"size() takes a tensor, not {type(input).__name__}")
    if dim is None:
        return tuple(input.shape)
    if isinstance(dim, float) and dim.is_integer():
        dim = int(dim)
    return input.size(dim)


WORDS["size"] = size
ACTIVATIONS = LazyTable(("softplus", "elu", "gelu", "silu", "mish", "leaky_relu", "hardtanh", "logsigmoid"),
                        lambda name: getattr(_nn_functional(), name))
# torch.linalg's functions, by ATen's names for them (the language has no dotted names): linalg_det(A)
# is torch.linalg.det(A); its string arguments are words, as reduction's: linalg_qr(A, mode=complete).
LINALG_NAMES = ("det", "slogdet", "inv", "solve", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv",
                "matrix_exp", "matrix_norm", "vector_norm", "norm", "matmul")


def _linalg(name: str):
    from .. import linalg

    return linalg.FUNCTIONS[name.removeprefix("linalg_")]


LINALG = LazyTable([f"linalg_{name}" for name in LINALG_NAMES], _linalg)


def _function(name: str):
    for table in (LOSSES, ACTIVATIONS, LINALG):
        if name in table:
            return table[name]
    return _nn_functional().linear if name == "linear" else ops.FUNCTIONS[name]


FUNCTIONS = LazyTable([*ops.FUNCTIONS, *LOSSES, "linear", *ACTIVATIONS, *LINALG], _function)
WORD_ARGUMENTS = {"reduction": (REDUCTION_WORDS, LOSSES), "approximate": (APPROXIMATE_WORDS, ("gelu",)),
                  "mode": (("reduced", "complete", "r"), ("linalg_qr",)),
                  "UPLO": (("L", "U"), ("linalg_eigh", "linalg_eigvalsh")),
                  "ord": (("fro", "nuc"), ("linalg_matrix_norm", "linalg_norm"))}

KNOWN_NAMES = sorted(set(FUNCTIONS) | set(WORDS) | set(CONSTANTS))


def suggestion(name: str, candidates) -> str:
    """"; did you mean 'log'?" when a close match exists."""
    import difflib  # only when a name is wrong: not part of every start

    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


@lru_cache(maxsize=None)
def signature(function) -> inspect.Signature | None:
    try:
        return inspect.signature(function)
    except (TypeError, ValueError):
        return None


def signature_text(name: str, function) -> str:
    """`sum(input, dim=None, keepdim=False)`: how a function is called."""
    sig = signature(function)
    if sig is None:
        return f"{name}(...)"
    parts = []
    star_shown = False
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and not star_shown:
            parts.append("*")
        if p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL):
            star_shown = True
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        elif p.default is p.empty:
            parts.append(p.name)
        else:
            parts.append(f"{p.name}={p.default!r}")
    return f"{name}({', '.join(parts)})"


# Python's max(x, 0) is the larger value; PyTorch's reduces over dim 0. A number in that place
# is refused with both spellings rather than read one way.
AMBIGUOUS_WITH_A_NUMBER = {"max": ("maximum", "larger"), "min": ("minimum", "smaller")}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class CallProblem(Exception):
    """The arguments do not fit the function's signature."""


def call(name: str, function, args: list, kwargs: dict, make_tensor, device=None, method: bool = False):
    """Call an engine function with a program's arguments.

    `make_tensor(number)` turns a number given for the tensor argument (`input`) into a tensor,
    so that `exp(2)` works as it reads; functions that create tensors get `device`. `method`:
    called as `x.name(...)`, which means what the Tensor method means in PyTorch.
    """
    if not method and name in AMBIGUOUS_WITH_A_NUMBER and len(args) >= 2 and _is_number(args[1]):
        pairwise, which = AMBIGUOUS_WITH_A_NUMBER[name]
        n = args[1]
        dim = int(n) if float(n).is_integer() else n
        raise CallProblem(f"{name}(input, {n!r}) is ambiguous: write {pairwise}(input, {n!r}) for the {which} "
                          f"of the two, or {name}(input, dim={dim!r}) to reduce along dimension {dim!r}")
    sig = signature(function)
    if sig is not None:
        parameters = sig.parameters
        for alias, real in KEYWORD_ALIASES.items():
            if alias in kwargs and alias not in parameters and real in parameters:
                if real in kwargs:
                    raise CallProblem(f"both {alias}= and {real}= given")
                kwargs[real] = kwargs.pop(alias)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise CallProblem(_arity_message(name, sig, args, str(exc))) from None
        if device is not None and "device" in parameters and "device" not in bound.arguments:
            bound.arguments["device"] = device
        if "input" in bound.arguments:
            value = bound.arguments["input"]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                bound.arguments["input"] = make_tensor(value)
            elif isinstance(value, return_types.PAIRS):  # x.max(0), sort(x) passed on whole
                raise TypeError(f"expected a tensor, got the (values, indices) pair of {type(value).__name__}(): "
                                "take its .values")
            elif not isinstance(value, Tensor):
                raise TypeError(f"expected a tensor, got {type(value).__name__}")
        if name in TAKING_INDICES and "index" in bound.arguments:
            bound.arguments["index"] = _whole_indices(name, bound.arguments["index"])
        args, kwargs = bound.args, bound.kwargs
    result = function(*args, **kwargs)
    if not method and isinstance(result, (return_types.max, return_types.min)):
        return result.values
    return result


def _arity_message(name: str, sig: inspect.Signature, args: list, message: str) -> str:
    """Python's binding complaint, said the way Python says it for a named function."""
    positional = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if message.startswith("too many positional arguments"):
        count = len(positional)
        return f"{name}() takes {count} positional argument{'s' if count != 1 else ''} but {len(args)} were given"
    if message.startswith("missing a required argument: "):
        return f"{name}() is missing the argument {message.split(': ', 1)[1]}"
    if message.startswith("got an unexpected keyword argument "):
        return f"{name}() has no argument {message.rsplit(' ', 1)[1]}"
    if message.startswith("multiple values for argument "):
        return f"{name}() got two values for the argument {message.rsplit(' ', 1)[1]}"
    return f"{name}(): {message}"

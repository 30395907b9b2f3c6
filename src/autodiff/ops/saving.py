"""What an op saves for backward, and how backward reads it back.

A formula's parameter names decide what its op saves (registry.py's docstring): an argument, the
`result`, or an argument's `_shape`, `_dtype` or `_device`. Here that list becomes a save plan
(`_plan_saves`) and a saver compiled from it (`_compile_saver`); what a record then keeps of
the values (`_kept`: a tensor as its array, none that only inputs without a gradient would use);
and how a node reads them back (`_array_now`, `_attached`), checking first that no saved input
was changed in place since (`_check_versions`, PyTorch's error).
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import TYPE_CHECKING

from .. import backend
from ..autograd import versions
from ..autograd.tape import Tape
from ..tensor import Tensor, _make, legacy_type_name

if TYPE_CHECKING:
    from .registry import OpDef

_np = backend.np
_NUMPY_CLASSES = backend.NUMPY_CLASSES

_FREED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

# What a formula may ask for besides arguments: the result, or an argument's metadata.
_ARG, _RESULT = "arg", "result"
_METADATA = {"_shape": lambda a: getattr(a, "shape", ()), "_dtype": lambda a: a.dtype, "_device": backend.device_of}


def _plan_saves(name: str, arg_names: tuple, wanted: set):
    """The saved names, in a canonical order, and their plan: (kind, argument position) each,
    from the names the op's formulas take (`wanted`)."""
    # A canonical order: arguments as the op takes them, then metadata, then the result.
    arguments = [n for n in arg_names if n in wanted]
    metadata = sorted(wanted - set(arguments) - {"result"})
    names = arguments + metadata + (["result"] if "result" in wanted else [])
    plan = []
    for n in names:
        if n == "result":
            plan.append((_RESULT, None))
        elif n in arg_names:
            plan.append((_ARG, arg_names.index(n)))
        else:
            base, _, kind = n.rpartition("_")
            if base not in arg_names or "_" + kind not in _METADATA:
                raise TypeError(f"op {name}: a derivative asks for {n!r}, which the op does not have")
            plan.append(("_" + kind, arg_names.index(base)))
    return tuple(names), tuple(plan)


_SAVES_ARGS = "the arguments, as given"
_SAVES_RESULT = "the result only"


def _compile_saver(plan, arg_count: int):
    """How to collect what the formulas named: a marker for the common cases, else a function
    `(values, arrays, out) -> tuple` (called with the arguments, then with their arrays)."""
    if not plan:
        return None
    kinds = [k for k, _ in plan]
    if kinds == [_RESULT]:
        return _SAVES_RESULT
    if all(k == _ARG for k in kinds):
        positions = [i for _, i in plan]
        if positions == list(range(arg_count)):
            return _SAVES_ARGS
        if len(positions) == 1:
            (p,) = positions
            return lambda values, arrays, out: (values[p],)
        get = itemgetter(*positions)
        return lambda values, arrays, out: get(values)
    if len(plan) == 1 and kinds[0] in _METADATA:  # one size or dtype (sum's, mean's): no loop
        ((kind, i),) = plan
        describe = _METADATA[kind]

        def save_one(values, arrays, out):
            a = arrays[i]
            return (tuple(describe(x) for x in a) if isinstance(a, list) else describe(a),)

        return save_one

    def save(values, arrays, out):
        saved = []
        for kind, i in plan:
            if kind == _ARG:
                saved.append(values[i])
            elif kind == _RESULT:
                saved.append(out)
            else:
                a = arrays[i]
                describe = _METADATA[kind]
                saved.append(tuple(describe(x) for x in a) if isinstance(a, list) else describe(a))
        return tuple(saved)

    return save


# -- what a record keeps ---------------------------------------------------------------------

def _kept(op: OpDef, tape: Tape, refs, values, arrays, out) -> tuple:
    """What a record keeps of the values its formulas asked for: a tensor argument as its array
    (see _storable), none that only inputs without a gradient would use (`refs`: the record's
    references, where there are several). Marks the tape special where one is a tensor or list."""
    saves = op.saves
    if saves is _SAVES_ARGS:
        saved = values
    elif saves is _SAVES_RESULT:
        return (out,)
    elif saves is None:
        return ()
    else:
        saved = saves(values, arrays, out)
    if not op.arg_slots:  # sizes, dtypes and the result only: kept as they are
        return saved
    if refs is not None and len(refs) > 1 and not op.variadic and None in refs:
        saved = _drop_unused(op, saved, refs)
    arg_slots = op.arg_slots
    saved = tuple(_storable(v) if k in arg_slots else v for k, v in enumerate(saved))
    if op.list_slots:  # a variadic op's tensors: kept as a tuple (a list is always tracked)
        saved = tuple(tuple(v) if k in op.list_slots and v is not None else v for k, v in enumerate(saved))
    if not tape.special and any(_special(saved[k]) for k in arg_slots):
        tape.special = True  # tensors or lists kept: backward takes the general path
    return saved



# What a record keeps of a saved argument: a tensor's array (the tensor's own subclasses, which
# carry more than an array, as themselves), an array given as an operand marked _Raw, a list's each.
def _storable(value):
    cls = value.__class__
    if cls is Tensor:
        return value._data
    if _is_array(value):
        return _Raw(value)
    if cls is list:
        return [_storable(v) for v in value]
    return value


def _special(value) -> bool:
    """Whether a saved value is one that only the general path reads (a tensor, a list, _Raw)."""
    cls = value.__class__
    if cls is tuple:
        return any(_special(v) for v in value)
    return cls is list or cls is _Raw or isinstance(value, Tensor)


def _drop_unused(op: OpDef, saved: tuple, refs: tuple) -> tuple:
    """Keep only the saved values that the inputs needing a gradient will use."""
    active = (refs[0] is not None, refs[1] is not None) if len(refs) == 2 else \
        tuple(ref is not None for ref in refs)
    keep = op.keep.get(active)
    if keep is None:
        used = set()
        for uses, needed in zip(op.uses, active):
            if needed:
                used |= uses
        keep = op.keep[active] = _keeper(tuple(i in used for i in range(len(op.saved_names))))
    return saved if keep is _KEEP_ALL else keep(saved)


_KEEP_ALL = "keep everything"


def _keeper(mask: tuple):
    """A function that blanks the saved values `mask` does not keep (None where it drops)."""
    if all(mask):
        return _KEEP_ALL
    if mask == (True, False):
        return lambda saved: (saved[0], None)
    if mask == (False, True):
        return lambda saved: (None, saved[1])
    return lambda saved: tuple(v if k else None for v, k in zip(saved, mask))



# -- reading it back --------------------------------------------------------------------------

class _Raw:
    """An operand given as a bare array rather than a tensor: saved as it is, never version-checked."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value


def _plain(value):
    """A saved value as readers outside the engine see it (a _Raw operand as its array)."""
    if value.__class__ is _Raw:
        return value.value
    if value.__class__ is list:
        return [_plain(v) for v in value]
    return value


_EACH = "each"  # slot_child of a variadic op's list: each element is its own input


def _array_now(value, clock):
    """A saved value as formulas on arrays read it: a tensor's array as it is now (`clock` not
    None: after an in-place change somewhere, a `.data` write to it is followed)."""
    if value.__class__ is list:
        return [_array_now(v, clock) for v in value]
    if value.__class__ is _Raw:
        return value.value
    if isinstance(value, Tensor):
        return value._data
    if clock is not None and _is_array(value):
        return versions.current(value, clock)
    return value


def _is_array(value) -> bool:
    """An array of NumPy or of the device's module (not a number, a shape or a dtype)."""
    return value.__class__ in _NUMPY_CLASSES or backend.array_module(value) is not _np


def _attached(value, tape, ref, at: int):
    """A saved input's array as a tensor at the input's place in the graph (see _as_tensors):
    the input of record `at` that `ref` names."""
    if value.__class__ is _Raw:
        return value.value
    if isinstance(value, Tensor) or not _is_array(value):
        return value
    if ref is None:
        return _make(value)
    node, nr = tape.node(ref, at)
    t = _make(value, True, node)
    t._output_nr = nr
    return t


def _check_versions(node, saved, clock: int) -> None:
    """Raise PyTorch's error if a saved input was changed in place after it was saved, or had
    its history taken away by detach_() (which PyTorch checks first)."""
    inputs = [v for (kind, _), value in zip(node.op.save_plan, saved) if kind == _ARG
              for v in (value if value.__class__ is list else (value,)) if v is not None]
    for value in inputs:
        if isinstance(value, Tensor):
            detached = getattr(value, "_detached_at", 0) > clock
        else:
            detached = any(kind is versions.DETACH for _, kind, _ in versions.since(value, clock))
        if detached:
            raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                               "This is not supported, please use out-of-place `.detach()` instead")
    for value in inputs:
        if isinstance(value, Tensor):
            if value._version_log:
                _check_log(value, value._version_log, clock, legacy_type_name(value), list(value.shape))
            continue
        if value.__class__ is _Raw:
            continue
        at = clock
        while value is not None:  # the array saved, then each written over it through `.data`
            followed = None
            for when, kind, payload in versions.since(value, at):
                if kind is versions.VERSION:
                    tensor_ref, log, (dtype, shape) = payload
                    tensor = tensor_ref()
                    name = legacy_type_name(tensor) if tensor is not None else _legacy_name(dtype)
                    _check_log(tensor, log, clock, name, list(shape))
                elif kind is versions.DATA and followed is None:
                    followed = (payload, when)
            value, at = followed if followed is not None else (None, at)


def _check_log(value, log, clock: int, type_name: str, shape: list) -> None:
    expected = log.before(clock)
    if expected == len(log):
        return
    producer = value.grad_fn if value is not None else None
    origin = ""
    if producer is not None and not hasattr(producer, "variable"):
        # PyTorch names the forward operation: "Mul" for MulBackward0.
        operation = re.sub(r"Backward\d*$", "", type(producer).__name__)
        origin = f", which is output {value._output_nr} of {operation},"
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{type_name} {shape}]{origin} is at "
        f"version {len(log)}; expected version {expected} instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "autodiff.autograd.set_detect_anomaly(True, check_nan=False)."
    )


def _legacy_name(dtype) -> str:
    return legacy_type_name(_make(backend.np.zeros((), dtype=dtype)))


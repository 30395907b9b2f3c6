"""The op registry: every differentiable operation, declared once.

An op is one `defop(...)` call, the way PyTorch's `derivatives.yaml` has one entry per op:

    MUL = defop("mul", lambda xp, input, other: input * other, doc="input * other", method=True,
                input=lambda grad, other: grad * other,
                other=lambda grad, input: grad * input)

- the forward takes the array module `xp` and the op's arguments (arrays for tensors);
- `nondiff` names tensor inputs that get no gradient (where's condition);
- `carries` names parameters that may be given as a tensor without being an input (sort's
  indices, kept as a tensor for derive): a batched or traced one sends the op to its rule;
- each other keyword names a differentiable input and gives its derivative formula: it receives
  `grad` and any of the names it lists, which the op then saves for backward: an argument
  (`other`), `result`, or an argument's `_shape`, `_dtype` or `_device` (`input_shape`);
- `batch` is its rule for a batch of examples (`ELEMENTWISE`, `dims("dim")`...; see
  batching.py): without one, batched tensors run example by example;
- `doc`, `method`, `inplace`, `operators` and `aliases` declare its public surface: with a
  `doc`, `autodiff.mul`, the language's `mul` and (with `method`) `Tensor.mul` are the op
  itself (see surface.py);
- the `grad_fn` class is named by PyTorch's rule, `MulBackward0` for `mul`
  (`log_softmax` -> `LogSoftmaxBackward0`); `grad_fn=` spells it out only for PyTorch's
  numbered overloads (`PowBackward1` for `x ** y`).

Formulas are written with operators and ops (`COS.apply(x)`), never NumPy, and an op applied
to plain arrays (no Tensor among its inputs) simply runs its forward and returns an array.
So one formula serves two modes of the engine:

- with `create_graph=True` it receives tensors, and the backward pass is itself recorded:
  derivatives of any order work;
- otherwise it receives the arrays behind them and computes at NumPy speed.

The engine gets gradients back in the shape of the op's output and reduces broadcasting once,
centrally (see engine.py).
"""

from __future__ import annotations

import inspect
import re
import traceback
from _thread import get_ident as _ident
from operator import itemgetter

from .. import _limits, backend, dtypes
from ..autograd import versions
from ..autograd.anomaly import ANOMALY, forward_trace
from ..autograd.grad_mode import EVERYWHERE
from ..autograd.grad_mode import STATE as GRAD_MODE
from ..autograd.node import AccumulateGrad, Node, _sequence, accumulator_of, edge, output_numbers
from ..autograd.tape import CHUNK, NODE_CLASSES, SCALAR_META, SOURCES, WINDOW, Tape, tape_for_leaves
from ..tensor import InplaceClock, Tensor, _make, as_array, legacy_type_name
from . import hooks, surface
from .batching import INTERCEPTED, Batched, dispatch
from .spelling import Spelling, declare as declare_spelling

REGISTRY: dict[str, OpDef] = {}
OPS: list = []  # op code -> OpDef (a record's first field; see OpDef.code)
LEAN: list = []  # op code -> (lean plan, head, length, frees, OpDef): what backward's loop reads
NONDIFF: dict = {}  # name -> apply of each operation without a gradient

_FREED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

# What a formula may ask for besides arguments: the result, or an argument's metadata.
_ARG, _RESULT = "arg", "result"
_METADATA = {"_shape": lambda a: getattr(a, "shape", ()), "_dtype": lambda a: a.dtype, "_device": backend.device_of}


class ShapeError(RuntimeError):
    """Operand shapes that do not fit together; `shapes` holds them for callers that explain."""

    def __init__(self, message: str, shapes: tuple = ()) -> None:
        super().__init__(message)
        self.shapes = shapes


class OpNode(Node):
    """The backward node of a registry op: a view of its record in a tape (autograd/tape.py),
    made when asked for (`tensor.grad_fn`, `next_functions`); subclasses are generated, one per op.

    The record keeps what the formulas asked for: arrays (a tensor's array, not the tensor), the
    result's array, constants and sizes. Backward without recording reads each saved array as it
    is then: a change made through `.data` shows there (versions.py), while an in-place
    operation fails the version check instead, as PyTorch's saved variables do.
    """

    __slots__ = ("_tape", "_at")
    op: OpDef

    # -- the record's fields, as every node has them --------------------------------------------

    @property
    def _record(self) -> tuple:
        return self._tape.record(self._at)

    def _refs(self) -> tuple:
        record = self._tape.record(self._at)
        return record[2] if self.op.variadic else record[2:self.op.head]

    @property
    def _next(self) -> tuple:
        node, at = self._tape.node, self._at
        return tuple(node(ref, at)[0] for ref in self._refs())

    @property
    def _nrs(self) -> tuple:
        node, at = self._tape.node, self._at
        return output_numbers(tuple(node(ref, at)[1] for ref in self._refs()))

    def _edges(self) -> tuple:
        node, at = self._tape.node, self._at
        pairs = [node(ref, at) for ref in self._refs()]
        return tuple(n for n, _ in pairs), output_numbers(tuple(nr for _, nr in pairs))

    def _free_saved(self) -> None:
        tape, at, head = self._tape, self._at, self.op.head
        record = tape.record(at)
        if len(record) > head:
            tape.replace(at, record[:head])

    @property
    def _seq(self) -> int:
        return self._tape.seq(self._at)

    @property
    def _clock(self) -> int:
        return self._tape.clock(self._at)

    @property
    def _shape(self):
        return self._tape.record(self._at)[1][0]

    @property
    def _dtype(self):
        return self._tape.record(self._at)[1][1]

    @property
    def _hooks(self):
        hooks = self._tape.hooks
        return hooks.get(self._at) if hooks else None

    def _hook_table(self) -> dict:
        return self._tape.side("hooks", self._at, create=True)

    @property
    def _trace(self):
        traces = self._tape.traces
        return traces.get(self._at) if traces else None

    @property
    def _saved(self):
        """What the formulas saved (an input as its array), or None once backward freed it."""
        slots = self._slots()
        return None if slots is None else tuple(_plain(v) for v in slots)

    def _slots(self):
        """The saved values as the record keeps them (an operand given as an array marked _Raw;
        lists as lists), or None once backward freed them."""
        record = self._tape.record(self._at)
        op = self.op
        if len(record) < op.length:
            return None
        saved = record[op.head:]
        if op.list_slots:
            saved = tuple(list(v) if i in op.list_slots and v is not None else v for i, v in enumerate(saved))
        return saved

    @_saved.setter
    def _saved(self, values) -> None:
        """None frees the saved values (a second backward is then PyTorch's error); the symbolic
        tracer puts traced tensors in their place."""
        tape, op = self._tape, self.op
        head = tape.record(self._at)[:op.head]
        if values is None:
            tape.replace(self._at, head)
        else:
            tape.replace(self._at, head + tuple(values))
            tape.special = True  # the record may hold tensors now: backward takes the general path

    # -- backward --------------------------------------------------------------------------------

    def _arrays(self, saved=None, clock=None) -> tuple:
        """The saved values as the formulas read them on arrays: an input's array as it is now."""
        saved = self._slots() if saved is None else saved
        if clock is None:
            clock = self._clock
        if clock == InplaceClock.ticks:
            return tuple(_array_now(v, None) for v in saved)
        inputs = self.op.arg_slots
        return tuple(_array_now(v, clock if i in inputs else None) for i, v in enumerate(saved))

    def _as_tensors(self, saved) -> tuple:
        """The saved values as tensors in their places in the graph, for formulas that record
        (create_graph): an input's array becomes a tensor whose gradient flows to that input."""
        op = self.op
        refs = self._refs()
        tape = self._tape
        values = []
        for value, (kind, _), child in zip(saved, op.save_plan, op.slot_child):
            if kind == _RESULT:
                value = _make(_array_now(value, None), True, self)
                reattach = hooks.current().reattach  # a transform's own tensor for it (derive's)
                if reattach is not None:
                    value = reattach(self, value)
            elif kind == _ARG and value is not None:
                if child == _EACH:
                    value = [_attached(x, tape, ref, self._at) for x, ref in zip(value, refs)]
                else:
                    value = _attached(value, tape, refs[child] if child is not None else None, self._at)
            values.append(value)
        return tuple(values)

    def _apply(self, grads: list, as_tensors: bool) -> list:
        grad = grads[0]
        children = self._refs()
        if grad is None:
            return [None] * len(children)
        saved = self._slots()
        if saved is None:
            raise RuntimeError(_FREED_ERROR)
        op = self.op
        if saved:
            clock = self._clock
            if clock != InplaceClock.ticks:
                _check_versions(self, saved, clock)
            saved = self._as_tensors(saved) if as_tensors else self._arrays(saved, clock)
        if op.plan is not None:  # one or two inputs: called as the engine's lean path calls them
            return [
                None if c is None else f(grad) if j is None else f(grad, saved[j]) if j >= 0 else f(grad, saved)
                for (f, j), c in zip(op.plan, children)
            ]
        if op.variadic:
            call = op.callers[0]
            return [None if c is None else call(grad, saved, i) for i, c in enumerate(children)]
        return [None if c is None else call(grad, saved) for c, call in zip(children, op.callers)]

    @property
    def saved_tensors(self) -> tuple:
        """The values this node keeps for backward."""
        saved = self._slots()
        if saved is None:
            raise RuntimeError(_FREED_ERROR)
        return self._as_tensors(saved)


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


def _check_versions(node: OpNode, saved, clock: int) -> None:
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


class OpDef:
    """One operation: forward, derivative formulas, and the plan for what to save."""

    def __init__(self, name, grad_fn, forward, derivatives, *, nondiff=(), domain=False, variadic=False, batch=None,
                 frees=False, carries=(), floats=False, why_zero=None, scalar=None):
        self.name = name
        self.scalar = scalar
        self.why_zero = why_zero  # where its local derivative is 0, in words (explain's "why")
        self.floats = floats  # bools and integers are computed in the default float dtype (PyTorch's rule)
        self.batch = batch
        self.grad_fn_name = grad_fn or backward_name(name)
        self.forward = forward
        self.domain = domain  # may make nan/inf from finite inputs: silence NumPy's warnings
        self.variadic = variadic  # the first argument is a sequence of tensors (cat, stack)
        params = list(surface.parameter_names(forward))
        if not params or params[0] != "xp":
            raise TypeError(f"op {name}: forward must take the array module `xp` first")
        self.arg_names = tuple(params[1:])
        unknown = set(derivatives) - set(self.arg_names)
        if unknown:
            raise TypeError(f"op {name}: derivatives for unknown inputs {sorted(unknown)}")
        self.diff_positions = tuple(i for i, n in enumerate(self.arg_names) if n in derivatives)
        self.tensor_positions = tuple(
            i for i, n in enumerate(self.arg_names) if n in derivatives or n in nondiff
        )
        self.carried = tuple(i for i, n in enumerate(self.arg_names) if n in carries)
        formulas = [derivatives[self.arg_names[i]] for i in self.diff_positions]
        self.formulas = tuple(formulas)
        self.saved_names, self.save_plan = self._plan_saves(formulas)
        self.result_index = self.saved_names.index("result") if "result" in self.saved_names else None
        self.saves = _compile_saver(self.save_plan, len(self.arg_names))
        # For each differentiable input, the saved values its formula uses: values that only
        # inputs without a gradient would use are not kept (as PyTorch), so they can neither
        # pin memory nor trip the in-place check.
        indices = [tuple(self.saved_names.index(n) for n in self._wanted(f)) for f in formulas]
        self.uses = tuple(frozenset(idx) for idx in indices)
        self.keep: dict = {}  # which inputs need a gradient -> how to blank the unused values
        self.callers = tuple(self._bind(f, idx) for f, idx in zip(formulas, indices))
        # For one or two differentiable inputs, (formula, j) pairs that backward calls as
        # formula(grad) when j is None, formula(grad, saved[j]) when j >= 0, or else through
        # its caller, caller(grad, saved).
        self.plan = None
        if len(formulas) in (1, 2) and not variadic:
            self.plan = tuple(
                (f, None) if not idx else (f, idx[0]) if len(idx) == 1 else (caller, -1)
                for f, idx, caller in zip(formulas, indices, self.callers)
            )
        # Saved tensors are freed after backward; saved sizes and dims are kept (as PyTorch).
        # `frees`: what is saved is a tensor in PyTorch though not here (index arrays): freed too.
        frees = frees or any(k == _RESULT or (k == _ARG and i in self.tensor_positions) for k, i in self.save_plan)
        self.frees = frees
        self.node_class = type(
            self.grad_fn_name, (OpNode,), {"__slots__": (), "op": self, "_frees": frees, "_plan": self.plan,
                                        "__module__": __name__}
        )
        # Its records (autograd/tape.py): (code, (shape, dtype), a reference per differentiable
        # input (a variadic op's as one tuple), then the saved values in saved_names' order).
        self.code = len(NODE_CLASSES)
        NODE_CLASSES.append(self.node_class)
        OPS.append(self)
        self.head = 2 + (1 if variadic else len(self.diff_positions))
        self.length = self.head + len(self.saved_names)
        self.arg_slots = frozenset(k for k, (kind, _) in enumerate(self.save_plan) if kind == _ARG)
        self.list_slots = frozenset(k for k, (kind, i) in enumerate(self.save_plan) if variadic and kind == _ARG and i == 0)
        self.slot_child = tuple(
            _EACH if k in self.list_slots else self.diff_positions.index(i) if kind == _ARG and i in self.diff_positions
            else None for k, (kind, i) in enumerate(self.save_plan))
        # The plan as backward runs it on a record: (formula, where its saved value is in the record
        # (0: none; -1: the caller, given every saved value), where the input's reference is).
        # A formula that hands the gradient on as it is (add's) is None there: not called at all.
        self.lean = None if self.plan is None else tuple(
            (None if _is_identity(f) else f, 0 if j is None else self.head + j if j >= 0 else -1, 2 + k)
            for k, (f, j) in enumerate(self.plan))
        LEAN.append((self.lean, self.head, self.length, frees, self))
        self.apply = _compile_apply(self)
        self.apply._forward = forward  # its signature, less xp, when a batching rule binds arguments by name

    def _wanted(self, formula) -> list:
        """The saved names a formula takes (after `grad`, and the index for variadic ops)."""
        return list(surface.parameter_names(formula))[2 if self.variadic else 1 :]

    def _plan_saves(self, formulas):
        wanted = {n for formula in formulas for n in self._wanted(formula)}
        # A canonical order: arguments as the op takes them, then metadata, then the result.
        arguments = [n for n in self.arg_names if n in wanted]
        metadata = sorted(wanted - set(arguments) - {"result"})
        names = arguments + metadata + (["result"] if "result" in wanted else [])
        plan = []
        for n in names:
            if n == "result":
                plan.append((_RESULT, None))
            elif n in self.arg_names:
                plan.append((_ARG, self.arg_names.index(n)))
            else:
                base, _, kind = n.rpartition("_")
                if base not in self.arg_names or "_" + kind not in _METADATA:
                    raise TypeError(f"op {self.name}: a derivative asks for {n!r}, which the op does not have")
                plan.append(("_" + kind, self.arg_names.index(base)))
        return tuple(names), tuple(plan)

    def _bind(self, formula, idx: tuple):
        """A caller `(grad, saved[, index]) -> gradient` that hands the formula the saved values
        at `idx`, those it names."""
        if self.variadic:
            return lambda grad, saved, i: formula(grad, i, *[saved[j] for j in idx])
        if not idx:
            return lambda grad, saved: formula(grad)
        if idx == tuple(range(len(self.saved_names))):
            return lambda grad, saved: formula(grad, *saved)
        if len(idx) == 1:
            (j,) = idx
            return lambda grad, saved: formula(grad, saved[j])
        get = itemgetter(*idx)
        return lambda grad, saved: formula(grad, *get(saved))

    def __repr__(self) -> str:
        return f"<op {self.name} -> {self.grad_fn_name}>"


def _is_identity(formula) -> bool:
    """Whether `formula` is `lambda grad: grad` (its code, whatever its names)."""
    code = getattr(formula, "__code__", None)
    return code is not None and code.co_argcount == 1 and not code.co_kwonlyargcount and \
        code.co_code == _IDENTITY.co_code and not formula.__defaults__


_IDENTITY = (lambda grad: grad).__code__


def backward_name(op_name: str) -> str:
    """PyTorch's name for an op's node: each word title-cased, then `Backward0`
    (`log_softmax` -> `LogSoftmaxBackward0`, `log1p` -> `Log1PBackward0`)."""
    return "".join(word.title() for word in op_name.split("_")) + "Backward0"


def defop(name: str, forward, *, grad_fn: str | None = None, doc: str | None = None, method=False,
          inplace: bool = False, operators=(), aliases=(), nondiff=(), domain=False, variadic=False, batch=None,
          frees=False, carries=(), floats=False, why_zero: str | None = None, spelling: Spelling | None = None,
          scalar=None, **derivatives) -> OpDef:
    """Declare an operation; returns its OpDef, whose `apply` runs it and records it.

    With `doc`, `apply` is also the public function of that name (see surface.py). `spelling`
    is how formulas write it (ops/spelling.py): by default a call of its name where it is public.
    `scalar` is `forward` on 0-d float64 values without the array module (`np.tanh`,
    `operator.mul`): the very same computation, one Python call fewer for each operation of a
    scalar program (tests/engine/test_registry.py holds it to `forward`'s values)."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is declared twice")
    if scalar is not None and domain:  # the scalar path would leak NumPy's warnings
        raise TypeError(f"op {name}: a scalar forward is for ops that make no nan or inf of finite values")
    declare_spelling(name, spelling, public=doc is not None)
    op = OpDef(name, grad_fn, forward, derivatives, nondiff=nondiff, domain=domain, variadic=variadic, batch=batch,
               frees=frees, carries=carries, floats=floats, why_zero=why_zero, scalar=scalar)
    REGISTRY[name] = op
    if doc is not None:
        function = _public_function(op, doc)
        surface.declare(function, method=method, inplace=inplace, operators=operators, aliases=aliases,
                        batch=batch, batches_itself=function is op.apply)
    else:
        surface.bind_operators(op.apply, operators, batches_itself=True)
    return op


def on_arrays(op: OpDef, **formulas) -> None:
    """Formulas that backward's lean path (autograd/engine.py's _run_records) calls in place of
    the op's own, by input name, with the same arguments: there they get arrays only, so they
    may compute on NumPy arrays directly, without the dispatch of the ops that the op's own
    formulas call (some microseconds of a small graph's backward). Each must give the op's
    formula's very values, and hand anything but NumPy arrays to that formula."""
    lean = list(op.lean)
    for name, formula in formulas.items():
        k = op.diff_positions.index(op.arg_names.index(name))
        lean[k] = (formula, *lean[k][1:])
    op.lean = tuple(lean)
    LEAN[op.code] = (op.lean, *LEAN[op.code][1:])


def _public_function(op: OpDef, doc: str):
    """The function users call: `op.apply` itself, or, where the op takes parameters besides
    tensors (cumsum's dim), a wrapper that also accepts them by keyword."""
    function = op.apply
    if len(op.arg_names) > len(op.tensor_positions):
        apply = op.apply
        signature = inspect.signature(op.forward)

        def function(*args, **kwargs):
            if kwargs:
                args = signature.bind(None, *args, **kwargs).args[1:]
            return apply(*args)

        function.__name__ = function.__qualname__ = op.name
        function._forward = op.forward  # where it is declared (the docs group functions by it)
    _describe(function, ("xp",), op.forward, doc)
    return function if function is op.apply else surface.following_batches(function, op.batch)


def _describe(function, hidden, forward, doc: str) -> None:
    """Give a generated function the forward's signature (less `hidden`) and a docstring."""
    signature = inspect.signature(forward)
    function.__signature__ = signature.replace(
        parameters=[p for p in signature.parameters.values() if p.name not in hidden]
    )
    if doc is not None:
        function.__doc__ = doc


# -- saving ----------------------------------------------------------------------------------

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


# -- running and recording ---------------------------------------------------------------------
# These functions run once per operation, forward and backward, so they are written for speed:
# tensors and nodes are built inline and the array module is found without a call for NumPy.

_new = object.__new__
_np = backend.np
_NUMPY_CLASSES = backend.NUMPY_CLASSES
_SCALAR_CLASSES = frozenset((int, float, bool))
_HOST_CLASSES = _NUMPY_CLASSES | _SCALAR_CLASSES  # operands that can only mean the CPU
_ZERO, _ZEROS = output_numbers((0,)), output_numbers((0, 0))  # almost every node's inputs' numbers
_F64 = _np.float64
_NDARRAY = _np.ndarray
_F64_DTYPE = _np.dtype(_F64)
_NO_DIMS = ()


_SCALAR_META = SCALAR_META  # the record's (shape, dtype) of a 0-d float64 result of scalars
_LAST = CHUNK - 1  # a tape's newest records before this one append: the list is full after it


def _meta(out, inputs) -> tuple:
    """A record's (shape, dtype), which its result tensor holds as its token (tape.py's sweep
    counts the holders): the one shared tuple for a 0-d float64 result of scalars that have no
    token themselves (such records are always kept, and cost next to nothing)."""
    if out.__class__ is _F64:
        for t in inputs:
            if t.__class__ is Tensor or isinstance(t, Tensor):
                if t._token is not None:
                    return (_NO_DIMS, _F64_DTYPE)
        return _SCALAR_META
    return (out.shape, out.dtype)


def _grew(tape: Tape, out) -> None:
    """Count a new result's bytes; past the tape's mark, free what nothing live needs."""
    tape.bytes += out.nbytes
    if tape.bytes >= tape.sweep_at:
        tape.sweep()


def _record(op: OpDef, inputs, values, arrays, out) -> Tensor:
    """Record `op` (every case; the common ones are inlined in the apply functions) and return
    its result. `inputs` are the differentiable inputs, in order; `values` and `arrays` the
    arguments as given and as arrays, from which the op's saver picks what its formulas need."""
    tape = _tape_for(inputs)
    at = len(tape)
    refs = tuple(_reference(tape, t, at) for t in inputs)
    saved = _kept(op, tape, refs, values, arrays, out)
    if tape.open != tape.owner or any(t._node.__class__ is Tape and t._node.owner != tape.owner
                                      for t in inputs if isinstance(t, Tensor) and t._requires_grad):
        tape.start_run()  # numbered after what it links to on another thread's tape
    meta = _meta(out, inputs)
    result = _make(out, True)  # first: the record is never without its token (see Tape.sweep)
    result._node = tape
    result._at = at
    if meta is not _SCALAR_META:
        result._token = meta
    records = tape.records
    records.append((op.code, meta, *((refs,) if op.variadic else refs), *saved))
    if len(records) == CHUNK:
        tape.seal()
    if ANOMALY.enabled:
        if tape.traces is None:
            tape.traces = {}
        tape.traces[at] = traceback.format_stack()[:-2]  # up to the caller of the op
    if out.__class__ is not _F64 and meta is not _SCALAR_META:
        _grew(tape, out)
    return result


def _record_one(op: OpDef, input: Tensor, values, arrays, out) -> Tensor:
    """_record for an op of one plain tensor (sum, view, transpose...), where the input is a
    leaf or among the newest records of its tape; anything else goes to _record."""
    tape = input._node
    if ANOMALY.enabled or tape is not None and (tape.__class__ is not Tape or tape.owner != _ident() or
                                                tape.full or tape.base + len(tape.records) - input._at > WINDOW):
        return _record(op, (input,), values, arrays, out)
    if tape is None:  # a leaf: its AccumulateGrad, linked by the thread's open tape or a new one
        tape = tape_for_leaves()
        at = tape.base + len(tape.records)
        ref = tape.link(accumulator_of(input), 0, input._accumulator)
    else:
        at = tape.base + len(tape.records)
        ref = at - input._at
    saves = op.saves  # sizes, dtypes and the result are kept as they are; arguments as _kept says
    saved = _kept(op, tape, None, values, arrays, out) if op.arg_slots else () if saves is None else \
        (out,) if saves is _SAVES_RESULT else saves(values, arrays, out)
    if tape.open != tape.owner:
        tape.start_run()
    meta = _meta(out, (input,))
    result = _new(Tensor)  # _make written out, as in the apply functions; before the record (Tape.sweep)
    result._data = out
    result._requires_grad = True
    result._node = tape
    result._at = at
    result._output_nr = 0
    result._grad = result._version_log = result._backward_hooks = result._accumulator = None
    result._token = None if meta is _SCALAR_META else meta
    records = tape.records
    records.append((op.code, meta, ref, *saved))
    if len(records) == CHUNK:
        tape.seal()
    if out.__class__ is not _F64:
        _grew(tape, out)
    return result


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


def _record_pair(op: OpDef, input: Tensor, other: Tensor, a, b, out, given=None, arrays=None) -> Tensor:
    """Record a binary op of two plain tensors that saves its arguments or nothing (mul, mm,
    add...), where the inline path did not: an input without a gradient, a leaf the tape does
    not link yet, two leaves (a new tape). What it cannot place simply goes to _record.
    (Written out, without calls of its own: three of a small MLP's five ops come here.)
    A Python number operand (`x * 0.5`) comes as _CONSTANT, kept as given (`a` or `b`); `given`
    and `arrays` are then the operands and their arrays, for _record."""
    # Each input that needs a gradient is a leaf (None) or one of the newest records of a tape,
    # the same tape for both; two leaves start a new one.
    first = input._node if input._requires_grad else None
    second = other._node if other._requires_grad else None
    tape = first if first is not None else second
    if ANOMALY.enabled or tape is not None and (tape.__class__ is not Tape or tape.owner != _ident() or
                                                tape.full or second is not None and second is not tape):
        return _record(op, given or (input, other), given or (input, other), arrays or (a, b), out)
    if tape is None:  # two leaves, or one and a tensor without a gradient
        tape = tape_for_leaves()
    at = tape.base + len(tape.records)
    if first is not None:
        first = at - input._at
        if first > WINDOW:
            return _record(op, given or (input, other), given or (input, other), arrays or (a, b), out)
    if second is not None:
        second = at - other._at
        if second > WINDOW:
            return _record(op, given or (input, other), given or (input, other), arrays or (a, b), out)
    # Leaves: their AccumulateGrad, linked once per tape
    if first is None and input._requires_grad:
        first = tape.link(accumulator_of(input), 0, input._accumulator)
    if second is None and other._requires_grad:
        second = tape.link(accumulator_of(other), 0, other._accumulator)
    saved = () if op.saves is None else (a, b) if first is not None and second is not None else \
        _drop_unused(op, (a, b), (first, second))
    if tape.open != tape.owner:
        tape.start_run()
    meta = _meta(out, (input, other))
    result = _new(Tensor)  # before the record (Tape.sweep)
    result._data = out
    result._requires_grad = True
    result._node = tape
    result._at = at
    result._output_nr = 0
    result._grad = result._version_log = result._backward_hooks = result._accumulator = None
    result._token = None if meta is _SCALAR_META else meta
    records = tape.records
    records.append((op.code, meta, first, second, *saved))
    if len(records) == CHUNK:
        tape.seal()
    if out.__class__ is not _F64:
        _grew(tape, out)
    return result


class _Constant:
    """A Python number operand, as _record_pair reads an operand: no gradient, no node."""

    __slots__ = ()
    _requires_grad = False
    _node = None
    _token = None


_CONSTANT = _Constant()
_PYTHON_NUMBERS = (float, int)


def _tape_for(inputs) -> Tape:
    """The tape a record goes to: that of the newest input tape, when the input is among its
    last WINDOW records; for leaves alone, the thread's open tape while it is young
    (tape_for_leaves); a new one otherwise. So tapes link only to older ones, and a tape
    links to a custom Function's node only when it is newer than it: no reference cycles."""
    best, best_at = None, -1
    for t in inputs:
        if t is None or not isinstance(t, Tensor) or not t._requires_grad:
            continue
        node = t._node
        if node.__class__ is Tape:
            if best is None or node.serial > best.serial:
                best, best_at = node, t._at
            elif node is best and t._at > best_at:
                best_at = t._at
        elif node is not None and node.__class__ is not AccumulateGrad:
            return Tape()  # the output of a node object
    if best is None:  # leaves only
        return tape_for_leaves()
    if len(best) - best_at > WINDOW or best.owner != _ident() or best.full:
        return Tape()  # (another thread's tape: this thread's records go to one of its own)
    return best


def _reference(tape: Tape, t, at: int) -> int | None:
    """How record `at` of `tape` refers to its input `t`: how many records back it is (above 0),
    or ~ its link (below 0); None where it needs no gradient. (A distance back is a small int,
    which Python keeps once: a record's references cost no memory of their own.)"""
    if t is None or not isinstance(t, Tensor) or not t._requires_grad:
        return None
    node = t._node
    if node is tape:
        return at - t._at
    if node.__class__ is Tape:  # a record of an older tape
        sources = tape.sources
        if sources is None:
            tape.sources = [node]
        elif len(sources) <= SOURCES and node not in sources:
            sources.append(node)  # (past SOURCES of them, the tape takes no more records of leaves)
        proxy = node.proxy(t._at)
        return tape.link(proxy, 0, id(proxy))
    if node is None:  # a leaf: its AccumulateGrad, keyed by the tensor's reference to it
        node = accumulator_of(t)
        return tape.link(node, 0, t._accumulator)
    nr = t._output_nr
    tape.foreign = True
    return tape.link(node, nr, (id(node), nr) if nr else id(node))


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


def _promoted(a, b) -> tuple:
    """Two tensors' arrays in the dtype PyTorch computes their operation in (dtypes.result_type);
    backward hands each input its gradient in its own dtype, as PyTorch does."""
    want = dtypes.result_type(a, b)
    return (a if a.dtype == want else a.astype(want)), (b if b.dtype == want else b.astype(want))


def _constant(value):
    """A non-tensor operand (a Python number, an array) as the forward sees it."""
    if value.__class__ in _SCALAR_CLASSES or value.__class__ in _NUMPY_CLASSES:
        return value
    if isinstance(value, (int, float, bool)) or hasattr(value, "shape"):
        return value
    if isinstance(value, (list, tuple)):
        return as_array(value)
    raise TypeError(f"unsupported operand type: {type(value).__name__}")


def _floating(value):
    """Bools and integers as the default float dtype: a function of real numbers computes in it
    (NumPy would take a bool to float16)."""
    if value.__class__ in _SCALAR_CLASSES:
        return float(value)
    return value.astype(dtypes.get_default_dtype().numpy) if value.dtype.kind in "biu" else value


def _module(value):
    return _np if value.__class__ in _NUMPY_CLASSES else backend.array_module(value)


def _quietly(forward, *arrays):
    """`forward` on NumPy data with NumPy's warnings off (an op that may make nan or inf)."""
    token = backend.quiet()
    try:
        return forward(_np, *arrays)
    finally:
        backend.unquiet(token)


def _run(op: OpDef, xp, arrays):
    try:
        if op.domain and xp is _np:
            with _np.errstate(all="ignore"):
                return op.forward(xp, *arrays)
        return op.forward(xp, *arrays)
    except ValueError as exc:
        raise _explained(exc, arrays) from None


def _explained(exc: ValueError, arrays) -> Exception:
    """NumPy's broadcasting complaint in PyTorch's words; other errors unchanged."""
    shapes = tuple(a.shape for a in arrays if hasattr(a, "shape"))
    if "broadcast" in str(exc) and len(shapes) >= 2:
        return broadcast_error(shapes)
    return exc


def broadcast_error(shapes) -> ShapeError:
    """PyTorch's text for shapes that do not broadcast, naming the first dimension that clashes."""
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    for d in range(ndim - 1, -1, -1):
        sizes = [p[d] for p in padded]
        big = [s for s in sizes if s != 1]
        if len(set(big)) > 1:
            a, b = big[0], next(s for s in big if s != big[0])
            return ShapeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
                f"dimension {d}",
                tuple(shapes),
            )
    return ShapeError(f"shapes {' and '.join(str(list(s)) for s in shapes)} cannot be broadcast", tuple(shapes))


def _compile_apply(op: OpDef):
    """The function that runs `op` and records it when a gradient is needed."""
    if op.variadic:
        return _variadic_apply(op)
    if op.carried:
        return _general_apply(op)
    if op.tensor_positions == (0,):
        return _unary_apply(op)
    if op.tensor_positions == (0, 1) and op.diff_positions == (0, 1) and len(op.arg_names) == 2:
        return _binary_apply(op)
    return _general_apply(op)


def _unary_apply(op: OpDef):
    """One tensor input, maybe followed by plain parameters (a dim, a shape, an exponent)."""
    forward, domain, batch, floats, scalar = op.forward, op.domain, op.batch, op.floats, op.scalar
    grows = op.name in _limits.GROWING_UNARY
    limits = _limits.STATE
    code, saves = op.code, op.saves
    result_only = saves is _SAVES_RESULT  # tanh, exp, sigmoid...: recorded inline below

    def apply(input, *params):
        if input.__class__ is not Tensor:
            if not isinstance(input, Tensor):
                if floats:
                    input = _floating(input)
                return forward(_module(input), input, *params)  # plain arrays: just compute
            if input.__class__ in INTERCEPTED:  # the function users call, which the tracer knows
                return dispatch(batch, chosen, (input, *params), {})
        data = input._data
        if floats and data.__class__ is not _F64 and data.dtype.kind in "biu":
            data = _floating(data)
        if grows and limits.limit is not None:
            _limits.check_op(op.name, (data,), params)
        xp = _np if data.__class__ in _NUMPY_CLASSES else backend.array_module(data)
        if domain and xp is _np:
            with _np.errstate(all="ignore"):
                out = forward(xp, data, *params)
        else:
            out = forward(xp, data, *params)
        if not input._requires_grad or not (EVERYWHERE.enabled or GRAD_MODE.enabled):
            return _make(out)
        tape = input._node
        if result_only and tape.__class__ is Tape and tape.open == _ident() and not ANOMALY.enabled:
            # tanh, exp, sigmoid... of the newest records: the record appended inline
            records = tape.records
            n = len(records)
            at = tape.base + n
            back = at - input._at
            if back <= WINDOW:
                if out.__class__ is not _F64:
                    meta = token = (out.shape, out.dtype)
                elif input._token is None:  # a scalar of scalars: the shared tuple, no token
                    meta, token = _SCALAR_META, None
                else:
                    meta = token = (_NO_DIMS, _F64_DTYPE)
                result = _new(Tensor)  # before the record (Tape.sweep)
                result._data = out
                result._requires_grad = True
                result._node = tape
                result._at = at
                result._output_nr = 0
                result._grad = result._version_log = result._backward_hooks = result._accumulator = None
                result._token = token
                records.append((code, meta, back, out))
                if n == _LAST:
                    tape.seal()
                if meta is token and out.__class__ is not _F64:
                    _grew(tape, out)
                return result
        return _record_one(op, input, (input, *params), (data, *params), out)

    def apply_alone(input):
        """The same for an op of one tensor and nothing else (tanh, exp...), the most common
        call of all: no parameters to pass on."""
        if input.__class__ is not Tensor:
            return apply(input)
        data = input._data
        if data.__class__ is _F64:  # a 0-d float64 result: no dtype to look at
            out = scalar(data) if scalar is not None else forward(_np, data) if not domain else \
                _quietly(forward, data)
        else:
            if floats and data.dtype.kind in "biu":
                data = _floating(data)
            if grows and limits.limit is not None:
                _limits.check_op(op.name, (data,), ())
            if data.__class__ in _NUMPY_CLASSES:
                out = forward(_np, data) if not domain else _quietly(forward, data)
            else:
                out = forward(backend.array_module(data), data)
        if not input._requires_grad or not (EVERYWHERE.enabled or GRAD_MODE.enabled):
            return _make(out)
        tape = input._node
        if result_only and tape.__class__ is Tape and tape.open == _ident() and not ANOMALY.enabled:
            records = tape.records
            n = len(records)
            at = tape.base + n
            back = at - input._at
            if back <= WINDOW:
                if out.__class__ is not _F64:
                    meta = token = (out.shape, out.dtype)
                elif input._token is None:  # a scalar of scalars: the shared tuple, no token
                    meta, token = _SCALAR_META, None
                else:
                    meta = token = (_NO_DIMS, _F64_DTYPE)
                result = _new(Tensor)  # before the record (Tape.sweep)
                result._data = out
                result._requires_grad = True
                result._node = tape
                result._at = at
                result._output_nr = 0
                result._grad = result._version_log = result._backward_hooks = result._accumulator = None
                result._token = token
                records.append((code, meta, back, out))
                if n == _LAST:
                    tape.seal()
                if meta is token and out.__class__ is not _F64:
                    _grew(tape, out)
                return result
        return _record_one(op, input, (input,), (data,), out)

    chosen = apply_alone if len(op.arg_names) == 1 else apply
    chosen.__name__ = chosen.__qualname__ = op.name
    return chosen


def _binary_apply(op: OpDef):
    forward, domain, batch, scalar = op.forward, op.domain, op.batch, op.scalar
    limits = _limits.STATE
    code, saves = op.code, op.saves
    inline = saves is _SAVES_ARGS or saves is None  # mul, div... or add, sub...: recorded inline below

    def apply(input, other):
        if input.__class__ is Tensor and other.__class__ is Tensor:  # the common case: every +, *...
            a = input._data
            b = other._data
            if a.__class__ is _F64 and b.__class__ is _F64:  # two 0-d float64 results
                out = scalar(a, b) if scalar is not None else forward(_np, a, b) if not domain else \
                    _quietly(forward, a, b)
            else:
                if a.dtype != b.dtype:  # computed in PyTorch's dtype, not NumPy's (int64 and float32: float32)
                    pa, pb = _promoted(a, b)
                    xp = _np if pa.__class__ in _HOST_CLASSES and pb.__class__ in _HOST_CLASSES else \
                        backend.common_module((pa, pb))
                    if limits.limit is not None and getattr(pa, "shape", ()) != getattr(pb, "shape", ()):
                        _limits.check_op(op.name, (pa, pb))
                    out = _run(op, xp, (pa, pb))
                    if not (input._requires_grad or other._requires_grad) or \
                            not (EVERYWHERE.enabled or GRAD_MODE.enabled):
                        return _make(out)
                    return _record(op, (input, other), (input, other), (pa, pb), out)
                if a.__class__ in _HOST_CLASSES and b.__class__ in _HOST_CLASSES:
                    xp = _np
                else:  # device data: both operands must be on one device
                    xp = backend.common_module((a, b))
                if limits.limit is not None and getattr(a, "shape", ()) != getattr(b, "shape", ()):
                    _limits.check_op(op.name, (a, b))
                try:
                    if domain and xp is _np:
                        with _np.errstate(all="ignore"):
                            out = forward(xp, a, b)
                    else:
                        out = forward(xp, a, b)
                except ValueError as exc:
                    raise _explained(exc, (a, b)) from None
            recording = EVERYWHERE.enabled or GRAD_MODE.enabled
            if not recording or not (input._requires_grad and other._requires_grad and inline):
                if recording and (input._requires_grad or other._requires_grad):
                    if inline:  # one input without a gradient (X @ W): appended by _record_pair
                        return _record_pair(op, input, other, a, b, out)
                    return _record(op, (input, other), (input, other), (a, b), out)
                return _make(out)
            # Both need a gradient. Where one is among the newest records of the open tape and
            # the other there too, or a leaf the tape links already, the record is appended here.
            tape = input._node
            if tape.__class__ is Tape:
                first = input._at
                second = other._node
                if second is tape:
                    second = other._at
                elif second is None:
                    second = tape.link_of.get(other._accumulator)
                    if second is not None:
                        second = ~second
                else:
                    second = None
            else:
                tape = other._node
                second = other._at
                first = None
                if tape.__class__ is Tape and input._node is None:
                    first = tape.link_of.get(input._accumulator)
                    if first is not None:
                        first = ~first
            if first is not None and second is not None and tape.open == _ident() and not ANOMALY.enabled:
                records = tape.records
                n = len(records)
                at = tape.base + n
                if at - (first if first > second else second) <= WINDOW:
                    if first >= 0:  # this tape's: how far back
                        first = at - first
                    if second >= 0:
                        second = at - second
                    if out.__class__ is not _F64:
                        meta = token = (out.shape, out.dtype)
                    elif input._token is None and other._token is None:  # scalars of scalars (see _meta)
                        meta, token = _SCALAR_META, None
                    else:
                        meta = token = (_NO_DIMS, _F64_DTYPE)
                    result = _new(Tensor)  # before the record (Tape.sweep)
                    result._data = out
                    result._requires_grad = True
                    result._node = tape
                    result._at = at
                    result._output_nr = 0
                    result._grad = result._version_log = result._backward_hooks = result._accumulator = None
                    result._token = token
                    records.append((code, meta, first, second, a, b) if saves is not None else
                                   (code, meta, first, second))
                    if n == _LAST:
                        tape.seal()
                    if meta is token and out.__class__ is not _F64:
                        _grew(tape, out)
                    return result
            return _record_pair(op, input, other, a, b, out)
        if input.__class__ is _NDARRAY and other.__class__ is _NDARRAY:  # formulas, without recording
            try:
                return forward(_np, input, other)
            except ValueError as exc:
                raise _explained(exc, (input, other)) from None
        input_is_tensor = input.__class__ is Tensor or isinstance(input, Tensor)
        other_is_tensor = other.__class__ is Tensor or isinstance(other, Tensor)
        if (input_is_tensor and input.__class__ in INTERCEPTED) or (other_is_tensor and other.__class__ in INTERCEPTED):
            return dispatch(batch, apply, (input, other), {})
        if input_is_tensor:
            a = input._data
            needs = input._requires_grad
        else:
            a = _constant(input)
            needs = False
        if other_is_tensor:
            b = other._data
            needs = needs or other._requires_grad
        else:
            b = _constant(other)
            if not input_is_tensor:  # plain arrays: just compute
                try:
                    return forward(_module(a if hasattr(a, "shape") else b), a, b)
                except ValueError as exc:
                    raise _explained(exc, (a, b)) from None
        if a.__class__ in _HOST_CLASSES and b.__class__ in _HOST_CLASSES:
            xp = _np
        else:  # device data: both operands must be on one device
            xp = backend.common_module((a, b))
        if limits.limit is not None and getattr(a, "shape", ()) != getattr(b, "shape", ()):
            _limits.check_op(op.name, (a, b))
        try:
            if domain and xp is _np:
                with _np.errstate(all="ignore"):
                    out = forward(xp, a, b)
            else:
                out = forward(xp, a, b)
        except ValueError as exc:
            raise _explained(exc, (a, b)) from None
        if not needs or not (EVERYWHERE.enabled or GRAD_MODE.enabled):
            return _make(out)
        if inline and (input.__class__ in _PYTHON_NUMBERS or other.__class__ in _PYTHON_NUMBERS):
            # `x * 0.5`: the number is kept as given, as _record keeps it (a weak scalar for NumPy)
            if input_is_tensor:
                return _record_pair(op, input, _CONSTANT, a, other, out, (input, other), (a, b))
            return _record_pair(op, _CONSTANT, other, input, b, out, (input, other), (a, b))
        return _record(op, (input, other), (input, other), (a, b), out)

    apply.__name__ = apply.__qualname__ = op.name
    return apply


def _general_apply(op: OpDef):
    tensor_positions, diff_positions, carried = op.tensor_positions, op.diff_positions, op.carried
    limits = _limits.STATE
    checked = len(tensor_positions) >= 2 or op.name in _limits.GROWING_UNARY

    def apply(*args):
        arrays = list(args)
        for i in carried:  # the forward takes the array; the node keeps the tensor
            if isinstance(args[i], Tensor):
                if args[i].__class__ in INTERCEPTED:
                    return dispatch(op.batch, apply, args, {})
                arrays[i] = args[i]._data
        needs = False
        any_tensor = False
        for i in tensor_positions:
            a = args[i]
            if isinstance(a, Tensor):
                if a.__class__ in INTERCEPTED:
                    return dispatch(op.batch, apply, args, {})
                arrays[i] = a._data
                any_tensor = True
                if a._requires_grad and i in diff_positions:
                    needs = True
            else:
                arrays[i] = _constant(a)
        if not any_tensor:  # plain arrays: just compute
            first = next((arrays[i] for i in tensor_positions if hasattr(arrays[i], "shape")), 0.0)
            return _run(op, _module(first), arrays)
        xp = backend.common_module([arrays[i] for i in tensor_positions])
        if checked and limits.limit is not None:
            _limits.check_op(op.name, [arrays[i] for i in tensor_positions],
                             [arrays[i] for i in range(len(arrays)) if i not in tensor_positions])
        out = _run(op, xp, arrays)
        if needs and GRAD_MODE.enabled:
            return _record(op, [args[i] for i in diff_positions], args, tuple(arrays), out)
        return _make(out)

    apply.__name__ = apply.__qualname__ = op.name
    return apply


def _variadic_apply(op: OpDef):
    def apply(tensors, *params):
        tensors = list(tensors)
        if not tensors:
            raise ValueError(f"autodiff.{op.name}(): expected a non-empty list of Tensors")
        if any(t.__class__ in INTERCEPTED for t in tensors):
            return dispatch(op.batch, apply, (tensors, *params), {})
        if not any(isinstance(t, Tensor) for t in tensors):  # plain arrays: just compute
            return _run(op, _module(tensors[0]), (tensors, *params))
        if not all(isinstance(t, Tensor) for t in tensors):
            raise TypeError(f"{op.name}(): expected a sequence of Tensors")
        arrays = [t._data for t in tensors]
        xp = backend.common_module(arrays)
        if _limits.STATE.limit is not None:
            _limits.check_op(op.name, arrays)
        out = _run(op, xp, (arrays, *params))
        if GRAD_MODE.enabled and any(t._requires_grad for t in tensors):
            return _record(op, tensors, (tensors, *params), (arrays, *params), out)
        return _make(out)

    apply.__name__ = apply.__qualname__ = op.name
    return apply


# -- non-differentiable operations and constants ---------------------------------------------------


def nondiff(name: str, forward, *, doc: str | None = None, method=False, operators=(), aliases=(),
            unimplemented: str | None = None, batch=None, spelling: Spelling | None = None):
    """An operation without a gradient (comparisons, argmax...); with `doc`, public.

    Its result never requires grad, except where PyTorch records the op without a derivative
    (`unimplemented`, as `aten::floor_divide`): then, as there, the result requires grad and
    backward through it raises "derivative for ... is not implemented" — never a silent zero.
    """

    def apply(*args):
        if any(a.__class__ in INTERCEPTED for a in args):
            return dispatch(batch, apply, args, {})
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        wrap = any(isinstance(a, Tensor) for a in args)
        if wrap:
            xp = backend.common_module([a._data for a in args if isinstance(a, Tensor)])
            if _limits.STATE.limit is not None and len(args) >= 2:
                _limits.check_op(name, arrays)
        else:  # plain arrays: just compute
            xp = _module(next((a for a in arrays if hasattr(a, "shape")), 0.0))
        try:
            with xp.errstate(all="ignore") if xp is _np else _nullcontext:
                out = forward(xp, *arrays)
        except ValueError as exc:
            raise _explained(exc, arrays) from None
        if not wrap:
            return out
        if unimplemented and GRAD_MODE.enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return _make(out, True, _unimplemented_node(unimplemented, args, out))
        return _make(out)

    apply.__name__ = apply.__qualname__ = name
    apply._forward = forward
    NONDIFF[name] = apply
    declare_spelling(name, spelling, public=doc is not None)
    if doc is not None:
        _describe(apply, ("xp",), forward, doc)
        surface.declare(apply, method=method, operators=operators, aliases=aliases, batch=batch, batches_itself=True)
    else:
        surface.bind_operators(apply, operators, batches_itself=True)
    return apply


class _Unimplemented(Node):
    """PyTorch's `NotImplemented` node: recorded, but its derivative raises."""

    __slots__ = ("_what",)

    def _apply(self, grads: list, as_tensors: bool) -> list:
        raise RuntimeError(f"derivative for {self._what} is not implemented")


_Unimplemented.__name__ = _Unimplemented.__qualname__ = "NotImplemented"


def _unimplemented_node(what: str, args, out) -> Node:
    node = _new(_Unimplemented)
    node.next_functions = tuple(edge(a) for a in args if isinstance(a, Tensor) and a._requires_grad)
    node._seq = next(_sequence)
    node._shape = out.shape
    node._dtype = out.dtype
    node._hooks = None
    node._trace = forward_trace(node) if ANOMALY.enabled else None
    node._what = what
    return node


def like(reference, array):
    """`array` as the same kind of value as `reference`: a (constant) Tensor, or a bare array.

    Formulas use it for the constants they need (zeros, ones, positions), so that they stay
    valid in both of the engine's modes.
    """
    return _make(array) if isinstance(reference, Tensor) else array


def zeros_as(value):
    """Zeros of `value`'s shape and dtype, of the same kind as `value`."""
    data = array_of(value)
    return like(value, backend.array_module(data).zeros(data.shape, dtype=data.dtype))


def array_of(value):
    """The array behind a tensor (or the value itself)."""
    return value._data if isinstance(value, Tensor) else value


class _NullContext:
    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return None


_nullcontext = _NullContext()

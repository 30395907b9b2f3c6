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

This module declares: the op row (`defop`, `nondiff`), the tables, and the node class each op
gets (`OpNode`). What an op saves for backward is planned, kept and read back in saving.py; the
`apply` each op is compiled into, which runs it and records it, is running.py's.
"""

from __future__ import annotations

import inspect
from operator import itemgetter

from .. import backend
from ..autograd.node import Node, output_numbers
from ..autograd.tape import NODE_CLASSES
from ..tensor import InplaceClock, Tensor, _make
from . import hooks, surface
from .batching import ELEMENTWISE
from .catalogue import Catalogue
from .running import _compile_apply, _nondiff_apply
from .saving import (_ARG, _EACH, _FREED_ERROR, _RESULT, _array_now, _attached, _check_versions, _compile_saver,
                     _plain, _plan_saves)
from .spelling import Spelling, declare as declare_spelling

REGISTRY = Catalogue()  # name -> OpDef
OPS: list = []  # op code -> OpDef (a record's first field; see OpDef.code)
LEAN: list = []  # op code -> (lean plan, head, length, frees, OpDef): what backward's loop reads
NONDIFF = Catalogue()  # name -> apply of each operation without a gradient


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
        return _refs_of(self.op, self._tape.record(self._at))

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
        return _slots_of(self.op, self._tape.record(self._at))

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

    def _as_tensors(self, saved, refs=None) -> tuple:
        """The saved values as tensors in their places in the graph, for formulas that record
        (create_graph): an input's array becomes a tensor whose gradient flows to that input.
        `refs`: the record's references to its inputs, where the caller has read them."""
        op = self.op
        if refs is None:
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
        op = self.op
        record = self._tape.record(self._at)  # read once: the references, then the saved values
        children = _refs_of(op, record)
        if grad is None:
            return [None] * len(children)
        saved = _slots_of(op, record)
        if saved is None:
            raise RuntimeError(_FREED_ERROR)
        if saved:
            clock = self._clock
            if clock != InplaceClock.ticks:
                _check_versions(self, saved, clock)
            saved = self._as_tensors(saved, children) if as_tensors else self._arrays(saved, clock)
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


def _refs_of(op: OpDef, record: tuple) -> tuple:
    """A record's references to its inputs (a variadic op's are one tuple)."""
    return record[2] if op.variadic else record[2:op.head]


def _slots_of(op: OpDef, record: tuple):
    """A record's saved values as OpNode._slots gives them (None once freed)."""
    if len(record) < op.length:
        return None
    saved = record[op.head:]
    if op.list_slots:
        saved = tuple(list(v) if i in op.list_slots and v is not None else v for i, v in enumerate(saved))
    return saved


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
        self.saved_names, self.save_plan = _plan_saves(name, self.arg_names,
                                                      {n for f in formulas for n in self._wanted(f)})
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
        self.apply._op_name = name  # an op's own apply (the symbolic tracer knows each by the registry)

    def _wanted(self, formula) -> list:
        """The saved names a formula takes (after `grad`, and the index for variadic ops)."""
        return list(surface.parameter_names(formula))[2 if self.variadic else 1 :]

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
    if REGISTRY.declared(name):
        raise ValueError(f"op {name!r} is declared twice")
    if scalar is not None and domain:  # the scalar path would leak NumPy's warnings
        raise TypeError(f"op {name}: a scalar forward is for ops that make no nan or inf of finite values")
    declare_spelling(name, spelling, public=doc is not None)
    op = OpDef(name, grad_fn, forward, derivatives, nondiff=nondiff, domain=domain, variadic=variadic, batch=batch,
               frees=frees, carries=carries, floats=floats, why_zero=why_zero, scalar=scalar)
    REGISTRY.declare(name, op)
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


# -- non-differentiable operations and constants ---------------------------------------------------


def nondiff(name: str, forward, *, doc: str | None = None, method=False, operators=(), aliases=(),
            unimplemented: str | None = None, batch=None, spelling: Spelling | None = None):
    """An operation without a gradient (comparisons, argmax...); with `doc`, public.

    Its result never requires grad, except where PyTorch records the op without a derivative
    (`unimplemented`, as `aten::floor_divide`): then, as there, the result requires grad and
    backward through it raises "derivative for ... is not implemented" — never a silent zero.
    """
    apply = _nondiff_apply(name, forward, batch, unimplemented)
    apply._forward = forward
    apply._op_name = name
    NONDIFF.declare(name, apply)
    declare_spelling(name, spelling, public=doc is not None)
    if doc is not None:
        _describe(apply, ("xp",), forward, doc)
        surface.declare(apply, method=method, operators=operators, aliases=aliases, batch=batch, batches_itself=True)
    else:
        surface.bind_operators(apply, operators, batches_itself=True)
    return apply


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


# -- families of rows ---------------------------------------------------------------------------
# As JAX's standard_unop and standard_naryop: a family's shared keywords are filled in once, and
# each row states only what is its own (its forward, doc, derivatives, spelling, domain...). A row
# that lacks what its family needs fails here, naming the op, not later in a gradient or a printer.


def elementwise_op(name: str, forward, **row) -> OpDef:
    """An elementwise op (its batching rule ELEMENTWISE) that is not public by itself: add, the
    activations, clamp_min. The row gives a derivative for each tensor input, and its spelling."""
    _check_row(name, row, "elementwise_op", filled=("batch",), needs=("spelling",))
    if not set(row) - _ROW_KEYWORDS:
        raise TypeError(f"op {name}: an elementwise_op row needs a derivative formula (input=...)")
    return defop(name, forward, batch=ELEMENTWISE, **row)


def unary_op(name: str, forward, **row) -> OpDef:
    """A public elementwise function of one tensor, with its method and in-place method (exp,
    `x.exp()`, `x.exp_()`). The row gives its doc, its derivative `input=` and its spelling."""
    _check_row(name, row, "unary_op", filled=("batch", "method", "inplace"), needs=("doc", "input", "spelling"))
    return defop(name, forward, batch=ELEMENTWISE, method=True, inplace=True, **row)


def binary_op(name: str, forward, **row) -> OpDef:
    """A public elementwise function of two tensors, with its method (atan2, `x.atan2(y)`). The
    row gives its doc, its derivatives `input=` and `other=`, its spelling (and `inplace`)."""
    _check_row(name, row, "binary_op", filled=("batch", "method"), needs=("doc", "input", "other", "spelling"))
    return defop(name, forward, batch=ELEMENTWISE, method=True, **row)


def elementwise_nondiff(name: str, forward, **row):
    """A public elementwise operation without a gradient, with its method (eq, isnan,
    logical_and): the row gives its doc and its spelling."""
    _check_row(name, row, "elementwise_nondiff", filled=("batch", "method"), needs=("doc", "spelling"))
    return nondiff(name, forward, batch=ELEMENTWISE, method=True, **row)


# defop's own keywords: any other a row gives is a derivative
_ROW_KEYWORDS = frozenset(inspect.signature(defop).parameters) - {"name", "forward", "derivatives"}


def _check_row(name: str, row: dict, family: str, *, filled: tuple, needs: tuple) -> None:
    """A row of `family` states none of the keywords the family fills, and every one it needs."""
    stated = [k for k in filled if k in row]
    if stated:
        raise TypeError(f"op {name}: a {family} row has {', '.join(stated)} from its family; the row may not "
                        "state it")
    missing = [k for k in needs if row.get(k) is None]
    if missing:
        raise TypeError(f"op {name}: a {family} row needs {', '.join(k + '=' for k in missing)}")

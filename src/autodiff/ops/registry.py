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
from operator import itemgetter

from .. import _limits, backend, dtypes
from ..autograd.anomaly import ANOMALY, forward_trace
from ..autograd.grad_mode import STATE as GRAD_MODE
from ..autograd.node import Node, _sequence, edge, input_node, output_numbers
from ..tensor import InplaceClock, Tensor, _make, as_array, legacy_type_name
from . import hooks, surface
from .batching import INTERCEPTED, Batched, dispatch
from .spelling import Spelling, declare as declare_spelling

REGISTRY: dict[str, OpDef] = {}
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
    """The backward node of a registry op; subclasses are generated, one per op.

    `_saved` holds what the formulas asked for (tensors, constants, and the result as its bare
    array). Backward without recording reads each saved tensor's array when it runs, as PyTorch
    reads a saved variable: a change made through `.data` shows there, while an in-place
    operation fails the version check instead.
    """

    __slots__ = ("_saved", "_clock")
    op: OpDef

    def _arrays(self) -> tuple:
        """The saved values with every tensor (or list of tensors) replaced by its array now."""
        return tuple([array_of(t) for t in v] if v.__class__ is list else array_of(v) for v in self._saved)

    def _apply(self, grads: list, as_tensors: bool) -> list:
        grad = grads[0]
        if grad is None:
            return [None] * len(self._next)
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED_ERROR)
        op = self.op
        if saved:
            if self._clock != InplaceClock.ticks:
                _check_versions(self, saved)
            if as_tensors:
                index = op.result_index
                if index is not None:  # re-attach the saved result to this node
                    result = _make(saved[index], True, self)
                    reattach = hooks.current().reattach  # a transform's own tensor for it (derive's)
                    if reattach is not None:
                        result = reattach(self, result)
                    saved = saved[:index] + (result,) + saved[index + 1 :]
            else:
                saved = self._arrays()
        children = self._next
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
        if self._saved is None:
            raise RuntimeError(_FREED_ERROR)
        return tuple(self._saved)


def _check_versions(node: OpNode, saved) -> None:
    """Raise PyTorch's error if a saved tensor was changed in place after it was saved, or had
    its history taken away by detach_() (which PyTorch checks first)."""
    for value in saved:
        if isinstance(value, Tensor) and getattr(value, "_detached_at", 0) > node._clock:
            raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                               "This is not supported, please use out-of-place `.detach()` instead")
    for value in saved:
        if isinstance(value, Tensor) and value._version_log:
            log = value._version_log
            expected = sum(1 for tick in log if tick <= node._clock)
            if expected != len(log):
                producer = value.grad_fn
                origin = ""
                if producer is not None and not hasattr(producer, "variable"):
                    # PyTorch names the forward operation: "Mul" for MulBackward0.
                    operation = re.sub(r"Backward\d*$", "", type(producer).__name__)
                    origin = f", which is output {value._output_nr} of {operation},"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an "
                    f"inplace operation: [{legacy_type_name(value)} {list(value.shape)}]{origin} is at "
                    f"version {len(log)}; expected version {expected} instead. Hint: enable anomaly "
                    "detection to find the operation that failed to compute its gradient, with "
                    "autodiff.autograd.set_detect_anomaly(True, check_nan=False)."
                )


class OpDef:
    """One operation: forward, derivative formulas, and the plan for what to save."""

    def __init__(self, name, grad_fn, forward, derivatives, *, nondiff=(), domain=False, variadic=False, batch=None,
                 frees=False, carries=(), floats=False, why_zero=None):
        self.name = name
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
        self.node_class = type(
            self.grad_fn_name, (OpNode,), {"__slots__": (), "op": self, "_frees": frees, "_plan": self.plan,
                                        "__module__": __name__}
        )
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


def backward_name(op_name: str) -> str:
    """PyTorch's name for an op's node: each word title-cased, then `Backward0`
    (`log_softmax` -> `LogSoftmaxBackward0`, `log1p` -> `Log1PBackward0`)."""
    return "".join(word.title() for word in op_name.split("_")) + "Backward0"


def defop(name: str, forward, *, grad_fn: str | None = None, doc: str | None = None, method=False,
          inplace: bool = False, operators=(), aliases=(), nondiff=(), domain=False, variadic=False, batch=None,
          frees=False, carries=(), floats=False, why_zero: str | None = None, spelling: Spelling | None = None,
          **derivatives) -> OpDef:
    """Declare an operation; returns its OpDef, whose `apply` runs it and records it.

    With `doc`, `apply` is also the public function of that name (see surface.py). `spelling`
    is how formulas write it (ops/spelling.py): by default a call of its name where it is public."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is declared twice")
    declare_spelling(name, spelling, public=doc is not None)
    op = OpDef(name, grad_fn, forward, derivatives, nondiff=nondiff, domain=domain, variadic=variadic, batch=batch,
               frees=frees, carries=carries, floats=floats, why_zero=why_zero)
    REGISTRY[name] = op
    if doc is not None:
        function = _public_function(op, doc)
        surface.declare(function, method=method, inplace=inplace, operators=operators, aliases=aliases,
                        batch=batch, batches_itself=function is op.apply)
    else:
        surface.bind_operators(op.apply, operators, batches_itself=True)
    return op


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


def _node(op: OpDef, children, nrs, args, arrays, out):
    """The node of a recorded op, for every case: `_recorded` is the common one, inline."""
    node = _new(op.node_class)
    node._next = children
    node._nrs = nrs
    node._seq = next(_sequence)
    node._shape, node._dtype = (_NO_DIMS, _F64_DTYPE) if out.__class__ is _F64 else (out.shape, out.dtype)
    node._hooks = None
    node._trace = forward_trace(node) if ANOMALY.enabled else None  # up to the caller
    saves = op.saves
    if saves is _SAVES_ARGS:
        node._saved = args
    elif saves is _SAVES_RESULT:
        node._saved = (out,)
    elif saves is None:
        node._saved = ()
    else:
        node._saved = saves(args, arrays, out)
    if node._saved and len(children) > 1 and not op.variadic and None in children:
        _drop_unused(op, node, children)
    node._clock = InplaceClock.ticks
    return node


def _inputs_of(values) -> tuple:
    """(nodes, output numbers) of an op's inputs: None and 0 for an input that is no tensor or
    needs no gradient."""
    children = tuple(input_node(v) if isinstance(v, Tensor) else None for v in values)
    nrs = tuple(v._output_nr if c is not None else 0 for v, c in zip(values, children))
    return children, output_numbers(nrs)


def _recorded(out, node_class, children, nrs, saved) -> Tensor:
    """The result of a recorded op and its node, built in one go: `_node` and `_make` for the
    common ops (no anomaly mode, no input without an edge), as the hot path of every operation."""
    node = node_class()
    node._next = children
    node._nrs = nrs
    node._seq = next(_sequence)
    if out.__class__ is _F64:  # a 0-d float64 result: its metadata without asking NumPy
        node._shape = _NO_DIMS
        node._dtype = _F64_DTYPE
    else:
        node._shape = out.shape
        node._dtype = out.dtype
    node._hooks = node._trace = None
    node._saved = saved
    node._clock = InplaceClock.ticks
    result = _new(Tensor)
    result._data = out
    result._requires_grad = True
    result.grad_fn = node
    result._output_nr = 0
    result._grad = result._version_log = result._backward_hooks = result._accumulator = None
    return result


def _drop_unused(op: OpDef, node, children) -> None:
    """Keep only the saved values that the inputs needing a gradient will use."""
    active = (children[0] is not None, children[1] is not None) if len(children) == 2 else \
        tuple(child is not None for child in children)
    keep = op.keep.get(active)
    if keep is None:
        used = set()
        for uses, needed in zip(op.uses, active):
            if needed:
                used |= uses
        keep = op.keep[active] = _keeper(tuple(i in used for i in range(len(op.saved_names))))
    if keep is not _KEEP_ALL:
        node._saved = keep(node._saved)


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
    forward, domain, batch, floats = op.forward, op.domain, op.batch, op.floats
    grows = op.name in _limits.GROWING_UNARY
    limits = _limits.STATE
    node_class, saves = op.node_class, op.saves

    def apply(input, *params):
        if input.__class__ is not Tensor:
            if not isinstance(input, Tensor):
                if floats:
                    input = _floating(input)
                return forward(_module(input), input, *params)  # plain arrays: just compute
            if input.__class__ in INTERCEPTED:
                return dispatch(batch, apply, (input, *params), {})
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
        if not input._requires_grad or not GRAD_MODE.enabled:
            return _make(out)
        first = input.grad_fn or input_node(input)
        if saves is _SAVES_RESULT and not ANOMALY.enabled:  # tanh, exp, sigmoid...
            nrs = _ZERO if not input._output_nr else (input._output_nr,)
            return _recorded(out, node_class, (first,), nrs, (out,))
        nrs = _ZERO if not input._output_nr else (input._output_nr,)
        node = _node(op, (first,), nrs, (input, *params), (data, *params), out)
        return _make(out, True, node)

    apply.__name__ = apply.__qualname__ = op.name
    return apply


def _binary_apply(op: OpDef):
    forward, domain, batch = op.forward, op.domain, op.batch
    limits = _limits.STATE

    node_class, saves = op.node_class, op.saves

    def apply(input, other):
        if input.__class__ is Tensor and other.__class__ is Tensor:  # the common case: every +, *...
            a = input._data
            b = other._data
            if a.dtype != b.dtype:  # computed in PyTorch's dtype, not NumPy's (int64 and float32: float32)
                a, b = _promoted(a, b)
            input_is_tensor = other_is_tensor = True
            needs = input._requires_grad or other._requires_grad
        elif input.__class__ is _NDARRAY and other.__class__ is _NDARRAY:  # formulas, without recording
            try:
                return forward(_np, input, other)
            except ValueError as exc:
                raise _explained(exc, (input, other)) from None
        else:
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
        if not needs or not GRAD_MODE.enabled:
            return _make(out)
        if input_is_tensor and other_is_tensor:
            first = input.grad_fn or input_node(input)
            second = other.grad_fn or input_node(other)
            nrs = _ZEROS if not (input._output_nr or other._output_nr) else (input._output_nr, other._output_nr)
            if first is not None and second is not None and not ANOMALY.enabled:
                if saves is _SAVES_ARGS:  # mul, div...
                    return _recorded(out, node_class, (first, second), nrs, (input, other))
                if saves is None:  # add, sub...
                    return _recorded(out, node_class, (first, second), nrs, ())
            children = (first, second)
        else:
            children, nrs = _inputs_of((input, other))
        return _make(out, True, _node(op, children, nrs, (input, other), (a, b), out))

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
            children, nrs = _inputs_of([args[i] for i in diff_positions])
            return _make(out, True, _node(op, children, nrs, args, tuple(arrays), out))
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
            children, nrs = _inputs_of(tensors)
            return _make(out, True, _node(op, children, nrs, (tensors, *params), (arrays, *params), out))
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

"""How an op runs and is recorded: the `apply` function compiled for each op (registry.py's
OpDef), by the shape of its arguments: one tensor (`_unary_apply`), two (`_binary_apply`), any
(`_general_apply`), a list (`_variadic_apply`), and an op without a gradient's (`_nondiff_apply`).

These functions run once per operation, forward and backward, so they are written for speed:
tensors and nodes are built inline and the array module is found without a call for NumPy.
The common cases (an op of one tensor that saves its result, a binary op of two tensors on the
open tape) append their record inline; the others go through `_record_one`, `_record_pair` and
`_record`, the one that handles every case.
"""

from __future__ import annotations

from _thread import get_ident as _ident
from typing import TYPE_CHECKING

from .. import _limits, backend, dtypes
from ..autograd.anomaly import ANOMALY, forward_stack, forward_trace
from ..autograd.grad_mode import EVERYWHERE
from ..autograd.grad_mode import STATE as GRAD_MODE
from ..autograd.node import AccumulateGrad, Node, _sequence, accumulator_of, edge, output_numbers
from ..autograd.tape import CHUNK, SCALAR_META, SOURCES, WINDOW, Tape, tape_for_leaves
from ..tensor import Tensor, _make, as_array
from .batching import INTERCEPTED, dispatch
from .saving import _SAVES_ARGS, _SAVES_RESULT, _drop_unused, _kept

if TYPE_CHECKING:
    from .registry import OpDef

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
        tape.traces[at] = forward_stack()
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



class ShapeError(RuntimeError):
    """Operand shapes that do not fit together; `shapes` holds them for callers that explain."""

    def __init__(self, message: str, shapes: tuple = ()) -> None:
        super().__init__(message)
        self.shapes = shapes



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



def _nondiff_apply(name: str, forward, batch, unimplemented: str | None):
    """The apply of an operation without a gradient (registry.py's nondiff)."""

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



class _NullContext:
    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return None


_nullcontext = _NullContext()

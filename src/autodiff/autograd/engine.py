"""The backward engine: one iterative loop over the graph, in a deterministic order.

Most runs (backward() with no hooks, targets, recording or anomaly mode anywhere in the graph)
take the lean path (`_run_tapes`): the records of each tape (autograd/tape.py) from the newest
back, their formulas called on the saved arrays, gradients kept in a list per tape and added
into the leaves' `.grad` at the end; no node objects, no sort. Every other run takes the general
loop below, over the nodes themselves:

1. Walk the nodes reachable from the roots and sort them newest first: every node is created
   after the nodes it leads to, so that is an order in which each node runs once all its
   gradients have arrived, and PyTorch's order, with no heap and no count per node.
2. Seed the roots' gradients, then run the nodes in that order: hooks, the derivative
   formulas, then hand each input its gradient. A gradient that arrives in a broadcast shape
   is summed back to the input's shape here, in one place for all ops. Most nodes take a lean
   path: an op's formulas called straight on its saved arrays (no hooks, targets, recording).
3. A leaf's AccumulateGrad adds into `.grad` (`autograd.grad` captures instead) as soon as its
   last gradient has arrived, as PyTorch runs leaves first when they are ready.

Gradients flow as tensors when the backward pass itself is recorded (`create_graph=True`),
and otherwise as the bare arrays (formulas work on both; see ops/registry.py). They become
tensors wherever a user sees them: hooks, `.grad`, the results of `autograd.grad`.

Nothing here recurses, so a graph of any depth runs; saved values are freed as nodes finish
unless `retain_graph` is set.
"""

from __future__ import annotations

import contextvars
import threading
from operator import attrgetter, itemgetter

from .. import backend
from ..creation import zeros_like
from ..ops import hooks
from ..ops.registry import LEAN
from ..ops.saving import _FREED_ERROR
from ..ops.shape import COPY, SUM_TO, TO_DTYPE, sum_to_recorded
from ..tensor import InplaceClock, Tensor, _alias, _make, as_array
from .anomaly import ANOMALY, running, warn_forward_trace
from .grad_mode import FORWARD_AD
from .grad_mode import STATE as GRAD_MODE
from .node import AccumulateGrad, Node, edge
from .tape import SCALAR_META as _SCALAR_META
from .tape import Tape


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate into `.grad` of the leaves the gradient of `tensors` (weighted by `grad_tensors`)."""
    tensors = _as_tuple(tensors)
    seeds = _make_seeds(tensors, grad_tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    keep_graph = create_graph if retain_graph is None else retain_graph
    if inputs is None and not create_graph and _run_tapes(tensors, seeds, keep_graph):
        return
    roots = _root_edges(tensors)
    targets = None if inputs is None else [(_input_edge(t), t) for t in inputs]
    run_backward(roots, seeds, keep_graph, create_graph, targets=targets, accumulate=True)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph: bool = False,
    allow_unused=None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
):
    """The gradients of `outputs` with respect to `inputs`, returned without touching `.grad`."""
    if is_grads_batched:
        raise NotImplementedError("autodiff.autograd.grad does not support is_grads_batched")
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    seeds = _make_seeds(outputs, grad_outputs)
    roots = _root_edges(outputs)
    keep_graph = create_graph if retain_graph is None else retain_graph
    targets = [(_input_edge(t), t) for t in inputs]
    captured = run_backward(roots, seeds, keep_graph, create_graph, targets=targets, accumulate=False)
    result = []
    for i, (g, t) in enumerate(zip(captured, inputs)):
        if g is None:
            if materialize_grads:
                # PyTorch's zeros_like(input, requires_grad=create_graph): a leaf of the new graph
                g = zeros_like(t).requires_grad_(bool(create_graph))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
        result.append(g)
    return tuple(result)


# -- preparing a run -------------------------------------------------------------------------------


def _as_tuple(value) -> tuple:
    if isinstance(value, Tensor):
        return (value,)
    if value is None:
        return ()
    return tuple(value)


def _root_edges(tensors) -> list:
    roots = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"element {i} of tensors is not a Tensor")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(edge(t))
    return roots


def _input_edge(t: Tensor):
    if not isinstance(t, Tensor):
        raise TypeError("inputs must be Tensors")
    if not t._requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return edge(t)


def _make_seeds(tensors, grad_tensors) -> list:
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    else:
        grad_tensors = (grad_tensors,) if isinstance(grad_tensors, Tensor) else tuple(grad_tensors)
        if len(grad_tensors) != len(tensors):
            raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    seeds = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        data = t._data
        if g is None:
            if data.__class__ in backend.NUMPY_SCALAR_CLASSES:  # a 0-d result: its own one
                seeds.append(_make(data.dtype.type(1)))
                continue
            if data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            ones = backend.array_module(data).ones(data.shape, dtype=data.dtype)
            seeds.append(_make(backend.compact(ones)))
            continue
        if not isinstance(g, Tensor):
            g = _make(as_array(g, dtype=t.dtype, device=t.device))
        if g._data.shape != data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and output[{i}] has a "
                f"shape of {t.shape!r}."
            )
        seeds.append(g)
    return seeds


def _count_dependencies(root_nodes) -> dict:
    """For every node reachable from the roots, the number of edges that lead into it."""
    stack = list(dict.fromkeys(root_nodes))
    # Roots start at 0 and are walked once: a root reached from another root (`y` and
    # `z = y ** 3` both differentiated) waits for the gradient that reaches it from there.
    deps: dict[Node, int] = dict.fromkeys(stack, 0)
    while stack:
        node = stack.pop()
        for child in node._next:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:
                deps[child] = 1
                stack.append(child)
    return deps


def topological(root_nodes, deps=None) -> list:
    """Every node reachable from the roots, each after all the nodes that lead into it (Kahn's
    algorithm on the counted edges; `deps` as _count_dependencies gives them)."""
    remaining = dict(deps if deps is not None else _count_dependencies(root_nodes))
    ready = [n for n in dict.fromkeys(root_nodes) if remaining.get(n, 0) == 0]
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for child in node._next:
            if child is not None:
                remaining[child] -= 1
                if remaining[child] == 0:
                    ready.append(child)
    return order


def _schedule(root_nodes) -> tuple:
    """The nodes reachable from the roots, newest first, how many edges lead into each leaf,
    and each node's edges.

    Every node is created after the nodes it leads to, so newest first is an order in which a
    node runs only once every node that feeds it a gradient has run: PyTorch's order, with no
    heap and no count per node. Leaves (AccumulateGrad) are left out of the order: they run as
    soon as their last gradient arrives, as PyTorch runs them first when ready.
    """
    seen = set(root_nodes)
    order = [n for n in root_nodes if n.__class__ is not AccumulateGrad]
    leaf_edges: dict = {}
    edges: dict = {}  # node -> (_next, _nrs), read once (a record's node computes them)
    for node in order:  # breadth first: the list grows as it is read
        children = edges[node] = node._edges()
        for child in children[0]:
            if child.__class__ is AccumulateGrad:
                leaf_edges[child] = leaf_edges.get(child, 0) + 1
            elif child is not None and child not in seen:
                seen.add(child)
                order.append(child)
    order.sort(key=_creation, reverse=True)
    return order, leaf_edges, edges


_creation = attrgetter("_seq")


def _capture_only(capture_at: dict, needed: set, edges: dict) -> set:
    """The targets of autograd.grad that lead to no other target: their gradient is taken as it
    arrives, and their node is not run (nor its hooks, nor is it freed), as in PyTorch."""
    return {node for node in capture_at if node.__class__ is not AccumulateGrad
            and not any(child in needed for child in (edges[node][0] if node in edges else node._next))}


def _needed_nodes(order, target_nodes, edges: dict) -> set:
    """The nodes from which some target can be reached: the only ones worth running."""
    needed = set(target_nodes)
    for node in reversed(order):  # each node after the nodes it leads to
        for child in edges[node][0]:
            if child in needed:
                needed.add(node)
                break
    return needed


# -- the lean path: the tapes' records, newest first ---------------------------------------------------

_F64 = backend.np.float64
_F64_DTYPE = backend.np.dtype(_F64)
_NDARRAY = backend.np.ndarray
_NO_DIMS = ()


def _run_tapes(tensors, seeds, keep_graph: bool) -> bool:
    """backward() on the records themselves, where nothing needs more (see the module's
    docstring); False, having done nothing, where the general loop must run.

    Each tape is read as it was when backward began (its owner may go on appending in another
    thread), under its lock, taken in the tapes' order. On a failure part-way, the leaves that
    nothing still pending leads to get their gradient, then the exception goes on (PyTorch's
    AccumulateGrad has run for them by then)."""
    if ANOMALY.enabled or FORWARD_AD.token is not None:
        return False
    tapes = _lean_tapes(tensors)
    if tapes is None:
        return False
    locked = [tapes[serial][0] for serial in sorted(tapes)]
    for tape in locked:
        tape.lock.acquire()
        tape.busy = True  # no sweep while the records are read (a collection may come meanwhile)
    leaves: dict = {}  # AccumulateGrad -> its place in `sums`
    sums: list = []  # each leaf's gradient so far
    try:
        if len(tapes) == 1:
            _run_one_tape(*tapes.values(), tensors, seeds, keep_graph, leaves, sums)
        else:
            _run_many_tapes(tapes, tensors, seeds, keep_graph, leaves, sums)
    finally:
        for tape in reversed(locked):
            tape.busy = False
            tape.lock.release()
    with _ACCUMULATING:
        for leaf, k in leaves.items():
            _accumulate_array(leaf.variable, sums[k])
    return True


def _run_many_tapes(tapes: dict, tensors, seeds, keep_graph: bool, leaves: dict, sums: list) -> None:
    buffers = {serial: [None] * n for serial, (tape, n, _, _) in tapes.items()}
    # Each tape's lowest index with a gradient pending (a list, which its link targets lower),
    # and highest with one to come (a seed, or a link from another tape): a tape shared by
    # several graphs (see tape.JOIN_BYTES) is read only between the two.
    lows = {serial: [n] for serial, (tape, n, _, _) in tapes.items()}
    tops = {serial: 0 for serial in tapes}
    for t, seed in zip(tensors, seeds):
        serial, at = t._node.serial, t._at
        buffer = buffers[serial]
        buffer[at] = seed._data if buffer[at] is None else buffer[at] + seed._data
        lows[serial][0] = min(lows[serial][0], at)
        tops[serial] = max(tops[serial], at + 1)
    for tape, _, links, _ in tapes.values():
        for node, _, _ in links:
            if node.__class__ is not AccumulateGrad:
                serial = node._tape.serial
                tops[serial] = max(tops[serial], node._at + 1)
    # Every run of records of every tape, newest first: PyTorch's order across graphs too.
    runs = []
    for tape, n, _, marks in tapes.values():
        top = tops[tape.serial]
        for k in range(0, len(marks), 3):
            if marks[k] < top:
                runs.append((marks[k + 1], tape, marks[k], min(marks[k + 3] if k + 3 < len(marks) else n, top)))
    if len(runs) > 1:  # one tape of one run (a small graph) has its order already
        runs.sort(key=itemgetter(0), reverse=True)
    targets: dict = {}  # serial -> what each of the tape's links leads to
    # Each tape's records as one list; a tape with no sealed chunks lends its own list, which
    # backward frees in place as `repack` would (its owner may append meanwhile; it seals only
    # once the lock is released).
    records = {serial: tape.unpack() if tape.base else tape.records for serial, (tape, _, _, _) in tapes.items()}
    # Grad mode is left as it is: the formulas get arrays only (no tape here keeps a tensor), on
    # which ops record nothing whatever the mode.
    quiet = backend.quiet()
    failed: list = []
    try:
        for _, tape, start, end in runs:
            serial = tape.serial
            low = lows[serial]
            if low[0] >= end:  # nothing pending in this run
                continue
            links = targets.get(serial)
            if links is None:
                links = targets[serial] = _link_targets(tapes[serial][2], buffers, records, lows, leaves, sums)
            _run_records(records[serial], buffers[serial], links, start, end, keep_graph, failed, low)
    except BaseException:
        if failed:
            _keep_complete_leaves(tapes, records, buffers, (tape.serial, failed[0]), leaves, sums)
        raise
    finally:
        backend.unquiet(quiet)
        if not keep_graph:  # their saved values were freed
            for serial, (tape, _, _, _) in tapes.items():
                if tape.base:
                    tape.repack(records[serial])


def _run_one_tape(entry: tuple, tensors, seeds, keep_graph: bool, leaves: dict, sums: list) -> None:
    """_run_tapes for a graph of one tape (every small graph): the same, without its tables
    per tape, and its runs newest first as they were appended, without a sort."""
    tape, n, links, marks = entry
    buffer = [None] * n
    low, top = [n], 0  # as in _run_many_tapes (a tape alone links to leaves only)
    for t, seed in zip(tensors, seeds):
        at = t._at
        buffer[at] = seed._data if buffer[at] is None else buffer[at] + seed._data
        low[0] = min(low[0], at)
        top = max(top, at + 1)
    records = tape.unpack() if tape.base else tape.records  # as in _run_many_tapes
    links = _link_targets(links, {tape.serial: buffer}, {tape.serial: records}, {}, leaves, sums)
    quiet = backend.quiet()
    failed: list = []
    try:
        end = top
        for k in range(len(marks) - 3, -1, -3):
            start = marks[k]
            if start < end:
                _run_records(records, buffer, links, start, end, keep_graph, failed, low)
                if low[0] >= start:  # nothing pending below this run
                    break
                end = start
    except BaseException:
        if failed:
            serial = tape.serial
            _keep_complete_leaves({serial: entry}, {serial: records}, {serial: buffer}, (serial, failed[0]), leaves,
                                  sums)
        raise
    finally:
        backend.unquiet(quiet)
        if not keep_graph and tape.base:
            tape.repack(records)


def _keep_complete_leaves(tapes: dict, records: dict, buffers: dict, failed: tuple, leaves: dict,
                          sums: list) -> None:
    """After a record failed part-way: give every leaf that nothing still pending leads to its
    gradient now (PyTorch has run its AccumulateGrad already), and forget the others (their
    gradient is incomplete, and PyTorch's are never run). Pending: the failed record, every
    record with a gradient waiting, and all they lead to."""
    stack = [failed] + [(serial, i) for serial, buffer in buffers.items() for i, g in enumerate(buffer)
                        if g is not None]
    seen = set(stack)
    incomplete = set()
    while stack:
        serial, i = stack.pop()
        record = records[serial][i]
        head, op = LEAN[record[0]][1], LEAN[record[0]][4]
        for ref in (record[2] if op.variadic else record[2:head]):
            if ref is None:
                continue
            if ref > 0:
                place = (serial, i - ref)
            else:
                node = tapes[serial][2][~ref][0]
                if node.__class__ is AccumulateGrad:
                    incomplete.add(node)
                    continue
                place = (node._tape.serial, node._at)
            if place not in seen:
                seen.add(place)
                stack.append(place)
    with _ACCUMULATING:
        for leaf, k in leaves.items():
            if leaf not in incomplete:
                _accumulate_array(leaf.variable, sums[k])
    leaves.clear()


def _lean_tapes(tensors):
    """{serial: (tape, records, links, runs)} of every tape the roots' records reach, each as it
    is now (its length, its links and its runs: what its owner appends from now on is not read),
    or None where the run needs the general loop: a root that is no op's result, a node object
    (a custom Function's), hooks or retained gradients, a record that keeps tensors, or an
    in-place change since recording."""
    ticks = InplaceClock.ticks
    tapes: dict = {}
    stack = []
    for t in tensors:
        tape = t._node if isinstance(t, Tensor) else None
        if tape.__class__ is not Tape or not t._requires_grad:
            return None
        if tape.serial not in tapes:
            tapes[tape.serial] = None
            stack.append(tape)
    while stack:
        tape = stack.pop()
        with tape.lock:  # (its owner may seal meanwhile, which changes `records` and `base`)
            n = len(tape)  # first: every link and run a record below n uses is there already
            links = tape.links[:]
            marks = tape.runs[:]
        if tape.special or tape.hooks or marks[2] != ticks:
            return None
        while marks[-3] >= n:  # a run begun since
            del marks[-3:]
        tapes[tape.serial] = (tape, n, links, marks)
        for node, _, _ in links:
            if node.__class__ is AccumulateGrad:
                if node._hooks or node.variable._backward_hooks:
                    return None
                continue
            other = getattr(node, "_tape", None)
            if other is None:
                return None
            if other.serial not in tapes:
                tapes[other.serial] = None
                stack.append(other)
    return tapes


def _link_targets(links: list, buffers: dict, records: dict, lows: dict, leaves: dict, sums: list) -> list:
    """For each of a tape's links, (buffer, index, (shape, dtype), low) where a gradient sent
    through it goes: a record of an older tape (`low`: that tape's lowest pending index, which
    the gradient may lower), or a leaf (its place in `sums`, one per AccumulateGrad; low None)."""
    targets = []
    for node, _, _ in links:
        if node.__class__ is AccumulateGrad:
            k = leaves.get(node)
            if k is None:
                k = leaves[node] = len(sums)
                sums.append(None)
            meta = (node._shape, node._dtype)
            targets.append((sums, k, _SCALAR_META if meta == _SCALAR_META else meta, None))
        else:
            serial = node._tape.serial
            targets.append((buffers[serial], node._at, records[serial][node._at][1], lows[serial]))
    return targets


def _run_records(records, buffer, links, start, end, keep_graph, failed: list, low: list) -> None:
    """Records end-1 down to start: each one's formulas on its saved arrays, each gradient added
    into its input's place; on a failure, the record's index goes into `failed`. `low[0]` is
    the lowest index with a gradient pending: below it, nothing is left to do. (The hot loop of
    backward: written out, without calls of its own.)"""
    free = not keep_graph
    i = end
    lowest = low[0]
    try:
        for i in range(end - 1, start - 1, -1):
            g = buffer[i]
            if g is None:
                if i < lowest:
                    break
                continue
            buffer[i] = None
            record = records[i]
            plan, head, length, frees, op = LEAN[record[0]]
            if plan is None or frees and len(record) < length:  # three inputs or more, a list of them, or freed
                reached = _run_record(records, buffer, links, i, record, op, g)
                if reached < lowest:
                    lowest = reached
            else:
                for f, j, r in plan:
                    ref = record[r]
                    if ref is None:
                        continue
                    if j > 0:  # one saved value
                        gi = f(g, record[j])
                    elif f is None:  # the gradient as it is
                        gi = g
                    else:  # none (0), or every one (-1)
                        gi = f(g) if j == 0 else f(g, record[head:])
                    if ref > 0:  # a record of this tape, `ref` places back
                        ref = i - ref
                        meta = records[ref][1]
                        if gi.__class__ is _F64:  # a 0-d float64 for a 0-d float64 input needs nothing
                            if meta is not _SCALAR_META:
                                gi = _conformed(gi, meta, op, r - 2)
                        elif gi.__class__ is not _NDARRAY or gi.shape != meta[0] or gi.dtype is not meta[1]:
                            gi = _conformed(gi, meta, op, r - 2)
                        previous = buffer[ref]
                        buffer[ref] = gi if previous is None else previous + gi
                        if ref < lowest:
                            lowest = ref
                        continue
                    into, at, meta, below = links[~ref]  # a record of an older tape, or a leaf
                    if gi.__class__ is _F64:
                        if meta is not _SCALAR_META:
                            gi = _conformed(gi, meta, op, r - 2)
                    elif gi.__class__ is not _NDARRAY or gi.shape != meta[0] or gi.dtype is not meta[1]:
                        gi = _conformed(gi, meta, op, r - 2)
                    previous = into[at]
                    into[at] = gi if previous is None else previous + gi
                    if below is not None and at < below[0]:
                        below[0] = at
            if free and frees:
                records[i] = record[:head]  # free the saved values
    except BaseException:
        failed.append(i)
        raise
    low[0] = lowest


def _run_record(records, buffer, links, i, record, op, g) -> int:
    """One record that the loop above does not run itself: the op's general callers. Returns
    the lowest index of this tape it sent a gradient to (`i` where none)."""
    if len(record) < op.length:
        raise RuntimeError(_FREED_ERROR)
    refs = record[2] if op.variadic else record[2:op.head]
    lowest = i
    for position, (ref, gi) in enumerate(zip(refs, _outputs(op, record, g))):
        if ref is None or gi is None:
            continue
        below = None
        if ref > 0:
            into, at, meta = buffer, i - ref, records[i - ref][1]
            lowest = min(lowest, at)
        else:
            into, at, meta, below = links[~ref]
        gi = _conformed(gi, meta, op, position)
        previous = into[at]
        into[at] = gi if previous is None else previous + gi
        if below is not None and at < below[0]:
            below[0] = at
    return lowest


def _outputs(op, record, g) -> list:
    """The gradients of a record's inputs, through the op's callers (as OpNode._apply on arrays)."""
    saved = record[op.head:]
    if op.list_slots:
        saved = tuple(list(v) if k in op.list_slots and v is not None else v for k, v in enumerate(saved))
    if op.variadic:
        call = op.callers[0]
        return [None if ref is None else call(g, saved, i) for i, ref in enumerate(record[2])]
    return [None if ref is None else call(g, saved) for ref, call in zip(record[2:op.head], op.callers)]


def _conformed(g, meta, op, position: int):
    """`g` summed back to the input's shape and cast to its dtype, where it is not already."""
    shape, dtype = meta
    if g.__class__ is _NDARRAY and g.shape == shape and g.dtype is dtype:
        return g
    if not hasattr(g, "shape"):
        raise TypeError(f"Function {op.grad_fn_name} returned a {type(g).__name__} as gradient {position}; "
                        "expected a Tensor or None")
    if g.shape != shape:
        if g.__class__ is _NDARRAY and g.ndim == len(shape) + 1 and g.shape[1:] == shape:
            g = g.sum(0)  # a batch's gradient of a bias (the common case): SUM_TO's very sum, sooner
        elif not _is_expandable(shape, g.shape):
            raise RuntimeError(
                f"Function {op.grad_fn_name} returned an invalid gradient at index {position} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}"
            )
        else:
            g = SUM_TO.forward(None, g, shape)
    if g.dtype is not dtype and g.dtype != dtype:
        g = TO_DTYPE.apply(g, dtype)
    return g


# -- the loop ----------------------------------------------------------------------------------------


# Reentrant backward (a custom Function's backward that runs backward itself) nests Python calls;
# as PyTorch does to escape the stack's limit, a backward this deep in one thread runs in a
# fresh thread, which the caller waits for.
_REENTRANT = threading.local()
_MAX_REENTRANT_DEPTH = 40


def run_backward(roots, seeds, keep_graph: bool, create_graph: bool, *, targets=None, accumulate=True):
    depth = getattr(_REENTRANT, "depth", 0)
    if depth >= _MAX_REENTRANT_DEPTH:
        return _in_fresh_thread(run_backward, roots, seeds, keep_graph, create_graph, targets=targets,
                                accumulate=accumulate)
    _REENTRANT.depth = depth + 1
    try:
        return _run_backward(roots, seeds, keep_graph, create_graph, targets=targets, accumulate=accumulate)
    finally:
        _REENTRANT.depth = depth


def _in_fresh_thread(function, *args, **kwargs):
    """function(*args, **kwargs) in a new thread with this one's grad mode and context; its
    result, or its exception, as if called here."""
    context = contextvars.copy_context()
    modes = (GRAD_MODE.enabled, GRAD_MODE.inference)
    outcome: dict = {}

    def work() -> None:
        GRAD_MODE.enabled, GRAD_MODE.inference = modes
        try:
            outcome["result"] = context.run(function, *args, **kwargs)
        except BaseException as raised:  # noqa: BLE001 - handed back to the waiting thread
            outcome["error"] = raised

    worker = threading.Thread(target=work, name="autodiff-reentrant-backward")
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _run_backward(roots, seeds, keep_graph: bool, create_graph: bool, *, targets=None, accumulate=True):
    """Run backward from `roots` (edges) seeded with `seeds` (tensors).

    `targets` is a list of `(edge, tensor)` to capture the gradients of; with `accumulate` they
    (and only they) receive `.grad`, otherwise nothing is accumulated and the captured
    gradients are returned in target order.
    """
    root_nodes = list(dict.fromkeys(node for node, _ in roots))
    order, leaf_edges, edges = _schedule(root_nodes)
    # Inside a forward-mode level the formulas run on tensors, so that they carry tangents (and
    # where a transform asks, derive's tracer: their expressions, without a graph of them).
    as_tensors = create_graph or FORWARD_AD.token is not None or hooks.current().tensors_in_backward

    capture_at: dict = {}
    captured: list = []
    needed = None
    capture_only: set = set()
    if targets is not None:
        captured = [None] * len(targets)
        for i, ((node, nr), _tensor) in enumerate(targets):
            capture_at.setdefault(node, []).append((nr, i))
        needed = _needed_nodes(order, capture_at, edges)
        if not accumulate:  # autograd.grad takes an input's gradient where it arrives (PyTorch)
            capture_only = _capture_only(capture_at, needed, edges)

    buffers: dict = {}
    for (node, nr), seed in zip(roots, seeds):
        key = node if nr == 0 else (node, nr)
        value = seed if as_tensors else seed._data
        buffers[key] = value if key not in buffers else buffers[key] + value

    def run_leaves(leaves: list) -> None:
        """AccumulateGrad nodes whose gradients are complete, in the order of the edges that
        completed them (as PyTorch, whose queue runs them first, ties in arrival order)."""
        for leaf in leaves:
            g = buffers.pop(leaf, None)
            if targets is None or accumulate and leaf in capture_at:
                if leaf._hooks:
                    _accumulate_with_node_hooks(leaf, g, as_tensors)
                else:
                    _accumulate(leaf.variable, g, as_tensors)
            elif leaf in capture_at:  # autograd.grad: the leaf's hooks run, its AccumulateGrad does not
                _capture(leaf, [g], capture_at, captured, targets, accumulate, as_tensors)

    def step(node, grad):
        """Everything a node may need besides its formulas: targets, hooks, anomaly mode,
        several outputs; None when the node is not run."""
        if needed is not None and node not in needed:
            return None
        grads = [grad] if node.n_outputs == 1 else _take_grads(buffers, node, grad)
        # Where a target's gradient is taken, as PyTorch's engine takes it: autograd.grad before
        # the hooks of a node that runs on, after its tensor's hooks when it does not (the node is
        # then left alone); backward(inputs=...) after the tensor's hooks, before the node's.
        capture = capture_at and node in capture_at
        if capture and not accumulate and node not in capture_only:
            _capture(node, grads, capture_at, captured, targets, accumulate, as_tensors)
        hooks = node._hooks
        if hooks:
            grads = _run_tensor_hooks(node, grads, as_tensors)
        if capture and (accumulate or node in capture_only):
            _capture(node, grads, capture_at, captured, targets, accumulate, as_tensors)
            if node in capture_only:
                return None
        if hooks and hooks.get("pre"):
            grads = _run_node_pre_hooks(node, grads, as_tensors)
        if ANOMALY.enabled or node._hooks:
            outputs = _run_node(node, grads, as_tensors)
        else:
            outputs = node._apply(grads, as_tensors)
        if not keep_graph and node._frees:
            node._free_saved()
        return outputs

    take = buffers.pop
    previous_mode = GRAD_MODE.enabled
    GRAD_MODE.enabled = create_graph
    quiet = backend.np.errstate(all="ignore")
    quiet.__enter__()
    try:
        if len(root_nodes) > 1 or root_nodes[0].__class__ is AccumulateGrad:  # leaves among the roots
            run_leaves([n for n in root_nodes if n.__class__ is AccumulateGrad and n not in leaf_edges
                        and (needed is None or n in needed)])
        for node in order:
            grad = take(node, None)
            outputs = step(node, grad)
            if outputs is None:
                continue
            ready_leaves = None
            children, nrs = edges[node]
            for child, nr, g in zip(children, nrs, outputs):
                if child is None:
                    continue
                if g is not None:
                    # A 0-d float64 gradient for a 0-d float64 input needs no look at its shape.
                    if nr or g.__class__ is not _F64 or child._shape is not _NO_DIMS or child._dtype is not _F64_DTYPE:
                        data = g._data if as_tensors else g
                        if nr or data.shape != child._shape or data.dtype is not child._dtype:
                            g = _conform(g, child, nr, node, outputs, as_tensors)
                    key = child if nr == 0 else (child, nr)
                    previous = buffers.get(key)
                    # Two gradients for one input add up (recorded when building a graph).
                    buffers[key] = g if previous is None else previous + g
                if child.__class__ is AccumulateGrad:
                    left = leaf_edges[child] - 1
                    leaf_edges[child] = left
                    if left == 0 and (needed is None or child in needed):
                        if ready_leaves is None:
                            ready_leaves = [child]
                        else:
                            ready_leaves.append(child)
            if ready_leaves is not None:
                run_leaves(ready_leaves)
    finally:
        quiet.__exit__(None, None, None)
        GRAD_MODE.enabled = previous_mode
    return captured


def _take_grads(buffers: dict, node: Node, first) -> list:
    grads = [first]
    for nr in range(1, node.n_outputs):
        grads.append(buffers.pop((node, nr), None))
    return grads


def _conform(g, child: Node, nr: int, producer: Node, outputs: list, as_tensors: bool):
    """Sum a broadcast gradient back to the input's shape and cast it to the input's dtype."""
    data = g._data if as_tensors else g
    if not hasattr(data, "shape") or (as_tensors and not isinstance(g, Tensor)):
        raise TypeError(
            f"Function {producer.name()} returned a {type(g).__name__} as gradient {_index(g, outputs)}; "
            "expected a Tensor or None"
        )
    shape, dtype = child._output_metadata(nr)
    if data.shape != shape:
        if not _is_expandable(shape, data.shape):
            raise RuntimeError(
                f"Function {producer.name()} returned an invalid gradient at index {_index(g, outputs)} - got "
                f"{list(data.shape)} but expected shape compatible with {list(shape)}"
            )
        g = sum_to_recorded(g, shape) if as_tensors else SUM_TO.forward(None, g, shape)
    if dtype is not None and (g._data if as_tensors else g).dtype != dtype:
        g = TO_DTYPE.apply(g, dtype)
    return g


def _index(g, outputs) -> int:
    return next(i for i, out in enumerate(outputs) if out is g)


def _is_expandable(shape, target) -> bool:
    """Whether `shape` broadcasts to `target` (so a gradient of `target` sums back to it)."""
    if len(shape) > len(target):
        return False
    return all(a == 1 or a == b for a, b in zip(reversed(shape), reversed(target)))


# -- where users see gradients: as tensors -----------------------------------------------------------


def _as_tensor(g, as_tensors: bool):
    return g if as_tensors or g is None else _make(g)


def _as_value(t, as_tensors: bool):
    """A user-returned tensor back in the engine's current form."""
    if t is None or as_tensors:
        return t
    return t._data if isinstance(t, Tensor) else t


def _run_node(node: Node, grads: list, as_tensors: bool) -> list:
    if not ANOMALY.enabled:
        outputs = node._apply(grads, as_tensors)
    else:
        try:
            with running(node):
                outputs = node._apply(grads, as_tensors)
        except Exception:
            warn_forward_trace(node)
            raise
        if ANOMALY.check_nan:
            for i, g in enumerate(outputs):
                data = g._data if isinstance(g, Tensor) else g
                if data is not None and backend.array_module(data).isnan(data).any():
                    warn_forward_trace(node)
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    hooks = node._hooks
    if hooks and hooks.get("post"):
        for hook in list(hooks["post"].values()):
            replaced = hook(
                tuple(_as_tensor(o, as_tensors) for o in outputs), tuple(_as_tensor(g, as_tensors) for g in grads)
            )
            if replaced is not None:
                outputs = [_as_value(r, as_tensors) for r in replaced]
    return outputs


def _run_pre_hooks(node: Node, grads: list, as_tensors: bool) -> list:
    """Tensor hooks, then retained gradients, then the node's own pre-hooks (PyTorch's order)."""
    return _run_node_pre_hooks(node, _run_tensor_hooks(node, grads, as_tensors), as_tensors)


def _run_tensor_hooks(node: Node, grads: list, as_tensors: bool) -> list:
    """The hooks of the tensors this node made, then their retained gradients. A hook is called
    with None where its tensor's gradient is undefined (another output of the node had one, or a
    backward returned None for it), as PyTorch calls it."""
    hooks = node._hooks
    for nr, table in hooks.get("tensor", {}).items():
        for hook in list(table.values()):
            replaced = hook(_as_tensor(grads[nr], as_tensors))
            if replaced is not None:
                grads[nr] = _as_value(replaced, as_tensors)
    for nr, ref in list(hooks.get("retain", {}).items()):
        tensor = ref()
        if tensor is not None and grads[nr] is not None:
            _store_grad(tensor, _as_tensor(grads[nr], as_tensors), as_tensors)
    return grads


def _run_node_pre_hooks(node: Node, grads: list, as_tensors: bool) -> list:
    """The node's own pre-hooks (`register_prehook`), each of which may replace the gradients."""
    hooks = node._hooks
    if hooks.get("pre"):
        for hook in list(hooks["pre"].values()):
            replaced = hook(tuple(_as_tensor(g, as_tensors) for g in grads))
            if replaced is not None:
                grads = [_as_value(r, as_tensors) for r in replaced]
    return grads


def _capture(node, grads, capture_at, captured, targets, accumulate, as_tensors) -> None:
    for nr, i in capture_at[node]:
        g = grads[nr]
        if g is None:
            continue
        g = _as_tensor(g, as_tensors)
        tensor = targets[i][1]
        if node.__class__ is AccumulateGrad:  # autograd.grad's leaf (backward's accumulates)
            g = _run_leaf_hooks(node.variable, g)
        if accumulate:
            if not tensor.retains_grad:  # a retained gradient was stored by its hook already
                _store_grad(tensor, g, as_tensors)
        else:
            captured[i] = g


def _run_leaf_hooks(variable: Tensor, g: Tensor) -> Tensor:
    hooks = variable._backward_hooks
    if hooks:
        for hook in list(hooks.values()):
            replaced = hook(g)
            if replaced is not None:
                g = replaced
    return g


# Held while `.grad` is read, added to and written back, as PyTorch's AccumulateGrad holds its
# mutex: two threads' backward into one leaf lose no contribution (hooks run outside it).
_ACCUMULATING = threading.RLock()


def _accumulate(variable: Tensor, g, as_tensors: bool) -> None:
    """AccumulateGrad: run the leaf's hooks, then add the gradient into `variable.grad`."""
    if g is None:
        return
    if not as_tensors and not variable._backward_hooks:  # no hook to show it to: the array goes in
        with _ACCUMULATING:
            _accumulate_array(variable, g)
        return
    _store_grad(variable, _run_leaf_hooks(variable, _as_tensor(g, as_tensors)), as_tensors)


def _accumulate_array(variable: Tensor, g) -> None:
    """Add the array `g` into `variable.grad` (the caller holds _ACCUMULATING)."""
    if g is None:
        return
    current = variable._grad
    if current is None:
        variable._grad = _make(g)
    else:
        current._data = current._data + g  # in place, as _store_grad explains


def _accumulate_with_node_hooks(leaf: AccumulateGrad, g, as_tensors: bool) -> None:
    """AccumulateGrad with hooks of its own, in PyTorch's order: the tensor's hooks, the node's
    pre-hooks, `.grad`, the tensor's post-accumulate-grad hooks (part of accumulating, which
    must return None), then the node's post-hooks (called with `()` and the gradient)."""
    variable = leaf.variable
    if g is not None and variable._backward_hooks:
        g = _as_value(_run_leaf_hooks(variable, _as_tensor(g, as_tensors)), as_tensors)
    g = _run_pre_hooks(leaf, [g], as_tensors)[0]
    stored = None
    if g is not None:
        fresh = variable._grad is None
        _store_grad(variable, _as_tensor(g, as_tensors), as_tensors)
        if fresh and not as_tensors:  # the gradient became `.grad` itself (PyTorch steals it): the same tensor
            stored = variable._grad
    for hook in list(leaf._hooks.get("post_accumulate", {}).values()):
        returned = hook(variable)
        if isinstance(returned, Tensor):
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        if returned is not None:
            raise TypeError(f"expected Variable, but hook returned '{type(returned).__name__}'")
    for hook in list(leaf._hooks.get("post", {}).values()):
        hook((), (stored if stored is not None else _as_tensor(g, as_tensors),))


def _store_grad(tensor: Tensor, g: Tensor, create_graph: bool) -> None:
    """Set or add into `tensor.grad`. Arrays are never written in place, so no copy is needed."""
    with _ACCUMULATING:
        current = tensor._grad
        if current is None and create_graph and g.requires_grad:
            # PyTorch's AccumulateGrad copies a gradient that is itself recorded into a new tensor of the
            # leaf's layout (copy_), so `.grad`'s node is CopyBackwards(None, the gradient's node).
            tensor._grad = COPY.apply(_make(backend.array_module(g._data).empty_like(g._data)), g)
        elif current is None:
            tensor._grad = _alias(g) if create_graph else _make(g._data)
        elif create_graph:
            tensor._grad = current + g
        else:
            # In place, as PyTorch does: whoever holds `tensor.grad` sees the new sum.
            current._data = current._data + g._data

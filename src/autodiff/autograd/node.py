"""Backward nodes: what `grad_fn` points at, and what `next_functions` walks."""

from __future__ import annotations

import itertools
import threading
import weakref

from .tape import sequence as _sequence  # creation order: backward runs nodes newest first, as PyTorch

# The Tensor class, set by tensor.py, which imports this module: a node called on arrays (`Node.__call__`)
# makes tensors of them.
TENSOR = None
_ACCUMULATE_PRIORITY = 1 << 62  # leaves accumulate as soon as they are ready
# Leaves number apart (above every other node's number, in their own order), so that making a
# leaf's node does not end the open run of records (autograd/tape.py) the next op appends to.
_leaf_numbers = itertools.count()

# The nodes whose `name()` PyTorch gives with their C++ namespace (their class names are bare).
_NAMESPACED = {name: f"torch::autograd::{name}" for name in ("AccumulateGrad", "CopyBackwards", "CopySlices", "Error")}


class RemovableHandle:
    """Returned by `register_hook`; `remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: dict, hook) -> None:
        self._hooks_ref = weakref.ref(hooks) if _weakrefable(hooks) else (lambda: hooks)
        self.id = next(self._ids)
        hooks[self.id] = hook

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()


def _weakrefable(obj) -> bool:
    try:
        weakref.ref(obj)
    except TypeError:
        return False
    return True


class _HookDict(dict):
    """A dict that a RemovableHandle can refer to weakly."""

    __slots__ = ("__weakref__",)


class Node:
    """A recorded operation's backward function.

    A registry op's node is a view of its tape's record (ops/registry.py's OpNode, whose fields
    below are properties); the others (a leaf's AccumulateGrad, a custom Function's, PyTorch's
    Error and NotImplemented nodes) are objects that keep their fields themselves.

    `next_functions` holds one `(node, output_nr)` pair per differentiable input: the node that
    produced that input, an `AccumulateGrad` for a leaf that requires grad, or `None`. It is
    kept as two tuples, the nodes (`_next`) and their output numbers (`_nrs`, one shared tuple
    of zeros in the common case), so that recording an operation allocates no pair per input.
    """

    __slots__ = (
        "_next",
        "_nrs",
        "_seq",
        "_shape",
        "_dtype",
        "_hooks",
        "_trace",
        "__weakref__",
    )
    n_outputs = 1  # nodes of custom Functions with several outputs override this
    # What backward needs; nodes that save tensors keep them here, and free them as None.
    _saved = ()
    _frees = False
    _plan = None  # an op's formulas, for the engine's lean path (ops/registry.py's OpNode)

    def name(self) -> str:
        """PyTorch's name for the node: the class name, namespaced for the nodes PyTorch
        writes in C++ by hand (`torch::autograd::AccumulateGrad`); displays use the class name."""
        name = type(self).__name__
        return _NAMESPACED.get(name, name)

    @property
    def next_functions(self) -> tuple:
        return tuple(zip(self._next, self._nrs))

    @next_functions.setter
    def next_functions(self, edges) -> None:
        self._next = tuple(node for node, _ in edges)
        self._nrs = output_numbers(tuple(nr for _, nr in edges))

    def _edges(self) -> tuple:
        """(`_next`, `_nrs`) read together: the engine's general loop reads them once a backward."""
        return self._next, self._nrs

    def _free_saved(self) -> None:
        """Free what backward used (a second backward is then PyTorch's error)."""
        if self._saved:
            self._saved = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    @property
    def metadata(self) -> dict:
        hooks = self._hook_table()
        return hooks.setdefault("metadata", {})

    # -- hooks: a small table created on first use ----------------------------------------------

    def _hook_table(self) -> dict:
        if self._hooks is None:
            self._hooks = {}
        return self._hooks

    def _add_tensor_hook(self, output_nr: int, hook) -> RemovableHandle:
        table = self._hook_table().setdefault("tensor", {})
        return RemovableHandle(table.setdefault(output_nr, _HookDict()), hook)

    def register_prehook(self, hook) -> RemovableHandle:
        """`hook(grad_outputs)` before this node runs; may return replacement grad_outputs."""
        return RemovableHandle(self._hook_table().setdefault("pre", _HookDict()), hook)

    def register_hook(self, hook) -> RemovableHandle:
        """`hook(grad_inputs, grad_outputs)` after this node runs; may return replacement grad_inputs."""
        return RemovableHandle(self._hook_table().setdefault("post", _HookDict()), hook)

    def _retain(self, output_nr: int, tensor) -> None:
        self._hook_table().setdefault("retain", {})[output_nr] = weakref.ref(tensor)

    def _unretain(self, output_nr: int) -> None:
        if self._hooks and "retain" in self._hooks:
            self._hooks["retain"].pop(output_nr, None)

    def _retains(self, output_nr: int) -> bool:
        return bool(self._hooks) and output_nr in self._hooks.get("retain", ())

    # -- what subclasses provide ----------------------------------------------------------------

    def _output_metadata(self, output_nr: int):
        """(shape, NumPy dtype) of this node's output `output_nr`: what its gradient must match."""
        return self._shape, self._dtype

    def _apply(self, grads: list, as_tensors: bool) -> list:
        """Gradients for next_functions (None where an input needs none).

        Gradients come and go as tensors when `as_tensors` (the backward is being recorded),
        else as bare arrays.
        """
        raise NotImplementedError

    def __call__(self, *grads):
        if len(grads) != self.n_outputs:
            raise TypeError(f"expected {self.n_outputs} arguments, got {len(grads)} instead")
        grads = [g if g is None or isinstance(g, TENSOR) else TENSOR(g) for g in grads]
        result = self._apply(grads, True)
        return result[0] if len(result) == 1 else tuple(result)


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable) -> None:
        self.variable = variable
        self._next = self._nrs = ()
        self._seq = _ACCUMULATE_PRIORITY + next(_leaf_numbers)
        self._shape = variable._data.shape
        self._dtype = variable._data.dtype
        self._hooks = None


_ZEROS = {n: (0,) * n for n in range(5)}


def output_numbers(nrs: tuple) -> tuple:
    """`nrs`, or the shared tuple of as many zeros (what almost every node has)."""
    return _ZEROS.get(len(nrs), nrs) if not any(nrs) else nrs


def accumulator_of(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, shared by all the graphs that use the leaf.

    The tensor refers to it weakly (the graph keeps it alive), so a leaf and its node do not
    form a reference cycle.
    """
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        with _MAKING:  # one node per leaf, whichever thread asks first (PyTorch's mutex)
            ref = tensor._accumulator
            node = ref() if ref is not None else None
            if node is None:
                node = AccumulateGrad(tensor)
                tensor._accumulator = weakref.ref(node)
    return node


_MAKING = threading.Lock()


def input_node(tensor):
    """The node through which a gradient reaches `tensor` (output number aside; see `edge`)."""
    node = tensor.grad_fn
    if node is not None:
        return node
    if tensor._requires_grad:
        ref = tensor._accumulator
        node = ref() if ref is not None else None
        return node if node is not None else accumulator_of(tensor)
    return None


def edge(tensor):
    """The `(node, output_nr)` pair through which a gradient reaches `tensor`."""
    node = tensor.grad_fn
    if node is not None:
        return (node, tensor._output_nr)
    return (input_node(tensor), 0)

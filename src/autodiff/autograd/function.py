"""Custom operations: subclass `Function`, write `forward` and `backward`, call `.apply`.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

As in PyTorch, `ctx` is the backward node itself (`ExpBackward`), and the `setup_context`
style (a forward without ctx) works too.
"""

from __future__ import annotations

import functools

from ..creation import zeros
from ..tensor import Tensor, _make
from .grad_mode import FORWARD_AD
from .grad_mode import STATE as GRAD_MODE
from .grad_mode import no_grad
from . import versions
from .node import Node, _sequence, edge

_FREED_ERROR = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class FunctionCtx:
    """What `forward` may tell `backward`: saved tensors and flags."""

    __slots__ = ()

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved = tensors

    def save_for_forward(self, *tensors) -> None:
        self._to_save_forward = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node a custom Function records; it is also the `ctx` its methods receive."""

    __slots__ = ("__dict__",)  # ctx takes arbitrary attributes, as in PyTorch
    _forward_cls: type
    _frees = True

    @property
    def saved_tensors(self) -> tuple:
        if self.__dict__.get("_in_jvp"):  # jvp reads what forward saved for it (save_for_forward)
            return tuple(self.__dict__.get("_to_save_forward", ()))
        saved = self.__dict__.get("_saved", ())
        if saved is None:
            raise RuntimeError(_FREED_ERROR)
        unpacked = []
        create_graph = self.__dict__.get("_unpack_with_graph", False)
        for t in saved:
            nr = self._output_index.get(id(t)) if t is not None else None
            if nr is not None:  # an output: re-attach it to this node (no reference cycle kept)
                out = _make(t._data, create_graph, self if create_graph else None)
                out._output_nr = nr
                unpacked.append(out)
            else:
                unpacked.append(t)
        return tuple(unpacked)

    @property
    def n_outputs(self) -> int:
        return len(self._metadata)

    def _output_metadata(self, output_nr: int):
        return self._metadata[output_nr]

    def _apply(self, grads: list, as_tensors: bool) -> list:
        cls = self._forward_cls
        grads = [g if g is None or isinstance(g, Tensor) else _make(g) for g in grads]
        if self.__dict__.get("_materialize_grads", True):
            # Zeros for a tensor output that got no gradient; a non-tensor output's stays None, and so
            # does a non-differentiable output's where ctx._materialize_non_diff_grads is False (PyTorch's).
            kept = () if self.__dict__.get("_materialize_non_diff_grads", True) else self._not_differentiable
            grads = [zeros(shape, dtype=dtype) if g is None and dtype is not None and nr not in kept else g
                     for nr, (g, (shape, dtype)) in enumerate(zip(grads, self._metadata))]
        self._unpack_with_graph = as_tensors
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = self._num_inputs
        if len(result) != expected:
            if len(result) > expected and all(r is None for r in result[expected:]):
                result = result[:expected]
            else:
                raise RuntimeError(
                    f"function {type(self).__name__} returned an incorrect number of gradients "
                    f"(expected {expected}, got {len(result)})"
                )
        picked = [result[i] for i in self._tensor_positions]
        if as_tensors:
            return picked
        return [g._data if isinstance(g, Tensor) else g for g in picked]


class FunctionMeta(type):
    """Gives every Function subclass its node class, named `<Name>Backward` as PyTorch does."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,), {"_forward_cls": cls})


class Function(metaclass=FunctionMeta):
    """Base class for operations with a hand-written backward."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    generate_vmap_rule = False  # True: under vmap, forward runs on the batch as any function does

    @classmethod
    def apply(cls, *args, **kwargs):
        batched = [a for a in args if a.__class__ in _batched_classes()]
        if batched:  # under vmap: as PyTorch's functorch allows it, or its error
            return _vmapped(cls, args, kwargs, batched)
        if FORWARD_AD.token is not None:  # a forward-mode level is open: dual inputs take `jvp`
            from .forward_ad import apply_function

            return apply_function(cls, args, kwargs)
        return cls._apply(args, kwargs)[0]

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def _apply(cls, args, kwargs) -> tuple:
        """(what apply returns, the ctx forward was given)."""
        ctx = cls._backward_cls()
        ctx._hooks = None
        ctx._trace = None
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        uses_setup_context = cls.setup_context is not Function.setup_context
        with no_grad():
            if uses_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        raw = (outputs,) if single else outputs
        marked = ctx.__dict__.get("_non_differentiable", set())
        ctx._not_differentiable = tuple(i for i, out in enumerate(raw) if isinstance(out, Tensor) and (
            id(out) in marked or not out.dtype.is_floating_point))  # forward mode's jvp must give None there
        dirty = _check_dirty(ctx, raw)
        if not (GRAD_MODE.enabled and any(ctx.needs_input_grad)):
            return outputs, ctx
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.next_functions = tuple(edge(args[i]) for i in tensor_positions)
        ctx._tensor_positions = tensor_positions
        ctx._num_inputs = len(args)
        ctx._seq = next(_sequence)
        non_diff = ctx.__dict__.get("_non_differentiable", set())
        ctx._output_index = {}
        ctx._metadata = []
        wrapped = []
        made: dict = {}  # id of a returned tensor -> what this apply returns for it
        inputs = {id(args[i]) for i in tensor_positions}
        for nr, out in enumerate(raw):
            if not isinstance(out, Tensor):
                wrapped.append(out)
                ctx._metadata.append(((), None))
                continue
            ctx._output_index[id(out)] = nr
            ctx._metadata.append((out._data.shape, out._data.dtype))
            # The same new tensor twice is one result, its gradient at the last place; an input returned
            # twice is two results, each with its own gradient (PyTorch makes each a view of the input).
            if id(out) in made and id(out) not in inputs:
                result = made[id(out)]
                if result.grad_fn is ctx:
                    result._output_nr = nr
                wrapped.append(result)
                continue
            if id(out) in non_diff or not out.dtype.is_floating_point:
                made[id(out)] = _make(out._data)
                if id(out) in inputs:  # an input returned: a detached alias, changed in place with it (PyTorch)
                    if out._version_log is None:
                        out._version_log = versions.VersionLog()
                    made[id(out)]._version_log = out._version_log
                wrapped.append(made[id(out)])
                continue
            if id(out) in dirty:  # changed in place: the input itself is now this node's output (PyTorch)
                out._rebase(ctx, nr)
                result = out
            else:
                result = _make(out._data, True, ctx)
                result._output_nr = nr
            made[id(out)] = result
            wrapped.append(result)
        ctx._shape, ctx._dtype = ctx._metadata[0] if ctx._metadata else ((), None)
        return (wrapped[0] if single else tuple(wrapped)), ctx


_EXTENDING_FUNC = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def _batched_classes() -> tuple:
    from ..ops.batching import Batched

    return (Batched,)


def _vmapped(cls, args: tuple, kwargs: dict, batched: list):
    """A Function applied to vmap's batched tensors: a forward with setup_context is needed (as
    for every functorch transform), then either generate_vmap_rule=True (forward runs on the
    batch, each op by its batching rule) or a `vmap(info, in_dims, *args)` staticmethod that
    returns (outputs, out_dims)."""
    if cls.setup_context is Function.setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           f"...), it must override the setup_context staticmethod. {_EXTENDING_FUNC}")
    own_rule = "vmap" in {name for klass in cls.__mro__[:-1] if klass is not Function for name in vars(klass)}
    if cls.generate_vmap_rule and own_rule:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an "
                           "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the overridden "
                           f"vmap staticmethod to avoid ambiguity. {_EXTENDING_FUNC}")
    if cls.generate_vmap_rule:
        return _example_by_example(cls, args, kwargs, batched[0].batch_size)
    if not own_rule:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override "
                           f"and implement the vmap staticmethod or set generate_vmap_rule=True. {_EXTENDING_FUNC}")
    from ..ops.batching import Batched

    size = batched[0].batch_size
    in_dims = tuple(0 if isinstance(a, Batched) else None for a in args)
    physical = tuple(a.physical if isinstance(a, Batched) else a for a in args)
    outputs, out_dims = cls.vmap(VmapInfo(size, "error"), in_dims, *physical, **kwargs)
    single = not isinstance(outputs, tuple)
    outputs, out_dims = ((outputs,), (out_dims,)) if single else (outputs, out_dims if isinstance(out_dims, tuple)
                                                                  else (out_dims,) * len(outputs))
    results = tuple(Batched(o.movedim(d, 0) if d else o) if isinstance(o, Tensor) and d is not None else o
                    for o, d in zip(outputs, out_dims))
    return results[0] if single else results


def _example_by_example(cls, args: tuple, kwargs: dict, size: int):
    """The Function applied to each example of the batch, its results stacked into batches
    again: each example's forward and backward are the Function's own, recorded as usual."""
    from ..ops import stack
    from ..ops.batching import Batched

    results = [cls.apply(*[a.physical[b] if isinstance(a, Batched) else a for a in args], **kwargs)
               for b in range(size)]
    single = not isinstance(results[0], tuple)
    columns = zip(*[(r,) if single else r for r in results])
    stacked = tuple(Batched(stack(list(column), 0)) if isinstance(column[0], Tensor) else column[0]
                    for column in columns)
    return stacked[0] if single else stacked


class VmapInfo:
    """What a Function's `vmap` staticmethod is told: the batch's size and the randomness mode."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size: int, randomness: str) -> None:
        self.batch_size = batch_size
        self.randomness = randomness


def _check_dirty(ctx, outputs: tuple) -> set:
    """The ids of the inputs `forward` marked dirty (changed in place), with PyTorch's checks:
    each must be returned, and a leaf that requires grad may not be changed; each counts as
    changed once more, as PyTorch counts it."""
    dirty = ctx.__dict__.get("_dirty", ())
    if not dirty:
        return set()
    returned = {id(out) for out in outputs}
    if any(id(t) not in returned for t in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    non_differentiable = ctx.__dict__.get("_non_differentiable", set())
    for t in dirty:
        # a leaf may not be changed, unless its result is non-differentiable: that is a detached alias
        if t.is_leaf and t.requires_grad and GRAD_MODE.enabled and id(t) not in non_differentiable:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        t._bump_version()
    return {id(t) for t in dirty}


def once_differentiable(backward):
    """Mark a backward as not differentiable itself: it runs with recording off, and where a
    second derivative is being recorded (create_graph with gradients that require grad), its
    results come out of one `Error` node that raises if that derivative is taken, as PyTorch."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            results = backward(ctx, *grads)
        if not GRAD_MODE.enabled or not any(isinstance(g, Tensor) and g.requires_grad for g in grads):
            return results
        single = not isinstance(results, tuple)
        wrapped = _delayed_error((results,) if single else results)
        return wrapped[0] if single else wrapped

    return wrapper


class DelayedError(Node):
    """PyTorch's `Error` node: recorded, but differentiating through it raises."""

    __slots__ = ("_metadata",)

    @property
    def n_outputs(self) -> int:
        return len(self._metadata)

    def _output_metadata(self, output_nr: int):
        return self._metadata[output_nr]

    def _apply(self, grads: list, as_tensors: bool) -> list:
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


DelayedError.__name__ = DelayedError.__qualname__ = "Error"


def _delayed_error(results: tuple) -> tuple:
    """`results` as the outputs of one Error node, one per result. As in PyTorch, the node's
    inputs are detached copies that require grad, so the graph before it is not kept."""
    node = object.__new__(DelayedError)
    node.next_functions = tuple(edge(_make(r._data, True)) if isinstance(r, Tensor) else (None, 0) for r in results)
    node._seq = next(_sequence)
    node._metadata = [(r._data.shape, r._data.dtype) if isinstance(r, Tensor) else ((), None) for r in results]
    node._shape, node._dtype = node._metadata[0]
    node._hooks = None
    node._trace = None
    wrapped = []
    for nr, r in enumerate(results):
        if isinstance(r, Tensor):
            r = _make(r._data, True, node)
            r._output_nr = nr
        wrapped.append(r)
    return tuple(wrapped)

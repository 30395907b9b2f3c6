"""Tensor: an array with the autograd fields PyTorch users know.

A tensor holds its numbers in `_data` (a NumPy or CuPy array, or a NumPy scalar for 0-d
results) and, when it was produced by a recorded operation, the backward node in `grad_fn`.
Arrays are never modified in place: an in-place operation computes a new array and rebinds
`_data`, so values saved for backward can never change under the graph's feet. A version
count still tells when a saved tensor was rebound, and raises PyTorch's error for it.
"""

from __future__ import annotations

import math
import warnings
import weakref

import numpy as np

from . import autograd, backend, dtypes
from ._formatting import tensor_repr
from .autograd import node as _node
from .autograd import versions
from .autograd.grad_mode import STATE as _GRAD_MODE
from .autograd.node import RemovableHandle, accumulator_of
from .autograd.tape import Tape
from .autograd.versions import InplaceClock  # noqa: F401 - the ops read it from here

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)
_LEAF_INPLACE_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
# The nodes of operations whose result PyTorch makes a view of their input, and those that make
# several views at once (each piece of split, chunk, unbind): a view's in-place change is
# PyTorch's error where its base is a leaf that requires grad, and for a piece always.
_VIEW_NODES = frozenset({
    "ViewBackward0", "ReshapeAliasBackward0", "SliceBackward0", "SelectBackward0", "TransposeBackward0", "TBackward0",
    "PermuteBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0",
    "AsStridedBackward0", "DiagonalBackward0", "UnfoldBackward0", "AliasBackward0", "SplitBackward0",
    "SplitWithSizesBackward0", "UnbindBackward0",
})
# PyTorch's names for a dtype in the message about assigning a gradient of another dtype: the
# gradient's as C++ spells the type, the tensor's as its ScalarType.
_CPP_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double", "int32": "int",
                   "int64": "long int", "uint8": "unsigned char", "bool": "bool"}
_SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int", "int64": "Long",
                      "uint8": "Byte", "bool": "Bool"}
_MULTIPLE_VIEWS = {"SplitBackward0": "Split", "SplitWithSizesBackward0": "SplitWithSizes", "UnbindBackward0": "Unbind"}
_REQUIRES_GRAD_DTYPE_ERROR = "Only Tensors of floating point and complex dtype can require gradients"
_NON_LEAF_REQUIRES_GRAD_ERROR = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)


class Size(tuple):
    """A tensor's shape: a tuple that prints as PyTorch's `Size` does."""

    def __repr__(self) -> str:
        return f"autodiff.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)


class TensorMethods:
    """The Tensor methods that name operations, filled in by the layers above as they load: each
    op's declaration (ops/surface.py) and creation.py's `new_*`. This module names no operation."""

    __slots__ = ()


class Tensor(TensorMethods):
    """A multi-dimensional array that can record the operations applied to it.

    The methods that name operations (`x.exp()`, `x.sum(0)`, `x + y`...) come from
    `TensorMethods`, which each op's declaration fills in (see ops/surface.py).
    """

    __slots__ = (
        "_data",
        "_requires_grad",
        "_node",  # the Tape of the operation that made it (with `_at`), another node, or None: a leaf
        "_at",  # the operation's index in that tape
        "_grad",
        "_output_nr",
        "_version_log",
        "_backward_hooks",
        "_accumulator",
        "_detached_at",  # the InplaceClock tick of a detach_() that took a grad_fn away (unset otherwise)
        # What tells the tape that this tensor lives (autograd/tape.py's sweep): its record's own
        # (shape, dtype) tuple, or the node it was placed at; None for a leaf or a scalar of scalars
        "_token",
        "__weakref__",
    )
    # NumPy defers to our reflected operators (`ndarray * Tensor` -> Tensor.__rmul__).
    __array_ufunc__ = None
    __array_priority__ = 1000

    def __init__(self, data=(), *, dtype=None, device=None, requires_grad: bool = False) -> None:
        # `Tensor(data)` works like `tensor(data)`; operations create tensors through `_make`.
        _init(self, as_array(data, dtype=dtype, device=device), False, None)
        if requires_grad:
            self.requires_grad_(True)

    # -- autograd fields ----------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self._node is not None:
            if requires_grad:
                return self
            raise RuntimeError(_NON_LEAF_REQUIRES_GRAD_ERROR)
        if requires_grad and not dtypes.from_numpy(self._data.dtype).is_floating_point:
            raise RuntimeError(_REQUIRES_GRAD_DTYPE_ERROR)
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        """The node of the operation that made this tensor (None for a leaf)."""
        node = self._node
        if node.__class__ is Tape:
            return node.proxy(self._at)
        return node

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        _place(self, node)

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad(self) -> Tensor | None:
        if self._grad is None and self._node is not None and not self.retains_grad:
            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                    "the same size"
                )
            if value._data.dtype != self._data.dtype:
                given, own = value.dtype.name, self.dtype.name
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP_TYPE_NAMES.get(given, given)}' to a tensor "
                    f"with grad_dtype '{_SCALAR_TYPE_NAMES.get(own, own)}'. The "
                    "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype "
                    "with caution. Diverging the dtypes of a tensor and its gradient may break downstream systems "
                    "that assume they match."
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        node = self.grad_fn
        return node is not None and node._retains(self._output_nr)

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in `.grad` after backward (a leaf always does)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn._retain(self._output_nr, self)

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._add_tensor_hook(self._output_nr, hook)
        if self._backward_hooks is None:
            self._backward_hooks = {}
        return RemovableHandle(self._backward_hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call `hook(tensor)` after backward has added into this leaf's `.grad` (an optimizer
        step per parameter, as the gradient arrives); autograd.grad, which sets no `.grad`,
        does not call it."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._node is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        node = accumulator_of(self)
        self._accumulator = _Held(node)  # the hooks live on the node: the tensor keeps it alive now
        return RemovableHandle(node._hook_table().setdefault("post_accumulate", {}), hook)

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def _version(self) -> int:
        return 0 if self._version_log is None else len(self._version_log)

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
        """Compute the gradient of this tensor with respect to the graph's leaves."""
        # As PyTorch's Tensor.backward: through the package, which loads autograd/engine.py on first use.
        autograd.backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
                           inputs=inputs)

    def detach(self) -> Tensor:
        """The same values as a new leaf that does not require grad."""
        return _make(self._data)

    def detach_(self) -> Tensor:
        if self._node is not None:  # a node that saved this tensor may no longer use it (PyTorch's error)
            self._detached_at = when = versions.tick()
            versions.detached(self._data, when)
        self._node = self._at = None
        self._requires_grad = False
        self._output_nr = 0  # a leaf is always its own output 0 (the ops' edges rely on it)
        return self

    @property
    def data(self) -> Tensor:
        """The values without autograd history; in-place changes to it change this tensor."""
        return _DataView(self)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if self._requires_grad and not value.dtype.is_floating_point:
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex dtype"
            )
        old = self._data
        self._set_data(value._data)
        if self.__class__ is not _DataView:  # a view tells its owner's records itself
            versions.written(old, self._data, versions.tick())
        self._accumulator = None  # its recorded shape may be stale

    def _set_data(self, array) -> None:
        self._data = array

    # -- metadata -----------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_dim(dim, self._data.ndim)]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy(self._data.dtype)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    @property
    def device(self) -> backend.device:
        return backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return not backend.is_numpy(self._data)

    def element_size(self) -> int:
        return self._data.dtype.itemsize

    # -- conversion ---------------------------------------------------------------------------

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.item() if backend.is_numpy(self._data) else self._data.get().item()

    def tolist(self):
        data = self._data if backend.is_numpy(self._data) else self._data.get()
        return data.tolist()

    def numpy(self, *, force: bool = False):
        if self._requires_grad and not force and _GRAD_MODE.enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if not backend.is_numpy(self._data):
            if not force:
                raise TypeError(
                    f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to "
                    "copy the tensor to host memory first."
                )
            return self._data.get()
        return np.asarray(self._data)

    def _values_read(self):
        """The array, read for its values by the engine itself (an index, a mask): where a
        tracer stands in for the tensor, that read is a decision on the path."""
        return self._data

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def __float__(self) -> float:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self.item())

    def __int__(self) -> int:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self.item())

    def __index__(self) -> int:
        if self._data.size != 1 or self.dtype.is_floating_point:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return tensor_repr(self)

    def _repr_html_(self) -> str:  # Jupyter
        from ._html import tensor_html  # a notebook's only: `import autodiff` does not load _html.py

        return tensor_html(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.detach().numpy(force=True), self._requires_grad))

    # -- in-place updates ---------------------------------------------------------------------

    def _check_inplace(self) -> None:
        if self._requires_grad and _GRAD_MODE.enabled:
            if self._node is None:
                raise RuntimeError(_LEAF_INPLACE_ERROR)
            node = self.grad_fn
            if node.__class__.__name__ in _VIEW_NODES:
                _check_view_inplace(node)

    def _bump_version(self, when: int | None = None) -> None:
        """Count a change in place, made at `when` (now by default), before `_data` is rebound:
        records that saved the current array fail their version check from then on."""
        if when is None:
            when = versions.tick()
        if self._version_log is None:
            self._version_log = versions.VersionLog()
        self._version_log.append(when)
        if self.__class__ is not _DataView:  # `.data` has a version of its own (PyTorch's)
            versions.changed_in_place(self, self._data, when)

    def _apply_inplace(self, operation, *args, **kwargs) -> Tensor:
        """Compute `operation(self, *args)` out of place and make it this tensor's new value."""
        self._check_inplace()
        # The operation sees an alias of the current version, and the clock moves first, so that
        # its own record is stamped after the change it makes. Unless the tensor itself is also an
        # operand (`y.mul_(y)`): that saved operand is then out of date, PyTorch's error.
        late = any(a is self for a in args) or any(a is self for a in kwargs.values())
        when = None if late else versions.tick()
        result = operation(_alias(self), *args, **kwargs)
        if result.__class__ is not Tensor and self.__class__ is Tensor and getattr(result, "tangent", None) is not None:
            raise RuntimeError("an in-place operation cannot give a forward-mode tangent to a tensor without one: "
                               "write the out-of-place form (x = x + d), or make x dual first")
        if result._data.shape != self._data.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        array = result._data
        if array.dtype != self._data.dtype:
            array = array.astype(self._data.dtype)
        self._bump_version(when)
        self._set_data(array)
        if result.grad_fn is not None:
            self._rebase(result.grad_fn, result._output_nr)
        return self

    def _rebase(self, node, output_nr: int) -> None:
        """Make this tensor output `output_nr` of `node` (changed in place), its retained gradient too."""
        old_node, old_nr = self.grad_fn, self._output_nr
        self.grad_fn, self._output_nr, self._requires_grad = node, output_nr, True
        if old_node is not None and old_node._retains(old_nr):
            old_node._unretain(old_nr)
            node._retain(output_nr, self)

    def _fill_with(self, array) -> Tensor:
        """`fill_` and `zero_` where nothing is recorded (ops/shape.py): under no_grad a tensor in
        a graph keeps its grad_fn, as PyTorch's does."""
        self._check_inplace()
        self._bump_version()
        self._set_data(array)
        return self

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def __ipow__(self, other):
        return self.pow_(other)

    # -- operators and methods that are not operations ----------------------------------------

    def __pos__(self):
        return self

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    def contiguous(self):
        return self

    def type(self, dtype=None):
        if dtype is None:
            return f"autodiff.{_LEGACY_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"
        return self.to(dtype)

    def float(self):
        return self.to(dtypes.float32)

    def double(self):
        return self.to(dtypes.float64)

    def half(self):
        return self.to(dtypes.float16)

    def long(self):
        return self.to(dtypes.int64)

    def int(self):
        return self.to(dtypes.int32)

    def bool(self):
        return self.to(dtypes.bool_)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else backend.device("cuda", device) if isinstance(device, int) else device)


class _DataView(Tensor):
    """What `.data` returns: shares the values, has no history; in-place ops write through."""

    __slots__ = ("_owner",)

    def __init__(self, owner: Tensor) -> None:
        _init(self, owner._data, False, None)
        self._owner = owner

    def _set_data(self, array) -> None:
        self._data = array
        owner = self._owner
        if array.shape == owner._data.shape:
            # As PyTorch's shared storage: records that saved the owner read the new values.
            versions.written(owner._data, array, versions.tick())
            owner._data = array


_LEGACY_TYPE_NAMES = {
    "float16": "HalfTensor",
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int32": "IntTensor",
    "int64": "LongTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


class _Held:
    """A strong reference with weakref's interface (`ref()`), for a leaf's AccumulateGrad node
    that carries hooks of the tensor's own."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node

    def __call__(self):
        return self.node


def legacy_type_name(t: Tensor) -> str:
    """PyTorch's old type name (`DoubleTensor`), used in some of its error texts."""
    return "autodiff." + _LEGACY_TYPE_NAMES.get(t.dtype.name, t.dtype.name)


_new = object.__new__
_node.TENSOR = Tensor  # a backward node called on arrays makes tensors of them (autograd/node.py)


def _init(t: Tensor, data, requires_grad: bool, grad_fn) -> None:
    t._data = data
    t._requires_grad = requires_grad
    t._token = None
    if grad_fn is None:
        t._node = t._at = None
    else:
        _place(t, grad_fn)
    t._grad = None
    t._output_nr = 0
    t._version_log = None
    t._backward_hooks = None
    t._accumulator = None


def _place(t: Tensor, node) -> None:
    """Make `node` the tensor's grad_fn: a record's node is kept as (tape, index)."""
    tape = getattr(node, "_tape", None)
    if tape is not None:
        t._node, t._at = tape, node._at
        t._token = node  # the node keeps its record live for as long as the tensor lives
    else:
        t._node, t._at = node, None


def _make(data, requires_grad: bool = False, grad_fn=None) -> Tensor:
    """A tensor around `data` (the hot path of every operation: no checks, no copies; _init
    written out)."""
    t = _new(Tensor)
    t._data = data
    t._requires_grad = requires_grad
    t._token = None
    if grad_fn is None:
        t._node = t._at = None
    else:
        _place(t, grad_fn)
    t._output_nr = 0
    t._grad = t._version_log = t._backward_hooks = t._accumulator = None
    return t


def _check_view_inplace(node) -> None:
    """PyTorch's errors for changing a view in place: a piece of split, chunk or unbind, or a view
    (of a view...) of a leaf that requires grad."""
    name = node.__class__.__name__
    if name in _MULTIPLE_VIEWS:
        raise RuntimeError(f"Output {piece_number(node)} of {_MULTIPLE_VIEWS[name]} is a view and is being "
                           "modified inplace. This view is the output of a function that returns multiple views. Such "
                           "functions do not allow the output views to be modified inplace. You should replace the "
                           "inplace operation by an out-of-place one.")
    while node is not None and node.__class__.__name__ in _VIEW_NODES:
        node = node.next_functions[0][0] if node.next_functions else None
    if node is not None and node.__class__.__name__ == "AccumulateGrad":
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def piece_number(node) -> int:
    """The place of a piece of split, chunk or unbind among its pieces (ops/pieces.py numbers them)."""
    notes = node._tape.notes
    return notes.get(node._at, 0) if notes else 0


def number_piece(node, k: int) -> None:
    tape = node._tape
    if tape.notes is None:
        tape.notes = {}
    tape.notes[node._at] = k


def _alias(t: Tensor) -> Tensor:
    """A new tensor object with t's values and graph position, but a version of its own."""
    a = _make(t._data, t._requires_grad)
    a._node, a._at = t._node, t._at
    a._token = t._token
    a._output_nr = t._output_nr
    if a._node is None and a._requires_grad:
        # Gradients that reach the alias of a leaf must go on to the leaf itself.
        a._node = accumulator_of(t)
    return a


def _rebuild(array, requires_grad):
    return _make(array).requires_grad_(requires_grad)


def _as_tensor(value, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    return _make(as_array(value, dtype=like.dtype, device=like.device))


def _dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dimension, with PyTorch's error when out of range."""
    low, high = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not low <= dim <= high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def _sizes(args) -> tuple:
    """Accept both `f(2, 3)` and `f((2, 3))`, as PyTorch's shape arguments do."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        return tuple(args[0])
    return tuple(args)


# -- data to arrays: what `Tensor(data)`, `tensor(data)` and every op's constant go through ----------


def as_array(data, dtype=None, device=None):
    """`data` (numbers, nested lists, arrays, tensors) as an array of `dtype` on `device`."""
    if isinstance(data, Tensor):
        array = data._data
    elif backend.is_numpy(data) or hasattr(data, "__cuda_array_interface__"):
        array = data
    else:
        array = _from_python(data)
    if dtype is not None:
        numpy_dtype = dtypes.to_numpy(dtype)
        if array.dtype != numpy_dtype:
            array = array.astype(numpy_dtype)
    else:
        _check_supported(array)
    if device is None:  # device data stays where it is (as torch.as_tensor leaves a CUDA tensor)
        return backend.compact(array)
    xp = backend.module_for(device)
    if xp is not backend.array_module(array):
        array = backend.to_device(array, device)
    return backend.compact(array)


def _check_supported(array) -> None:
    try:
        dtypes.from_numpy(array.dtype)
    except TypeError:
        raise TypeError(f"can't convert np.ndarray of type {array.dtype}. The only supported types are: "
                        "float64, float32, float16, int64, int32, uint8, and bool.") from None


def _from_python(data):
    if isinstance(data, bool):
        return np.array(data, dtype=np.bool_)
    if isinstance(data, int):
        if not -(2**63) <= data < 2**63:
            raise RuntimeError(f"Overflow when unpacking long: {data} does not fit in int64")
        return np.array(data, dtype=np.int64)
    if isinstance(data, float):
        return np.array(data, dtype=dtypes.get_default_dtype().numpy)
    if not isinstance(data, (list, tuple)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    data = [x.tolist() if isinstance(x, Tensor) else x for x in data]
    try:
        array = np.array(data)
    except (ValueError, OverflowError) as exc:
        raise _ragged_error(data) or ValueError(str(exc)) from None
    kind = array.dtype.kind
    if kind == "b":
        return array
    if kind in "iu":
        return array.astype(np.int64, copy=False)
    if kind == "f":
        return array.astype(dtypes.get_default_dtype().numpy, copy=False)
    if kind in "US":
        raise TypeError("new(): invalid data type 'str'")
    raise TypeError(f"Could not infer dtype of {type(_first_leaf(data)).__name__}")


def _first_leaf(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _ragged_error(data) -> ValueError | None:
    """PyTorch's message for nested lists of unequal lengths, found breadth-first."""
    level = [data]
    dim = 0
    while level:
        lengths = [len(x) if isinstance(x, (list, tuple)) else None for x in level]
        expected = lengths[0]
        for got in lengths:
            if got != expected:
                if expected is None or got is None:
                    return ValueError(f"a number and a sequence side by side at dim {dim}")
                return ValueError(f"expected sequence of length {expected} at dim {dim} (got {got})")
        if expected is None:
            return None
        level = [y for x in level for y in x]
        dim += 1
    return None

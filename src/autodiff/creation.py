"""Making tensors: from data, filled, ranges, and seeded random numbers.

Python floats become the default dtype (float64), ints int64 and bools bool, as PyTorch
infers them; NumPy arrays keep their dtype.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _limits, backend, dtypes
from .tensor import Tensor, _make, _sizes

DEFAULT_SEED = 67280421310721  # PyTorch's default seed: random numbers are reproducible from the start
_generator = None  # made on first use: numpy.random costs start-up time most runs never need
_seed = DEFAULT_SEED


# -- from data --------------------------------------------------------------------------------------


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


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data`."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() or "
            "sourceTensor.clone().detach().requires_grad_(True), rather than autodiff.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    array = as_array(data, dtype=dtype, device=device)
    if array is data or (isinstance(data, Tensor) and array is data._data) or backend.is_numpy(data):
        array = backend.compact(array.copy())
    result = _make(array)
    if requires_grad:
        result.requires_grad_(True)
    return result


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` as a tensor, without a copy where it already is one."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return _make(as_array(data, dtype=dtype, device=device))


def from_numpy(array) -> Tensor:
    """A tensor sharing `array`'s memory."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _check_supported(array)
    return _make(array)


# -- a limit on what one call may create ----------------------------------------------------------------


ElementLimitError = _limits.ElementLimitError  # defined with the limit, in _limits.py


class element_limit:
    """`with element_limit(n):` refuses, before allocating, results of more than n elements:
    of creation functions and of every registry op (see _limits.py)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit

    def __enter__(self):
        self._previous, _limits.STATE.limit = _limits.STATE.limit, self.limit
        return self

    def __exit__(self, *exc_info) -> None:
        _limits.STATE.limit = self._previous


check_elements = _limits.check_elements


# -- filled -------------------------------------------------------------------------------------------


def _shape(size, what: str = "this tensor") -> tuple:
    shape = _sizes(size)
    for s in shape:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"size must be a tuple of ints, but got an element of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    shape = tuple(int(s) for s in shape)
    check_elements(math.prod(shape), f"{what}{tuple(shape) if len(shape) != 1 else f'({shape[0]})'}")
    return shape


def _float_dtype(dtype):
    return dtypes.to_numpy(dtype) if dtype is not None else dtypes.get_default_dtype().numpy


def _finish(array, requires_grad: bool) -> Tensor:
    result = _make(backend.compact(array))
    if requires_grad:
        result.requires_grad_(True)
    return result


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros: `zeros(2, 3)` or `zeros((2, 3))`."""
    return _finish(backend.module_for(device).zeros(_shape(size, 'zeros'), dtype=_float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    return _finish(backend.module_for(device).ones(_shape(size, 'ones'), dtype=_float_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size (autodiff fills it with zeros)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def _fill_dtype(fill_value, dtype):
    if dtype is not None:
        return dtypes.to_numpy(dtype)
    if isinstance(fill_value, bool):
        return np.bool_
    if isinstance(fill_value, int):
        return np.int64
    return dtypes.get_default_dtype().numpy


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value`."""
    xp = backend.module_for(device)
    return _finish(xp.full(_shape(size, "full"), fill_value, dtype=_fill_dtype(fill_value, dtype)), requires_grad)


def eye(n: int, m: int | None = None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The identity matrix (n x m)."""
    _shape((n, n) if m is None else (n, m), "eye")  # checked, as eye(n) has n * n elements
    return _finish(backend.module_for(device).eye(n, m, dtype=_float_dtype(dtype)), requires_grad)


def _like(input: Tensor, dtype, device):
    xp = backend.module_for(device) if device is not None else backend.array_module(input._data)
    return xp, (dtypes.to_numpy(dtype) if dtype is not None else input._data.dtype)


def zeros_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    xp, numpy_dtype = _like(input, dtype, device)
    return _finish(xp.zeros(input._data.shape, dtype=numpy_dtype), requires_grad)


def ones_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    xp, numpy_dtype = _like(input, dtype, device)
    return _finish(xp.ones(input._data.shape, dtype=numpy_dtype), requires_grad)


def full_like(input: Tensor, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    xp, numpy_dtype = _like(input, dtype, device)
    return _finish(xp.full(input._data.shape, fill_value, dtype=numpy_dtype), requires_grad)


def empty_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like_array(array):
    return backend.array_module(array).zeros(array.shape, dtype=array.dtype)


def full_like_array(array, value):
    return backend.array_module(array).full(array.shape, value, dtype=array.dtype)


# -- ranges -------------------------------------------------------------------------------------------


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Values from start (default 0) up to, not including, end: int64 when all are integers."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    integral = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, end, step))
    numpy_dtype = dtypes.to_numpy(dtype) if dtype is not None else (np.int64 if integral else _float_dtype(None))
    try:
        span = (end - start) / step
    except OverflowError:
        span = math.inf
    if not math.isfinite(span):
        raise RuntimeError(f"arange({start}, {end}, {step}) would have too many elements to count")
    count = max(0, math.ceil(span))
    _shape((count,), "arange")
    array = np.arange(start, end, step, dtype=np.float64 if not integral else np.int64)[:count].astype(numpy_dtype)
    return _finish(as_array(array, device=device), requires_grad)


def linspace(start, end, steps: int, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from start to end, both included."""
    _shape((steps,), "linspace")
    array = np.linspace(start, end, steps, dtype=_float_dtype(dtype))
    return _finish(as_array(array, device=device), requires_grad)


# -- random -------------------------------------------------------------------------------------------


class Generator:
    """What `manual_seed` returns: the seed of the global random number generator."""

    def __init__(self, seed: int) -> None:
        self._seed = seed

    def initial_seed(self) -> int:
        return self._seed

    def __repr__(self) -> str:
        return f"<autodiff.Generator seed={self._seed}>"


def manual_seed(seed: int) -> Generator:
    """Seed the generator behind rand, randn and randint, for reproducible numbers.

    The numbers are NumPy's PCG64 stream, so they differ from PyTorch's for the same seed;
    they are the same on every device (GPU tensors are drawn on the CPU and copied).
    """
    global _generator, _seed
    _seed = int(seed)
    _generator = None
    return Generator(_seed)


def _random():
    """The global generator, seeded with the last manual_seed (made when first needed)."""
    global _generator
    if _generator is None:
        _generator = np.random.Generator(np.random.PCG64(_seed & ((1 << 64) - 1)))
    return _generator


def initial_seed() -> int:
    return _seed


def seed() -> int:
    """Seed the generator from the operating system's entropy; returns the seed."""
    new_seed = int(np.random.SeedSequence().entropy) & ((1 << 63) - 1)
    manual_seed(new_seed)
    return new_seed


def rand(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform random numbers in [0, 1)."""
    array = _random().random(_shape(size, "rand")).astype(_float_dtype(dtype))
    return _finish(as_array(array, device=device), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal random numbers."""
    array = _random().standard_normal(_shape(size, "randn")).astype(_float_dtype(dtype))
    return _finish(as_array(array, device=device), requires_grad)


def randint(low, high=None, size=(), dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Random integers from low (default 0) up to, not including, high.

    As PyTorch: `randint(high, size)` when the second argument is a size (`randint(2, [3, 2])`)."""
    if high is None or isinstance(high, (list, tuple)) and size == ():
        low, high, size = 0, low, size if high is None else high
    array = _random().integers(low, high, size=_shape((size,) if isinstance(size, int) else size, "randint"))
    array = array.astype(dtypes.to_numpy(dtype) if dtype is not None else np.int64)
    return _finish(as_array(array, device=device), requires_grad)


def rand_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return rand(input._data.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randn_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return randn(input._data.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)

"""Making tensors: from data, filled, ranges, and seeded random numbers.

Python floats become the default dtype (float64), ints int64 and bools bool, as PyTorch
infers them; NumPy arrays keep their dtype (tensor.py's `as_array`, which `Tensor(data)` uses too).
The Tensor methods that make new tensors (`x.new_zeros(2)`) are bound here, as the ops bind theirs.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _limits, backend, dtypes
from .tensor import Tensor, TensorMethods, _check_supported, _make, _sizes, as_array

DEFAULT_SEED = 67280421310721  # PyTorch's default seed: random numbers are reproducible from the start
_generator = None  # made on first use: numpy.random costs start-up time most runs never need
_seed = DEFAULT_SEED


# -- from data --------------------------------------------------------------------------------------


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


# -- Tensor methods: new tensors of a tensor's dtype and device -----------------------------------------


def new_tensor(self, data, dtype=None, requires_grad: bool = False):
    return tensor(data, dtype=dtype or self.dtype, device=self.device, requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, requires_grad: bool = False):
    return zeros(*size, dtype=dtype or self.dtype, device=self.device, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, requires_grad: bool = False):
    return ones(*size, dtype=dtype or self.dtype, device=self.device, requires_grad=requires_grad)


TensorMethods.new_tensor = new_tensor
TensorMethods.new_zeros = new_zeros
TensorMethods.new_ones = new_ones

"""Where a tensor's numbers live: the one place that picks NumPy or CuPy.

Every op asks `array_module(array)` for its array module and calls that, so the same op code
runs on both. CuPy is imported only when a CUDA device is asked for.
"""

from __future__ import annotations

import numpy as np

_NUMPY_TYPES = (np.ndarray, np.generic)
# The classes NumPy data has in practice, for a quick `in` test on hot paths.
NUMPY_SCALAR_CLASSES = frozenset([np.float64, np.float32, np.float16, np.int64, np.int32, np.uint8, np.bool_])
NUMPY_CLASSES = NUMPY_SCALAR_CLASSES | {np.ndarray}
_cupy = None


class DeviceUnavailable(RuntimeError):
    """The requested device cannot be used here (CuPy missing, or no GPU)."""


class device:
    """`device('cpu')`, `device('cuda')`, `device('cuda:1')`, as PyTorch spells them."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | device = "cpu", index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string such as 'cpu' or 'cuda:0', got {type!r}")
        kind, _, number = type.partition(":")
        if number:
            if not number.isdigit() or index is not None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(number)
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + type
            )
        self.type = kind
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


def cupy_module():
    """CuPy, imported on first use; a clear DeviceUnavailable when it cannot be used."""
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError as exc:
            raise DeviceUnavailable(
                "CUDA device requested but CuPy is not installed "
                "(install it with: pip install 'autodiff[cuda]')"
            ) from exc
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # CuPy raises its own CUDARuntimeError types
            raise DeviceUnavailable(f"CUDA device requested but CuPy cannot use it: {exc}") from exc
        if count == 0:
            raise DeviceUnavailable("CUDA device requested but CuPy found no GPU")
        _cupy = cupy
    return _cupy


def array_module(array):
    """NumPy for NumPy data, CuPy for CuPy data: the module an op computes with."""
    if isinstance(array, _NUMPY_TYPES):
        return np
    if _cupy is not None and isinstance(array, _cupy.ndarray):
        return _cupy
    return np


def module_for(dev) -> object:
    """The array module that creates arrays on `dev` (a device, a string or None)."""
    if dev is None:
        return np
    dev = dev if isinstance(dev, device) else device(dev)
    if dev.type == "cpu":
        return np
    cp = cupy_module()
    if dev.index is not None:
        cp.cuda.Device(dev.index).use()
    return cp


def common_module(arrays):
    """The array module of an operation on `arrays`, or PyTorch's error when they live on two
    devices. 0-d NumPy values and Python numbers go with any device, as PyTorch's CPU scalars do."""
    first = None
    for array in arrays:
        if not hasattr(array, "shape"):
            continue
        if isinstance(array, _NUMPY_TYPES):
            if array.ndim == 0:
                continue
            where = CPU
        else:
            where = device_of(array)
        if first is None:
            first = where
        elif where != first:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, {first} and {where}!"
            )
    return np if first is None or first.type == "cpu" else _cupy


def scatter_add(target, indices, values) -> None:
    """target[indices] += values, with repeated indices adding up (NumPy's add.at).

    CuPy's add has `.at` since version 13 (cupyx.scatter_add, the same operation before it, now
    warns that it is deprecated)."""
    if isinstance(target, _NUMPY_TYPES):
        np.add.at(target, indices, values)
    elif hasattr(_cupy.add, "at"):
        _cupy.add.at(target, indices, values)
    else:
        import cupyx

        cupyx.scatter_add(target, indices, values)


def device_of(array) -> device:
    if isinstance(array, _NUMPY_TYPES):
        return CPU
    return device("cuda", int(array.device.id))


def to_device(array, dev):
    """A copy of `array` on `dev` (the same array when it is already there)."""
    dev = dev if isinstance(dev, device) else device(dev)
    if dev.type == "cpu":
        return array if isinstance(array, _NUMPY_TYPES) else array.get()
    cp = module_for(dev)
    return cp.asarray(array)


def compact(array):
    """0-d NumPy data as a NumPy scalar: arithmetic on those is several times faster.

    Safe because autodiff never writes into an array in place.
    """
    if array.ndim == 0 and isinstance(array, np.ndarray):
        return array[()]
    return array


def zeros_like_array(array):
    return array_module(array).zeros(array.shape, dtype=array.dtype)


def full_like_array(array, value):
    return array_module(array).full(array.shape, value, dtype=array.dtype)


# NumPy's floating-point warnings off for a stretch of code (`token = quiet()` ... `unquiet(token)`):
# what `np.errstate(all="ignore")` does on entry and exit, without building its Python object,
# which costs a few microseconds of every backward and every sum. NumPy 1.x keeps the state
# elsewhere: errstate itself there.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _ERROR_STATE
    from numpy._core.umath import _make_extobj

    _ERROR_STATE.reset(_ERROR_STATE.set(_make_extobj(all="ignore")))  # private: tried once, here
except Exception:  # NumPy 1.x, or a NumPy whose private names moved: errstate itself
    _ERROR_STATE = None


def quiet():
    if _ERROR_STATE is None:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    return _ERROR_STATE.set(_make_extobj(all="ignore"))


def unquiet(token) -> None:
    if _ERROR_STATE is None:
        token.__exit__(None, None, None)
    else:
        _ERROR_STATE.reset(token)


def broadcast_to(xp, array, shape):
    """`xp.broadcast_to(array, shape)`: a read-only view. A NumPy scalar or 0-d array (what
    sum and mean pass back in backward) is viewed directly, without NumPy's general routine,
    which costs several microseconds of every backward through a sum."""
    if array.__class__ in NUMPY_SCALAR_CLASSES or (array.__class__ is np.ndarray and array.ndim == 0):
        base = np.asarray(array)
        view = np.ndarray(shape, base.dtype, base, 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    return xp.broadcast_to(array, shape)


def contiguous(xp, array):
    """`array` in row-major order, copied only if it is not already: where PyTorch computes
    into a new contiguous tensor (flip, cat, reductions along a dim...), so that `view` then
    accepts and refuses exactly what PyTorch's would."""
    if array.ndim == 0 or array.flags.c_contiguous:
        return array
    return xp.ascontiguousarray(array)


def is_numpy(array) -> bool:
    return isinstance(array, _NUMPY_TYPES)

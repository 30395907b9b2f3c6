"""A stand-in for CuPy that runs on NumPy, so the device code paths are tested without a GPU.

Its arrays are not NumPy arrays, and, as CuPy's, refuse to become one silently (`np.asarray`
raises; `.get()` copies to the host): any engine code that hands device data to NumPy by
mistake fails here as it would on a GPU. Reductions return 0-d arrays, as CuPy's do. It has
what the engine uses of CuPy and no more — no `errstate`, no `ufunc.at` — so the gaps the
engine must bridge are gaps here too. Install with `installed()`.
"""

from __future__ import annotations

import contextlib
import sys
import types

import numpy

_TO_HOST = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
            "array explicitly.")


def _unwrap(value):
    if isinstance(value, ndarray):
        return value._a
    if isinstance(value, numpy.ndarray) and value.ndim > 0:
        # CuPy refuses host arrays as operands: only device arrays and scalars mix
        raise TypeError(f"Unsupported type {type(value)}")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    return value


def _unwrap_key(key):
    """Indices may be host data (lists, NumPy arrays), as CuPy accepts them."""
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k) for k in key)
    return key._a if isinstance(key, ndarray) else key


def _quiet(function):
    """CuPy never warns about nan or inf (it has no errstate): nor does the stand-in."""

    def quiet(*args, **kwargs):
        with numpy.errstate(all="ignore"):
            return function(*args, **kwargs)

    quiet.__name__ = getattr(function, "__name__", "quiet")
    return quiet


def _wrap(value):
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        return ndarray(numpy.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class _Device:
    id = 0

    def __repr__(self):
        return "<CUDA Device 0>"


class _Flags:
    def __init__(self, array):
        self.c_contiguous = array.flags.c_contiguous
        self.f_contiguous = array.flags.f_contiguous


class ndarray:
    __slots__ = ("_a",)
    __array_priority__ = 100

    def __init__(self, array):
        self._a = array

    # -- what CuPy arrays have -----------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    dtype = property(lambda self: self._a.dtype)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    T = property(lambda self: ndarray(self._a.T))
    mT = property(lambda self: ndarray(numpy.swapaxes(self._a, -1, -2)))
    flags = property(lambda self: _Flags(self._a))
    device = _Device()

    def get(self):
        return self._a.copy()

    def item(self):
        return self._a.item()

    def tolist(self):
        return self._a.tolist()

    def __array__(self, *args, **kwargs):
        raise TypeError(_TO_HOST)

    @_quiet
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # NumPy ufuncs on device arrays run on the device, as with CuPy
        result = getattr(ufunc, method)(*(_unwrap(i) for i in inputs), **{k: _unwrap(v) for k, v in kwargs.items()})
        return _wrap(result)

    def __array_function__(self, function, types_, args, kwargs):
        return _wrap(function(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

    def __getattr__(self, name):  # methods: sum, reshape, astype, transpose, ...
        attribute = getattr(self._a, name)
        if not callable(attribute):
            raise AttributeError(name)

        @_quiet
        def method(*args, **kwargs):
            return _wrap(attribute(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

        return method

    def __getitem__(self, key):
        return _wrap(self._a[_unwrap_key(key)])

    def __setitem__(self, key, value):
        self._a[_unwrap_key(key)] = _unwrap(value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (ndarray(numpy.asarray(row)) for row in self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __bool__(self):
        return bool(self._a)

    def __index__(self):
        return self._a.__index__()

    def __repr__(self):
        return f"fake_cupy.ndarray({self._a!r})"

    __hash__ = None


def _binary(name):
    @_quiet
    def operator(self, other):
        return _wrap(getattr(self._a, name)(_unwrap(other)))

    operator.__name__ = name
    return operator


for _name in ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "rfloordiv", "mod",
              "rmod", "pow", "rpow", "matmul", "rmatmul", "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "xor",
              "rand", "ror", "rxor"):
    setattr(ndarray, f"__{_name}__", _binary(f"__{_name}__"))
ndarray.__neg__ = lambda self: ndarray(-self._a)
ndarray.__pos__ = lambda self: ndarray(+self._a)
ndarray.__abs__ = lambda self: ndarray(abs(self._a))
ndarray.__invert__ = lambda self: ndarray(~self._a)


class _Ufunc:
    """A NumPy ufunc on device arrays; like CuPy's, without `.at` (cupyx.scatter_add instead)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__

    @_quiet
    def __call__(self, *args, **kwargs):
        return _wrap(self._ufunc(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

    @_quiet
    def reduce(self, *args, **kwargs):
        return _wrap(self._ufunc.reduce(*_unwrap(args), **kwargs))


class _Module(types.ModuleType):
    ndarray = ndarray
    _MISSING = frozenset(("errstate", "seterr", "geterr", "random"))  # not CuPy's (random is the engine's own)

    def __getattr__(self, name):
        if name.startswith("__") or name in self._MISSING:
            raise AttributeError(name)
        attribute = getattr(numpy, name)
        if isinstance(attribute, numpy.ufunc):
            return _Ufunc(attribute)
        if isinstance(attribute, type) or not callable(attribute):
            return attribute  # dtypes and constants are NumPy's, as in CuPy

        @_quiet
        def function(*args, **kwargs):
            return _wrap(attribute(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))

        function.__name__ = name
        return function

    @staticmethod
    def asarray(value, dtype=None):
        if isinstance(value, ndarray):
            return value if dtype is None else value.astype(dtype)
        return ndarray(numpy.array(value, dtype=dtype))

    @staticmethod
    def array(value, dtype=None, copy=True):
        if isinstance(value, ndarray):
            return ndarray(numpy.array(value._a, dtype=dtype, copy=copy))
        return ndarray(numpy.array(value, dtype=dtype))

    @staticmethod
    def asnumpy(value):
        return value.get() if isinstance(value, ndarray) else numpy.asarray(value)

    @staticmethod
    def may_share_memory(a, b):
        return numpy.may_share_memory(_unwrap(a), _unwrap(b))


def _scatter_add(target, indices, values):
    numpy.add.at(target._a, _unwrap_key(indices), _unwrap(values) if isinstance(values, ndarray) else values)


def make(device_count: int = 1):
    """A fresh fake `cupy` module and its `cupyx`."""
    cupy = _Module("cupy")
    runtime = types.SimpleNamespace(getDeviceCount=lambda: device_count)
    cupy.cuda = types.SimpleNamespace(runtime=runtime, Device=lambda index=0: types.SimpleNamespace(use=lambda: None))
    cupyx = types.ModuleType("cupyx")
    cupyx.scatter_add = _scatter_add
    return cupy, cupyx


@contextlib.contextmanager
def installed(device_count: int = 1):
    """`import cupy` gives the fake while the block runs; the engine forgets it afterwards."""
    from autodiff import backend

    cupy, cupyx = make(device_count)
    saved = {name: sys.modules.get(name) for name in ("cupy", "cupyx")}
    sys.modules["cupy"], sys.modules["cupyx"] = cupy, cupyx
    backend._cupy = None
    try:
        yield cupy
    finally:
        backend._cupy = None
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module

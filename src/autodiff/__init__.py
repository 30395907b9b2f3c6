"""autodiff: a define-by-run autograd engine with PyTorch's names, on NumPy (or CuPy).

A PyTorch autograd snippet that stays inside this API runs unchanged after
`import autodiff as torch`:

    import autodiff as torch
    a = torch.tensor(2.0, requires_grad=True)
    e = a * 3 + torch.log(a)
    e.backward()
    print(a.grad)          # tensor(3.5000)

The default dtype is float64.
"""

from ._version import __version__
from . import ops  # first: the operations define Tensor's methods as they are declared
from .tensor import Size, Tensor
from . import autograd, return_types
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .backend import DeviceUnavailable, device
from .creation import (
    Generator,
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    initial_seed,
    linspace,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    seed,
    tensor,
    zeros,
    zeros_like,
)
from .dtypes import dtype, float16, float32, float64, get_default_dtype, int32, int64, set_default_dtype, uint8
from .dtypes import bool_ as bool  # noqa: A001  (PyTorch's name)
from ._formatting import set_printoptions
globals().update(ops.PUBLIC.loaded())  # the public operations loaded so far; __getattr__ finds the others
from .ops.running import ShapeError

# PyTorch's dtype aliases.
half = float16
float = float32  # noqa: A001
double = float64
int = int32  # noqa: A001
long = int64


def is_tensor(obj) -> bool:
    """True for autodiff tensors."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    return input.dtype.is_floating_point


def numel(input: Tensor):
    return input.numel()


def load_ipython_extension(ipython) -> None:
    """`%load_ext autodiff` in IPython or Jupyter: the `%%autodiff` cell magic (autodiff/jupyter.py,
    which alone imports IPython, and only now)."""
    from .jupyter import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str):
    """`autodiff.nn`, `autodiff.func`, `autodiff.linalg`, `autodiff.explain`, `autodiff.derive` and the
    operations of the op modules not loaded yet load on first use: importing autodiff stays quick."""
    if name in ("nn", "func", "linalg"):
        from importlib import import_module

        module = import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    if name == "explain":
        from .chain_rule import explain

        globals()["explain"] = explain
        return explain
    if name == "derive":  # a program's symbolic derivatives: the language layer, loaded only now
        from .derivation import derive

        globals()["derive"] = derive
        return derive
    function = ops.PUBLIC.get(name)  # an operation whose module loads on first use (ops/catalogue.py)
    if function is not None:
        globals()[name] = function
        return function
    raise AttributeError(f"module 'autodiff' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(ops.PUBLIC_NAMES))

"""Every operation on tensors. Differentiable ones are declared in the registry (registry.py),
each with its public surface (surface.py), as their modules load: those that bind Python's
operators onto Tensor here, the others on first use (catalogue.py).

`PUBLIC` (its names are `__all__`) is the catalogue users call by name: `autodiff` exports it,
and `FUNCTIONS` — it plus tensor creation — is what the expression language may call.
"""

from .surface import PUBLIC, TensorMethods
from .registry import REGISTRY, OpDef, defop  # noqa: F401
from .running import ShapeError  # noqa: F401
from . import pointwise, selection, arithmetic, comparison, shape, indexing, products  # noqa: F401  (catalogue.EAGER)
from .catalogue import LazyTable, load_all  # noqa: F401
from .declared_in import PUBLIC_NAMES
from . import catalogue
from .. import creation

__all__ = list(PUBLIC_NAMES)
catalogue.stand_in_for_methods()  # x.sum: its module loads on the look-up
CREATION = ("zeros", "ones", "full", "eye", "arange", "linspace", "rand", "randn", "zeros_like", "ones_like",
            "full_like", "rand_like", "randn_like")


# Every function a program may call by name: the catalogue, plus tensor creation.
FUNCTIONS = LazyTable(PUBLIC_NAMES + CREATION, lambda name: getattr(creation, name) if name in CREATION else PUBLIC[name])


def __getattr__(name: str):
    """`autodiff.ops.sum`: a public function of a module not loaded yet."""
    function = PUBLIC.get(name)
    if function is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return function


def __dir__() -> list:
    return sorted(set(globals()) | set(PUBLIC_NAMES))

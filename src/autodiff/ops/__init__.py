"""Every operation on tensors. Differentiable ones are declared in the registry (registry.py),
each with its public surface (surface.py): the op modules are imported here for that.

`PUBLIC` (re-exported as `__all__`) is the catalogue users call by name: `autodiff` exports it,
and `FUNCTIONS` — it plus tensor creation — is what the expression language may call.
"""

from .surface import PUBLIC, TensorMethods
from .registry import REGISTRY, OpDef, defop  # noqa: F401
from .running import ShapeError  # noqa: F401
from . import pointwise, selection, arithmetic, comparison, shape, indexing, reduction, products, loss  # noqa: F401
from . import special, activation, rearrange, statistics, pieces, gathering, ordering, matrices  # noqa: F401
from . import decompositions, spectral  # noqa: F401  (linear algebra: autodiff.linalg)
from .. import creation

globals().update(PUBLIC)
__all__ = list(PUBLIC)

# Every function a program may call by name: the catalogue, plus tensor creation.
FUNCTIONS = dict(PUBLIC)
FUNCTIONS.update(
    {name: getattr(creation, name) for name in (
        "zeros", "ones", "full", "eye", "arange", "linspace", "rand", "randn",
        "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    )}
)

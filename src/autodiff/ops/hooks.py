"""What a transform sets while it runs, for the operations it intercepts: derive's tracer
(symbolic/trace.py) and forward mode's dual level (autograd/forward_ad.py).

Each is a context of its own (contextvars): entering pushes the transform's hooks over those in
force, leaving restores them, so one transform inside another finds its hooks intact on the way
out (a derive inside a dual level), and a thread never sees another thread's.

- `tracer`: takes every operation on a traced tensor (batching.dispatch);
- `forward`: takes every operation on a dual tensor (batching.dispatch);
- `reattach`: gives a formula the saved result of its node as the transform's own tensor
  (registry: a result saved for backward, read with create_graph);
- `tensors_in_backward`: backward runs the formulas on tensors though it builds no graph (derive's
  first derivatives: the tracer reads their expressions, and nothing will differentiate them).
"""

from __future__ import annotations

import contextvars
from typing import NamedTuple


class Hooks(NamedTuple):
    tracer: object = None
    forward: object = None
    reattach: object = None
    tensors_in_backward: bool = False


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("autodiff_hooks", default=Hooks())


# The hooks in force: the context variable's own `get`, called with no Python frame of its own
# (every op on a traced, dual or batched tensor asks).
current = _CURRENT.get


def push(**hooks) -> contextvars.Token:
    """The hooks in force, with `hooks` over them; `pop(token)` restores what was before."""
    return _CURRENT.set(_CURRENT.get()._replace(**hooks))


def pop(token: contextvars.Token) -> None:
    _CURRENT.reset(token)

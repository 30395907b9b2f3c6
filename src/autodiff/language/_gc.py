"""Pausing Python's cyclic garbage collector while a program is parsed or run.

Both build hundreds of thousands of small objects (tokens, tree nodes, graph nodes) and no
reference cycles, so the collector would only rescan them again and again: pausing it
roughly halves the time on large programs. Reference counting still frees everything.
`autodiff test` and the pytest plugin pause it for a whole file (record, run, backward,
comparison), which makes no cycles either: under pytest, whose many report objects make each
collection long, that is a tenth of the run.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

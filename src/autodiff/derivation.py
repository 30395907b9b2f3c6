"""`autodiff.derive(...)`: the symbolic derivatives of a program written in the expression
language. An entry on top of the layers, as jupyter.py is: the engine never imports it;
`autodiff.derive` loads it (and the language) on first use."""

from __future__ import annotations

from .program.derive import Derivation, check, derive

__all__ = ["Derivation", "check", "derive"]

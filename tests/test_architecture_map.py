"""ARCHITECTURE.md is the map a newcomer opens first: every module under src/autodiff is named
in it (its file's name, or its folder's for a package), so none is found only by searching."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "autodiff"


def test_every_module_is_named_in_the_architecture():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    unnamed = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE)
        name = relative.parent.name if relative.name == "__init__.py" else relative.stem
        if name and not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text):
            unnamed.append(relative.as_posix())
    assert unnamed == [], f"name these in ARCHITECTURE.md's layout: {unnamed}"

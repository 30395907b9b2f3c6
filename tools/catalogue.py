"""Which lazy op module declares each name: `src/autodiff/ops/declared_in.py`, read by
ops/catalogue.py to load a module on the first use of one of its names.

It imports autodiff (which loads the eager op modules only), then each lazy module in turn, and
records the names each one adds to the tables the ops fill: public functions, the registry, the
ops without a gradient, the method forms, the spellings and Tensor's methods. It refuses a lazy
module that binds one of Python's operators onto Tensor (`x + y` looks the operator up on the
class: no stand-in can load a module for it), and one that declares again what an earlier module
declared (a name's meaning would depend on what a program happened to load).

    python tools/catalogue.py           print the table
    python tools/catalogue.py --write   rewrite src/autodiff/ops/declared_in.py

tests/engine/test_catalogue.py fails when the file is not what this writes. It must run in a
process of its own (the tables are read as the modules load).
"""

from __future__ import annotations

import importlib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TABLE = ROOT / "src" / "autodiff" / "ops" / "declared_in.py"
sys.path.insert(0, str(ROOT / "src"))

import autodiff  # noqa: E402,F401  (after the path: the checkout's own)
from autodiff.ops import catalogue, registry, spelling, surface  # noqa: E402
from autodiff.tensor import TensorMethods  # noqa: E402

HEADER = '''"""Which lazy op modules declare each name (public function, op, Tensor method, spelling), the
Tensor methods they declare, and every public function's name: written by tools/catalogue.py; do not
edit by hand."""

'''


TABLES = {"function": surface.PUBLIC, "method form": surface.METHOD_FORMS, "op": registry.REGISTRY,
          "op without a gradient": registry.NONDIFF, "spelling": spelling.SPELLINGS}


def _declared() -> dict:
    """(kind, name) -> what is declared so far."""
    declared = {(kind, name): value for kind, table in TABLES.items() for name, value in dict.items(table)}
    declared.update({("method", name): value for name, value in vars(TensorMethods).items()
                     if not isinstance(value, catalogue._StandIn)})
    return declared


def table() -> str:
    if any(f"autodiff.ops.{module}" in sys.modules for module in catalogue.LAZY):
        raise SystemExit("a lazy op module was loaded by importing autodiff: see ops/catalogue.py's EAGER")
    declared_in: dict = {}
    before = _declared()
    first_methods = {name for kind, name in before if kind == "method"}
    for module in catalogue.LAZY:
        importlib.import_module(f"autodiff.ops.{module}")
        after = _declared()
        replaced = sorted(name for key, name in before if after[key, name] is not before[key, name])
        if replaced:  # what a name means would depend on which modules a program happened to load
            raise SystemExit(f"ops/{module}.py declares again what an earlier module declared: {replaced}")
        for kind, name in sorted(after.keys() - before.keys()):
            if kind == "method" and name.startswith("__") and name.endswith("__"):
                raise SystemExit(f"ops/{module}.py binds {name} onto Tensor: declare it in an eager module")
            modules = declared_in.setdefault(name, [])
            if module not in modules:  # a name may be one module's op and another's function (cumsum)
                modules.append(module)
        before = after
    public = list(dict.keys(surface.PUBLIC))
    lines = [HEADER, "DECLARED_IN = {\n"]
    lines += [f"    {name!r}: {tuple(modules)!r},\n" for name, modules in sorted(declared_in.items())]
    methods = sorted({name for kind, name in _declared() if kind == "method"} - first_methods)
    lines.append("}\n\n# The Tensor methods they declare.\nMETHODS = (\n")
    lines += [f"    {name!r},\n" for name in methods]
    lines.append(")\n\n# Every public function, in the order they are declared.\nPUBLIC_NAMES = (\n")
    lines += [f"    {name!r},\n" for name in public]
    lines.append(")\n")
    return "".join(lines)


if __name__ == "__main__":
    text = table()
    if sys.argv[1:] == ["--write"]:
        TABLE.write_text(text)
    else:
        sys.stdout.write(text)

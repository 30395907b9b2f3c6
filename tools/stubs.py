"""autodiff's type stub, written from the package itself: `src/autodiff/__init__.pyi`.

The package makes most of its surface as it loads (every op of the registry is a function, a
Tensor method and, often, an operator), so editors and type checkers, which read files and do
not run them, would see none of it. This writes what importing autodiff defines: each public
function with its signature, Tensor with every method and property, the dtypes, the grad-mode
classes and the submodules, as PyTorch generates its own stubs. Annotations the source gives
in plain names are kept; any other becomes `Any`. `py.typed` beside it says the package is typed.

    python tools/stubs.py           print the stub
    python tools/stubs.py --write   rewrite src/autodiff/__init__.pyi

tests/test_stubs.py fails when the file is not what this writes.
"""

from __future__ import annotations

import inspect
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUB = ROOT / "src" / "autodiff" / "__init__.pyi"
sys.path.insert(0, str(ROOT / "src"))

import autodiff  # noqa: E402  (after the path: the checkout's own)

autodiff.ops.load_all()  # Tensor's methods, those of the op modules that load on first use too

# The names a stub may use in an annotation as they are; any other annotation is Any.
KNOWN = {"Tensor", "Size", "dtype", "device", "int", "float", "bool", "str", "None", "tuple", "list", "dict", "object"}
SUBMODULES = ("autograd", "func", "linalg", "nn", "return_types")
LAZY = ("derive", "explain")  # functions autodiff's __getattr__ loads on first use
HEADER = ('"""autodiff\'s public surface for editors and type checkers: written by tools/stubs.py from what\n'
          'importing autodiff defines; do not edit by hand."""\n\n'
          "from typing import Any\n\n")


def annotation(value) -> str:
    """An annotation as the stub writes it: the source's when it names known types only."""
    if value is inspect.Parameter.empty:
        return "Any"
    text = value if isinstance(value, str) else getattr(value, "__name__", repr(value))
    text = text.replace("'", "").replace('"', "")
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", text))
    return text if words and words <= KNOWN else "Any"


def signature(function, method: bool = False) -> str:
    """`(input: Tensor, dim: Any = ..., *, dtype: Any = ...) -> Tensor`, or a general one where
    the function's signature cannot be read."""
    try:
        found = inspect.signature(function)
    except (TypeError, ValueError):
        return "(self, *args: Any, **kwargs: Any) -> Any" if method else "(*args: Any, **kwargs: Any) -> Any"
    parts, star_done = [], False
    parameters = list(found.parameters.values())
    if method:  # the first parameter is the tensor the method is called on (an op's `input`)
        parts.append("self")
        if parameters and parameters[0].kind in (parameters[0].POSITIONAL_ONLY, parameters[0].POSITIONAL_OR_KEYWORD):
            parameters = parameters[1:]
    for p in parameters:
        name = p.name
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{name}: {annotation(p.annotation)}")
            star_done = True
            continue
        if p.kind is p.VAR_KEYWORD:
            parts.append(f"**{name}: {annotation(p.annotation)}")
            continue
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        text = f"{name}: {annotation(p.annotation)}"
        if p.default is not inspect.Parameter.empty:
            text += " = ..."
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (parameters.index(p) + 1 == len(parameters)
                                            or parameters[parameters.index(p) + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    return f"({', '.join(parts)}) -> {annotation(found.return_annotation)}"


def _is_public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


_TENSOR_DUNDERS = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
                   "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
                   "__rmatmul__", "__neg__", "__pos__", "__abs__", "__invert__", "__and__", "__or__", "__xor__",
                   "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__getitem__", "__setitem__",
                   "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__", "__iadd__", "__isub__",
                   "__imul__", "__itruediv__", "__contains__", "__hash__"}


def tensor_class() -> list:
    lines = ["class Tensor:"]
    for name in sorted(dir(autodiff.Tensor)):
        if name.startswith("_") and name not in _TENSOR_DUNDERS:
            continue
        static = inspect.getattr_static(autodiff.Tensor, name)
        if isinstance(static, property):
            lines.append(f"    @property\n    def {name}(self) -> {annotation(inspect.signature(static.fget).return_annotation)}: ...")
            if static.fset is not None:
                lines.append(f"    @{name}.setter\n    def {name}(self, value: Any) -> None: ...")
        elif callable(static) or isinstance(static, (staticmethod, classmethod)):
            function = static.__func__ if isinstance(static, (staticmethod, classmethod)) else static
            if isinstance(static, staticmethod):
                lines.append(f"    @staticmethod\n    def {name}{signature(function)}: ...")
            else:
                lines.append(f"    def {name}{signature(function, method=True)}: ...")
        elif name == "__hash__":
            continue
        else:
            lines.append(f"    {name}: Any")
    return lines


def stub() -> str:
    out = [HEADER]
    out += [f"from . import {name} as {name}\n" for name in SUBMODULES]
    out.append("\n__version__: str\n\n\n")
    classes, functions, values = [], [], []
    # what loads on first use is named too, so the stub is the same whichever loaded already
    for name in sorted({n for n in dir(autodiff) if not n.startswith("_")} | set(LAZY)):
        value = getattr(autodiff, name)
        if inspect.ismodule(value):
            continue
        if name == "Tensor":
            continue
        if inspect.isclass(value):
            classes.append(f"class {name}:\n    def __init__(self, *args: Any, **kwargs: Any) -> None: ...\n"
                           + ("    def __enter__(self) -> Any: ...\n    def __exit__(self, *exc: Any) -> Any: ...\n"
                              "    def __call__(self, function: Any) -> Any: ...\n"
                              if hasattr(value, "__enter__") else ""))
        elif callable(value):
            functions.append(f"def {name}{signature(value)}: ...")
        else:
            values.append(f"{name}: {type(value).__name__ if type(value).__name__ in KNOWN else 'Any'}")
    out.append("\n".join(tensor_class()) + "\n\n")
    out.append("\n".join(classes) + "\n")
    out.append("\n".join(values) + "\n\n")
    out.append("\n".join(functions) + "\n")
    return "".join(out)


def main(argv: list) -> int:
    text = stub()
    if "--write" in argv:
        STUB.write_text(text)
        (STUB.parent / "py.typed").write_text("")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

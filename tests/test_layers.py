"""The layers stay one-way: cli -> testing -> program -> language -> engine.

Each layer imports only those below it; the engine and the language know nothing of the
command line or its libraries, and importing the engine loads none of the layers above it."""

import ast
import pathlib
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src" / "autodiff"
UPPER = ("cli", "testing", "program", "language")
# __main__.py is `python -m autodiff`, the command line's entry; jupyter.py is the notebook's
# (%load_ext autodiff); derivation.py is autodiff.derive(): they sit on top, beside cli, and load
# only when asked for.
ENTRIES = ("__main__.py", "jupyter.py", "derivation.py")
ENGINE_FILES = [p for p in SOURCE.rglob("*.py") if p.relative_to(SOURCE).parts[0] not in UPPER + ENTRIES]
UI = ("rich", "typer", "click")

# layer -> what its files may not import
FORBIDDEN = {
    "engine": ("lark", "IPython", "matplotlib") + UI + tuple(f"autodiff.{layer}" for layer in UPPER),
    "language": UI + ("autodiff.program", "autodiff.testing", "autodiff.cli"),
    "program": UI + ("IPython", "matplotlib", "autodiff.testing", "autodiff.cli"),
    "testing": ("typer", "click", "autodiff.cli"),
}


def files_of(layer: str):
    return ENGINE_FILES if layer == "engine" else list((SOURCE / layer).rglob("*.py"))


def imported_modules(path: pathlib.Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = path.relative_to(SOURCE.parent).with_suffix("").parts[: -node.level]
                base = ".".join(package + ((base,) if base else ()))
            yield base
            for alias in node.names:
                yield f"{base}.{alias.name}"


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_each_layer_imports_only_the_layers_below_it(layer):
    assert files_of(layer), layer
    offenders = [
        f"{path.relative_to(SOURCE)} imports {module}"
        for path in files_of(layer)
        for module in imported_modules(path)
        if any(module == f or module.startswith(f + ".") for f in FORBIDDEN[layer])
    ]
    assert not offenders, offenders


def test_ops_use_the_array_module_they_are_given():
    for path in (SOURCE / "ops").glob("*.py"):
        for module in imported_modules(path):
            assert module.split(".")[0] not in ("numpy", "cupy"), f"{path.name} imports {module}"


def test_importing_the_engine_loads_none_of_them():
    code = (
        "import sys, autodiff, autodiff.autograd.functional, autodiff.autograd.gradcheck;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'lark','rich','typer','click','cupy'}"
        " or m in ('IPython', 'matplotlib', 'autodiff.jupyter', 'autodiff._html')"
        " or m.startswith(('autodiff.cli', 'autodiff.language', 'autodiff.program', 'autodiff.testing'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_importing_the_program_layer_loads_no_command_line():
    code = (
        "import sys, autodiff.program;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'rich','typer','click'}"
        " or m in ('IPython', 'matplotlib', 'autodiff.jupyter')"
        " or m.startswith(('autodiff.cli', 'autodiff.testing'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

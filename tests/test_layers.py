"""The layers stay one-way: the engine knows nothing of the language, the CLI or their libraries."""

import ast
import pathlib
import subprocess
import sys

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src" / "autodiff"
ENGINE_FILES = [  # __main__.py is `python -m autodiff`: the command line's entry, not the engine
    p for p in SOURCE.rglob("*.py")
    if p.relative_to(SOURCE).parts[0] not in ("cli", "language", "testing", "__main__.py")
]
LANGUAGE_FILES = list((SOURCE / "language").rglob("*.py"))
FORBIDDEN = ("lark", "rich", "typer", "autodiff.cli", "autodiff.language", "click")


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


def test_engine_sources_import_no_parser_cli_or_ui_library():
    offenders = []
    for path in ENGINE_FILES:
        for module in imported_modules(path):
            if any(module == f or module.startswith(f + ".") for f in FORBIDDEN):
                offenders.append(f"{path.relative_to(SOURCE)} imports {module}")
    assert not offenders, offenders


def test_the_language_knows_nothing_of_the_command_line():
    offenders = [
        f"{path.relative_to(SOURCE)} imports {module}"
        for path in LANGUAGE_FILES
        for module in imported_modules(path)
        if any(module == f or module.startswith(f + ".") for f in ("rich", "typer", "click", "autodiff.cli"))
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
        " or m.startswith(('autodiff.cli', 'autodiff.language'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

"""The layers stay one-way: cli -> testing -> program -> language -> engine, with the symbolic
layer (symbolic/, chain_rule/) beside the language: the program layer uses it, it uses the engine.

Each layer imports only those below it; the engine and the language know nothing of the
command line or its libraries, and importing the engine loads none of the layers above it.
Inside the engine the modules have an order too (ENGINE_RANKS): none imports one above it."""

import ast
import fnmatch
import pathlib
import subprocess
import sys

import pytest

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src" / "autodiff"
UPPER = ("cli", "testing", "program", "language")
# The symbolic layer, above the engine and beside the language: the tracer and algebra behind
# derive (symbolic/) and the backward pass made visible (chain_rule/). The program layer uses them;
# they use the engine alone.
SYMBOLIC = ("symbolic", "chain_rule")
# __main__.py is `python -m autodiff`, the command line's entry; jupyter.py is the notebook's
# (%load_ext autodiff); derivation.py is autodiff.derive(): they sit on top, beside cli, and load
# only when asked for.
ENTRIES = ("__main__.py", "jupyter.py", "derivation.py")
ENTRY_MODULES = tuple(f"autodiff.{entry.removesuffix('.py')}" for entry in ENTRIES)
# The package's face: it imports the engine, and hands out the entries on first use
# (`autodiff.derive`, `%load_ext autodiff`); no other engine file may name them.
FACE = SOURCE / "__init__.py"
ENGINE_FILES = [p for p in SOURCE.rglob("*.py")
                if p.relative_to(SOURCE).parts[0] not in UPPER + SYMBOLIC + ENTRIES and p != FACE]
UI = ("rich", "typer", "click")

# layer -> what its files may not import
FORBIDDEN = {
    # the face hands out autodiff.explain (chain_rule/) on first use, as it does the entries
    "face": ("lark", "IPython", "matplotlib") + UI + tuple(f"autodiff.{layer}" for layer in UPPER + ("symbolic",)),
    "engine": ("lark", "IPython", "matplotlib") + UI + tuple(f"autodiff.{layer}" for layer in UPPER + SYMBOLIC)
    + ENTRY_MODULES,
    "symbolic": ("lark", "IPython", "matplotlib") + UI + tuple(f"autodiff.{layer}" for layer in UPPER) + ENTRY_MODULES,
    "chain_rule": ("lark", "IPython", "matplotlib") + UI + tuple(f"autodiff.{layer}" for layer in UPPER) + ENTRY_MODULES,
    "language": UI + ("autodiff.program", "autodiff.testing", "autodiff.cli", "autodiff.symbolic", "autodiff.chain_rule")
    + ENTRY_MODULES,
    "program": UI + ("IPython", "matplotlib", "autodiff.testing", "autodiff.cli") + ENTRY_MODULES,
    "testing": ("typer", "click", "autodiff.cli") + ENTRY_MODULES,
}

# The engine's order, lowest first: a module imports its own rank and those below it, never one above
# (at the top or inside a function). What a lower module needs from above, the higher one hands it
# when it loads: the ops and creation.py bind Tensor's methods onto tensor.py's TensorMethods,
# tensor.py sets node.TENSOR; derive's tracer and forward mode push their hooks (ops/hooks.py).
ENGINE_RANKS = [
    ("base", ("backend.py", "dtypes.py", "_limits.py", "_text.py", "_record.py", "codec.py", "_formatting.py", "_html.py",
              "_version.py")),
    ("grad modes and nodes", ("autograd/__init__.py", "autograd/grad_mode.py", "autograd/anomaly.py",
                              "autograd/versions.py", "autograd/tape.py", "autograd/node.py")),
    ("tensor", ("tensor.py",)),
    ("creation", ("creation.py", "return_types.py")),
    ("ops", ("ops/*.py",)),
    ("backward", ("autograd/engine.py", "autograd/function.py", "autograd/forward_ad.py")),
    ("transforms", ("autograd/functional.py", "autograd/gradcheck.py", "func.py", "linalg.py", "nn/*.py")),
    ("face", ("__init__.py",)),
]


def files_of(layer: str):
    if layer == "face":
        return [FACE]
    return ENGINE_FILES if layer == "engine" else list((SOURCE / layer).rglob("*.py"))


def imported_modules(path: pathlib.Path):
    """Every module `path` names in an import, at the top or in a function, and in a call of
    `importlib.import_module` or `__import__` with a literal name."""
    tree = ast.parse(path.read_text(), str(path))
    package = path.relative_to(SOURCE.parent).with_suffix("").parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module or "", node.level, package)
            if node.module:  # `from .. import jupyter` names autodiff.jupyter, not the package
                yield base
            for alias in node.names:
                yield f"{base}.{alias.name}"
        elif isinstance(node, ast.Call) and _called_name(node.func) in ("import_module", "__import__"):
            name, anchor = (list(node.args) + [None, None])[:2]  # import_module(".x", "autodiff")
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                level = len(name.value) - len(name.value.lstrip("."))
                literal = isinstance(anchor, ast.Constant) and isinstance(anchor.value, str)
                yield _absolute(name.value[level:], level, tuple(anchor.value.split(".")) if literal else package)


def _absolute(module: str, level: int, package: tuple) -> str:
    if not level:
        return module
    base = package[: len(package) - level + 1]
    return ".".join(base + ((module,) if module else ()))


def _called_name(function) -> str | None:
    return function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else None


def engine_file_of(module: str):
    """The engine file that runs for `module` (autodiff.ops.registry.defop -> ops/registry.py), if any."""
    parts = module.split(".")
    if parts[0] != "autodiff":
        return None
    for end in range(len(parts), 1, -1):
        relative = SOURCE.joinpath(*parts[1:end])
        for path in (relative.with_suffix(".py"), relative / "__init__.py"):
            if path.is_file():
                return path if path in ENGINE_FILES else None
    return FACE


def rank_of(path: pathlib.Path) -> int:
    relative = path.relative_to(SOURCE).as_posix()
    ranks = [i for i, (_, globs) in enumerate(ENGINE_RANKS) if any(fnmatch.fnmatch(relative, g) for g in globs)]
    assert len(ranks) == 1, f"{relative} is in {len(ranks)} of ENGINE_RANKS' ranks: give it one"
    return ranks[0]


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


def test_no_engine_module_imports_one_of_a_higher_rank():
    offenders = []
    for path in ENGINE_FILES + [FACE]:
        rank = rank_of(path)
        for module in imported_modules(path):
            target = engine_file_of(module)
            if target is not None and rank_of(target) > rank:
                offenders.append(f"{path.relative_to(SOURCE)} ({ENGINE_RANKS[rank][0]}) imports {module} "
                                 f"({ENGINE_RANKS[rank_of(target)][0]})")
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
        " or m.startswith(('autodiff.cli', 'autodiff.language', 'autodiff.program', 'autodiff.testing',"
        " 'autodiff.symbolic', 'autodiff.chain_rule'))))"
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


def test_commands_leave_the_writing_to_the_renderers_and_the_console():
    """A command parses, runs and chooses what to say; render/ words it and console.py writes it
    (`say` colours error:, warning: and note: on a terminal): no command prints itself."""
    import ast
    import pathlib

    commands = pathlib.Path(__file__).parent.parent / "src" / "autodiff" / "cli" / "commands"
    printing = sorted(f"{path.name}:{node.lineno}" for path in commands.glob("*.py")
                      for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print")
    assert printing == []

"""The type stub (src/autodiff/__init__.pyi) is what tools/stubs.py writes from the package as it
loads, so editors and type checkers see every function, method and property autodiff defines."""

from __future__ import annotations

import ast
import importlib.util
import pathlib

import autodiff

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("stubs", ROOT / "tools" / "stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_stub_is_current():
    assert (ROOT / "src" / "autodiff" / "__init__.pyi").read_text() == _tool().stub(), "run python tools/stubs.py --write"
    assert (ROOT / "src" / "autodiff" / "py.typed").exists()


def test_the_stub_names_every_public_function_and_tensor_method():
    tree = ast.parse((ROOT / "src" / "autodiff" / "__init__.pyi").read_text())
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    top |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    top |= {a.asname for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    public = {n for n in dir(autodiff) if not n.startswith("_") and not isinstance(getattr(autodiff, n), type(ast))}
    assert public - top == set()
    tensor = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    methods = {n.name for n in tensor.body if isinstance(n, ast.FunctionDef)}
    methods |= {n.target.id for n in tensor.body if isinstance(n, ast.AnnAssign)}
    assert {n for n in dir(autodiff.Tensor) if not n.startswith("_")} <= methods
    assert {"cumsum", "backward", "grad", "shape", "requires_grad", "__add__", "__matmul__"} <= methods

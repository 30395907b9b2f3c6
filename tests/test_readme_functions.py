"""The README's lists of functions against the catalogue: every function a program or a Python
user may call by name is listed, and every name listed is one.

Two lists: the expression language's ("Every function of the engine is callable by its name:
..." and the creation functions of the table above it), against the language's builtins
(`autodiff.ops.FUNCTIONS`, with `torch.nn.functional`'s `linear` and losses), and the Python
API's ("**Creating tensors**" and "**Functions**"), against `autodiff.ops.FUNCTIONS`. A list is
names in backquotes, several to a pair (`exp log sqrt`), aliases with the rest.
"""

from __future__ import annotations

import pathlib
import re

import autodiff
from autodiff.language.builtins import FUNCTIONS as LANGUAGE_FUNCTIONS
from autodiff.ops import FUNCTIONS

README = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()


def _section(start: str, end: str) -> str:
    begin = README.index(start)
    return README[begin:README.index(end, begin)]


def _quoted(text: str) -> list:
    return re.findall(r"`([^`]*)`", text)


def _listed(text: str) -> set:
    """Every name of the backquoted lists in `text` (`exp log`, `tensor`); code (`x.T`, `+ -`) is not one."""
    return {name for quoted in _quoted(text) if re.fullmatch(r"[a-z_][a-z0-9_]*(\s+[a-z_][a-z0-9_]*)*", quoted.strip())
            for name in quoted.split()}


def _language_list() -> set:
    language = _section("## The expression language", "## The Python API")
    paragraph = language[language.index("Every function of the engine is callable by its name:"):]
    paragraph = paragraph[:paragraph.index("with PyTorch's arguments")]
    creation_row = next(line for line in language.splitlines() if line.startswith("|") and "creating tensors" in line)
    first_cell = creation_row.split("|")[1]
    creation = {re.match(r"\w+", quoted).group(0) for quoted in _quoted(first_cell)}  # `zeros(2, 3)` `ones`...
    return _listed(paragraph) | creation


def _python_lists() -> tuple:
    api = _section("## The Python API", "### Where autodiff differs from PyTorch")
    bullets = {match.group(1): match.group(2) for match in re.finditer(r"^- \*\*(.+?)\*\*:?(.*?)(?=^- |^\S)", api,
                                                                        re.MULTILINE | re.DOTALL)}
    return _listed(bullets["Creating tensors"]), _listed(bullets["Functions"])


def test_the_language_list_names_every_function_a_program_may_call():
    listed = _language_list()
    assert sorted(set(LANGUAGE_FUNCTIONS) - listed) == [], "callable in the language but not in the README's list"


def test_every_name_in_the_language_list_is_a_function_of_the_language():
    listed = _language_list()
    assert sorted(listed - set(LANGUAGE_FUNCTIONS)) == [], "in the README's list but not callable in the language"


def test_the_python_lists_name_every_function_of_the_catalogue():
    creating, functions = _python_lists()
    assert sorted(set(FUNCTIONS) - creating - functions) == []


def test_every_name_in_the_python_lists_exists():
    creating, functions = _python_lists()
    assert sorted(functions - set(FUNCTIONS)) == [], "listed under Functions but not in autodiff.ops.FUNCTIONS"
    assert sorted(name for name in creating if not hasattr(autodiff, name)) == []  # with tensor, dtypes, seeds
    assert {"zeros", "zeros_like", "tensor", "float64"} <= creating  # the list was read


def test_the_lists_are_read_as_lists():
    """The parsing above finds names, not words: a list missing from the README fails loudly."""
    assert {"exp", "logsumexp", "cross_entropy", "zeros", "absolute"} <= _language_list()
    assert "x" not in _language_list() and "dim" not in _language_list()
    creating, functions = _python_lists()
    assert {"exp", "matmul", "true_divide"} <= functions

"""The docs' lists of functions against the catalogue: every function a program or a Python
user may call by name is listed, and every name listed is one.

docs/language.md's table of functions is written by tools/docs_tables.py from the language's
builtins (`autodiff.ops.FUNCTIONS`, with `torch.nn.functional`'s `linear` and losses): it must
be what the script writes now, and name each function, aliases included, once. The Python API's
lists in docs/python-api.md ("**Functions**") and the README's claims are written by the same
script, by kind, and checked against `autodiff.ops.FUNCTIONS`: names in backquotes, several to
a pair (`exp log sqrt`); "**Creating tensors**" is written by hand.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re

import autodiff
from autodiff.language.builtins import FUNCTIONS as LANGUAGE_FUNCTIONS
from autodiff.ops import FUNCTIONS

ROOT = pathlib.Path(__file__).resolve().parents[1]
LANGUAGE = (ROOT / "docs" / "language.md").read_text()
PYTHON_API = (ROOT / "docs" / "python-api.md").read_text()


def _tables_script():
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "tools" / "docs_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _section(text: str, start: str, end: str) -> str:
    begin = text.index(start)
    return text[begin:text.index(end, begin)]


def _quoted(text: str) -> list:
    return re.findall(r"`([^`]*)`", text)


def _listed(text: str) -> set:
    """Every name of the backquoted lists in `text` (`exp log`, `tensor`); code (`x.T`, `+ -`) is not one."""
    return {name for quoted in _quoted(text) if re.fullmatch(r"[a-z_][a-z0-9_]*(\s+[a-z_][a-z0-9_]*)*", quoted.strip())
            for name in quoted.split()}


def _language_list() -> list:
    """The names in the first column of docs/language.md's table: each function and its aliases."""
    table = _tables_script().in_doc(LANGUAGE)
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return [name for row in rows for name in _quoted(row.split(" | ")[0])]


def _python_lists() -> tuple:
    api = _section(PYTHON_API, "## PyTorch's autograd, on NumPy", "\n## ")
    bullets = {match.group(1): match.group(2) for match in re.finditer(r"^- \*\*(.+?)\*\*:?(.*?)(?=^- |^\S)", api,
                                                                        re.MULTILINE | re.DOTALL)}
    return _listed(bullets["Creating tensors"]), _listed(bullets["Functions"])


def test_the_language_table_is_what_the_script_writes():
    script = _tables_script()
    assert script.in_doc(LANGUAGE) == script.table(), "run python tools/docs_tables.py --write"


def test_the_language_table_names_every_function_a_program_may_call_once():
    listed = _language_list()
    assert sorted(set(LANGUAGE_FUNCTIONS) - set(listed)) == [], "callable in the language but not in the table"
    assert sorted(set(listed) - set(LANGUAGE_FUNCTIONS)) == [], "in the table but not callable in the language"
    assert len(listed) == len(set(listed))


def test_the_python_lists_name_every_function_of_the_catalogue():
    creating, functions = _python_lists()
    assert sorted(set(FUNCTIONS) - creating - functions) == []


def test_the_function_lists_are_what_the_script_writes():
    script = _tables_script()
    readme = (ROOT / "README.md").read_text()
    assert script.in_doc(readme, script.LISTS_BEGIN, script.LISTS_END) == script.lists(), \
        "run python tools/docs_tables.py --write"
    assert script.in_doc(PYTHON_API, script.LISTS_BEGIN, script.LISTS_END) == script.nested(script.lists())


def test_every_name_in_the_python_lists_exists():
    creating, functions = _python_lists()
    linalg = {name.removeprefix("linalg_") for name in LANGUAGE_FUNCTIONS if name.startswith("linalg_")}
    assert sorted(functions - set(LANGUAGE_FUNCTIONS) - linalg) == [], "listed under Functions but callable nowhere"
    assert sorted(name for name in creating if not hasattr(autodiff, name)) == []  # with tensor, dtypes, seeds
    assert {"zeros", "zeros_like", "tensor", "float64"} <= creating  # the list was read


def test_the_lists_are_read_as_lists():
    """The parsing above finds names, not words: a list missing from the docs fails loudly."""
    assert {"exp", "logsumexp", "cross_entropy", "zeros", "absolute"} <= set(_language_list())
    assert "input" not in _language_list() and "dim" not in _language_list()
    creating, functions = _python_lists()
    assert {"exp", "matmul", "true_divide"} <= functions


# Where a page says a function is missing: "autodiff has no `a`, `b` or `c`", "`torch.x.y`, which
# autodiff does not have", "the engine has no ...". Each clause runs to the next full stop,
# semicolon or closing parenthesis; the names are those in backquotes.
MISSING_CLAIMS = re.compile(r"(?:autodiff|the engine|the language) (?:has|have) no ([^.;)]*)|`([\w.]+)`,? which "
                            r"autodiff does not have|(?:autodiff|the engine) does not have ([^.;)]*)", re.IGNORECASE)


def _claimed_missing() -> dict:
    """{name: the page that says it is missing} for every such claim in the README and docs/."""
    claims = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = " ".join(page.read_text().split())
        for match in MISSING_CLAIMS.finditer(text):
            clause = next(group for group in match.groups() if group is not None)
            names = [clause] if match.group(2) else re.findall(r"`([\w.]+)`", clause)
            claims.update({name: page.name for name in names})
    return claims


def _exists(name: str) -> bool:
    """Whether autodiff has `name`: a function of the language, or `torch.x.y` as autodiff.x.y."""
    if name in LANGUAGE_FUNCTIONS:
        return True
    parts = name.split(".")
    if parts[0] == "torch":
        parts = parts[1:]
    target = autodiff
    for part in parts:
        target = getattr(target, part, None)
        if target is None:
            return False
    return True


def test_every_function_the_docs_call_missing_is_missing():
    claims = _claimed_missing()
    assert {"ln", "cbrt", "torch.linalg.cross"} <= set(claims)  # the claims are found at all
    assert {name: page for name, page in claims.items() if _exists(name)} == {}


def test_the_advice_for_other_tools_functions_is_for_functions_autodiff_lacks():
    """Advice for a name autodiff has would never be given: the name is called, not advised."""
    from autodiff.language.builtins import KNOWN_NAMES
    from autodiff.language.foreign import FOREIGN_FUNCTIONS

    assert sorted(set(FOREIGN_FUNCTIONS) & set(KNOWN_NAMES)) == []


def test_every_missing_function_the_language_guide_names_gets_advice():
    """The guide says autodiff has no `ln`... "and says what to write": each gets its advice."""
    from autodiff.language import NameProblem, Source, parse
    from autodiff.language.analysis import analyze

    names = [name for name, page in _claimed_missing().items() if page == "language.md"]
    assert names
    for name in names:
        source = Source(f"y = {name}(x)", "<expr>")
        try:
            analyze(parse(source), source)
        except NameProblem as problem:
            assert problem.message.startswith(f"unknown function {name!r}: write "), problem.message
        else:
            raise AssertionError(f"{name}(x) is a program")

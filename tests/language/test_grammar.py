"""The grammar's tables are built by Lark at development time and shipped as package data."""

import subprocess
import sys
from importlib import resources

from autodiff.language import grammar


def test_the_shipped_tables_are_built_from_the_grammar_as_it_is():
    data = grammar.shipped_data()
    assert data["format"] == grammar.FORMAT
    assert data["grammar_sha256"] == grammar.grammar_digest(grammar.grammar_text()), (
        "grammar.lark changed: rebuild the tables with `python -m autodiff.language.build_tables`"
    )


def test_rebuilding_gives_identical_tables():
    shipped = resources.files("autodiff.language").joinpath(grammar.TABLES_FILE).read_text(encoding="utf-8")
    assert grammar.build() == shipped


def test_a_start_imports_no_lark_and_writes_nothing_to_the_home_directory(tmp_path):
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "",
           "PYTHONPATH": ":".join(sys.path)}
    code = "import sys; from autodiff.language import run; run('a * 2', at={'a': 1}); print('lark' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
    assert list(tmp_path.iterdir()) == []


def test_the_grammar_file_ships_with_the_package():
    text = grammar.grammar_text()
    assert text.startswith("// The autodiff expression language")
    assert "-> add" in text

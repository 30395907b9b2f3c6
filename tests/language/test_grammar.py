"""The grammar is compiled once by Lark, then loaded from a cache without importing Lark."""

import json
import subprocess
import sys

from autodiff.language import Source, dump, grammar
from autodiff.language.parser import _Driver
from autodiff.language.tokenizer import tokenize

from .test_syntax import GOLDEN


def test_cached_tables_parse_as_freshly_compiled_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTODIFF_CACHE_DIR", str(tmp_path))
    text = grammar.grammar_text()
    monkeypatch.setattr(grammar, "_TABLES", None)
    cached = grammar.tables()
    assert grammar._cache_path(text).exists()
    fresh = grammar._from_data(json.loads(json.dumps(grammar.compile_grammar(text))))
    for program, _ in GOLDEN:  # Lark numbers states differently each time: compare what they parse
        source = Source(program)
        trees = [dump(_Driver(tables).run(tokenize(source, tables), source)) for tables in (cached, fresh)]
        assert trees[0] == trees[1]


def test_a_warm_start_does_not_import_lark(tmp_path):
    env = {"AUTODIFF_CACHE_DIR": str(tmp_path), "PATH": ""}
    code = "import sys; from autodiff.language import run; run('a * 2', at={'a': 1}); print('lark' in sys.modules)"
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "True"  # compiled, then cached
    assert second.stdout.strip() == "False"


def test_a_damaged_or_unwritable_cache_is_not_a_problem(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTODIFF_CACHE_DIR", str(tmp_path))
    path = grammar._cache_path(grammar.grammar_text())
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    monkeypatch.setattr(grammar, "_TABLES", None)
    assert grammar.tables().actions
    monkeypatch.setenv("AUTODIFF_CACHE_DIR", "/proc/no-such-place")
    monkeypatch.setattr(grammar, "_TABLES", None)
    assert grammar.tables().actions


def test_the_grammar_file_ships_with_the_package():
    text = grammar.grammar_text()
    assert text.startswith("// The autodiff expression language")
    assert "-> add" in text

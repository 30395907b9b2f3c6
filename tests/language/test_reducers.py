"""reducers.py holds the parser's reducers, written at build time from grammar_tables.py and
reducer_writer.py (a start compiles none): they must be what the writer writes now, and build
the trees the reducers written at run time build."""

import pathlib
from importlib import resources

import pytest

from autodiff.language import ast, grammar, parser, reducer_writer

EXAMPLES = sorted((pathlib.Path(__file__).resolve().parents[2] / "examples").glob("*.expr"))


def test_the_shipped_reducers_are_written_from_the_shipped_tables():
    shipped = resources.files("autodiff.language").joinpath(grammar.REDUCERS_FILE).read_text(encoding="utf-8")
    assert shipped == reducer_writer.reducers_source(grammar.tables(), grammar.shipped_data()["grammar_sha256"]), (
        "the reducer writer's reducers changed: rebuild with `python -m autodiff.language.build_tables`")


def test_the_parser_runs_the_shipped_reducers():
    from autodiff.language import reducers

    assert parser._shipped_reducers(grammar.tables()) == list(reducers.REDUCERS)


def test_reducers_written_for_other_tables_are_not_used(monkeypatch):
    from autodiff.language import reducers

    monkeypatch.setattr(reducers, "GRAMMAR", "another grammar")
    assert parser._shipped_reducers(grammar.tables()) is None


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.name)
def test_the_shipped_reducers_build_the_trees_the_written_ones_build(path, monkeypatch):
    text = path.read_text()
    shipped = ast.dump(parser.parse(text), positions=True)
    monkeypatch.setattr(parser._Driver, "_compiled", {})
    monkeypatch.setattr(parser, "_shipped_reducers", lambda grammar: None)
    assert ast.dump(parser.parse(text), positions=True) == shipped

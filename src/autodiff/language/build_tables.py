"""Rebuild grammar_tables.py and reducers.py from grammar.lark (needs Lark; run after changing the
grammar, or builders.py's BUILDERS or reducer_writer.py).

    python -m autodiff.language.build_tables           write them
    python -m autodiff.language.build_tables --check   exit 1 if they are stale
"""

from __future__ import annotations

import sys
from importlib import resources

from .grammar import REDUCERS_FILE, TABLES_FILE, _from_data, compile_grammar, dumps, grammar_text


def texts() -> dict:
    """{file name: its text} for the grammar and the parser as they are now."""
    from .reducer_writer import reducers_source

    data = compile_grammar(grammar_text())
    return {TABLES_FILE: dumps(data), REDUCERS_FILE: reducers_source(_from_data(data), data["grammar_sha256"])}


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    stale = []
    for name, text in texts().items():
        with resources.as_file(resources.files(__package__).joinpath(name)) as path:
            if args == ["--check"]:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    stale.append(name)
                continue
            path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({len(text):,} characters)")
    if args == ["--check"]:
        print(f"stale: {', '.join(stale)}: run python -m autodiff.language.build_tables" if stale
              else "the tables and reducers are current")
        return 1 if stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

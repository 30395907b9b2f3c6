"""Rebuild grammar_tables.py from grammar.lark (needs Lark; run after changing the grammar).

    python -m autodiff.language.build_tables           write the tables
    python -m autodiff.language.build_tables --check   exit 1 if they are stale
"""

from __future__ import annotations

import sys
from importlib import resources

from .grammar import TABLES_FILE, build


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    text = build()
    with resources.as_file(resources.files(__package__).joinpath(TABLES_FILE)) as path:
        if args == ["--check"]:
            current = path.read_text(encoding="utf-8") == text
            print("the tables are current" if current else "the tables are stale: run "
                  "python -m autodiff.language.build_tables")
            return 0 if current else 1
        path.write_text(text, encoding="utf-8")
    print(f"wrote {path} ({len(text):,} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The grammar, compiled once: Lark turns grammar.lark into LALR tables, cached as JSON.

Lark does what a parser generator does best: it reads the grammar, checks it for conflicts,
builds the LALR(1) automaton and decides how each rule's children become a node (which tokens
are kept, which `_rules` are spliced, where `[optional]` items leave a None). The tables are
plain data; parser.py runs them with a small driver, several times faster on this grammar than
Lark's general-purpose runtime (see bench/parse.py), and the tokenizer matches the terminals
defined in the grammar.

The compiled tables are cached in the user's cache directory, keyed by a hash of the grammar,
so a program starts without importing Lark at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile
from dataclasses import dataclass
from importlib import resources

FORMAT = 3  # bump when the compiled form changes
GRAMMAR_FILE = "grammar.lark"
LAYOUT_TERMINALS = ("_NL", "_INDENT", "_DEDENT")


@dataclass(frozen=True)
class Rule:
    """A reduction: how many symbols it pops, what it builds, and how it filters its children."""

    size: int
    origin: str
    builder: str  # the alias if there is one, else the rule's name
    expand_single: bool  # a `?rule`: one child passes through unchanged
    include: tuple  # (index, splice, nones_before) for each kept child, as Lark's tree builder
    trailing_nones: int
    inline: bool  # a `_rule`: its children are spliced into the parent's

    @property
    def passes_through(self) -> bool:
        """A unit rule whose only child becomes its value (the driver may skip it)."""
        return (
            self.expand_single and self.size == 1 and self.builder == self.origin
            and len(self.include) == 1 and not self.include[0][1] and not self.trailing_nones
        )


@dataclass(frozen=True)
class Tables:
    actions: list  # per state: {terminal or rule name: >= 0 shift/goto state, < 0 reduce rule -1-n}
    rules: list
    start_state: int
    end_state: int
    patterns: dict  # regex terminals: name -> regular expression
    literals: dict  # literal text -> terminal name (operators, punctuation, keywords)
    keywords: frozenset  # literals that look like names


def grammar_text() -> str:
    return resources.files(__package__).joinpath(GRAMMAR_FILE).read_text(encoding="utf-8")


def _cache_path(text: str) -> pathlib.Path:
    digest = hashlib.sha256(f"{FORMAT}\n{text}".encode()).hexdigest()[:20]
    base = os.environ.get("AUTODIFF_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "autodiff" / f"grammar-{digest}.json"


_TABLES: Tables | None = None


def tables() -> Tables:
    """The compiled grammar: from memory, else the cache file, else compiled now (and cached)."""
    global _TABLES
    if _TABLES is None:
        text = grammar_text()
        path = _cache_path(text)
        data = None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = compile_grammar(text)
            _save(path, data)
        _TABLES = _from_data(data)
    return _TABLES


def _save(path: pathlib.Path, data: dict) -> None:
    try:  # written to a temporary file and renamed, so readers never see half a file
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(f.name, path)
    except OSError:
        pass  # a read-only home: compile again next time


def _from_data(data: dict) -> Tables:
    rules = [
        Rule(r["size"], r["origin"], r["builder"], r["expand_single"], tuple(map(tuple, r["include"])),
             r["trailing_nones"], r["inline"])
        for r in data["rules"]
    ]
    literals = dict(data["literals"])
    return Tables(
        actions=data["actions"],
        rules=rules,
        start_state=data["start_state"],
        end_state=data["end_state"],
        patterns=dict(data["patterns"]),
        literals=literals,
        keywords=frozenset(v for v in literals if v.isidentifier()),
    )


def lark_parser(text: str | None = None):
    """Lark's own LALR parser for the grammar (for compiling, and for tests that fuzz it)."""
    from lark import Lark

    return Lark(text or grammar_text(), parser="lalr", lexer="basic", maybe_placeholders=True)


def compile_grammar(text: str) -> dict:
    """Compile the grammar with Lark into plain, JSON-ready tables."""
    from lark.parsers.lalr_analysis import Shift

    parser = lark_parser(text)
    conf = parser.parse_interactive("").parser_state.parse_conf
    rule_index: dict = {}
    rules: list = []

    def rule_id(rule) -> int:
        if rule not in rule_index:
            rule_index[rule] = len(rules)
            rules.append(_describe(rule))
        return rule_index[rule]

    actions = [None] * (max(conf.states) + 1)
    for state, row in conf.states.items():
        actions[state] = {
            symbol: (target if action is Shift else -1 - rule_id(target)) for symbol, (action, target) in row.items()
        }
    patterns, literals = {}, {}
    for terminal in parser.terminals:
        if terminal.name in LAYOUT_TERMINALS:
            continue
        if terminal.pattern.type == "str":
            literals[terminal.pattern.value] = terminal.name
        else:
            patterns[terminal.name] = terminal.pattern.to_regexp()
    return {
        "actions": actions,
        "rules": rules,
        "start_state": conf.start_state,
        "end_state": conf.end_state,
        "patterns": patterns,
        "literals": sorted(literals.items()),
    }


def _describe(rule) -> dict:
    """A rule as data, with the child filtering Lark's tree builder would apply."""
    expansion = rule.expansion
    empty = rule.options.empty_indices
    if empty:
        text = "".join(str(int(b)) for b in empty)
        nones = [len(ones) for ones in text.split("0")]
    else:
        nones = [0] * (len(expansion) + 1)
    include = []
    pending = 0
    for i, symbol in enumerate(expansion):
        pending += nones[i]
        if not (symbol.is_term and symbol.filter_out) and not (symbol.is_term and symbol.name.startswith("_")):
            include.append((i, (not symbol.is_term) and symbol.name.startswith("_"), pending))
            pending = 0
    pending += nones[len(expansion)]
    origin = str(rule.origin.name)
    return {
        "size": len(expansion),
        "origin": origin,
        "builder": str(rule.alias or origin),
        "expand_single": bool(rule.options.expand1),
        "include": include,
        "trailing_nones": pending,
        "inline": origin.startswith("_"),
    }

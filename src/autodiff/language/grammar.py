"""The grammar's LALR tables: built by Lark at development time, shipped with the package.

Lark does what a parser generator does best: it reads grammar.lark, checks it for conflicts,
builds the LALR(1) automaton and decides how each rule's children become a node (which tokens
are kept, which `_rules` are spliced, where `[optional]` items leave a None). The tables are
plain data in grammar_tables.py, next to the grammar: one literal, which Python keeps compiled
in its bytecode cache, so a start loads them at the cost of reading that cache (reading them as
JSON cost three times as much, and the json module). parser.py runs them with a small driver,
faster on this grammar than Lark's own runtime (bench/parse.py), and the tokenizer matches the
terminals defined in the grammar. A program starts without importing Lark.

After changing grammar.lark, rebuild the tables (a test fails until they are rebuilt):

    python -m autodiff.language.build_tables
"""

from __future__ import annotations

import os

from .._record import record

FORMAT = 5  # bump when the compiled form changes
GRAMMAR_FILE = "grammar.lark"
TABLES_FILE = "grammar_tables.py"
REDUCERS_FILE = "reducers.py"  # the parser's reducers for these tables (build_tables writes both)
LAYOUT_TERMINALS = ("_NL", "_INDENT", "_DEDENT")


@record(frozen=True)
class Rule:
    """A reduction: how many symbols it pops, what it builds, and how it filters its children."""

    size: int
    origin: str
    builder: str  # the alias if there is one, else the rule's name
    expand_single: bool  # a `?rule`: one child passes through unchanged
    include: tuple  # (index, splice, nones_before) for each kept child, as Lark's tree builder
    trailing_nones: int
    inline: bool  # a `_rule`: its children are spliced into the parent's
    terminals: tuple  # the indices of the symbols that are tokens (the parser reads their fields)

    @property
    def passes_through(self) -> bool:
        """A unit rule whose only child becomes its value (the driver may skip it)."""
        return (
            self.expand_single and self.size == 1 and self.builder == self.origin
            and len(self.include) == 1 and not self.include[0][1] and not self.trailing_nones
        )


@record(frozen=True)
class Tables:
    """The parser's tables, generated from the grammar and shipped with the package."""

    actions: list  # per state: {terminal or rule name: >= 0 shift/goto state, < 0 reduce rule -1-n}
    rules: list
    start_state: int
    end_state: int
    patterns: dict  # regex terminals: name -> regular expression
    literals: dict  # literal text -> terminal name (operators, punctuation, keywords)
    keywords: frozenset  # literals that look like names


def _package_data(name: str) -> bytes:
    """A file shipped beside this module. Read by its path (importlib.resources costs about 10 ms
    of every start to import); through importlib.resources only where the package is not files,
    as in a zip."""
    try:
        with open(os.path.join(os.path.dirname(__file__), name), "rb") as file:
            return file.read()
    except OSError:
        from importlib import resources

        return resources.files(__package__).joinpath(name).read_bytes()


def grammar_text() -> str:
    return _package_data(GRAMMAR_FILE).decode("utf-8")


def grammar_digest(text: str) -> str:
    """What the shipped tables were built from: the grammar's text and FORMAT."""
    import hashlib

    return hashlib.sha256(f"{FORMAT}\n{text}".encode()).hexdigest()


_TABLES: Tables | None = None


def tables() -> Tables:
    """The compiled grammar, read once from the package's grammar_tables.py."""
    global _TABLES
    if _TABLES is None:
        _TABLES = _from_data(shipped_data())
    return _TABLES


def shipped_data() -> dict:
    """The shipped tables as they are stored (grammar_tables.py's TABLES)."""
    from .grammar_tables import TABLES

    return TABLES


def _from_data(data: dict) -> Tables:
    rules = [
        Rule(r["size"], r["origin"], r["builder"], r["expand_single"], tuple(map(tuple, r["include"])),
             r["trailing_nones"], r["inline"], tuple(r["terminals"]))
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


# -- building the tables (development time, with Lark) ------------------------------------------------


def lark_parser(text: str | None = None, **options):
    """Lark's own LALR parser for the grammar (for building the tables, and for the tests)."""
    from lark import Lark

    options = {"lexer": "basic", **options}
    return Lark(text or grammar_text(), parser="lalr", maybe_placeholders=True, **options)


def compile_grammar(text: str) -> dict:
    """Compile the grammar with Lark into plain tables (numbers, strings, lists, dicts).

    Lark numbers its states differently from run to run; here they are renumbered in the
    order a breadth-first walk from the start state meets them (symbols in sorted order), and
    rules in the order that walk first uses them, so the same grammar always gives the same file.
    """
    from lark.parsers.lalr_analysis import Shift

    parser = lark_parser(text)
    conf = parser.parse_interactive("").parser_state.parse_conf
    number = {conf.start_state: 0}
    order = [conf.start_state]
    for state in order:  # grows as it goes: a breadth-first walk
        for symbol, (action, target) in sorted(conf.states[state].items()):
            if action is Shift and target not in number:
                number[target] = len(order)
                order.append(target)
    rule_index: dict = {}
    rules: list = []
    actions = []
    for state in order:
        row = {}
        for symbol, (action, target) in sorted(conf.states[state].items()):
            if action is Shift:
                row[symbol] = number[target]
            else:
                if target not in rule_index:
                    rule_index[target] = len(rules)
                    rules.append(_describe(target))
                row[symbol] = -1 - rule_index[target]
        actions.append(row)
    patterns, literals = {}, {}
    for terminal in parser.terminals:
        if terminal.name in LAYOUT_TERMINALS:
            continue
        if terminal.pattern.type == "str":
            literals[terminal.pattern.value] = terminal.name
        else:
            patterns[terminal.name] = terminal.pattern.to_regexp()
    return {
        "format": FORMAT,
        "grammar_sha256": grammar_digest(text),
        "start_state": number[conf.start_state],
        "end_state": number[conf.end_state],
        "patterns": dict(sorted(patterns.items())),
        "literals": sorted(literals.items()),
        "rules": rules,
        "actions": actions,
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
        "terminals": [i for i, symbol in enumerate(expansion) if symbol.is_term],
    }


def dumps(data: dict) -> str:
    """The tables as a Python module: one line per rule and per state, so that a change reads as
    a diff."""
    lines = [f'"""{_GENERATED}"""', "", "TABLES = {"]
    for key, value in data.items():
        if isinstance(value, list) and key in ("rules", "actions"):
            lines.append(f"    {key!r}: [")
            lines += [f"        {item!r}," for item in value]
            lines.append("    ],")
        else:
            lines.append(f"    {key!r}: {value!r},")
    return "\n".join(lines) + "\n}\n"


_GENERATED = ("The grammar's LALR tables (grammar.py), written by `python -m autodiff.language.build_tables` "
              "from grammar.lark:\ndo not edit.")


def build() -> str:
    """The tables file's text for the grammar as it is now."""
    return dumps(compile_grammar(grammar_text()))

"""Writing the parser's reducers: for each rule of the grammar's tables, the source of a function
`raw symbols -> value`, from the rule's shape and its builder (builders.py's BUILDERS).

build_tables.py writes them all into reducers.py, which ships; where reducers.py is not the
tables' (being rebuilt), the parser compiles each with `compiled_reducer` when first used.
"""

from __future__ import annotations

import re

from .builders import BUILDERS, _scope
from .grammar import Tables


def reducers_source(grammar: Tables, digest: str) -> str:
    """reducers.py's text: `_reducer_text` of each rule of `grammar`, rules of one shape sharing a
    function, and REDUCERS, the function of each rule in the tables' order."""
    names: dict = {}  # text -> its function's name
    for rule in grammar.rules:
        names.setdefault(_reducer_text(rule), f"_r{len(names)}")
    lines = [f'"""{_GENERATED}"""', "", "from .builders import _scope", "", "globals().update(_scope())  # the builders' "
             "names: node classes' make, _Splice, _span...", "", f"GRAMMAR = {digest!r}  # the tables they were written "
             "for", ""]
    for text, name in names.items():
        lines += ["", text.replace("def reduce(", f"def {name}(", 1)]
    lines += ["", "REDUCERS = ["]
    lines += [f"    {names[_reducer_text(rule)]},  # {number}: {rule.origin} -> {rule.builder}"
              for number, rule in enumerate(grammar.rules)]
    return "\n".join(lines) + "\n]\n"


_GENERATED = ("The parser's reducers, one per rule of grammar_tables.py (reducer_writer.py writes each from\n"
              "the rule's shape and builders.py's BUILDERS), written by `python -m autodiff.language.build_tables`:\n"
              "do not edit.")


_WRITTEN: dict = {}  # reducer source -> function (rules of one shape share it)


def _reducer_text(rule) -> str:
    """The source of a function `raw symbols -> value` for one rule, written out from its shape.

    Its body applies Lark's child filter (kept children, spliced `_rules`, None for a missing
    `[optional]`) and finds the span; a builder's `c[i]` and `r[i]` become the symbols
    themselves, so that a reduction is one call. A symbol the filter drops is a token and
    always has a place; a kept one may be a list without one, and then _span looks further.
    """
    size, include = rule.size, rule.include
    raw = [f"r{i}" for i in range(size)]
    items, grow = [], None
    for index, splice, nones in include:
        if grow is None and index == 0 and splice and not nones and not items:
            grow = "r0"  # a repetition grows its first child's list in place, as Lark does
            continue
        items += ["None"] * nones + [f"*r{index}" if splice else f"r{index}"]
    items += ["None"] * rule.trailing_nones
    fixed = grow is None and not any(item.startswith("*") for item in items)
    display = "[" + ", ".join(items) + "]"
    if grow is None:
        children = f"    c = {display}\n"
    else:
        children = f"    c = {grow}\n" + (f"    c += {display}\n" if items else "")
    kept = {index for index, _, _ in include}
    if not size:
        span = "    s = e = None\n"
    else:
        # a kept child may be a value without a place; a token always has one
        first_placed = 0 not in kept or 0 in rule.terminals
        last_placed = size - 1 not in kept or size - 1 in rule.terminals
        if first_placed and last_placed:
            span = f"    s, e = r0.start, {raw[-1]}.end\n"
        else:
            tokens = tuple(index in rule.terminals for index in range(size))
            span = (f"    try:\n        s, e = r0.start, {raw[-1]}.end\n"
                    "    except AttributeError:\n        s = e = None\n"
                    f"    if s is None or e is None:\n        s, e = _span(({', '.join(raw)},), {tokens})\n")
    if rule.inline:  # a `_rule`: its children, to be spliced into its parent's
        wrap = "    if not isinstance(c, _Splice):\n    " if grow else ""
        body = children + wrap + "    c = _Splice(c)\n" + span + "    c.start, c.end = s, e\n    return c\n"
    elif rule.expand_single and rule.builder == rule.origin:  # a `?rule`: one child passes through
        body = children + "    if len(c) == 1:\n        child = c[0]\n"
        if size > 1:  # `( test )`: the child, spanning its brackets
            body += ("        if isinstance(child, Node):\n"
                     f"            return child.with_span(r0.start, {raw[-1]}.end)\n")
        body += "        return child\n"
    else:
        expression = BUILDERS[rule.builder]
        expression = re.sub(r"\br\[(\d+)\]", r"r\1", expression)
        if fixed and not re.search(r"\bc\b(?!\[\d+\])", expression):  # only c[i]: no list needed
            expression = re.sub(r"\bc\[(\d+)\]", lambda m: items[int(m.group(1))], expression)
            children = ""
        if not re.search(r"\b[se]\b", expression):
            span = ""
        body = children + span + f"    return {expression}\n"
    return _read_tokens(f"def reduce({', '.join(raw)}):\n{body}", rule.terminals)


def compiled_reducer(rule):
    """Rule `rule`'s reducer, compiled from `_reducer_text` (rules of one text share it)."""
    text = _reducer_text(rule)
    reduce = _WRITTEN.get(text)
    if reduce is None:
        scope = dict(_scope())
        exec(text, scope)  # the grammar's own shapes and BUILDERS, never user text
        reduce = _WRITTEN[text] = scope["reduce"]
    return reduce


_TOKEN_FIELDS = {"type": 0, "value": 1, "start": 2, "end": 3}


def _read_tokens(text: str, terminals: tuple) -> str:
    """A reducer's text with its tokens' fields (`r1.value`) read from the tuple (`r1[1]`)."""
    def field(match):
        if int(match.group(1)) not in terminals:
            return match.group(0)
        return f"r{match.group(1)}[{_TOKEN_FIELDS[match.group(2)]}]"

    return re.sub(r"\br(\d+)\.(type|value|start|end)\b", field, text)

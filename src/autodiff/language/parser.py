"""Parsing: tokens through the grammar's LALR tables into the syntax tree.

The driver is the textbook LALR loop over the tables Lark compiled (grammar.py), with one
addition: the state a reduction leaves on top, with the run of unit reductions that follows it
(`test -> or_test -> ... -> atom`, which only relabel the top of the stack), and that state's
action on the lookahead, are remembered per (rule, state below, lookahead) and taken in one
step. Children are filtered exactly as Lark's tree builder filters them; each rule's alias
picks its builder from BUILDERS, a name table of expressions, written once into the rule's
reducer. Nothing recurses: the parse stack is a list.

Tokens are (type, text, start, end) tuples (tokenizer.fast_tokens), cheaper to make than
objects by far; a reducer knows from the tables which of its symbols are tokens and reads their
fields by index. A rejected token is explained with the careful tokenizer's Token objects, the
same tokens, so that every message is computed as before.
"""

from __future__ import annotations

import re

from . import ast
from ._gc import collector_paused
from .errors import InputProblem, SyntaxProblem
from .foreign import PYTHON_CONSTRUCTS, assignment_advice
from .grammar import Tables, tables
from .source import Source
from .tokenizer import Token, fast_tokens, tokenize


class _Splice(list):
    """The children of a `_rule`, to be spliced into its parent's."""

    __slots__ = ("start", "end")


class _Sizes(tuple):
    """`[n, 3]` of a declaration, with its place (a plain tuple has none)."""


def _sizes(children, start, end) -> _Sizes:
    """The sizes as written: names, and numbers as their text (analysis reads and checks them)."""
    sizes = _Sizes(x for x in children if x is not None)
    sizes.start, sizes.end = start, end
    return sizes


class _Elif:
    __slots__ = ("test", "body", "start", "end")

    def __init__(self, test, body, start, end) -> None:
        self.test, self.body, self.start, self.end = test, body, start, end


MAX_SOURCE_CHARACTERS = 8 * 1024 * 1024  # about 8 MB of program text


def parse(text: str, name: str = "<expr>") -> ast.Program:
    """Parse a program; raises SyntaxProblem with the place and, in words, what was expected."""
    source = text if isinstance(text, Source) else Source(text, name)
    if len(source.text) > MAX_SOURCE_CHARACTERS:
        raise InputProblem(
            f"the program is too large: {len(source.text):,} characters (at most {MAX_SOURCE_CHARACTERS:,})", source
        )
    grammar = tables()
    with collector_paused():
        tokens = fast_tokens(source, grammar)
        if tokens is None:  # something the careful tokenizer explains, or must handle
            tokens = [token.as_tuple() for token in tokenize(source, grammar)]
        try:
            return _Driver(grammar).run(tokens, source)
        except _Late as late:
            raise SyntaxProblem(late.message, source, late.node.start, late.node.end) from None


class _Driver:
    _compiled: dict = {}  # per tables: (steps memo, reducers, rule sizes)

    def __init__(self, grammar: Tables) -> None:
        self.grammar = grammar
        compiled = self._compiled.get(id(grammar))
        if compiled is None:
            reducers = _shipped_reducers(grammar)
            if reducers is None:  # reducers.py is not the tables' (being rebuilt): each written when first used
                reducers = []
                reducers += [_on_first_use(reducers, number, rule) for number, rule in enumerate(grammar.rules)]
            steps = [{} for _ in grammar.rules]  # per rule: state below -> lookahead -> (state, action)
            compiled = self._compiled[id(grammar)] = (steps, reducers, [rule.size for rule in grammar.rules])
        self.steps, self.reducers, self.sizes = compiled

    def run(self, tokens: list, source: Source) -> ast.Program:
        actions = self.grammar.actions
        reducers, sizes, steps = self.reducers, self.sizes, self.steps
        top = self.grammar.start_state
        states = [top]
        values: list = []
        for token in tokens:
            kind = token[0]
            try:
                action = actions[top][kind]
            except KeyError:
                raise self._rejected(source, tokens, token, top) from None
            while action < 0:  # reduce by rule ~action (that is, -1 - action)
                number = ~action
                size = sizes[number]
                # The rule's symbols become one value, whose state takes the first symbol's slot.
                if size == 1:
                    values[-1] = reducers[number](values[-1])
                elif size:
                    values[-size:] = (reducers[number](*values[-size:]),)
                    del states[1 - size:]
                else:
                    values.append(reducers[number]())
                    states.append(None)
                try:  # nested subscripts: cheaper than hashing and comparing a (below, rule, kind) key
                    top, action = steps[number][states[-2]][kind]
                except KeyError:
                    top, action = self._step(states[-2], number, kind)
                states[-1] = top
                if action is None:  # no action: the end, or an error
                    if top == self.grammar.end_state and kind == "$END":
                        return values[-1]
                    raise self._rejected(source, tokens, token, top) from None
            states.append(action)  # shift
            values.append(token)
            top = action
        raise AssertionError("the parser ended without accepting")  # the tables always accept at $END

    def _rejected(self, source: Source, tokens: list, token: tuple, state: int) -> SyntaxProblem:
        """The error for a token the parser has no action for (a lexical error's own, at its token),
        told with the careful tokenizer's Token objects: the same tokens, at the same index."""
        index = next(i for i, candidate in enumerate(tokens) if candidate is token)
        tokens = tokenize(source, self.grammar)
        if tokens[index].type == "$ERROR":
            return tokens[index].error
        return _syntax_error(source, tokens, index, self.grammar.actions[state])

    def _step(self, below: int, number: int, kind: str) -> tuple:
        """(state, its action on `kind`, None if it has none) after reducing rule `number` on
        top of state `below`: both remembered, so that a reduction looks them up at once."""
        state = self._goto(below, number, kind)
        step = (state, self.grammar.actions[state].get(kind))
        self.steps[number].setdefault(below, {})[kind] = step
        return step

    def _goto(self, below: int, number: int, kind: str) -> int:
        """The state after reducing rule `number` on top of state `below`, with the unit
        reductions that follow it for this lookahead taken at once: they only relabel the top."""
        actions = self.grammar.actions
        rules = self.grammar.rules
        state = actions[below][rules[number].origin]
        while True:
            action = actions[state].get(kind)
            if action is None or action >= 0 or not rules[-1 - action].passes_through:
                return state
            state = actions[below][rules[-1 - action].origin]


def _shipped_reducers(grammar: Tables) -> list | None:
    """The reducers of reducers.py, one per rule of the shipped tables: written out by
    build_tables and compiled in Python's bytecode cache, where writing and compiling each
    reducer a program uses cost about 0.1 ms of its start. None where reducers.py was written
    for other tables (grammar_tables.py rebuilt alone)."""
    from .grammar import shipped_data, tables

    if grammar is not tables():
        return None
    from . import reducers

    if reducers.GRAMMAR != shipped_data()["grammar_sha256"] or len(reducers.REDUCERS) != len(grammar.rules):
        return None
    return list(reducers.REDUCERS)


def reducers_source(grammar: Tables, digest: str) -> str:
    """reducers.py's text: `_reducer_text` of each rule of `grammar`, rules of one shape sharing a
    function, and REDUCERS, the function of each rule in the tables' order."""
    names: dict = {}  # text -> its function's name
    for rule in grammar.rules:
        names.setdefault(_reducer_text(rule), f"_r{len(names)}")
    lines = [f'"""{_GENERATED}"""', "", "from .parser import _scope", "", "globals().update(_scope())  # the builders' "
             "names: node classes' make, _Splice, _span...", "", f"GRAMMAR = {digest!r}  # the tables they were written "
             "for", ""]
    for text, name in names.items():
        lines += ["", text.replace("def reduce(", f"def {name}(", 1)]
    lines += ["", "REDUCERS = ["]
    lines += [f"    {names[_reducer_text(rule)]},  # {number}: {rule.origin} -> {rule.builder}"
              for number, rule in enumerate(grammar.rules)]
    return "\n".join(lines) + "\n]\n"


_GENERATED = ("The parser's reducers, one per rule of grammar_tables.py (parser.py writes each from the rule's\n"
              "shape and BUILDERS), written by `python -m autodiff.language.build_tables`: do not edit.")


def _on_first_use(reducers: list, number: int, rule):
    """A stand-in that writes rule `number`'s reducer when it first runs (see _shipped_reducers)."""

    def first(*raw):
        reducers[number] = reduce = _reducer(rule)
        return reduce(*raw)

    return first


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


def _reducer(rule):
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


def _span(raw: tuple, tokens: tuple):
    """The first start and last end among the raw children that have positions (`tokens`
    says which are token tuples)."""
    start = end = None
    for value, token in zip(raw, tokens):
        start = value[2] if token else getattr(value, "start", None)
        if start is not None:
            break
    for value, token in zip(reversed(raw), reversed(tokens)):
        end = value[3] if token else getattr(value, "end", None)
        if end is not None:
            break
    return start, end


# -- builders: one per alias or rule name ----------------------------------------------------------


def _statements(children) -> tuple:
    out = []
    for child in children:
        if isinstance(child, list):
            out.extend(child)
        elif child is not None:
            out.append(child)
    return tuple(out)


def _number(written: str, start, end) -> ast.Number:
    text = written.replace("_", "")
    value = int(text) if text.isdigit() else float(text)  # digits alone, or with '.' or an exponent
    return ast.Number.make(value, written, start, end)


def _binary(op: str):
    def build(children, raw, start, end):
        return ast.BinOp.make(op, children[0], children[1], raw[1].start, start, end)

    return build


def _if(children, start, end):
    test, body, *branches, orelse = children  # the elifs, then the else suite (or None)
    tail = orelse or ()
    for branch in reversed(branches):
        tail = (ast.If.make(branch.test, branch.body, tail, branch.start, branch.end),)
    return ast.If.make(test, body, tail, start, end)


def _call(func, arguments, start, end):
    arguments = arguments or []
    args, keywords = [], []
    for argument in arguments:
        if isinstance(argument, ast.Keyword):
            keywords.append(argument)
        elif keywords:
            raise _Late(argument, "positional argument follows keyword argument")
        else:
            args.append(argument)
    return ast.Call.make(func, tuple(args), tuple(keywords), start, end)


def _compare(children, start, end):
    operands = children[0::2]
    operators = [_text_and_start(token) for token in children[1::2]]
    return ast.Compare.make(
        operands[0], tuple(text for text, _ in operators), tuple(operands[1:]), tuple(at for _, at in operators),
        start, end,
    )


def _names(tokens) -> tuple:
    """The texts of NAME tokens (`a, b = ...`'s targets)."""
    return tuple(_text_and_start(token)[0] for token in tokens)


def _text_and_start(token) -> tuple:
    """An operator token's text and start: a tuple here, a Token in Lark's reference tree."""
    return (token[1], token[2]) if type(token) is tuple else (token.value, token.start)


class _Late(Exception):
    """A syntax error found while building the tree, raised with its node's place."""

    def __init__(self, node, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


BINARY_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@", "floordiv": "//", "mod": "%"}

# Each rule's alias (or name) picks its builder: an expression over the rule's children `c`
# (as Lark's tree builder keeps them: named tokens and nodes, spliced `_rules`, None for a
# missing `[optional]`), its raw symbols `r` (a binary operator's token, which Lark drops) and
# its span `s`..`e`; node classes stand for their fast constructors (ast.X.make).
BUILDERS = {
    "start": "Program(_statements(c), s or 0, e or 0)",
    "simple_statements": "_statement_list(c, s, e)",
    "suite": "_statements(c)",
    "assign": "Assign(c[0].value, c[1], s, e)",
    "unpack": "Unpack(_names(c[:-1]), c[-1], s, e)",
    "augassign": "AugAssign(c[0].value, c[1].value[:-1], c[2], c[1].start, s, e)",
    "declare": "Declare(c[0].value, c[1].value, c[3], c[1].start, None if c[2] is None else tuple(c[2]), s, e)",
    "sizes": "_sizes(c, s, e)",
    "size_name": "c[0].value",
    "size_number": "c[0].value",
    "expression": "ExprStatement(c[0], s, e)",
    "return_": "Return(c[0], s, e)",
    "pass_": "Pass(s, e)",
    "if_": "_if(c, s, e)",
    "elif_": "_Elif(c[0], c[1], s, e)",
    "for_": "For(c[0].value, c[1], c[2], s, e)",
    "with_": "With(c[0], c[1], s, e)",
    "def_": "FunctionDef(c[0].value, tuple(c[1] or ()), c[2], s, e)",
    "parameters": "tuple(c)",
    "parameter": "Param(c[0].value, c[1], s, e)",
    "ifexp": "IfExp(c[0], c[1], c[2], s, e)",
    "or_": "BoolOp('or', c[0], c[1], s, e)",
    "and_": "BoolOp('and', c[0], c[1], s, e)",
    "not_": "UnaryOp('not', c[0], s, e)",
    "compare": "_compare(c, s, e)",
    **{alias: f"BinOp({op!r}, c[0], c[1], r[1].start, s, e)" for alias, op in BINARY_OPERATORS.items()},
    "pow": "BinOp('**', c[0], c[2], c[1].start, s, e)",
    "neg": "UnaryOp('-', c[0], s, e)",
    "pos": "UnaryOp('+', c[0], s, e)",
    "call": "_call(c[0], c[1], s, e)",
    "arguments": "list(c)",
    "keyword": "Keyword(c[0].value, c[1], s, e)",
    "index": "Subscript(c[0], tuple(c[1]), s, e)",
    "subscripts": "tuple(c)",
    "slice_": "Slice(c[0], c[1], c[2], s, e)",
    "attribute": "Attribute(c[0], c[1].value, s, e)",
    "name": "Name(c[0].value, s, e)",
    "number": "_number(c[0].value, s, e)",
    "true": "Constant(True, s, e)",
    "false": "Constant(False, s, e)",
    "none": "Constant(None, s, e)",
    "tuple_": "TupleLiteral(tuple(x for x in c if x is not None), s, e)",
    "list_": "ListLiteral(tuple(x for x in c if x is not None), s, e)",
}

_SCOPE: dict = {}


def _scope() -> dict:
    """What builders and reducers see: the node classes' fast constructors and the helpers."""
    if not _SCOPE:
        _SCOPE.update({name: value.make for name, value in vars(ast).items()
                       if isinstance(value, type) and issubclass(value, ast.Node) and value is not ast.Node})
        _SCOPE.update(Node=ast.Node, _Splice=_Splice, _span=_span, _Elif=_Elif, _statements=_statements,
                      _statement_list=_statement_list, _number=_number, _if=_if, _call=_call, _compare=_compare,
                      _names=_names, _sizes=_sizes)
    return _SCOPE


_BUILDER_FUNCTIONS: dict = {}


def builder(alias: str):
    """BUILDERS[alias] as a function (children, raw, start, end) -> value, for Lark's tree."""
    function = _BUILDER_FUNCTIONS.get(alias)
    if function is None:
        function = _BUILDER_FUNCTIONS[alias] = eval(f"lambda c, r, s, e: {BUILDERS[alias]}", dict(_scope()))
    return function


def _statement_list(children, start, end) -> _Splice:
    statements = _Splice(children if None not in children else [x for x in children if x is not None])
    statements.start, statements.end = start, end
    return statements


# -- syntax errors in words ----------------------------------------------------------------------------

_STARTS_EXPRESSION = {"NAME", "NUMBER", "LPAR", "LSQB", "MINUS", "PLUS", "NOT", "TRUE", "FALSE", "NONE"}
_DESCRIBE = {
    "NAME": "a name", "NUMBER": "a number", "_NL": "the end of the line", "$END": "the end of the program",
    "_INDENT": "an indented block", "_DEDENT": "the end of a block", "COMPARE": "a comparison",
    "POWER": "'**'", "AUGASSIGN": "'+='",
}


def _describe_token(token: Token) -> str:
    if token.type == "NAME":
        return f"name {token.value!r}"
    if token.type == "NUMBER":
        return f"number {token.value}"
    if token.type in ("_NL", "$END", "_DEDENT"):
        return _DESCRIBE[token.type].removeprefix("the ")  # "unexpected end of the line"
    if token.type in ("COMPARE", "POWER", "AUGASSIGN") or token.value:
        return repr(token.value)
    return _DESCRIBE.get(token.type, repr(token.value))


def _describe_expected(expected: set, literal_names: dict) -> str:
    words = []
    if {"NUMBER", "LPAR"} <= expected:
        words.append("an expression")
        expected = expected - _STARTS_EXPRESSION
    for name in sorted(expected):
        if name in _DESCRIBE:
            words.append(_DESCRIBE[name])
        elif name in literal_names:
            words.append(repr(literal_names[name]))
    if not words:
        return "something else"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _open_bracket_before(tokens: list, index: int):
    """The innermost bracket still open where the parser stopped (None when all are closed)."""
    stack = []
    for token in tokens[:index]:
        if token.value in ("(", "[") and token.type != "NAME":
            stack.append(token)
        elif token.value in (")", "]") and token.type != "NAME" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _python_construct(tokens: list, index: int):
    """The Python keyword the language lacks (`while`, `import`, `lambda`, `class`...) that the
    failing statement starts with, or that stands just before the place (`f = lambda x: x`)."""
    start = index
    while start > 0 and tokens[start - 1].type not in ("_NL", "_INDENT", "_DEDENT"):
        start -= 1
    for candidate in (tokens[start], tokens[index - 1] if index else None, tokens[index]):
        if candidate is not None and candidate.type == "NAME" and candidate.value in PYTHON_CONSTRUCTS:
            return candidate
    return None


def _attribute_assignment(source: Source, tokens: list, index: int) -> str | None:
    """`a.requires_grad = False` (the '=' at `index`): what to write instead, or None."""
    if index < 3 or tokens[index - 1].type != "NAME" or tokens[index - 2].value != ".":
        return None
    start = index - 2
    while start > 0 and tokens[start - 1].type not in ("_NL", "_INDENT", "_DEDENT"):
        start -= 1
    end = index + 1
    while end < len(tokens) and tokens[end].type not in ("_NL", "$END", "_DEDENT"):
        end += 1
    receiver = source.text[tokens[start].start:tokens[index - 2].start].strip()
    value = source.text[tokens[index].end:tokens[end - 1].end].strip() if end > index + 1 else ""
    return assignment_advice(receiver, tokens[index - 1].value, value)


def _syntax_error(source: Source, tokens: list, index: int, row: dict) -> SyntaxProblem:
    token = tokens[index]
    previous = tokens[index - 1] if index else None
    expected = {symbol for symbol in row if symbol.isupper() or symbol.startswith("_") or symbol == "$END"}
    expected -= {symbol for symbol in expected if symbol.startswith("__")}
    literal_names = {name: text for text, name in tables().literals.items()}
    at = (token.start, max(token.end, token.start + 1))
    unclosed = _open_bracket_before(tokens, index)
    if unclosed is not None and source.line_column(unclosed.start)[0] < source.line_column(token.start)[0]:
        # Inside brackets lines join, so a forgotten ')' shows up as nonsense on a later line:
        # the bracket is the mistake to point at (as Python's "'(' was never closed").
        return SyntaxProblem(f"unclosed {unclosed.value!r}", source, unclosed.start, unclosed.start + 1)
    construct = _python_construct(tokens, index)
    if construct is not None:
        return SyntaxProblem(PYTHON_CONSTRUCTS[construct.value], source, construct.start, construct.end)
    if token.type == "_INDENT":
        return SyntaxProblem("unexpected indent", source, token.end, token.end + 1)
    if "_INDENT" in expected and previous is not None:
        return SyntaxProblem("expected an indented block after ':'", source, previous.start, previous.end)
    if token.type in ("_NL", "$END", "_DEDENT", "$ERROR") and previous is not None and expected & _STARTS_EXPRESSION:
        wanted = "an expression" if {"NUMBER", "LPAR"} <= expected else "a name"
        return SyntaxProblem(f"expected {wanted} after {previous.value!r}", source, previous.start, previous.end)
    if token.type in _STARTS_EXPRESSION and "_NL" in expected and previous is not None:
        return SyntaxProblem(
            f"unexpected {_describe_token(token)}: is an operator or a comma missing before it?", source, *at
        )
    if token.type == "EQUAL" and previous is not None:
        advice = _attribute_assignment(source, tokens, index)
        if advice is not None:
            return SyntaxProblem(advice, source, *at)
        return SyntaxProblem("cannot assign to an expression: only a name can be assigned (a = ...)", source, *at)
    if token.type == "AUGASSIGN":
        return SyntaxProblem(f"only a name can be updated with {token.value!r}", source, *at)
    return SyntaxProblem(
        f"unexpected {_describe_token(token)}; expected {_describe_expected(expected, literal_names)}", source, *at
    )

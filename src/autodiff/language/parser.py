"""Parsing: tokens through the grammar's LALR tables into the syntax tree.

The driver is the textbook LALR loop over the tables Lark compiled (grammar.py), with one
addition: the state a reduction leaves on top, with the run of unit reductions that follows it
(`test -> or_test -> ... -> atom`, which only relabel the top of the stack), is remembered per
(state below, rule, lookahead) and taken in one step. Children are filtered exactly as Lark's tree builder filters them; each rule's alias
picks its builder from BUILDERS, a name table. Nothing recurses: the parse stack is a list.
"""

from __future__ import annotations


from . import ast
from ._gc import collector_paused
from .errors import InputProblem, SyntaxProblem
from .foreign import PYTHON_CONSTRUCTS
from .grammar import Tables, tables
from .source import Source
from .tokenizer import Token, tokenize


class _Splice(list):
    """The children of a `_rule`, to be spliced into its parent's."""

    __slots__ = ("start", "end")


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
        tokens = tokenize(source, grammar)
        try:
            return _Driver(grammar).run(tokens, source)
        except _Late as late:
            raise SyntaxProblem(late.message, source, late.node.start, late.node.end) from None


class _Driver:
    _compiled: dict = {}  # per tables: (goto memo, reducers, rule sizes)

    def __init__(self, grammar: Tables) -> None:
        self.grammar = grammar
        compiled = self._compiled.get(id(grammar))
        if compiled is None:
            compiled = self._compiled[id(grammar)] = (
                {}, [_reducer(rule) for rule in grammar.rules], [rule.size for rule in grammar.rules])
        self.gotos, self.reducers, self.sizes = compiled

    def run(self, tokens: list, source: Source) -> ast.Program:
        actions = self.grammar.actions
        reducers, sizes, gotos = self.reducers, self.sizes, self.gotos
        end_state = self.grammar.end_state
        top = self.grammar.start_state
        states = [top]
        values: list = []
        for token in tokens:
            kind = token.type
            try:
                action = actions[top][kind]
            except KeyError:
                raise self._rejected(source, tokens, token, top) from None
            while action < 0:  # reduce by rule -1 - action
                number = -1 - action
                size = sizes[number]
                if size == 1:
                    values[-1] = reducers[number]([values[-1]])
                    del states[-1]
                else:
                    if size:
                        raw = values[-size:]
                        del values[-size:]
                        del states[-size:]
                    else:
                        raw = []
                    values.append(reducers[number](raw))
                below = states[-1]
                key = (below, number, kind)
                top = gotos.get(key)
                if top is None:
                    top = gotos[key] = self._goto(below, number, kind)
                states.append(top)
                if top == end_state and kind == "$END":
                    return values[-1]
                try:
                    action = actions[top][kind]
                except KeyError:
                    raise self._rejected(source, tokens, token, top) from None
            states.append(action)  # shift
            values.append(token)
            top = action
        raise AssertionError("the parser ended without accepting")  # the tables always accept at $END

    def _rejected(self, source: Source, tokens: list, token: Token, state: int) -> SyntaxProblem:
        """The error for a token the parser has no action for (a lexical error's own, at its token)."""
        if token.type == "$ERROR":
            return token.error
        return _syntax_error(source, tokens, tokens.index(token), self.grammar.actions[state])

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


def _reducer(rule):
    """A function `raw children -> value` for one rule, written out once per rule.

    Its body applies Lark's child filter (kept children, spliced `_rules`, None for a missing
    `[optional]`) as one list display, finds the span, and calls the rule's builder: one call
    per reduction, where a generic filter would loop over the rule's shape every time.
    """
    include, trailing = rule.include, rule.trailing_nones
    items, grow = [], None
    for index, splice, nones in include:
        if grow is None and index == 0 and splice and not nones and not items:
            grow = "raw[0]"  # a repetition grows its first child's list in place, as Lark does
            continue
        items += ["None"] * nones + [f"*raw[{index}]" if splice else f"raw[{index}]"]
    items += ["None"] * trailing
    display = "[" + ", ".join(items) + "]"
    if grow is None:
        children = f"    children = {display}\n"
    elif items:
        children = f"    children = {grow}\n    children += {display}\n"
    else:
        children = f"    children = {grow}\n"
    # Usually the first and last raw children have positions; _span looks further when not.
    span = (
        "    try:\n        start, end = raw[0].start, raw[-1].end\n"
        "    except (AttributeError, IndexError):\n        start = end = None\n"
        "    if start is None or end is None:\n        start, end = _span(raw)\n"
    )
    if rule.inline:
        wrap = "    if not isinstance(children, _Splice):\n    " if grow else ""
        body = children + wrap + "    children = _Splice(children)\n" + span
        body += "    children.start, children.end = start, end\n    return children\n"
    else:
        body = children
        if rule.expand_single and rule.builder == rule.origin:  # a `?rule`: one child passes through
            body += "    if len(children) == 1:\n        child = children[0]\n"
            if rule.size > 1:  # `( test )`: the child, spanning its brackets
                body += ("        if isinstance(child, Node):\n"
                         "            return child.replace(start=raw[0].start, end=raw[-1].end)\n")
            body += "        return child\n"
        body += span + "    return builder(children, raw, start, end)\n"
    scope = {"_Splice": _Splice, "_span": _span, "Node": ast.Node, "builder": BUILDERS.get(rule.builder)}
    exec(f"def reduce(raw):\n{body}", scope)  # the grammar's own shapes, never user text
    return scope["reduce"]


def _span(raw: list):
    """The first start and last end among the raw children that have positions."""
    start = end = None
    for value in raw:
        start = getattr(value, "start", None)
        if start is not None:
            break
    for value in reversed(raw):
        end = getattr(value, "end", None)
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


def _number(token: Token) -> ast.Number:
    text = token.value.replace("_", "")
    value = float(text) if "." in text or "e" in text or "E" in text else int(text)
    return ast.Number.make(value, token.value, token.start, token.end)


def _binary(op: str):
    def build(children, raw, start, end):
        return ast.BinOp.make(op, children[0], children[1], raw[1].start, start, end)

    return build


def _if(children, raw, start, end):
    test, body, *branches, orelse = children  # the elifs, then the else suite (or None)
    tail = orelse or ()
    for branch in reversed(branches):
        tail = (ast.If.make(branch.test, branch.body, tail, branch.start, branch.end),)
    return ast.If.make(test, body, tail, start, end)


def _call(children, raw, start, end):
    func, arguments = children[0], children[1] or []
    args, keywords = [], []
    for argument in arguments:
        if isinstance(argument, ast.Keyword):
            keywords.append(argument)
        elif keywords:
            raise _Late(argument, "positional argument follows keyword argument")
        else:
            args.append(argument)
    return ast.Call.make(func, tuple(args), tuple(keywords), start, end)


def _compare(children, raw, start, end):
    operands = children[0::2]
    operators = children[1::2]
    return ast.Compare.make(
        operands[0], tuple(t.value for t in operators), tuple(operands[1:]), tuple(t.start for t in operators),
        start, end,
    )


def _declare(children, raw, start, end):
    name, kind, value = children
    return ast.Declare.make(name.value, kind.value, value, kind.start, start, end)


class _Late(Exception):
    """A syntax error found while building the tree, raised with its node's place."""

    def __init__(self, node, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


BINARY_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "matmul": "@", "floordiv": "//", "mod": "%"}

BUILDERS = {
    "start": lambda c, r, s, e: ast.Program.make(_statements(c), s or 0, e or 0),
    "simple_statements": lambda c, r, s, e: _statement_list(c, s, e),
    "suite": lambda c, r, s, e: _statements(c),
    "assign": lambda c, r, s, e: ast.Assign.make(c[0].value, c[1], s, e),
    "augassign": lambda c, r, s, e: ast.AugAssign.make(c[0].value, c[1].value[:-1], c[2], c[1].start, s, e),
    "declare": _declare,
    "expression": lambda c, r, s, e: ast.ExprStatement.make(c[0], s, e),
    "return_": lambda c, r, s, e: ast.Return.make(c[0], s, e),
    "pass_": lambda c, r, s, e: ast.Pass.make(s, e),
    "if_": _if,
    "elif_": lambda c, r, s, e: _Elif(c[0], c[1], s, e),
    "for_": lambda c, r, s, e: ast.For.make(c[0].value, c[1], c[2], s, e),
    "with_": lambda c, r, s, e: ast.With.make(c[0], c[1], s, e),
    "def_": lambda c, r, s, e: ast.FunctionDef.make(c[0].value, tuple(c[1] or ()), c[2], s, e),
    "parameters": lambda c, r, s, e: tuple(c),
    "parameter": lambda c, r, s, e: ast.Param.make(c[0].value, c[1], s, e),
    "ifexp": lambda c, r, s, e: ast.IfExp.make(c[0], c[1], c[2], s, e),
    "or_": lambda c, r, s, e: ast.BoolOp.make("or", c[0], c[1], s, e),
    "and_": lambda c, r, s, e: ast.BoolOp.make("and", c[0], c[1], s, e),
    "not_": lambda c, r, s, e: ast.UnaryOp.make("not", c[0], s, e),
    "compare": _compare,
    **{alias: _binary(op) for alias, op in BINARY_OPERATORS.items()},
    "pow": lambda c, r, s, e: ast.BinOp.make("**", c[0], c[2], c[1].start, s, e),
    "neg": lambda c, r, s, e: ast.UnaryOp.make("-", c[0], s, e),
    "pos": lambda c, r, s, e: ast.UnaryOp.make("+", c[0], s, e),
    "call": _call,
    "arguments": lambda c, r, s, e: list(c),
    "keyword": lambda c, r, s, e: ast.Keyword.make(c[0].value, c[1], s, e),
    "index": lambda c, r, s, e: ast.Subscript.make(c[0], tuple(c[1]), s, e),
    "subscripts": lambda c, r, s, e: tuple(c),
    "slice_": lambda c, r, s, e: ast.Slice.make(c[0], c[1], c[2], s, e),
    "attribute": lambda c, r, s, e: ast.Attribute.make(c[0], c[1].value, s, e),
    "name": lambda c, r, s, e: ast.Name.make(c[0].value, s, e),
    "number": lambda c, r, s, e: _number(c[0]),
    "true": lambda c, r, s, e: ast.Constant.make(True, s, e),
    "false": lambda c, r, s, e: ast.Constant.make(False, s, e),
    "none": lambda c, r, s, e: ast.Constant.make(None, s, e),
    "tuple_": lambda c, r, s, e: ast.TupleLiteral.make(tuple(x for x in c if x is not None), s, e),
    "list_": lambda c, r, s, e: ast.ListLiteral.make(tuple(x for x in c if x is not None), s, e),
}


def _statement_list(children, start, end) -> _Splice:
    statements = _Splice(x for x in children if x is not None)
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
        return SyntaxProblem("cannot assign to an expression: only a name can be assigned (a = ...)", source, *at)
    if token.type == "AUGASSIGN":
        return SyntaxProblem(f"only a name can be updated with {token.value!r}", source, *at)
    return SyntaxProblem(
        f"unexpected {_describe_token(token)}; expected {_describe_expected(expected, literal_names)}", source, *at
    )

"""The syntax tree's builders: what each rule of the grammar makes, by its alias (or name).

BUILDERS is a name table of expressions over a rule's children `c` (as Lark's tree builder
keeps them), its raw symbols `r` and its span `s`..`e`; reducer_writer.py writes each into
the rule's reducer, and Lark's reference tree (lark_reference.py) builds with the same table
through `builder`. The helpers here are what those expressions call, and `_scope` is what
they see: the node classes' fast constructors and these helpers.
"""

from __future__ import annotations

from . import ast


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

"""The syntax tree: small immutable dataclasses, each with the source offsets it came from.

`start` and `end` are character offsets into the program text (Source maps them to lines
and columns). Operator nodes also keep where their operator is (`op_start`), so an error in
`a + b` can point at the `+`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

# eq=False: nodes compare and hash by identity (as they are used: keys of maps from a place in
# the program), which also keeps a deep tree from being hashed recursively.
_node = dataclass(frozen=True, slots=True, eq=False)


class Node:
    """Base of every syntax tree node."""

    __slots__ = ()


# -- expressions ------------------------------------------------------------------------------------


@_node
class Number(Node):
    value: int | float
    text: str
    start: int
    end: int


@_node
class Name(Node):
    id: str
    start: int
    end: int


@_node
class Constant(Node):
    """True, False or None."""

    value: bool | None
    start: int
    end: int


@_node
class BinOp(Node):
    op: str  # + - * / @ // % **
    left: Node
    right: Node
    op_start: int
    start: int
    end: int


@_node
class UnaryOp(Node):
    op: str  # - + not
    operand: Node
    start: int
    end: int


@_node
class BoolOp(Node):
    op: str  # and, or
    left: Node
    right: Node
    start: int
    end: int


@_node
class Compare(Node):
    """`a < b <= c`: Python's chained comparison, `(a < b) and (b <= c)`."""

    left: Node
    ops: tuple
    comparators: tuple
    op_starts: tuple
    start: int
    end: int


@_node
class IfExp(Node):
    body: Node
    test: Node
    orelse: Node
    start: int
    end: int


@_node
class Keyword(Node):
    name: str
    value: Node
    start: int
    end: int


@_node
class Call(Node):
    func: Node
    args: tuple
    keywords: tuple
    start: int
    end: int


@_node
class Slice(Node):
    lower: Node | None
    upper: Node | None
    step: Node | None
    start: int
    end: int


@_node
class Subscript(Node):
    value: Node
    indices: tuple
    start: int
    end: int


@_node
class Attribute(Node):
    value: Node
    name: str
    start: int
    end: int


@_node
class ListLiteral(Node):
    elements: tuple
    start: int
    end: int


@_node
class TupleLiteral(Node):
    elements: tuple
    start: int
    end: int


# -- statements ------------------------------------------------------------------------------------


@_node
class Assign(Node):
    target: str
    value: Node
    start: int
    end: int


@_node
class AugAssign(Node):
    target: str
    op: str  # the binary operator: + for +=
    value: Node
    op_start: int
    start: int
    end: int


@_node
class Declare(Node):
    """`a: input = 2` or `g: const = 9.81` (the value may be missing for inputs)."""

    name: str
    kind: str
    value: Node | None
    kind_start: int
    start: int
    end: int


@_node
class ExprStatement(Node):
    value: Node
    start: int
    end: int


@_node
class Return(Node):
    value: Node
    start: int
    end: int


@_node
class Pass(Node):
    start: int
    end: int


@_node
class If(Node):
    test: Node
    body: tuple
    orelse: tuple
    start: int
    end: int


@_node
class For(Node):
    target: str
    iterable: Node
    body: tuple
    start: int
    end: int


@_node
class With(Node):
    context: Node
    body: tuple
    start: int
    end: int


@_node
class Param(Node):
    name: str
    default: Node | None
    start: int
    end: int


@_node
class FunctionDef(Node):
    name: str
    params: tuple
    body: tuple
    start: int
    end: int


@_node
class Program(Node):
    body: tuple
    start: int
    end: int


POSITION_FIELDS = frozenset(("start", "end", "op_start", "op_starts", "kind_start"))


def dump(node, positions: bool = False) -> str:
    """A one-line text form of a tree, like `ast.dump`, written without recursion."""
    out: list[str] = []
    stack: list = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, _Text):
            out.append(item.text)
        elif isinstance(item, Node):
            shown = [f for f in fields(item) if positions or f.name not in POSITION_FIELDS]
            stack.append(_Text(")"))
            for i, f in reversed(list(enumerate(shown))):
                stack.append(getattr(item, f.name))
                stack.append(_Text(("" if i == 0 else ", ") + f"{f.name}="))
            stack.append(_Text(type(item).__name__ + "("))
        elif isinstance(item, tuple):
            stack.append(_Text("]"))
            for i, element in reversed(list(enumerate(item))):
                stack.append(element)
                if i:
                    stack.append(_Text(", "))
            stack.append(_Text("["))
        else:
            out.append(repr(item))
    return "".join(out)


class _Text:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def walk(node):
    """Every node under `node` (itself included), without recursion."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Node):
            yield item
            stack.extend(getattr(item, f.name) for f in reversed(fields(item)))
        elif isinstance(item, tuple):
            stack.extend(reversed(item))

"""The syntax tree: small immutable records, each with the source offsets it came from.

`start` and `end` are character offsets into the program text (Source maps them to lines
and columns). Operator nodes also keep where their operator is (`op_start`), so an error in
`a + b` can point at the `+`.
"""

from __future__ import annotations

from types import FunctionType

_set = object.__setattr__


class Node:
    """Base of every syntax tree node: immutable, compared and hashed by identity (as nodes are
    used: keys of maps from a place in the program; a deep tree is never hashed recursively)."""

    __slots__ = ()
    _fields: tuple = ()  # the node's fields, in order (set by @_node)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} nodes are immutable")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} nodes are immutable")

    def replace(self, **changes) -> "Node":
        """A copy with some fields changed (as dataclasses.replace)."""
        values = {name: getattr(self, name) for name in self._fields}
        values.update(changes)
        return type(self).make(**values)

    def __repr__(self) -> str:
        return dump(self, positions=True)


def _node(cls):
    """Make a node class from its annotations: slots, and an __init__ taking every field.

    Written out rather than with @dataclass, which spends about 0.3 ms per class building
    methods the tree never uses, on every start of the command line.

    `cls.make(...)` builds the same node as `cls(...)` in a third of the time, for the parser,
    which builds a node per rule it reduces: a twin class with the same slots assigns the
    fields plainly (an immutable node must go through object.__setattr__ for each) and then
    turns the object into a `cls`, which Python allows between classes of one layout.

    `node.with_span(start, end)` is the same node spanning other offsets (a bracketed
    expression's node spans its brackets), as `replace` would make it, five times faster."""
    names = tuple(cls.__dict__.get("__annotations__", {}))
    assert names[-2:] == ("start", "end"), "every node's span comes last"
    scope = {"_set": _set}
    methods = {name: FunctionType(code, scope) for name, code in _methods(names).items()}
    namespace = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
    namespace.update(__slots__=names, _fields=names, __init__=methods["__init__"], with_span=methods["with_span"])
    node = scope["node"] = type(cls.__name__, cls.__bases__, namespace)
    node.make = type(f"{cls.__name__}.make", cls.__bases__,
                     {"__slots__": names, "__init__": methods["make"],
                      "__setattr__": object.__setattr__, "__delattr__": object.__delattr__})
    return node


def _methods_source(names: tuple) -> str:
    """The source of a node's __init__, make and with_span, for its fields `names`."""
    parameters = ", ".join(names)
    body = "".join(f"    _set(self, {name!r}, {name})\n" for name in names)
    fast = "".join(f"    self.{name} = {name}\n" for name in names) + "    self.__class__ = node\n"
    kept = "".join(f"self.{name}, " for name in names[:-2])
    return (f"def __init__(self, {parameters}):\n{body}\ndef make(self, {parameters}):\n{fast}"
            f"\ndef with_span(self, start, end):\n    return node.make({kept}start, end)\n")


_TEMPLATES: dict = {}  # a number of fields -> (their placeholder names, {method: its code})


def _methods(names: tuple) -> dict:
    """{"__init__", "make", "with_span": their code} for fields `names`. Compiled once for each
    number of fields, with placeholder names, then copied with the names put in (a compilation
    costs about 0.1 ms of every start, and the 28 node classes have 6 numbers of fields): the
    same code as compiling `_methods_source(names)` (tests/language/test_ast_nodes.py checks)."""
    template = _TEMPLATES.get(len(names))
    if template is None:
        placeholders = tuple(f"_field{i}" for i in range(len(names) - 2)) + ("start", "end")
        compiled: dict = {}
        exec(_methods_source(placeholders), compiled)  # our own placeholder names, never user text
        template = _TEMPLATES[len(names)] = placeholders, {k: compiled[k].__code__ for k in ("__init__", "make",
                                                                                                  "with_span")}
    placeholders, codes = template
    named = dict(zip(placeholders, names))

    def put(values: tuple) -> tuple:
        return tuple(named.get(v, v) if isinstance(v, str) else v for v in values)

    return {method: code.replace(co_varnames=put(code.co_varnames), co_names=put(code.co_names),
                                 co_consts=put(code.co_consts))
            for method, code in codes.items()}


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
class Unpack(Node):
    """`a, b = value`: a tuple (`x.max(0)`, split's pieces) or a tensor's rows, a name each."""

    targets: tuple  # the names, in order
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
    """`a: input = 2` or `g: const = 9.81` (the value may be missing for inputs); `A: input[n, n]`
    gives the input's shape, its sizes named (`sizes`: names and ints, None where not given)."""

    name: str
    kind: str
    value: Node | None
    kind_start: int
    sizes: tuple | None
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
            shown = [name for name in item._fields if positions or name not in POSITION_FIELDS]
            stack.append(_Text(")"))
            for i, name in reversed(list(enumerate(shown))):
                stack.append(getattr(item, name))
                stack.append(_Text(("" if i == 0 else ", ") + f"{name}="))
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


# Fields that hold a block of statements; every other field holding nodes holds expressions (or
# the Param and Keyword records that carry them).
_BLOCKS = {"If": ("body", "orelse"), "For": ("body",), "With": ("body",), "FunctionDef": ("body",),
           "Program": ("body",)}
_FIELDS: dict = {}  # node type -> (statement fields, other fields that may hold nodes)


def children(node) -> tuple:
    """A node's child statements and its other child nodes, each in field order.

    Every walk over the tree goes through here, so that none lists a node's children by hand:
    a block statement's body (and an `if`'s else branch) are its statements; expressions,
    parameters and keyword arguments are its other children."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        blocks = _BLOCKS.get(type(node).__name__, ())
        fields = _FIELDS[type(node)] = (
            blocks, tuple(n for n in node._fields if n not in POSITION_FIELDS and n not in blocks))
    blocks, others = fields
    statements = tuple(s for name in blocks for s in getattr(node, name))
    nodes = []
    for name in others:
        value = getattr(node, name)
        if isinstance(value, Node):
            nodes.append(value)
        elif type(value) is tuple:
            nodes.extend(v for v in value if isinstance(v, Node))
    return statements, tuple(nodes)


def walk(node):
    """Every node under `node` (itself included), in source order, without recursion."""
    stack = [node]
    while stack:
        item = stack.pop()
        yield item
        statements, others = children(item)
        stack.extend(reversed(statements))
        stack.extend(reversed(others))

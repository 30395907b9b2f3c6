"""Golden syntax trees: every construct of the language parses to the tree it should."""

import ast as python_ast

import pytest

from autodiff.language import ast, dump, parse

GOLDEN = [
    ('u = a * b',
     "Program(body=[Assign(target='u', value=BinOp(op='*', left=Name(id='a'), right=Name(id='b')))])"),
    ('a * b + log(d) * c',
     "Program(body=[ExprStatement(value=BinOp(op='+', left=BinOp(op='*', left=Name(id='a'), right=Name(id='b')), right=BinOp(op='*', left=Call(func=Name(id='log'), args=[Name(id='d')], keywords=[]), right=Name(id='c'))))])"),
    ('2; 2.5; .5; 1e-3; 6.02E23; 1_000',
     "Program(body=[ExprStatement(value=Number(value=2, text='2')), ExprStatement(value=Number(value=2.5, text='2.5')), ExprStatement(value=Number(value=0.5, text='.5')), ExprStatement(value=Number(value=0.001, text='1e-3')), ExprStatement(value=Number(value=6.02e+23, text='6.02E23')), ExprStatement(value=Number(value=1000, text='1_000'))])"),
    ('[1, 2, 3]',
     "Program(body=[ExprStatement(value=ListLiteral(elements=[Number(value=1, text='1'), Number(value=2, text='2'), Number(value=3, text='3')]))])"),
    ('[[1, 2], [3, 4]]',
     "Program(body=[ExprStatement(value=ListLiteral(elements=[ListLiteral(elements=[Number(value=1, text='1'), Number(value=2, text='2')]), ListLiteral(elements=[Number(value=3, text='3'), Number(value=4, text='4')])]))])"),
    ('(a + b) * c',
     "Program(body=[ExprStatement(value=BinOp(op='*', left=BinOp(op='+', left=Name(id='a'), right=Name(id='b')), right=Name(id='c')))])"),
    ('-x ** 2',
     "Program(body=[ExprStatement(value=UnaryOp(op='-', operand=BinOp(op='**', left=Name(id='x'), right=Number(value=2, text='2'))))])"),
    ('x ** y ** z',
     "Program(body=[ExprStatement(value=BinOp(op='**', left=Name(id='x'), right=BinOp(op='**', left=Name(id='y'), right=Name(id='z'))))])"),
    ('x ^ 2',
     "Program(body=[ExprStatement(value=BinOp(op='**', left=Name(id='x'), right=Number(value=2, text='2')))])"),
    ('+x - -y',
     "Program(body=[ExprStatement(value=BinOp(op='-', left=UnaryOp(op='+', operand=Name(id='x')), right=UnaryOp(op='-', operand=Name(id='y'))))])"),
    ('a @ b / c // d % e',
     "Program(body=[ExprStatement(value=BinOp(op='%', left=BinOp(op='//', left=BinOp(op='/', left=BinOp(op='@', left=Name(id='a'), right=Name(id='b')), right=Name(id='c')), right=Name(id='d')), right=Name(id='e')))])"),
    ('sum(W @ x)',
     "Program(body=[ExprStatement(value=Call(func=Name(id='sum'), args=[BinOp(op='@', left=Name(id='W'), right=Name(id='x'))], keywords=[]))])"),
    ('maximum(a, b)',
     "Program(body=[ExprStatement(value=Call(func=Name(id='maximum'), args=[Name(id='a'), Name(id='b')], keywords=[]))])"),
    ('sum(x, 1)',
     "Program(body=[ExprStatement(value=Call(func=Name(id='sum'), args=[Name(id='x'), Number(value=1, text='1')], keywords=[]))])"),
    ('mean(x, axis=0, keepdims=True)',
     "Program(body=[ExprStatement(value=Call(func=Name(id='mean'), args=[Name(id='x')], keywords=[Keyword(name='axis', value=Number(value=0, text='0')), Keyword(name='keepdims', value=Constant(value=True))]))])"),
    ('x[0]',
     "Program(body=[ExprStatement(value=Subscript(value=Name(id='x'), indices=[Number(value=0, text='0')]))])"),
    ('W[:, 1]',
     "Program(body=[ExprStatement(value=Subscript(value=Name(id='W'), indices=[Slice(lower=None, upper=None, step=None), Number(value=1, text='1')]))])"),
    ('x[1:3, ::2, :-1]',
     "Program(body=[ExprStatement(value=Subscript(value=Name(id='x'), indices=[Slice(lower=Number(value=1, text='1'), upper=Number(value=3, text='3'), step=None), Slice(lower=None, upper=None, step=Number(value=2, text='2')), Slice(lower=None, upper=UnaryOp(op='-', operand=Number(value=1, text='1')), step=None)]))])"),
    ('x.T',
     "Program(body=[ExprStatement(value=Attribute(value=Name(id='x'), name='T'))])"),
    ('x.sum(1)',
     "Program(body=[ExprStatement(value=Call(func=Attribute(value=Name(id='x'), name='sum'), args=[Number(value=1, text='1')], keywords=[]))])"),
    ('a < b <= c',
     "Program(body=[ExprStatement(value=Compare(left=Name(id='a'), ops=['<', '<='], comparators=[Name(id='b'), Name(id='c')]))])"),
    ('not a or b and c',
     "Program(body=[ExprStatement(value=BoolOp(op='or', left=UnaryOp(op='not', operand=Name(id='a')), right=BoolOp(op='and', left=Name(id='b'), right=Name(id='c'))))])"),
    ('y if c else z',
     "Program(body=[ExprStatement(value=IfExp(body=Name(id='y'), test=Name(id='c'), orelse=Name(id='z')))])"),
    ('(1, 2)',
     "Program(body=[ExprStatement(value=TupleLiteral(elements=[Number(value=1, text='1'), Number(value=2, text='2')]))])"),
    ('()',
     'Program(body=[ExprStatement(value=TupleLiteral(elements=[]))])'),
    ('(3,)',
     "Program(body=[ExprStatement(value=TupleLiteral(elements=[Number(value=3, text='3')]))])"),
    ('True; False; None',
     'Program(body=[ExprStatement(value=Constant(value=True)), ExprStatement(value=Constant(value=False)), ExprStatement(value=Constant(value=None))])'),
    ('a: input = 2',
     "Program(body=[Declare(name='a', kind='input', value=Number(value=2, text='2'), sizes=None)])"),
    ('x: input',
     "Program(body=[Declare(name='x', kind='input', value=None, sizes=None)])"),
    ('g: const = 9.81',
     "Program(body=[Declare(name='g', kind='const', value=Number(value=9.81, text='9.81'), sizes=None)])"),
    ('A: input[n, 3]',
     "Program(body=[Declare(name='A', kind='input', value=None, sizes=['n', '3'])])"),
    ('x: input[n] = [1, 2]',
     "Program(body=[Declare(name='x', kind='input', value=ListLiteral(elements=[Number(value=1, text='1'), "
     "Number(value=2, text='2')]), sizes=['n'])])"),
    ('s += x',
     "Program(body=[AugAssign(target='s', op='+', value=Name(id='x'))])"),
    ('if x > 0:\n    y = x\nelif x < 0:\n    y = -x\nelse:\n    y = 0',
     "Program(body=[If(test=Compare(left=Name(id='x'), ops=['>'], comparators=[Number(value=0, text='0')]), body=[Assign(target='y', value=Name(id='x'))], orelse=[If(test=Compare(left=Name(id='x'), ops=['<'], comparators=[Number(value=0, text='0')]), body=[Assign(target='y', value=UnaryOp(op='-', operand=Name(id='x')))], orelse=[Assign(target='y', value=Number(value=0, text='0'))])])])"),
    ('if c: y = 1',
     "Program(body=[If(test=Name(id='c'), body=[Assign(target='y', value=Number(value=1, text='1'))], orelse=[])])"),
    ('for i in range(3):\n    s = s + i',
     "Program(body=[For(target='i', iterable=Call(func=Name(id='range'), args=[Number(value=3, text='3')], keywords=[]), body=[Assign(target='s', value=BinOp(op='+', left=Name(id='s'), right=Name(id='i')))])])"),
    ('with no_grad:\n    k = x * 2',
     "Program(body=[With(context=Name(id='no_grad'), body=[Assign(target='k', value=BinOp(op='*', left=Name(id='x'), right=Number(value=2, text='2')))])])"),
    ('def f(x, k=2):\n    return x ** k',
     "Program(body=[FunctionDef(name='f', params=[Param(name='x', default=None), Param(name='k', default=Number(value=2, text='2'))], body=[Return(value=BinOp(op='**', left=Name(id='x'), right=Name(id='k')))])])"),
    ('def g():\n    pass',
     "Program(body=[FunctionDef(name='g', params=[], body=[Pass()])])"),
    ('a = 1  # a comment\r\nb = 2\r\n',
     "Program(body=[Assign(target='a', value=Number(value=1, text='1')), Assign(target='b', value=Number(value=2, text='2'))])"),
    ('y = (a +\n     b)',
     "Program(body=[Assign(target='y', value=BinOp(op='+', left=Name(id='a'), right=Name(id='b')))])"),
    ('y = a + \\\n    b',
     "Program(body=[Assign(target='y', value=BinOp(op='+', left=Name(id='a'), right=Name(id='b')))])"),
    # a tuple unpacked into names, as Python's (a trailing comma too)
    ('v, i = x.max(0)',
     "Program(body=[Unpack(targets=['v', 'i'], value=Call(func=Attribute(value=Name(id='x'), name='max'), args=[Number(value=0, text='0')], keywords=[]))])"),
    ('a, b, c, = x',
     "Program(body=[Unpack(targets=['a', 'b', 'c'], value=Name(id='x'))])"),
    ('a, = x',
     "Program(body=[Unpack(targets=['a'], value=Name(id='x'))])"),
]


@pytest.mark.parametrize("text,expected", GOLDEN, ids=[case[0][:30] for case in GOLDEN])
def test_golden_tree(text, expected):
    assert dump(parse(text)) == expected


def test_every_node_carries_its_span():
    text = "u = a * b\ne = u + log(d) * c"
    program = parse(text)
    assign = program.body[1]
    assert (assign.start, assign.end) == (10, 28)
    total = assign.value
    assert text[total.start : total.end] == "u + log(d) * c"
    assert text[total.op_start] == "+"
    call = total.right.left
    assert text[call.start : call.end] == "log(d)"
    assert text[call.args[0].start : call.args[0].end] == "d"


def test_spans_of_nested_and_parenthesised_expressions():
    text = "y = 2 * (x - 1) ** 2"
    value = parse(text).body[0].value
    assert text[value.start : value.end] == "2 * (x - 1) ** 2"
    power = value.right
    assert text[power.start : power.end] == "(x - 1) ** 2"
    assert text[power.op_start : power.op_start + 2] == "**"


def test_positions_follow_lines_and_crlf():
    from autodiff.language import Source

    source = Source("a = 1\r\nb = c\r\n", "f.txt")
    program = parse(source)
    name = program.body[1].value
    assert source.line_column(name.start) == (2, 5)


# -- the core syntax is Python's: the trees must agree ---------------------------------------------------

_PYTHON_OPS = {
    python_ast.Add: "+", python_ast.Sub: "-", python_ast.Mult: "*", python_ast.Div: "/", python_ast.MatMult: "@",
    python_ast.Pow: "**", python_ast.FloorDiv: "//", python_ast.Mod: "%", python_ast.USub: "-", python_ast.UAdd: "+",
    python_ast.Not: "not", python_ast.Lt: "<", python_ast.Gt: ">", python_ast.LtE: "<=", python_ast.GtE: ">=",
    python_ast.Eq: "==", python_ast.NotEq: "!=", python_ast.And: "and", python_ast.Or: "or",
}


def shape_of_python(node) -> str:
    """Python's tree in the shape of ours (operators and nesting only)."""
    if isinstance(node, python_ast.Module):
        return "[" + ", ".join(shape_of_python(s) for s in node.body) + "]"
    if isinstance(node, python_ast.Assign):
        return f"{node.targets[0].id}=" + shape_of_python(node.value)
    if isinstance(node, python_ast.Expr):
        return shape_of_python(node.value)
    if isinstance(node, python_ast.BinOp):
        return f"({shape_of_python(node.left)} {_PYTHON_OPS[type(node.op)]} {shape_of_python(node.right)})"
    if isinstance(node, python_ast.UnaryOp):
        return f"({_PYTHON_OPS[type(node.op)]} {shape_of_python(node.operand)})"
    if isinstance(node, python_ast.BoolOp):  # Python flattens a or b or c; ours nests to the left
        parts = [shape_of_python(v) for v in node.values]
        out = parts[0]
        for part in parts[1:]:
            out = f"({out} {_PYTHON_OPS[type(node.op)]} {part})"
        return out
    if isinstance(node, python_ast.Compare):
        ops = " ".join(f"{_PYTHON_OPS[type(o)]} {shape_of_python(c)}" for o, c in zip(node.ops, node.comparators))
        return f"({shape_of_python(node.left)} {ops})"
    if isinstance(node, python_ast.Call):
        args = ", ".join(shape_of_python(a) for a in node.args)
        return f"{node.func.id}({args})"
    if isinstance(node, python_ast.Name):
        return node.id
    if isinstance(node, python_ast.Constant):
        return repr(node.value)
    if isinstance(node, python_ast.List):
        return "[" + ", ".join(shape_of_python(e) for e in node.elts) + "]"
    raise AssertionError(f"not in the core: {type(node).__name__}")


def shape_of_ours(node) -> str:
    if isinstance(node, ast.Program):
        return "[" + ", ".join(shape_of_ours(s) for s in node.body) + "]"
    if isinstance(node, ast.Assign):
        return f"{node.target}=" + shape_of_ours(node.value)
    if isinstance(node, ast.ExprStatement):
        return shape_of_ours(node.value)
    if isinstance(node, ast.BinOp):
        return f"({shape_of_ours(node.left)} {node.op} {shape_of_ours(node.right)})"
    if isinstance(node, ast.BoolOp):
        return f"({shape_of_ours(node.left)} {node.op} {shape_of_ours(node.right)})"
    if isinstance(node, ast.UnaryOp):
        return f"({node.op} {shape_of_ours(node.operand)})"
    if isinstance(node, ast.Compare):
        ops = " ".join(f"{o} {shape_of_ours(c)}" for o, c in zip(node.ops, node.comparators))
        return f"({shape_of_ours(node.left)} {ops})"
    if isinstance(node, ast.Call):
        return f"{node.func.id}(" + ", ".join(shape_of_ours(a) for a in node.args) + ")"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Number):
        return repr(node.value)
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.ListLiteral):
        return "[" + ", ".join(shape_of_ours(e) for e in node.elements) + "]"
    raise AssertionError(type(node).__name__)


CORE_PROGRAMS = [
    "u = a * b\nt = log(d)\ne = u + t * c",
    "-x ** 2 + - - y * +z",
    "a - b - c - d / e / f",
    "a ** -b ** c",
    "2 * (x - y) + z",
    "not a < b or c >= d and e != f == g",
    "x @ W @ V / 2 % 3 // 4",
    "sum(W @ x)\nmaximum(a, b) - minimum([1, 2], c)",
    "1e-3 * .5 + 6.02E23 - 2.5",
]


@pytest.mark.parametrize("text", CORE_PROGRAMS)
def test_core_programs_parse_as_python_does(text):
    assert shape_of_ours(parse(text)) == shape_of_python(python_ast.parse(text))

"""ast.py compiles the node classes' methods once per number of fields and copies them with each
class's field names put in: every copy must be the code that compiling its own source gives."""

import pytest

from autodiff.language import ast

NODES = [cls for cls in vars(ast).values() if isinstance(cls, type) and issubclass(cls, ast.Node) and cls is not ast.Node]


def _compiled(names: tuple) -> dict:
    scope: dict = {}
    exec(ast._methods_source(names), scope)
    return {name: scope[name].__code__ for name in ("__init__", "make", "with_span")}


@pytest.mark.parametrize("cls", NODES, ids=lambda cls: cls.__name__)
def test_each_node_has_the_methods_its_own_source_compiles_to(cls):
    ours = {"__init__": cls.__init__.__code__, "make": cls.make.__init__.__code__, "with_span": cls.with_span.__code__}
    for method, code in _compiled(cls._fields).items():
        mine = ours[method]
        assert (mine.co_code, mine.co_varnames, mine.co_names, mine.co_consts, mine.co_argcount) == \
            (code.co_code, code.co_varnames, code.co_names, code.co_consts, code.co_argcount), method


def test_nodes_are_made_alike_by_init_make_and_with_span():
    made = ast.BinOp.make("+", ast.Name("a", 0, 1), ast.Name("b", 4, 5), 2, 0, 5)
    assert made == made and type(made) is ast.BinOp and made.op_start == 2 and made.right.id == "b"
    init = ast.BinOp(op="+", left=made.left, right=made.right, op_start=2, start=0, end=5)
    assert [getattr(init, f) for f in init._fields] == [getattr(made, f) for f in made._fields]
    wider = made.with_span(-1, 6)
    assert (type(wider), wider.left, wider.op, wider.start, wider.end) == (ast.BinOp, made.left, "+", -1, 6)
    with pytest.raises(AttributeError, match="immutable"):
        made.op = "-"

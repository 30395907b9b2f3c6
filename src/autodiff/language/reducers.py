"""The parser's reducers, one per rule of grammar_tables.py (reducer_writer.py writes each from
the rule's shape and builders.py's BUILDERS), written by `python -m autodiff.language.build_tables`:
do not edit."""

from .builders import _scope

globals().update(_scope())  # the builders' names: node classes' make, _Splice, _span...

GRAMMAR = 'd2d9ab373d21287793b74ca54dbd690167ffedd4845ec4b766b83467a57678d6'  # the tables they were written for


def _r0():
    c = []
    s = e = None
    return Program(_statements(c), s or 0, e or 0)


def _r1(r0):
    s, e = r0[2], r0[3]
    return Constant(False, s, e)


def _r2(r0):
    s, e = r0[2], r0[3]
    return Name(r0[1], s, e)


def _r3(r0):
    s, e = r0[2], r0[3]
    return Constant(None, s, e)


def _r4(r0):
    s, e = r0[2], r0[3]
    return _number(r0[1], s, e)


def _r5(r0):
    s, e = r0[2], r0[3]
    return Pass(s, e)


def _r6(r0):
    s, e = r0[2], r0[3]
    return Constant(True, s, e)


def _r7(r0):
    c = []
    c = _Splice(c)
    s, e = r0[2], r0[3]
    c.start, c.end = s, e
    return c


def _r8(r0):
    c = r0
    try:
        s, e = r0.start, r0.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0,), (False,))
    return Program(_statements(c), s or 0, e or 0)


def _r9(r0):
    c = r0
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r0.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0,), (False,))
    c.start, c.end = s, e
    return c


def _r10(r0):
    c = [r0]
    if len(c) == 1:
        child = c[0]
        return child


def _r11(r0):
    c = [r0]
    c = _Splice(c)
    try:
        s, e = r0.start, r0.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0,), (False,))
    c.start, c.end = s, e
    return c


def _r12(r0):
    try:
        s, e = r0.start, r0.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0,), (False,))
    return ExprStatement(r0, s, e)


def _r13(r0, r1):
    c = []
    s, e = r0[2], r1[3]
    return TupleLiteral(tuple(x for x in c if x is not None), s, e)


def _r14(r0, r1):
    c = [None]
    s, e = r0[2], r1[3]
    return ListLiteral(tuple(x for x in c if x is not None), s, e)


def _r15(r0, r1):
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    return UnaryOp('-', r1, s, e)


def _r16(r0, r1):
    c = [r0]
    c = _Splice(c)
    s, e = r0[2], r1[3]
    c.start, c.end = s, e
    return c


def _r17(r0, r1):
    c = [r0, *r1]
    c = _Splice(c)
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    c.start, c.end = s, e
    return c


def _r18(r0, r1):
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    return UnaryOp('not', r1, s, e)


def _r19(r0, r1):
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    return UnaryOp('+', r1, s, e)


def _r20(r0, r1):
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    return Return(r1, s, e)


def _r21(r0, r1):
    c = r0
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r1[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (False, True))
    c.start, c.end = s, e
    return c


def _r22(r0, r1):
    c = r0
    c += [*r1]
    try:
        s, e = r0.start, r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (False, False))
    return Program(_statements(c), s or 0, e or 0)


def _r23(r0, r1):
    c = r0
    c += [*r1]
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (False, False))
    c.start, c.end = s, e
    return c


def _r24(r0, r1):
    c = [r0, *r1]
    try:
        s, e = r0.start, r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (False, False))
    return _compare(c, s, e)


def _r25(r0, r1):
    c = [r0]
    try:
        s, e = r0.start, r1[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (False, True))
    return _statement_list(c, s, e)


def _r26(r0, r1, r2):
    c = [r1]
    if len(c) == 1:
        child = c[0]
        if isinstance(child, Node):
            return child.with_span(r0[2], r2[3])
        return child


def _r27(r0, r1, r2):
    c = [r1]
    s, e = r0[2], r2[3]
    return ListLiteral(tuple(x for x in c if x is not None), s, e)


def _r28(r0, r1, r2):
    try:
        s, e = r0[2], r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (True, True, False))
    return AugAssign(r0[1], r1[1][:-1], r2, r1[2], s, e)


def _r29(r0, r1, r2):
    s, e = r0[2], r2[3]
    return Declare(r0[1], r2[1], None, r2[2], None if None is None else tuple(None), s, e)


def _r30(r0, r1):
    c = [r1]
    c = _Splice(c)
    s, e = r0[2], r1[3]
    c.start, c.end = s, e
    return c


def _r31(r0, r1, r2):
    try:
        s, e = r0[2], r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (True, True, False))
    return Assign(r0[1], r2, s, e)


def _r32(r0, r1, r2):
    c = [r0, *r1]
    c = _Splice(c)
    s, e = r0[2], r2[3]
    c.start, c.end = s, e
    return c


def _r33(r0, r1, r2):
    c = r0
    c += [*r1, *r2]
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, False, False))
    c.start, c.end = s, e
    return c


def _r34(r0, r1, r2):
    c = r0
    c += [r2]
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return Unpack(_names(c[:-1]), c[-1], s, e)


def _r35(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BoolOp('and', r0, r2, s, e)


def _r36(r0, r1):
    c = [r0, r1]
    c = _Splice(c)
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    c.start, c.end = s, e
    return c


def _r37(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('-', r0, r2, r1[2], s, e)


def _r38(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('+', r0, r2, r1[2], s, e)


def _r39(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BoolOp('or', r0, r2, s, e)


def _r40(r0, r1, r2):
    try:
        s, e = r0.start, r2[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, True))
    return Attribute(r0, r2[1], s, e)


def _r41(r0, r1, r2):
    try:
        s, e = r0.start, r2[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, True))
    return _call(r0, None, s, e)


def _r42(r0):
    c = [r0]
    return list(c)


def _r43(r0):
    s, e = r0[2], r0[3]
    return Slice(None, None, None, s, e)


def _r44(r0):
    c = [r0]
    return tuple(c)


def _r45(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('**', r0, r2, r1[2], s, e)


def _r46(r0, r1, r2):
    c = [r0]
    try:
        s, e = r0.start, r2[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, True))
    return _statement_list(c, s, e)


def _r47(r0, r1):
    c = [r1]
    c = _Splice(c)
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    c.start, c.end = s, e
    return c


def _r48(r0, r1, r2):
    c = [r0, *r1]
    try:
        s, e = r0.start, r2[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, False, True))
    return _statement_list(c, s, e)


def _r49(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('@', r0, r2, r1[2], s, e)


def _r50(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('%', r0, r2, r1[2], s, e)


def _r51(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('/', r0, r2, r1[2], s, e)


def _r52(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('*', r0, r2, r1[2], s, e)


def _r53(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return BinOp('//', r0, r2, r1[2], s, e)


def _r54(r0):
    s, e = r0[2], r0[3]
    return Param(r0[1], None, s, e)


def _r55(r0):
    c = [r0]
    return _statements(c)


def _r56(r0, r1, r2, r3):
    c = [r1, r3, None]
    try:
        s, e = r0[2], r3.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (True, False, True, False))
    return _if(c, s, e)


def _r57(r0, r1, r2, r3):
    c = [r1, None]
    s, e = r0[2], r3[3]
    return TupleLiteral(tuple(x for x in c if x is not None), s, e)


def _r58(r0, r1, r2, r3):
    c = [r1]
    s, e = r0[2], r3[3]
    return ListLiteral(tuple(x for x in c if x is not None), s, e)


def _r59(r0, r1, r2, r3):
    c = [r1, *r2]
    s, e = r0[2], r3[3]
    return ListLiteral(tuple(x for x in c if x is not None), s, e)


def _r60(r0, r1, r2, r3):
    try:
        s, e = r0[2], r3.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (True, True, True, False))
    return Declare(r0[1], r2[1], None, r2[2], None if r3 is None else tuple(r3), s, e)


def _r61(r0, r1, r2):
    c = r0
    c += [r2]
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r2[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, True))
    c.start, c.end = s, e
    return c


def _r62(r0, r1, r2, r3):
    try:
        s, e = r0[2], r3.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (True, False, True, False))
    return With(r1, r3, s, e)


def _r63(r0, r1, r2):
    c = r0
    c += [r1, r2]
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    c.start, c.end = s, e
    return c


def _r64(r0, r1):
    c = [r0]
    return list(c)


def _r65(r0, r1):
    c = [r0, *r1]
    return list(c)


def _r66(r0, r1, r2, r3):
    try:
        s, e = r0.start, r3[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (False, True, False, True))
    return _call(r0, r2, s, e)


def _r67(r0, r1):
    s, e = r0[2], r1[3]
    return Slice(None, None, None, s, e)


def _r68(r0, r1):
    try:
        s, e = r0[2], r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (True, False))
    return Slice(None, r1, None, s, e)


def _r69(r0, r1):
    c = [r0]
    return tuple(c)


def _r70(r0, r1):
    c = [r0, *r1]
    return tuple(c)


def _r71(r0, r1, r2, r3):
    try:
        s, e = r0.start, r3[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (False, True, False, True))
    return Subscript(r0, tuple(r2), s, e)


def _r72(r0, r1):
    try:
        s, e = r0.start, r1[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (False, True))
    return Slice(r0, None, None, s, e)


def _r73(r0, r1, r2, r3):
    c = [r0, *r1]
    try:
        s, e = r0.start, r3[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (False, False, True, True))
    return _statement_list(c, s, e)


def _r74(r0, r1, r2):
    c = r0
    c += [r2]
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    c.start, c.end = s, e
    return c


def _r75(r0, r1, r2, r3, r4):
    c = [r1, r3, *r4, None]
    try:
        s, e = r0[2], r4.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4,), (True, False, True, False, False))
    return _if(c, s, e)


def _r76(r0, r1, r2, r3, r4):
    c = [r1, r3]
    s, e = r0[2], r4[3]
    return TupleLiteral(tuple(x for x in c if x is not None), s, e)


def _r77(r0, r1, r2, r3, r4):
    c = [r1, *r2]
    s, e = r0[2], r4[3]
    return ListLiteral(tuple(x for x in c if x is not None), s, e)


def _r78(r0, r1, r2, r3, r4):
    try:
        s, e = r0[2], r4.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4,), (True, True, True, True, False))
    return Declare(r0[1], r2[1], r4, r2[2], None if None is None else tuple(None), s, e)


def _r79(r0):
    return r0[1]


def _r80(r0, r1):
    c = [None]
    s, e = r0[2], r1[3]
    return _sizes(c, s, e)


def _r81(r0, r1, r2, r3, r4):
    try:
        s, e = r0.start, r4.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4,), (False, True, False, True, False))
    return IfExp(r0, r2, r4, s, e)


def _r82(r0, r1, r2):
    try:
        s, e = r0[2], r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (True, True, False))
    return Keyword(r0[1], r2, s, e)


def _r83(r0, r1, r2):
    c = [r0, *r1]
    return list(c)


def _r84(r0, r1, r2):
    try:
        s, e = r0[2], r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (True, True, False))
    return Slice(None, None, r2, s, e)


def _r85(r0, r1, r2):
    s, e = r0[2], r2[3]
    return Slice(None, r1, None, s, e)


def _r86(r0, r1, r2):
    c = [r0, *r1]
    return tuple(c)


def _r87(r0, r1, r2):
    try:
        s, e = r0.start, r2[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, True))
    return Slice(r0, None, None, s, e)


def _r88(r0, r1, r2):
    try:
        s, e = r0.start, r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (False, True, False))
    return Slice(r0, r2, None, s, e)


def _r89(r0, r1, r2):
    try:
        s, e = r0[2], r2.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2,), (True, True, False))
    return Param(r0[1], r2, s, e)


def _r90(r0, r1, r2, r3, r4, r5):
    try:
        s, e = r0[2], r5.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4, r5,), (True, True, True, True, True, False))
    return FunctionDef(r1[1], tuple(None or ()), r5, s, e)


def _r91(r0, r1, r2, r3, r4, r5):
    try:
        s, e = r0[2], r5.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4, r5,), (True, True, True, False, True, False))
    return For(r1[1], r3, r5, s, e)


def _r92(r0, r1):
    c = r0
    c += [r1]
    if not isinstance(c, _Splice):
        c = _Splice(c)
    try:
        s, e = r0.start, r1.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1,), (False, False))
    c.start, c.end = s, e
    return c


def _r93(r0, r1, r2, r3, r4, r5):
    c = [r1, r3]
    s, e = r0[2], r5[3]
    return TupleLiteral(tuple(x for x in c if x is not None), s, e)


def _r94(r0, r1, r2, r3, r4, r5):
    c = [r1, r3, *r4]
    s, e = r0[2], r5[3]
    return TupleLiteral(tuple(x for x in c if x is not None), s, e)


def _r95(r0, r1, r2):
    c = [r1]
    s, e = r0[2], r2[3]
    return _sizes(c, s, e)


def _r96(r0, r1, r2, r3, r4, r5):
    try:
        s, e = r0[2], r5.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4, r5,), (True, True, True, False, True, False))
    return Declare(r0[1], r2[1], r5, r2[2], None if r3 is None else tuple(r3), s, e)


def _r97(r0, r1, r2, r3):
    try:
        s, e = r0[2], r3.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (True, False, True, False))
    return Slice(None, r1, r3, s, e)


def _r98(r0, r1, r2, r3):
    try:
        s, e = r0.start, r3.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (False, True, True, False))
    return Slice(r0, None, r3, s, e)


def _r99(r0, r1, r2, r3):
    try:
        s, e = r0.start, r3[3]
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (False, True, False, True))
    return Slice(r0, r2, None, s, e)


def _r100(r0, r1, r2, r3, r4, r5, r6):
    try:
        s, e = r0[2], r6.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4, r5, r6,), (True, True, True, False, True, True, False))
    return FunctionDef(r1[1], tuple(r3 or ()), r6, s, e)


def _r101(r0, r1, r2, r3):
    c = [*r2]
    return _statements(c)


def _r102(r0, r1, r2, r3, r4, r5, r6):
    c = [r1, r3, r6]
    try:
        s, e = r0[2], r6.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4, r5, r6,), (True, False, True, False, True, True, False))
    return _if(c, s, e)


def _r103(r0, r1, r2, r3, r4, r5, r6):
    c = [r1, r3, *r4]
    s, e = r0[2], r6[3]
    return TupleLiteral(tuple(x for x in c if x is not None), s, e)


def _r104(r0, r1, r2, r3):
    c = [r1]
    s, e = r0[2], r3[3]
    return _sizes(c, s, e)


def _r105(r0, r1, r2, r3):
    c = [r1, *r2]
    s, e = r0[2], r3[3]
    return _sizes(c, s, e)


def _r106(r0, r1, r2, r3, r4):
    try:
        s, e = r0.start, r4.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4,), (False, True, False, True, False))
    return Slice(r0, r2, r4, s, e)


def _r107(r0, r1, r2, r3):
    try:
        s, e = r0[2], r3.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3,), (True, False, True, False))
    return _Elif(r1, r3, s, e)


def _r108(r0, r1, r2, r3, r4, r5, r6, r7):
    c = [r1, r3, *r4, r7]
    try:
        s, e = r0[2], r7.end
    except AttributeError:
        s = e = None
    if s is None or e is None:
        s, e = _span((r0, r1, r2, r3, r4, r5, r6, r7,), (True, False, True, False, False, True, True, False))
    return _if(c, s, e)


def _r109(r0, r1, r2, r3, r4):
    c = [r1, *r2]
    s, e = r0[2], r4[3]
    return _sizes(c, s, e)


REDUCERS = [
    _r0,  # 0: start -> start
    _r1,  # 1: atom -> false
    _r2,  # 2: atom -> name
    _r3,  # 3: atom -> none
    _r4,  # 4: atom -> number
    _r5,  # 5: small -> pass_
    _r6,  # 6: atom -> true
    _r7,  # 7: __start_star_0 -> __start_star_0
    _r8,  # 8: start -> start
    _r8,  # 9: start -> start
    _r9,  # 10: __start_star_1 -> __start_star_1
    _r10,  # 11: or_test -> or_test
    _r10,  # 12: comparison -> comparison
    _r10,  # 13: primary -> primary
    _r10,  # 14: not_test -> not_test
    _r11,  # 15: _statement -> _statement
    _r10,  # 16: term -> term
    _r10,  # 17: and_test -> and_test
    _r10,  # 18: test -> test
    _r10,  # 19: factor -> factor
    _r10,  # 20: power -> power
    _r11,  # 21: _statement -> _statement
    _r10,  # 22: arith -> arith
    _r12,  # 23: small -> expression
    _r13,  # 24: atom -> tuple_
    _r14,  # 25: atom -> list_
    _r15,  # 26: factor -> neg
    _r16,  # 27: _targets -> _targets
    _r17,  # 28: _targets -> _targets
    _r18,  # 29: not_test -> not_
    _r19,  # 30: factor -> pos
    _r20,  # 31: small -> return_
    _r21,  # 32: __start_star_0 -> __start_star_0
    _r22,  # 33: start -> start
    _r23,  # 34: __start_star_1 -> __start_star_1
    _r23,  # 35: __start_star_1 -> __start_star_1
    _r24,  # 36: comparison -> compare
    _r25,  # 37: simple_statements -> simple_statements
    _r26,  # 38: atom -> atom
    _r27,  # 39: atom -> list_
    _r28,  # 40: small -> augassign
    _r29,  # 41: small -> declare
    _r30,  # 42: ___targets_plus_5 -> ___targets_plus_5
    _r31,  # 43: small -> assign
    _r32,  # 44: _targets -> _targets
    _r33,  # 45: __start_star_1 -> __start_star_1
    _r34,  # 46: small -> unpack
    _r35,  # 47: and_test -> and_
    _r36,  # 48: __comparison_plus_8 -> __comparison_plus_8
    _r37,  # 49: arith -> sub
    _r38,  # 50: arith -> add
    _r39,  # 51: or_test -> or_
    _r40,  # 52: primary -> attribute
    _r41,  # 53: primary -> call
    _r42,  # 54: arguments -> arguments
    _r10,  # 55: argument -> argument
    _r43,  # 56: subscript -> slice_
    _r44,  # 57: subscripts -> subscripts
    _r10,  # 58: subscript -> subscript
    _r45,  # 59: power -> pow
    _r46,  # 60: simple_statements -> simple_statements
    _r47,  # 61: __simple_statements_star_2 -> __simple_statements_star_2
    _r48,  # 62: simple_statements -> simple_statements
    _r49,  # 63: term -> matmul
    _r50,  # 64: term -> mod
    _r51,  # 65: term -> div
    _r52,  # 66: term -> mul
    _r53,  # 67: term -> floordiv
    _r54,  # 68: parameter -> parameter
    _r44,  # 69: parameters -> parameters
    _r55,  # 70: suite -> suite
    _r56,  # 71: compound -> if_
    _r57,  # 72: atom -> tuple_
    _r58,  # 73: atom -> list_
    _r47,  # 74: __atom_star_9 -> __atom_star_9
    _r59,  # 75: atom -> list_
    _r60,  # 76: small -> declare
    _r61,  # 77: ___targets_plus_5 -> ___targets_plus_5
    _r62,  # 78: compound -> with_
    _r63,  # 79: __comparison_plus_8 -> __comparison_plus_8
    _r64,  # 80: arguments -> arguments
    _r65,  # 81: arguments -> arguments
    _r66,  # 82: primary -> call
    _r67,  # 83: subscript -> slice_
    _r68,  # 84: subscript -> slice_
    _r69,  # 85: subscripts -> subscripts
    _r70,  # 86: subscripts -> subscripts
    _r71,  # 87: primary -> index
    _r72,  # 88: subscript -> slice_
    _r73,  # 89: simple_statements -> simple_statements
    _r74,  # 90: __simple_statements_star_2 -> __simple_statements_star_2
    _r69,  # 91: parameters -> parameters
    _r70,  # 92: parameters -> parameters
    _r75,  # 93: compound -> if_
    _r11,  # 94: __compound_star_3 -> __compound_star_3
    _r76,  # 95: atom -> tuple_
    _r77,  # 96: atom -> list_
    _r74,  # 97: __atom_star_9 -> __atom_star_9
    _r78,  # 98: small -> declare
    _r79,  # 99: size -> size_name
    _r79,  # 100: size -> size_number
    _r80,  # 101: sizes -> sizes
    _r81,  # 102: test -> ifexp
    _r82,  # 103: argument -> keyword
    _r47,  # 104: __arguments_star_10 -> __arguments_star_10
    _r83,  # 105: arguments -> arguments
    _r84,  # 106: subscript -> slice_
    _r85,  # 107: subscript -> slice_
    _r47,  # 108: __subscripts_star_11 -> __subscripts_star_11
    _r86,  # 109: subscripts -> subscripts
    _r87,  # 110: subscript -> slice_
    _r88,  # 111: subscript -> slice_
    _r89,  # 112: parameter -> parameter
    _r90,  # 113: compound -> def_
    _r47,  # 114: __parameters_star_7 -> __parameters_star_7
    _r86,  # 115: parameters -> parameters
    _r91,  # 116: compound -> for_
    _r9,  # 117: __suite_plus_6 -> __suite_plus_6
    _r92,  # 118: __compound_star_3 -> __compound_star_3
    _r93,  # 119: atom -> tuple_
    _r94,  # 120: atom -> tuple_
    _r95,  # 121: sizes -> sizes
    _r96,  # 122: small -> declare
    _r74,  # 123: __arguments_star_10 -> __arguments_star_10
    _r97,  # 124: subscript -> slice_
    _r74,  # 125: __subscripts_star_11 -> __subscripts_star_11
    _r98,  # 126: subscript -> slice_
    _r99,  # 127: subscript -> slice_
    _r74,  # 128: __parameters_star_7 -> __parameters_star_7
    _r100,  # 129: compound -> def_
    _r101,  # 130: suite -> suite
    _r23,  # 131: __suite_plus_6 -> __suite_plus_6
    _r102,  # 132: compound -> if_
    _r103,  # 133: atom -> tuple_
    _r104,  # 134: sizes -> sizes
    _r47,  # 135: __sizes_star_4 -> __sizes_star_4
    _r105,  # 136: sizes -> sizes
    _r106,  # 137: subscript -> slice_
    _r107,  # 138: elif_ -> elif_
    _r108,  # 139: compound -> if_
    _r109,  # 140: sizes -> sizes
    _r74,  # 141: __sizes_star_4 -> __sizes_star_4
]

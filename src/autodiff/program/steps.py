"""`autodiff derive --steps`: each input's derivative worked out as on paper, one named rule a step.

The program runs once more, traced (symbolic/trace.py), beside `derive`'s own run: the output's
expression, each value the program assigns (a loop's turns and a branch's value along the path
`--at` picks), and for every operation the backward node that made it. The expression is then
read as a person reads it, outside in:

- the algebra's own forms have the rules of the algebra: a sum (`sum`, `difference`), a
  product (`constant multiple`, `product`), a quotient, a negation, a power with a constant
  exponent (`power`) or with a variable one (`exponential`);
- every other operation is a call of a function, whose rule is named after it (`sin`, `log`,
  `sigmoid`, ...; `chain` where its argument is not the input itself) and whose derivative is
  its own `defop` formula (ops/), run on the values that node saved: the steps keep no table of
  functions, so an op added to the registry has its step at once;
- a name the program assigns is a step of its own (`chain`, through that name), then its value.

Each step's `result` is its derivative with the derivatives of its operands left as
placeholders, each standing for the derivative of another step's `of`: a rule never looks two
levels down. The input itself and what does not depend on it (`detach(x)`, another input, a
number) are the only operands whose derivatives (1 and 0) are written out. A last `simplify` step says that all of it
collects to `derive`'s formula, which is derive's own text.

Scalar programs only: a tensor input or a tensor value is refused (exit 2).
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from .. import Tensor
from ..language import Options, evaluate
from ..language._gc import collector_paused
from ..language.analysis import analyze
from .._record import record
from ..language.option_names import option
from ..ops.spelling import ATOM, POWER, PRODUCT, SUM, UNARY, called_as
from ..symbolic import expr as E
from ..symbolic.printing import MAX_INLINE, Printer, UnsupportedOperation, _fraction, number_text
from ..symbolic.trace import Traced, Tracer
from . import derive as D
from .errors import GradientProblem, UsageProblem
from .run import _source_and_program

SIMPLIFY = "simplify"
SHARED = 12  # a value used more than once is named (a step of its own) once it is this many nodes


class Ref:
    """A placeholder in a step's result: the derivative of the step whose `of` is `node`'s."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node


@record
class Step:
    """One step of a derivative written out: the rule applied, to what, and what it gives."""

    id: int
    rule: str
    of: str  # the expression it differentiates, in the language (a name, for a name's step)
    result: tuple  # text pieces: str, or a step id (an int) where that step's derivative stands
    function: str | None = None  # the chain rule's outer function
    name: bool = False  # a name's step: `of` is a name the program assigns (or one the steps made)

    @property
    def uses(self) -> list:
        return list(dict.fromkeys(p for p in self.result if isinstance(p, int)))


@record
class Definition:
    """A value the steps call by a name: one the program assigns (`y_1` for the first of two values
    assigned to `y`), or one the steps name (shared, or deep)."""

    name: str
    value: str  # in the language, over inputs and earlier definitions
    line: int | None = None
    turn: int | None = None
    assigned: str | None = None  # the program's name, where it is not `name` itself

    @property
    def where(self) -> str:
        if self.line is None:
            return ""
        return f"line {self.line}" + (f", turn {self.turn}" if self.turn is not None else "")


@record
class InputSteps:
    """The steps of one input's derivative, in the order they are written."""

    wrt: str
    steps: list  # Step, the last the simplify step


@record
class Steps:
    """derive's result (program/derive.py's Derivation) with the steps of each input's derivative."""

    derived: object  # program/derive.py's Derivation: the formulas, the assumptions
    inputs: list  # InputSteps
    definitions: list  # Definition, each before its first use
    prefix: str  # placeholders are prefix + step id: no name of the program

    @property
    def warnings(self) -> list:
        return self.derived.warnings

    @property
    def output(self) -> str:
        return self.derived.output

    def placeholder(self, step_id: int) -> str:
        return f"{self.prefix}{step_id}"


def derive_steps(source, at: dict | None = None, *, program=None, wrt=None, output: str | None = None,
                 options: Options | None = None) -> Steps:
    """derive's formulas, and for each input (`wrt`: some) the steps that lead to its formula.
    Raises what derive raises, and UsageProblem for a program of tensors."""
    source, program = _source_and_program(source, program)
    options = Options() if options is None else options
    for name, value in (at or {}).items():  # before derive, which may take long over matrices
        shape = tuple(value.shape) if isinstance(value, Tensor) else np.shape(value)
        if shape:
            raise _tensor_input(name, shape)
    derived = D.derive(source, at, program=program, wrt=wrt, output=output, options=options)
    for name, shape in derived.inputs.items():
        if shape:
            raise _tensor_input(name, shape)
    if derived.jacobian:
        raise UsageProblem(f"{option('steps')} works on a number output; {derived.output!r} is a tensor")
    with collector_paused():
        return _steps(source, program, at or {}, derived, output, options)


def _tensor_input(name: str, shape) -> UsageProblem:
    return UsageProblem(f"{option('steps')} works on numbers: the input {name!r} has shape {list(shape)} (the steps "
                        "of matrix calculus are not written yet)")


class _Names(D._Watcher):
    """derive's watcher, which also hears of each value the program assigns at its top level."""

    def __init__(self, tracer, source, given) -> None:
        super().__init__(tracer, source, given)
        self.values: list = []  # (name, expression, line, statement)
        self._runs: dict = {}

    def assigned(self, name: str, value, node) -> None:
        if isinstance(value, Traced) and value.expr.symbolic and value.expr.op not in ("sym", "const", "tensor"):
            line = self.source.line_column(node.start)[0]
            self._runs[id(node)] = self._runs.get(id(node), 0) + 1
            self.values.append((name, value.expr, line, id(node), self._runs[id(node)]))


def _steps(source, program, at: dict, derived, output, options) -> Steps:
    analysis = analyze(program, source)
    point = dict(at)
    for name in analysis.inputs:
        declared = analysis.declared.get(name)
        if name not in point and (declared is None or declared.value is None):
            point[name] = D.DEFAULT_VALUE
    if len(point) > len(at):
        options = replace(options, check_finite=False)
    wrt = [x.wrt[0] for x in derived.derivatives]
    taken = set(re.findall(r"\w+", source.text)) | {name for name, _ in derived.statements} | {"pi", "inf", "nan"}
    with Tracer(detach_no_grad=True) as tracer:
        tracer.made = {}
        watcher = _Names(tracer, source, set(at) | {n for n in analysis.declared if n not in point})
        options.trace = watcher
        try:
            evaluation = evaluate(program, source, at=point, output=output, options=options, analysis=analysis)
        finally:
            options.trace = None
        tracer.recording = False
        root = D._expr_of(evaluation.output)
        _refuse_tensors(root)
        writer = _Writer(root, watcher.values, tracer, taken)
        inputs = [InputSteps(x, writer.steps(x, derived.output, derived.formula(x))) for x in wrt]
    count = max((len(i.steps) for i in inputs), default=0)
    prefix = "D"
    while any(f"{prefix}{k}" in taken for k in range(1, count + 1)):
        prefix += "_"
    return Steps(derived, inputs, writer.definitions, prefix)


def _refuse_tensors(root) -> None:
    for e in E.postorder([root]):
        if e.shape:
            raise UsageProblem(f"{option('steps')} works on numbers: this program computes a tensor of shape "
                               f"{list(e.shape)} (the steps of matrix calculus are not written yet)")


# -- the expression as it is read: sums, products, quotients, powers, calls, names --------------------


class _W:
    """One node of the expression as written: `kind` (sum, product, quotient, neg, power, sqrt,
    call, name, sym, number), its expression, its operands and its text."""

    __slots__ = ("kind", "expr", "parts", "text", "level", "signs", "definition")

    def __init__(self, kind, expr, parts=(), text="", level=ATOM, signs=()) -> None:
        self.kind, self.expr, self.parts, self.text, self.level, self.signs = kind, expr, tuple(parts), text, level, \
            tuple(signs)
        self.definition = None  # a name's value, as written


def _wrapped(w, level: int) -> str:
    return f"({w.text})" if w.level < level else w.text


class _CallPrinter(Printer):
    """The language's text of a call or of a formula, its operands written as they are read."""

    def __init__(self, names: dict, texts: dict) -> None:
        super().__init__(dict(names))
        self.texts = texts

    def _text(self, e):
        found = self.texts.get(e)
        return found if found is not None else super()._text(e)


class _Writer:
    def __init__(self, root, assigned: list, tracer, taken: set) -> None:
        self.root = root
        self.tracer = tracer
        self.taken = taken
        self.names: dict = {}  # expression -> its name
        self.definitions: list = []
        self._written: dict = {}  # expression -> its _W as written (not as a name)
        self._named: dict = {}  # expression -> its name's _W
        self._locals: dict = {}  # (call expression) -> {argument position: its derivative's _frag}
        self._name_values(assigned)

    # -- names ------------------------------------------------------------------------------------------

    def _name_values(self, assigned: list) -> None:
        """Every value the program assigns a step of its own, by its name (the earlier values of a
        name assigned more than once numbered: y_1, y_2, then y); and a value used more than
        once that is not small, or that would nest too deep, by a name of the steps' own."""
        labels: dict = {}
        versions: dict = {}
        for name, e, line, node, run in assigned:
            if e not in labels:
                labels[e] = [name, line, node, run]
                versions.setdefault(name, []).append(e)
        runs, first_name = {}, {}
        for name, e, line, node, run in assigned:
            runs[node] = max(runs.get(node, 0), run)
            first_name.setdefault(e, name)
        for name, exprs in versions.items():
            for k, e in enumerate(exprs[:-1], 1):
                labels[e][0] = self._fresh(f"{name}_{k}")
        uses: dict = {}
        order = E.postorder([self.root], uses)
        depth, size = {}, {}
        counter = 0
        for e in order:
            if e.op in ("sym", "const", "tensor"):
                depth[e], size[e] = 0, 1
                continue
            d = 1 + max((depth[c] for c in e.parts), default=0)
            s = 1 + sum(size[c] for c in e.parts)
            if e is not self.root and (e in labels or d > MAX_INLINE or (uses.get(e, 0) > 1 and s > SHARED)):
                if e in labels:
                    name, line, node, run = labels[e]
                    assigned_as = first_name[e]
                    info = (line, run if runs[node] > 1 else None, assigned_as if assigned_as != name else None)
                else:
                    counter += 1
                    name, info = self._fresh(f"v{counter}"), (None, None, None)
                self.taken.add(name)
                self.definitions.append(Definition(name, self.written(e).text, *info))
                self.names[e] = name
                d, s = 0, 1
            depth[e], size[e] = d, s

    def _fresh(self, name: str) -> str:
        base, k = name, 2
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    # -- the expression as written ------------------------------------------------------------------------

    def node(self, e):
        """e as an operand: its name where it has one, else as written."""
        name = self.names.get(e)
        if name is None:
            return self.written(e)
        w = self._named.get(e)
        if w is None:
            w = self._named[e] = _W("name", e, text=name)
            w.definition = self.written(e)
        return w

    def written(self, e):
        w = self._written.get(e)
        if w is None:
            w = self._written[e] = self._write(e)
        return w

    def _write(self, e):
        op = e.op
        if op == "sym":
            return _W("sym", e, text=e.args[0])
        if op in ("const", "tensor"):
            text, level = Printer()._text(e)
            return _W("number", e, text=text, level=level)
        if op == "add":
            return self._sum(e)
        if op == "mul":
            return self._product(e)
        if op == "pow":
            base, exponent = e.args
            if exponent == 0.5:
                inner = self.node(base)
                return _W("sqrt", e, (inner,), f"sqrt({inner.text})")
            if isinstance(exponent, float) and exponent < 0:
                below = self.node(E.power(base, -exponent))
                return self._quotient(e, self._number(1.0), below)
            b = self.node(base)
            x = self._number(exponent) if isinstance(exponent, float) else self.node(exponent)
            return _W("power", e, (b, x), f"{_wrapped(b, POWER + 1)} ** {_wrapped(x, POWER)}", POWER)
        return self._call(e)

    def _number(self, value: float):
        return self.written(E.const(value))

    def _sum(self, e):
        number, terms = e.args
        pieces = []
        for t, k in terms:
            w = self.node(t) if abs(k) == 1 else self.node(E.mul(E.const(abs(k)), t))
            if w.kind == "sum":  # a sum kept whole inside another: its terms are this sum's
                pieces += [(negative != (k < 0), part) for negative, part in zip(w.signs, w.parts)]
            else:
                pieces.append((k < 0, w))
        if number:
            pieces.append((number < 0, self._number(abs(number))))
        first = next((i for i, (negative, _) in enumerate(pieces) if not negative), None)
        if first is None:  # every term negative: -(a + b)
            inner = self._join_sum(E.neg(e), [(False, w) for _, w in pieces])
            return _W("neg", e, (inner,), f"-{_wrapped(inner, UNARY)}", UNARY)
        pieces.insert(0, pieces.pop(first))
        return self._join_sum(e, pieces)

    def _join_sum(self, e, pieces: list):
        if len(pieces) == 1:
            return pieces[0][1]
        text = _wrapped(pieces[0][1], SUM)
        for negative, w in pieces[1:]:
            text += f" - {_wrapped(w, PRODUCT)}" if negative else f" + {_wrapped(w, SUM + 1)}"
        return _W("sum", e, [w for _, w in pieces], text, SUM, [n for n, _ in pieces])

    def _product(self, e):
        k, factors = e.args
        top, bottom = [], []
        for base, exponent in factors:
            if isinstance(exponent, float) and exponent < 0:
                bottom.append(self.node(E.power(base, -exponent)))
            else:
                top.append(self.node(base if exponent == 1.0 else E.power(base, exponent)))
        size = abs(k)
        fraction = _fraction(size)
        if fraction is not None:
            size, below = fraction
            bottom.insert(0, self._number(float(below)))
        if size != 1 or not top:
            top.insert(0, self._number(size))
        if k < 0:
            first = top[0]
            top[0] = self._number(-first.expr.number) if first.kind == "number" else \
                _W("neg", E.neg(first.expr), (first,), f"-{_wrapped(first, UNARY)}", UNARY)
        above = self._join_product(top)
        if not bottom:
            return above
        below = self._join_product(bottom)
        return self._quotient(e, above, below)

    def _join_product(self, ws: list):
        flat = []
        for w in ws:
            flat += list(w.parts) if w.kind == "product" else [w]
        if len(flat) == 1:
            return flat[0]
        text = _wrapped(flat[0], PRODUCT) + "".join(f" * {_wrapped(w, PRODUCT + 1)}" for w in flat[1:])
        return _W("product", E.mul(*[w.expr for w in flat]), flat, text, PRODUCT)

    def _quotient(self, e, above, below):
        return _W("quotient", e, (above, below), f"{_wrapped(above, PRODUCT)} / {_wrapped(below, PRODUCT + 1)}",
                  PRODUCT)

    def _call(self, e):
        parts, texts = [], {}
        for a in e.args:
            if isinstance(a, E.Expr):
                w = self.node(a)
                parts.append(w)
                texts[a] = (w.text, w.level)
            else:
                parts.append(a)
        try:
            text, level = _CallPrinter(self.names, texts)._spelled(e.op, e.args)
        except UnsupportedOperation:
            raise GradientProblem(f"{option('steps')} cannot write {e.op}() in the expression language") from None
        return _W("call", e, parts, text, level)

    # -- the steps of one input -------------------------------------------------------------------------

    def steps(self, x: str, output: str, formula: str) -> list:
        self.x = x
        self._depends: dict = {}
        top = self.written(self.root)
        ids: dict = {}  # _W -> its step's id
        made: list = []
        if self.root.op == "sym" and self.root.args[0] == x:
            made.append(Step(1, "variable", top.text, ("1",)))
        elif not self.depends(self.root):
            made.append(Step(1, "constant", top.text, ("0",)))
        else:
            work = [top]
            while work:
                w = work.pop()
                if w in ids:
                    continue
                ids[w] = len(made) + 1
                rule, result, function = self._rule(w)
                made.append(Step(ids[w], rule, w.text, result, function, w.kind == "name"))
                later = [p.node for p in result if isinstance(p, Ref)]
                work.extend(reversed([n for n in later if n not in ids]))
            for s in made:
                s.result = _joined(ids[p.node] if isinstance(p, Ref) else p for p in s.result)
        made.append(Step(len(made) + 1, SIMPLIFY, output, (formula,)))
        return made

    def depends(self, e) -> bool:
        """Whether e's derivative by the input may be other than 0: the input is in it, other than
        inside detach() or an operation without a derivative."""
        memo = self._depends
        if e in memo:
            return memo[e]
        stack = [e]
        while stack:
            n = stack[-1]
            if n in memo:
                stack.pop()
                continue
            waiting = [c for c in E.children(n) if c not in memo]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            op = n.op
            if op == "sym":
                memo[n] = n.args[0] == self.x
            elif op in ("const", "tensor") or (op not in ("add", "mul", "pow") and n not in self.tracer.made):
                memo[n] = False
            else:
                memo[n] = any(memo[c] for c in E.children(n))
        return memo[e]

    def _d(self, w):
        """The derivative of operand w: 1 for the input, 0 for what does not depend on it, else a
        placeholder for its own step."""
        if w.kind == "sym" and w.expr.args[0] == self.x:
            return _ONE
        if not self.depends(w.expr):
            return _ZERO
        return _Frag((Ref(w),), ATOM)

    def _rule(self, w) -> tuple:
        kind = w.kind
        parts = w.parts
        if kind == "name":
            return "chain", self._d(w.definition).pieces, None
        if kind == "sum":
            terms = [(negative, self._d(p)) for negative, p in zip(w.signs, parts)]
            return ("difference" if any(w.signs) else "sum"), _total(terms).pieces, None
        if kind == "product":
            moving = [i for i, p in enumerate(parts) if self.depends(p.expr)]
            if len(moving) == 1:
                i = moving[0]
                return "constant multiple", _times(*[self._d(p) if j == i else _of(p) for j, p in enumerate(parts)]
                                                   ).pieces, None
            terms = [(False, _times(*[self._d(p) if j == i else _of(p) for j, p in enumerate(parts)]))
                     for i in moving]
            return "product", _total(terms).pieces, None
        if kind == "quotient":
            above, below = parts
            if not self.depends(below.expr):
                return "constant multiple", _over(self._d(above), _of(below)).pieces, None
            top = _total([(False, _times(self._d(above), _of(below))), (True, _times(_of(above), self._d(below)))])
            return "quotient", _over(top, _power(_of(below), _text("2"))).pieces, None
        if kind == "neg":
            return "negation", _negated(self._d(parts[0])).pieces, None
        if kind == "sqrt":
            return "power", _over(self._d(parts[0]), _times(_text("2"), _of(w))).pieces, None
        if kind == "power":
            base, exponent = parts
            if not self.depends(exponent.expr):
                if exponent.kind == "number":
                    n = exponent.expr.number
                    lower = _ONE if n == 1 else _of(base) if n == 2 else _power(_of(base), _number(n - 1))
                    coefficient = _number(n)
                else:
                    lower = _power(_of(base), _Frag((f"{_wrapped(exponent, SUM)} - 1",), SUM))
                    coefficient = _of(exponent)
                return "power", _times(coefficient, lower, self._d(base)).pieces, None
            log = _text(f"log({base.text})")
            if not self.depends(base.expr):
                return "exponential", _times(_of(w), log, self._d(exponent)).pieces, None
            inner = _total([(False, _times(self._d(exponent), log)),
                            (False, _over(_times(_of(exponent), self._d(base)), _of(base)))])
            return "exponential", _times(_of(w), inner).pieces, None
        if kind == "call":
            return self._call_rule(w)
        raise GradientProblem(f"{option('steps')} has no rule for {w.text}")  # a number or a symbol: never here

    def _call_rule(self, w) -> tuple:
        e = w.expr
        function = called_as(e.op)
        locals_ = self._local(w)
        terms, arguments = [], []
        for position, factor in locals_.items():
            operand = w.parts[position]
            if not self.depends(operand.expr):
                continue
            arguments.append(operand)
            terms.append((False, _times(factor, self._d(operand))))
        if len(arguments) == 1 and arguments[0].kind == "sym":
            return function, _total(terms).pieces, None
        return "chain", _total(terms).pieces, function

    def _local(self, w) -> dict:
        """{argument position: the op's derivative by it, as a fragment}: the op's own formula run
        by its node, on what the node saved (the traced values), the arriving gradient 1."""
        e = w.expr
        found = self._locals.get(e)
        if found is not None:
            return found
        node = self.tracer.made.get(e)
        op = getattr(node, "op", None)
        if op is None or op.name != e.op or op.variadic:
            raise GradientProblem(f"{option('steps')} has no rule for {called_as(e.op)}() yet; derive writes its "
                                  "formula")
        from .. import tensor

        # Every value is a number: the vector-Jacobian product is the gradient times the
        # derivative, and with the gradient 1 it is the derivative itself.
        grads = node._apply([Traced(tensor(1.0), E.const(1.0))], True)
        texts = {a: (p.text, p.level) for a, p in zip(e.args, w.parts) if isinstance(a, E.Expr)}
        texts[e] = (w.text, w.level)
        printer = _CallPrinter(self.names, texts)
        out = {}
        for j, grad in enumerate(grads):
            if grad is None:
                continue
            position = op.diff_positions[j]
            if isinstance(grad, Traced):
                factor = grad.expr
            else:
                factor = E.constant(grad.detach().numpy(force=True))
            if factor.shape or position >= len(w.parts) or not isinstance(w.parts[position], _W):
                raise GradientProblem(f"{option('steps')} cannot write the derivative of {called_as(e.op)}() as a "
                                      "step yet; derive writes its formula")
            text, level = printer._text(factor)
            out[position] = _ZERO if text == "0" else _ONE if text == "1" else _Frag((text,), level)
        self._locals[e] = out
        return out


def _joined(pieces) -> tuple:
    """Text pieces with each run of strings as one string."""
    out: list = []
    for p in pieces:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        else:
            out.append(p)
    return tuple(out)


# -- results: text with placeholders, simplified as a person writes them (no 1 *, no + 0) --------------


class _Frag:
    __slots__ = ("pieces", "level")

    def __init__(self, pieces: tuple, level: int) -> None:
        self.pieces, self.level = tuple(pieces), level

    @property
    def zero(self) -> bool:
        return self.pieces == ("0",)

    @property
    def one(self) -> bool:
        return self.pieces == ("1",)


_ONE, _ZERO = _Frag(("1",), ATOM), _Frag(("0",), ATOM)


def _text(text: str, level: int = ATOM) -> _Frag:
    return _Frag((text,), level)


def _number(value: float) -> _Frag:
    return _Frag((number_text(value),), UNARY if value < 0 else ATOM)


def _of(w) -> _Frag:
    return _Frag((w.text,), w.level)


def _wrap(f: _Frag, level: int) -> tuple:
    return ("(",) + f.pieces + (")",) if f.level < level else f.pieces


def _times(*fs) -> _Frag:
    if any(f.zero for f in fs):
        return _ZERO
    fs = [f for f in fs if not f.one]
    if not fs:
        return _ONE
    if len(fs) == 1:
        return fs[0]
    pieces = _wrap(fs[0], PRODUCT)
    for f in fs[1:]:
        pieces += (" * ",) + _wrap(f, PRODUCT + 1)
    return _Frag(pieces, PRODUCT)


def _over(a: _Frag, b: _Frag) -> _Frag:
    if a.zero or b.one:
        return a
    return _Frag(_wrap(a, PRODUCT) + (" / ",) + _wrap(b, PRODUCT + 1), PRODUCT)


def _power(a: _Frag, b: _Frag) -> _Frag:
    return _Frag(_wrap(a, POWER + 1) + (" ** ",) + _wrap(b, POWER), POWER)


def _negated(a: _Frag) -> _Frag:
    if a.zero:
        return a
    return _Frag(("-",) + _wrap(a, UNARY), UNARY)


def _total(terms: list) -> _Frag:
    """The sum of (negative, fragment) terms, the zeros left out, a positive one first."""
    kept = [(negative, f) for negative, f in terms if not f.zero]
    if not kept:
        return _ZERO
    first = next((i for i, (negative, _) in enumerate(kept) if not negative), 0)
    kept.insert(0, kept.pop(first))
    negative, f = kept[0]
    if len(kept) == 1:
        return _negated(f) if negative else f
    pieces = ("-",) + _wrap(f, UNARY) if negative else _wrap(f, SUM)
    for negative, f in kept[1:]:
        pieces += (" - ",) + _wrap(f, PRODUCT) if negative else (" + ",) + _wrap(f, SUM)
    return _Frag(pieces, SUM)


# -- the steps as text and data ---------------------------------------------------------------------------


def derivative_text(x: str, step: Step) -> str:
    """`∂/∂x [x ** 2]`, or `∂u/∂x` for a name's step."""
    return f"∂{step.of}/∂{x}" if step.name else f"∂/∂{x} [{step.of}]"


def result_text(steps: list, step: Step, x: str) -> str:
    """A step's result, each placeholder written as the derivative it stands for."""
    by_id = {s.id: s for s in steps}
    return "".join(derivative_text(x, by_id[p]) if isinstance(p, int) else p for p in step.result)


def rule_label(step: Step) -> str:
    """`product rule`, `chain rule (sin)`, `sin`, `simplify`."""
    if step.rule == SIMPLIFY or step.rule not in ALGEBRA:
        return step.rule
    return f"{step.rule} rule" + (f" ({step.function})" if step.function else "")


# The rules of the algebra's own forms (every other rule is a function's, named after it).
ALGEBRA = {"constant", "variable", "sum", "difference", "negation", "constant multiple", "product", "quotient",
            "power", "exponential", "chain"}


def shared_statements(d: Steps, formula: str) -> list:
    """derive's statements (name, text) that `formula` needs (shared values it names), in order."""
    statements = [(n, t) for n, t in d.derived.statements if n not in {x.name for x in d.derived.derivatives}]
    known = dict(statements)
    needed, work = set(), [formula]
    while work:
        for word in re.findall(r"\w+", work.pop()):
            if word in known and word not in needed:
                needed.add(word)
                work.append(known[word])
    return [(n, t) for n, t in statements if n in needed]


def lines(d: Steps) -> list:
    """[(kind, text)] of the plain and rich renderings: kind is "head", "step" (with the rule's
    label set apart: (number, label, text)), "where", "assume" or "blank"."""
    out = []
    width = max((len(rule_label(s)) for i in d.inputs for s in i.steps), default=0)
    for k, block in enumerate(d.inputs):
        if k:
            out.append(("blank", ""))
        x, steps = block.wrt, block.steps
        first = steps[0]
        out.append(("head", f"∂{d.output}/∂{x} = {derivative_text(x, first) if first.rule != SIMPLIFY else ''}"))
        digits = len(str(len(steps)))
        for s in steps:
            if s.rule == SIMPLIFY:
                text = f"∂{d.output}/∂{x} = {s.result[0]}"
            else:
                text = f"{derivative_text(x, s)} = {result_text(steps, s, x)}"
                where = where_text(d, s)
                if where:
                    text += f"  ({where})"
            out.append(("step", (f"{s.id}.".rjust(digits + 1), rule_label(s).ljust(width), text)))
            if s.rule == SIMPLIFY:
                for name, value in shared_statements(d, s.result[0]):
                    out.append(("where", f"where {name} = {value}"))
    for a in d.derived.assumptions:
        out.append(("assume", f"assuming {a.condition}  ({a.where})"))
    return out


def where_text(d: Steps, step: Step) -> str:
    """Where a name's step's value was assigned: `line 4`, `y at line 12, turn 2`; else empty."""
    if not step.name:
        return ""
    found = next((x for x in d.definitions if x.name == step.of), None)
    if found is None or not found.where:
        return ""
    return (f"{found.assigned} at " if found.assigned else "") + found.where


def for_json(d: Steps) -> dict:
    out = D.for_json(d.derived)
    for block in d.inputs:
        out["inputs"][block.wrt]["steps"] = [_step_json(d, s) for s in block.steps]
    out["definitions"] = [{"name": x.name, "value": x.value,
                           **({"line": x.line} if x.line is not None else {}),
                           **({"turn": x.turn} if x.turn is not None else {}),
                           **({"assigned": x.assigned} if x.assigned else {})} for x in d.definitions]
    return out


def _step_json(d: Steps, s: Step) -> dict:
    result = "".join(d.placeholder(p) if isinstance(p, int) else p for p in s.result)
    out = {"id": s.id, "rule": s.rule, "of": s.of, "result": result,
           "uses": {d.placeholder(p): p for p in s.uses}}
    if s.function:
        out["function"] = s.function
    return out


def values_at(d: Steps, point: dict) -> dict:
    """{input: {step id: the value of its derivative at `point`}}: each step's `of`, with the
    definitions it names, differentiated by the engine (the simplify step's is the input's
    gradient). `point` gives every input a number."""
    from .run import differentiate

    definitions = "".join(f"{x.name} = {x.value}\n" for x in d.definitions)
    out = {}
    for block in d.inputs:
        x, values = block.wrt, {}
        for step in block.steps:
            if step.rule == "constant":
                values[step.id] = 0.0
                continue
            of = d.output if step.rule == SIMPLIFY else step.of
            text = definitions + f"{_fresh_output(d)} = {of}\n" if step.rule != SIMPLIFY else None
            if text is None:
                values[step.id] = None
                continue
            grad = differentiate(text, point, wrt=[x]).grads.get(x)
            values[step.id] = 0.0 if grad is None else float(grad)
        out[x] = values
    return out


def _fresh_output(d: Steps) -> str:
    taken = {x.name for x in d.definitions} | set(d.derived.inputs)
    name = "of_"
    while name in taken:
        name += "_"
    return name

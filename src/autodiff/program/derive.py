"""Symbolic derivatives of a program: `autodiff derive` and `autodiff.derive()`.

The program runs once, traced (symbolic/trace.py): its inputs are symbols, and the engine's
own backward with `create_graph=True` builds each derivative's expression from every op's
`defop` formula. The expressions come out simplified and shared (symbolic/expr.py) and are
written as a program (symbolic/printing.py). Values matter only where the program reads one
as a Python value (`if x > 0`, `range(n)`): the path `--at` picks is followed and its
conditions are listed as assumptions; with no value given there, derive refuses.
"""

from __future__ import annotations

import math
import re
from dataclasses import field, replace

import numpy as np

from ..language.records import record
from .. import Tensor, autograd
from ..language import InputProblem, Options, Program, ProgramError, Source, evaluate, parse
from ..language.errors import EvaluationProblem, LimitProblem
from ..language.errors import Warning_
from ..language._gc import collector_paused
from ..language.analysis import analyze
from ..language.builtins import CONSTANTS, FUNCTIONS, KNOWN_NAMES, WORDS
from ..language.foreign import MODULES
from ..language.spelling import option
from ..symbolic import expr as E
from ..ops.spelling import SUM
from ..symbolic.printing import Printer, Program as Statements, UnsupportedOperation, to_text
from ..symbolic.jacobian import jacobian_of, linear_map, seed
from ..symbolic.matrix import simplify
from ..symbolic.sizes import CHECKED, TRACED, SizeNames, assign, in_order
from ..symbolic.trace import Traced, Tracer
from .errors import GradientProblem, UsageProblem
from .run import _source_and_program, refuse_non_tensor

DEFAULT_VALUE = 0.75  # an input's value where --at gives none: it only fixes a 0-d shape


@record
class Assumption:
    """A condition the derived program holds under: a branch taken, a loop's count, a value read.

    `turn` says which time its line decided (1, 2, ...) where the line decided more than once (a
    condition tested on each turn of a loop); `test` is the expression whose value was read and
    `value` what it was, which the python module checks at each call."""

    line: int
    condition: str
    turn: int | None = None
    test: object = field(default=None, repr=False, compare=False)
    value: object = field(default=None, repr=False, compare=False)

    @property
    def where(self) -> str:
        return f"line {self.line}" + (f", turn {self.turn}" if self.turn is not None else "")


@record
class Derived:
    """One derivative: of the output with respect to `wrt` (a pair of names at order 2)."""

    wrt: tuple
    name: str  # de_da, d2e_da_db
    formula: str  # the right-hand side of its statement in `program`
    expr: object = None  # its expression (symbolic/expr.py)
    shape: tuple = ()


@record
class Derivation:
    source: str
    output: str
    inputs: dict  # input name -> shape, in the program's order
    derivatives: list  # Derived, first order, then second
    statements: list  # (name, right-hand side), each defined before use, derivatives last
    assumptions: list = field(default_factory=list)
    order: int = 1
    value: object = None  # the output's expression
    declared: dict = field(default_factory=dict)  # input name -> its default value's text, where the file gives one
    check: object = None  # DeriveCheck with --check
    warnings: list = field(default_factory=list)
    labels: dict = field(default_factory=dict, repr=False)  # expression -> the user's name for it
    shapes: dict = field(default_factory=dict)  # input name -> its sizes by name (and numbers), where named
    sizes: object = field(default=None, repr=False)  # SizeNames of the formulas' trace (None: literal sizes)
    jacobian: bool = False  # a tensor output: each derivative is a Jacobian (the output's shape, then the input's)
    fixed: dict = field(default_factory=dict)  # input -> its shape, where sizes were named but hold only as traced

    @property
    def bindings(self) -> list:
        """[(size name, input, dim)]: where each named size a formula uses is read from."""
        out, seen = [], set()
        for name, dims in self.shapes.items():
            for dim, size in enumerate(dims):
                if isinstance(size, str) and size not in seen:
                    seen.add(size)
                    out.append((size, name, dim))
        return out

    @property
    def program(self) -> str:
        sizes = "".join(f"{size} = size({name}, {dim})\n" for size, name, dim in self.bindings
                        if self._uses(size))
        return sizes + "".join(f"{name} = {text}\n" for name, text in self.statements)

    def _uses(self, size: str) -> bool:
        return any(re.search(rf"\b{re.escape(size)}\b", text) for _, text in self.statements)

    def formula(self, wrt) -> str:
        key = (wrt,) if isinstance(wrt, str) else tuple(wrt)
        return next(d.formula for d in self.derivatives if d.wrt == key)


class _Watcher:
    """Told by the language's evaluator where values were read: collects the assumptions, one
    per decision (a condition tested on each turn of a loop is one per turn)."""

    def __init__(self, tracer: Tracer, source: Source, given: set) -> None:
        self.tracer = tracer
        self.source = source
        self.given = given
        self.assumptions: list = []
        self.seen = 0
        self._turns: dict = {}  # syntax node -> how many times it decided

    def input(self, name: str, leaf: Tensor) -> Tensor:
        return self.tracer.input(name, leaf)

    def number(self, value) -> Tensor:
        """A number the program computed from its sizes (`sqrt(n)`), by its formula."""
        return self.tracer.number(value)

    def constant(self, name: str, value: float) -> Tensor:
        """pi as a symbol of its own: sqrt(2 * pi) stays written so."""
        from .. import tensor

        self.given.add(name)
        return self.tracer.input(name, tensor(value))

    def located(self, node, outcome) -> None:
        decisions = self.tracer.decisions
        if len(decisions) == self.seen:
            return
        new = decisions[self.seen:]
        self.seen = len(decisions)
        for expression, value in new:
            missing = E.symbols_of(expression) - self.given
            if missing:
                names = ", ".join(sorted(missing))
                raise InputProblem(
                    f"the path through this line depends on the value of {names}: give it with {option('at')} "
                    f"(derive then follows that path and states its conditions)", self.source, node.start, node.end)
        line, _ = self.source.line_column(node.start)
        turn = self._turns[id(node)] = self._turns.get(id(node), 0) + 1
        for k, (expression, value) in enumerate(new):
            if outcome is not None and k == len(new) - 1:  # the condition's test: as the user wrote it
                text = self.source.snippet(node.start, node.end)
                condition = text if outcome else f"not ({text})"
            else:
                condition = f"{Printer()._wrap(expression, SUM)} == {_value_text(value)}"  # (x > 0) == [...]
            self.assumptions.append(Assumption(line, condition, (id(node), turn), expression, value))

    def derivative_read(self, evaluation) -> None:
        """The decisions the derivative formulas made (which of PyTorch's formulas applies, by a
        value): assumptions too, placed at the output's line."""
        node = evaluation.output_node or (evaluation.source and None)
        line = self.source.line_column(node.start)[0] if node is not None else 0
        for expression, value in self.tracer.decisions[self.seen:]:
            self.assumptions.append(Assumption(line, _decision_text(expression, value), ("derivative", 1), expression,
                                               value))
        self._turns.setdefault("derivative", 1)
        self.seen = len(self.tracer.decisions)

    def finished(self) -> list:
        """The assumptions, each line's turns numbered where it decided more than once; the same
        condition decided the same way twice on one turn is stated once."""
        out, seen = [], set()
        for a in self.assumptions:
            node, turn = a.turn
            a.turn = turn if self._turns[node] > 1 else None
            key = (a.line, a.turn, a.condition)
            if key not in seen:
                seen.add(key)
                out.append(a)
        return out


_NEGATION = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


def _decision_text(expression, value) -> str:
    """A decision as a condition: a comparison that held (or, negated, did not), else `e == value`."""
    single = value[0] if isinstance(value, list) and len(value) == 1 else value
    if expression.op in _NEGATION and isinstance(single, bool) and expression.shape in ((), (1,)):
        held = expression if single else E.call(_NEGATION[expression.op], expression.args, expression.shape)
        return Printer().text(held)
    return f"{Printer()._wrap(expression, SUM)} == {_value_text(value)}"


def _value_text(value) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        from ..symbolic.printing import number_text

        return number_text(float(value))
    return repr(value)


def derive(source: Source | str, at: dict | None = None, *, program: Program | None = None, wrt=None,
           output: str | None = None, order: int = 1, options: Options | None = None,
           shapes: dict | None = None) -> Derivation:
    """The derivatives of `source`'s output with respect to its inputs (`wrt`: some of them),
    as formulas and as a program. `at` gives input values: shapes, and the path through
    control flow that depends on values; `shapes` ({input: sizes}, `{"A": ("n", "n")}`) names
    the inputs' sizes, so that the formulas hold for every size. Raises ProgramError,
    UsageProblem, GradientProblem."""
    with collector_paused():  # tracing makes many small objects and no cycles, as a run does
        return _derive(source, at, program, wrt, output, order, options, shapes)


@record
class _Trace:
    """One run of the program, traced: what the formulas are made of."""

    evaluation: object
    inputs: dict  # input name -> its traced leaf
    derivatives: list  # Derived, their expressions
    value: object  # the output's expression
    assumptions: list
    labels: dict
    sizes: object  # SizeNames of this trace
    jacobian: bool = False  # a tensor output: the derivatives are Jacobians
    left_out: list = field(default_factory=list)  # what has no matrix formula here, said as warnings

    def statements(self, taken: set) -> list:
        roots = {d.name: d.expr for d in self.derivatives}
        return Statements(roots, self.labels, taken=taken - set(self.labels.values())).statements(self.sizes)

    def every_notation(self, taken: set) -> list:
        """The statements as each printer writes them (the language, NumPy, LaTeX, mathematics):
        a spelling that writes a size as a number shows in one of them."""
        from ..symbolic.printing import LatexPrinter, MathPrinter, NumpyPrinter

        roots = {d.name: d.expr for d in self.derivatives}
        program = Statements(roots, self.labels, taken=taken - set(self.labels.values()))
        out = []
        for printer in (Printer, NumpyPrinter, LatexPrinter, MathPrinter):
            try:
                out.append([text for _, _, text in program.written(printer(sizes=self.sizes))])
            except UnsupportedOperation:  # a notation without this op: the others still compare
                out.append(None)
        return out


def _derive(source, at, program, wrt, output, order, options, shapes) -> Derivation:
    if order not in (1, 2):
        raise UsageProblem(f"{option('order')} takes 1 or 2, not {order}")
    source, program = _source_and_program(source, program)
    analysis = analyze(program, source)
    given = dict(at or {})
    if wrt is not None:
        for name in wrt:
            if name not in analysis.inputs:
                from ..language.builtins import suggestion

                raise UsageProblem(f"{option('wrt')} names {name!r}, which is not an input of the program"
                                   f"{suggestion(name, list(analysis.inputs))}")
    options = Options() if options is None else options
    named = _named_shapes(analysis, shapes or {}, given)
    traced_sizes = _sizes_at(named, given)
    point, made_up = _point(analysis, given, named, traced_sizes, seed=0, max_elements=options.max_elements)
    ours = not _user_sized(named, given)  # the sizes are primes of our own: this trace writes by name
    primary = _trace(source, program, analysis, point, set(given), made_up, wrt, output, order, options,
                     SizeNames(traced_sizes if ours else {}, _likes(point)), traced_sizes if ours else None)
    evaluation = primary.evaluation
    size_names = {size for dims in named.values() for size in dims if isinstance(size, str)}
    taken = program_names(analysis) | size_names
    _name_derivatives(primary.derivatives, evaluation.output_name, taken)
    formulas_from, sizes, warnings = primary, primary.sizes, list(evaluation.warnings)
    fixed: dict = {}
    warnings += [Warning_(message) for message in primary.left_out]
    if not primary.derivatives and primary.left_out:
        raise GradientProblem(primary.left_out[0])
    if size_names:
        generic = primary if primary.sizes else None
        if generic is None:  # the user's sizes: the formulas come from a trace at sizes of our own
            generic = _generic_trace(source, program, analysis, named, TRACED, primary, wrt, output, order, options)
        # the next primes after those the first trace used: small, so that many dims stay small
        others = TRACED[len(in_order(named)):] + CHECKED
        checked = generic and _generic_trace(source, program, analysis, named, others, primary, wrt, output, order,
                                             options)
        if generic and checked and _same_program(generic, checked, taken):
            formulas_from, sizes = generic, generic.sizes
            for d, g in zip(primary.derivatives, generic.derivatives):
                d.expr = g.expr
        else:
            sizes = None
            fixed = {n: tuple(primary.inputs[n].shape) for n in named if n in primary.inputs}
            warnings.append(Warning_(f"the formulas hold only at these sizes, {_fixed_text(fixed)}: a size or a path of "
                                     "this program depends on its values (every format says so; the derived "
                                     "programs refuse other sizes)"))
    labels = formulas_from.labels
    roots = {d.name: d.expr for d in primary.derivatives}
    written = Statements(roots, labels, taken=taken - set(labels.values()))
    try:
        statements = written.statements(sizes)
    except UnsupportedOperation as exc:  # an op whose declaration gives no spelling in the language
        raise GradientProblem(f"derive cannot write {exc.args[0]}() in the expression language (it comes from a "
                              "derivative here); grad computes its value") from None
    _refuse_shadowed(statements, set(primary.inputs) | set(labels.values()) | size_names, bool(sizes))
    formulas = dict(statements[-len(roots):]) if roots else {}
    for d in primary.derivatives:
        d.formula = formulas[d.name]
    declared = {n: source.snippet(d.value.start, d.value.end) for n, d in analysis.declared.items()
                if d.kind == "input" and d.value is not None and n not in given}
    result = evaluation.output
    if not made_up and not _finite(result):
        warnings.append(Warning_("the output is not finite at this point; the formulas are the symbolic ones, "
                                 "which hold wherever they are defined"))
    return Derivation(source.name, evaluation.output_name, {n: tuple(t.shape) for n, t in primary.inputs.items()},
                      primary.derivatives, statements, primary.assumptions, order, formulas_from.value, declared,
                      warnings=warnings, labels=labels, shapes=named if sizes else {}, sizes=sizes, fixed=fixed,
                      jacobian=primary.jacobian)


def _refuse_shadowed(statements: list, names: set, sized: bool) -> None:
    """A name of the program that is also a function the derived program calls (an input called
    `size`, a variable called `outer`) would shadow it there: refused, naming both."""
    calls = {m.group(1) for _, text in statements for m in re.finditer(r"\b([A-Za-z_]\w*)\(", text)}
    if sized:
        calls.add("size")  # n = size(x, 0)
    calls |= set(CONSTANTS)  # pi is written pi (np.pi in NumPy): an input called pi is not it
    for name in sorted(names & calls):
        what = "a constant of the language" if name in CONSTANTS else \
            f"a function of the language that the derived program calls ({name}(...))"
        raise UsageProblem(f"{name!r} is a name of the program and also {what}; rename it in the program")


def _fixed_text(fixed: dict) -> str:
    """`x [3], A [3, 3]`: the sizes a derivation holds at only."""
    return ", ".join(f"{n} {list(shape)}" for n, shape in fixed.items())


def _trace(source, program, analysis, point, given, made_up, wrt, output, order, options, sizes,
           named_at=None) -> _Trace:
    """Run the program traced at `point` and derive: the expressions, before they are named.
    `named_at` ({size name: size}): the sizes derive chose for the user's names, said in errors."""
    if made_up:  # values only for shapes: what they compute is nobody's point, nothing to warn of
        options = replace(options, check_finite=False)
    with Tracer(detach_no_grad=True, sizes=sizes) as tracer:
        watcher = _Watcher(tracer, source, set(given) | {n for n in analysis.declared if n not in point})
        options.trace = watcher
        try:
            evaluation = evaluate(program, source, at=point, output=output, options=options, analysis=analysis)
        except EvaluationProblem as problem:
            if made_up and not sizes and not given and getattr(problem, "python_class", None) != "NameError":
                raise _needs_shapes(problem, analysis) from None
            if named_at:  # the sizes in the message are ours: say which name each one is
                traced = ", ".join(f"{name} = {size}" for name, size in sorted(named_at.items()))
                problem.message += f" (derive traced the named sizes at {traced})"
            raise
        finally:
            options.trace = None
        result = evaluation.output
        refuse_non_tensor(result, evaluation.output_name)
        jacobian = isinstance(result, Tensor) and (result.ndim > 0 or result.numel() != 1)
        if jacobian and order == 2:
            raise UsageProblem(f"{option('order')} 2 derives the second derivatives of a number; the output "
                               f"{evaluation.output_name!r} has shape {list(result.shape)} (without --order 2, derive "
                               "gives its Jacobian)")
        inputs = {name: leaf for name, leaf in evaluation.inputs.items()}
        chosen = [n for n in inputs if wrt is None or n in wrt]
        value = _expr_of(result)
        tracer.recording = order == 2
        left_out = None if wrt is not None else []  # what the user asked for is derived, or an error says why
        if jacobian:
            derivatives = _jacobians(result, inputs, chosen, left_out)
        else:
            derivatives, first = _first_order(result, inputs, chosen, evaluation.output_name)
            if order == 2:
                derivatives += _second_order(first, inputs, chosen, left_out)
        watcher.derivative_read(evaluation)  # a formula's choice by value (det's, at a singular matrix)
    if any(leaf.ndim for leaf in inputs.values()):  # matrices and vectors: in textbook form
        *simplified, value = simplify([d.expr for d in derivatives] + [value])
        for d, e in zip(derivatives, simplified):
            d.expr = e
    return _Trace(evaluation, inputs, derivatives, value, watcher.finished(), _labels(evaluation, result), sizes,
                  jacobian, left_out or [])


def _generic_trace(source, program, analysis, named, primes, primary, wrt, output, order, options):
    """The program traced again with every named size a prime of `primes` and made-up values,
    for formulas by name; None where its path differs from the primary trace's (the path
    depends on values, or on sizes)."""
    sizes = assign(in_order(named), {}, primes)
    point, _ = _point(analysis, {}, named, sizes, seed=1, every=True, max_elements=options.max_elements)
    try:
        trace = _trace(source, program, analysis, point, set(analysis.inputs), True, wrt, output, order,
                       replace(options, check_finite=False), SizeNames(sizes, _likes(point)))
    except (ProgramError, GradientProblem, UsageProblem):
        return None
    if [(a.line, a.turn, a.condition) for a in trace.assumptions] != \
            [(a.line, a.turn, a.condition) for a in primary.assumptions]:
        return None
    taken = program_names(analysis) | set(sizes)
    _name_derivatives(trace.derivatives, trace.evaluation.output_name, taken)
    return trace


def _same_program(a: _Trace, b: _Trace, taken: set) -> bool:
    """Whether two traces at different sizes write the same program by name: then no size was
    misread (a literal that happened to be a traced size)."""
    return a.every_notation(taken) == b.every_notation(taken)


def _likes(point: dict) -> dict:
    """{shape: the first input of that shape}, for `ones_like(x)`."""
    likes: dict = {}
    for name, value in point.items():
        shape = tuple(value.shape) if isinstance(value, Tensor) else np.shape(value)
        if shape:
            likes.setdefault(shape, name)
    return likes


def program_names(analysis) -> set:
    """Every name a derived program must not make again: the program's own (inputs, variables,
    constants, functions, declared sizes), the language's functions and constants, and Python's
    keywords and builtins (the python module is Python)."""
    import builtins
    import keyword

    return (set(analysis.inputs) | set(analysis.assigned) | set(analysis.declared) | set(analysis.functions)
            | set(analysis.sizes) | set(KNOWN_NAMES) | set(keyword.kwlist) | set(keyword.softkwlist)
            | set(dir(builtins)))


def _refuse_clash(size, holder: str, analysis) -> None:
    """A size name of --shape that is also a name of the program or the language: exit 2."""
    import keyword

    if not isinstance(size, str):
        return
    if not size.isidentifier() or keyword.iskeyword(size):
        raise UsageProblem(f"{option('shape')} {holder}=...: a size is a name or a whole number, not {size!r}")
    if size in analysis.inputs or (size in analysis.declared and analysis.declared[size].kind == "input"):
        other = "an input of the program"
    elif size in analysis.declared:
        other = "a constant of the program"
    elif size in analysis.assigned:
        other = "a variable of the program"
    elif size in CONSTANTS:
        other = "the language's constant"
    elif size in FUNCTIONS or size in WORDS or size in analysis.functions:
        other = "a function"
    else:
        return
    raise UsageProblem(f"{option('shape')} names a size {size!r} of {holder!r}, and {size!r} is also {other}: "
                       f"give the size another name ({option('shape')} {holder}={size}_)")


def _named_shapes(analysis, shapes: dict, given: dict) -> dict:
    """{input: its sizes (names and numbers)} from the file's declarations and `shapes`; with
    values only (`--at` and no names), each size is named, one name for each size value, a name
    the program does not use."""
    named = dict(analysis.shapes)
    for name, dims in shapes.items():
        if name not in analysis.inputs:
            raise UsageProblem(f"{option('shape')} names {name!r}, which is not an input of the program")
        dims = tuple(dims)
        for size in dims:
            _refuse_clash(size, name, analysis)
        if name in named and named[name] != dims:
            raise UsageProblem(f"{option('shape')} gives {name!r} the sizes {list(dims)}; the program declares "
                               f"{list(named[name])}")
        named[name] = dims
    if named or not given:
        return named
    taken = program_names(analysis)
    letters = iter([n for n in ("n", "m", "k", "p", "q", "r", "s", "u", "v", "w") if n not in taken]
                   + [f"n{k}" for k in range(1, 10000) if f"n{k}" not in taken])
    by_value: dict = {}
    for name in analysis.inputs:  # sizes from the values alone: equal sizes share a name
        if name in given:
            shape = np.shape(given[name] if not isinstance(given[name], Tensor) else given[name].shape)
            if isinstance(given[name], Tensor):
                shape = tuple(given[name].shape)
            if shape:
                named[name] = tuple(by_value[size] if size in by_value else by_value.setdefault(size, next(letters))
                                    for size in shape)
    return named


def _user_sized(named: dict, given: dict) -> bool:
    """Whether a named size takes its value from the user's values (else a prime of ours)."""
    return any(name in given for name in named)


def _sizes_at(named: dict, given: dict) -> dict:
    """{size name: its size}: from the values given (one size per name), else primes of our own."""
    taken: dict = {}
    for name, dims in named.items():
        if name not in given:
            continue
        shape = tuple(given[name].shape) if isinstance(given[name], Tensor) else np.shape(given[name])
        if len(shape) != len(dims):
            raise UsageProblem(f"{given_text(name, given[name])} has {len(shape)} dims; {name!r} has the sizes "
                               f"{list(dims)}")
        for size, value in zip(dims, shape):
            if isinstance(size, str):
                if taken.setdefault(size, value) != value:
                    raise UsageProblem(f"the size {size} is {taken[size]} and {value}: one name, one size "
                                       f"({option('shape')} and {option('at')})")
            elif size != value:
                raise UsageProblem(f"{name!r} has {value} where its shape says {size}")
    return assign(in_order(named), taken, TRACED)


def given_text(name: str, value) -> str:
    return f"the value of {name!r}"


def _point(analysis, given: dict, named: dict, sizes: dict, seed: int, every: bool = False,
           max_elements: int | None = None) -> tuple:
    """(values of every input, whether some were made up): the given ones, and for the others
    values of their shape (random, in [0.5, 1.5]) or the number DEFAULT_VALUE. `every`: made up
    for every input, at `sizes`. What is made up stays within `max_elements` in all, checked
    before anything is allocated."""
    rng = None  # made when a value is drawn: importing numpy.random costs start-up time most runs never need
    point = {} if every else dict(given)
    made_up = False
    limit = Options().max_elements if max_elements is None else max_elements
    total = sum(math.prod(sizes[s] if isinstance(s, str) else s for s in named[name]) for name in analysis.inputs
                if name in named and name not in point)
    if total > limit:
        shown = ", ".join(f"{n} = {v}" for n, v in sizes.items())
        raise LimitProblem(f"derive traces the named sizes at {shown}: the inputs would have {total:,} elements; the "
                           f"limit is {limit:,} ({option('max_elements')}); give fewer dimensions, or values with "
                           f"{option('at')}")
    for name in analysis.inputs:
        declared = analysis.declared.get(name)
        if name in point or (not every and declared is not None and declared.value is not None):
            continue
        if name in named:
            shape = tuple(sizes[s] if isinstance(s, str) else s for s in named[name])
            rng = np.random.default_rng(seed) if rng is None else rng
            point[name] = rng.uniform(0.5, 1.5, size=shape)
        elif every and name in given:
            point[name] = given[name]
        elif every and declared is not None and declared.value is not None:
            continue
        else:
            point[name] = DEFAULT_VALUE
        made_up = True
    return point, made_up


def _needs_shapes(problem, analysis) -> UsageProblem:
    """A program that fails with every input a number: it needs their shapes."""
    example = analysis.inputs[0] if analysis.inputs else "x"
    return UsageProblem(f"{problem.message}: with no values, every input is a number; give the inputs' shapes by "
                        f"name, {option('shape')} {example}=n (or {option('shape')} A=n,n), or values with "
                        f"{option('at')}")


def _finite(value) -> bool:
    data = value.detach().numpy(force=True) if isinstance(value, Tensor) else np.asarray(value)
    return bool(np.isfinite(data).all())


def _check_output(result, name: str) -> None:
    refuse_non_tensor(result, name)
    if isinstance(result, Tensor) and (result.numel() != 1 or result.ndim):
        raise GradientProblem("grad can be implicitly created only for scalar outputs",
                              f"derive writes the derivatives of a single number: derive sum({name}), or pick "
                              "one element")


def _expr_of(value) -> E.Expr:
    if isinstance(value, Traced):
        return value.expr
    if isinstance(value, Tensor):
        return E.constant(value.detach().numpy(force=True))
    return E.const(float(value))


def _first_order(result, inputs: dict, chosen: list, output: str) -> tuple:
    grads = _grads(result, [inputs[n] for n in chosen])
    derivatives, first = [], {}
    for name, g in zip(chosen, grads):
        expression = _gradient_expr(g, inputs[name])
        first[name] = g
        derivatives.append(Derived((name,), "", "", expression, tuple(inputs[name].shape)))
    return derivatives, first


def _second_order(first: dict, inputs: dict, chosen: list, left_out: list | None) -> list:
    """Each Hessian block ∂²out/∂a∂b (shape a's then b's), a ≤ b: for numbers the derivative of
    ∂out/∂a; for tensors the matrix M with M · v the vector–Jacobian product of ∂out/∂b by a,
    seeded with v (mixed partials commute: that is the block itself). A block with no matrix
    formula is an error, or where `left_out` is a list, said there and left out."""
    out = []
    for i, a in enumerate(chosen):
        for b in chosen[i:]:
            if not inputs[a].ndim and not inputs[b].ndim:
                (g,) = _grads(first[a], [inputs[b]])
                out.append(Derived((a, b), "", "", _gradient_expr(g, inputs[b]), ()))
                continue
            shape = tuple(inputs[a].shape) + tuple(inputs[b].shape)
            block = _block(first[b], inputs[a], inputs[b])
            if block is None:
                _leave_out(f"the Hessian block ∂²/∂{a}∂{b}", "grad --order 2", left_out)
                continue
            out.append(Derived((a, b), "", "", block, shape))
    return out


def _leave_out(what: str, command: str, left_out: list | None) -> None:
    """A derivative with no matrix formula: an error where it was asked for (left_out None), else
    said in `left_out` (a warning)."""
    message = f"derive writes {what} only where it is a matrix formula (this one is not yet); {command} computes its numbers"
    if left_out is None:
        raise GradientProblem(message)
    left_out.append(message)


def _block(gradient, leaf, by) -> E.Expr | None:
    """∂(∂out/∂b)/∂a as a matrix formula, from the vector–Jacobian product seeded symbolically;
    None where it is not one."""
    if gradient is None or not isinstance(gradient, Tensor) or not gradient.requires_grad:
        return E.const(0.0, tuple(leaf.shape) + tuple(by.shape))
    v = _symbolic_seed(gradient)
    (w,) = _grads(gradient, [leaf], seed=v)
    (expression,) = simplify([_gradient_expr(w, leaf)])
    return linear_map(expression, v.expr)


def _jacobians(result, inputs: dict, chosen: list, left_out: list | None) -> list:
    """∂y/∂x for a tensor output y (shape y's then x's): the vector–Jacobian product seeded with
    the symbol g is Jᵀ · g; J as a matrix formula, transposed."""
    g = _symbolic_seed(result)
    grads = _grads(result, [inputs[n] for n in chosen], seed=g)
    out = []
    for name, grad in zip(chosen, grads):
        leaf = inputs[name]
        shape = tuple(result.shape) + tuple(leaf.shape)
        if grad is None:
            out.append(Derived((name,), "", "", E.const(0.0, shape), shape))
            continue
        (product,) = simplify([_gradient_expr(grad, leaf)])
        transposed = linear_map(product, g.expr)
        jacobian = None if transposed is None else jacobian_of(transposed, shape)
        if jacobian is None:
            _leave_out(f"the Jacobian by {name}", "grad --mode forward", left_out)
            continue
        out.append(Derived((name,), "", "", jacobian, shape))
    return out


def _symbolic_seed(t: Tensor) -> Traced:
    """Ones of t's shape that stand for the seed symbol: backward then writes its product with them."""
    plain = t.plain if isinstance(t, Traced) else t
    return Traced(_ones(plain), seed(tuple(plain.shape)))


def _grads(result, leaves: list, seed=None) -> list:
    if not isinstance(result, Tensor) or not result.requires_grad or not leaves:
        return [None] * len(leaves)
    plain = result.plain if isinstance(result, Traced) else result
    needing = [leaf.plain if isinstance(leaf, Traced) else leaf for leaf in leaves]
    try:
        if seed is None:  # ones, traced: a formula's numbers made of sizes (var's 2 / (n - 1)) stay symbols
            seed = Traced(_ones(plain), E.const(1.0, tuple(plain.shape)))
        return list(autograd.grad([plain], needing, grad_outputs=[seed],
                                  create_graph=True, allow_unused=True, retain_graph=True))
    except RuntimeError as exc:
        raise GradientProblem(str(exc)) from None


def _ones(t: Tensor) -> Tensor:
    """The seed of backward: ones of the output's shape, whatever its value (never nan * 0 + 1)."""
    from .. import backend
    from ..tensor import _make

    data = t._data
    return _make(backend.array_module(data).ones(data.shape, dtype=data.dtype))


def _gradient_expr(g, leaf) -> E.Expr:
    shape = tuple(leaf.shape)
    if g is None:
        return E.const(0.0, shape)
    return E.with_shape(_expr_of(g), shape)


def _name_derivatives(derivatives: list, output: str, taken: set) -> None:
    used = set(taken)
    for d in derivatives:
        if len(d.wrt) == 1:
            base = f"d{output}_d{d.wrt[0]}"
        else:
            base = f"d2{output}_d{d.wrt[0]}_d{d.wrt[1]}"
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        d.name = name


def _labels(evaluation, result) -> dict:
    """The user's names for values: a shared subexpression is written as the variable it is."""
    labels: dict = {}
    for name, value in evaluation.variables.items():
        if isinstance(value, Traced) and value.expr.op not in ("sym", "const", "tensor"):
            labels.setdefault(value.expr, name)
    for name, value in list(evaluation.constants.items()) + list(evaluation.variables.items()):
        if isinstance(value, Tensor) and not isinstance(value, Traced) and value.numel() > 4:
            labels.setdefault(E.constant(value.detach().numpy(force=True)), name)
    if isinstance(result, Traced) and evaluation.output_name:
        labels.setdefault(result.expr, evaluation.output_name)
    return labels


# -- the derivation written for people and for other programs --------------------------------------------------


def _symbolic_name(output: str, wrt: tuple) -> str:
    if len(wrt) == 1:
        return f"∂{output}/∂{wrt[0]}"
    a, b = wrt
    return f"∂²{output}/∂{a}²" if a == b else f"∂²{output}/∂{a}∂{b}"


def only_at(d: Derivation) -> str | None:
    """`holds only at the sizes x [3]`, where named sizes could not be kept."""
    return f"holds only at the sizes {_fixed_text(d.fixed)}" if d.fixed else None


def readable_lines(d: Derivation) -> list:
    """[(left, right)]: the shared statements, then `∂e/∂a = formula` for each derivative, in the
    notation of a page of mathematics (Aᵀ, X⁻¹)."""
    from ..symbolic.printing import MathPrinter

    derivatives = {x.name: x for x in d.derivatives}
    program = Statements({x.name: x.expr for x in d.derivatives}, d.labels, taken=set(d.inputs))
    lines, last = [], []
    for name, _, text in program.written(MathPrinter(sizes=d.sizes)):
        x = derivatives.get(name)
        if x is None:
            lines.append((name, text))
        else:
            last.append((_symbolic_name(d.output, x.wrt), text))
    return lines + last


def latex(d: Derivation) -> str:
    """An `align*` block: shared values first, then each derivative as a fraction."""
    from ..symbolic.printing import LatexPrinter, latex_name

    derivatives = {x.name: x for x in d.derivatives}
    program = Statements({x.name: x.expr for x in d.derivatives}, d.labels, taken=set(d.inputs))
    out = latex_name(d.output)
    rows = []
    for name, _, text in program.written(LatexPrinter(sizes=d.sizes)):
        x = derivatives.get(name)
        if x is None:  # a shared value
            left = latex_name(name)
        elif len(x.wrt) == 1:
            left = rf"\frac{{\partial {out}}}{{\partial {latex_name(x.wrt[0])}}}"
        elif x.wrt[0] == x.wrt[1]:
            left = rf"\frac{{\partial^2 {out}}}{{\partial {latex_name(x.wrt[0])}^2}}"
        else:
            left = rf"\frac{{\partial^2 {out}}}{{\partial {latex_name(x.wrt[0])} \partial {latex_name(x.wrt[1])}}}"
        rows.append(f"{left} &= {text}")
    rows += [rf"&\text{{assuming }} \texttt{{{_latex_escaped(a.condition)}}} \text{{ ({a.where})}}"
             for a in d.assumptions]
    if d.fixed:
        rows.append(rf"&\text{{{_latex_escaped(only_at(d))}}}")
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}\n"


def _latex_escaped(text: str) -> str:
    """Program text inside LaTeX's \\texttt: its special characters as text."""
    from .._text import latex_text

    return latex_text(text)


def python_module(d: Derivation) -> str:
    """A module that imports only NumPy: value_and_grad(<inputs>) and, with --order 2,
    hessian(<inputs>). Each checks first that it is called at a point the derivation holds for:
    every input's shape as derived (named sizes the same wherever they are used) and every
    assumption true, else ValueError.

    The module is hygienic: a name of the program that the module's own code needs (np, a
    builtin, a helper's) is called otherwise inside it (`renamed`); where an input is, the
    public function only passes its arguments on to the one that computes. User text (the file
    name, the assumptions) is a literal: escaped in the docstring, repr'd in messages."""
    from ..symbolic.printing import NumpyPrinter

    first = [x for x in d.derivatives if len(x.wrt) == 1]
    second = [x for x in d.derivatives if len(x.wrt) == 2]
    checks = {f"_assumed{k}": a.test for k, a in enumerate(d.assumptions, 1) if a.test is not None}
    import keyword

    for name in d.inputs:
        if keyword.iskeyword(name):
            raise UsageProblem(f"--format python: the input {name!r} is a keyword of Python, so no Python function "
                               f"can take it by name; rename it (--format expr can write this program)")
    renamed = _module_names(d)
    inner = {n: renamed.get(n, n) for n in d.inputs}
    printer = NumpyPrinter(sizes=d.sizes, renamed=renamed)
    constants: list = []
    try:
        point = _function_body(Statements(checks, d.labels, taken=set(d.inputs)), printer, constants)
        grads = _function_body(Statements({_value_name(d): d.value, **{x.name: x.expr for x in first}},
                                          d.labels, taken=set(d.inputs)), printer, constants)
        hessian = _function_body(Statements({x.name: x.expr for x in second}, d.labels, taken=set(d.inputs)),
                                 printer, constants) if second else None
    except UnsupportedOperation as exc:
        raise UsageProblem(f"--format python cannot write {exc.args[0]}() in NumPy yet; --format expr can") from None
    parameters = ", ".join(d.inputs)
    arguments = ", ".join(inner.values())
    main = "value_and_jacobian" if d.jacobian else "value_and_grad"
    value_shape = printer._static(tuple(d.value.shape)) if d.value is not None else "()"
    shapes = ", ".join(f"{n}: {_shape_text(d, n)}" for n in d.inputs) or "none"
    helpers = "".join("\n\n" + h for h in printer.helpers)
    assumed = "".join(f"  {a.condition}  ({a.where})\n" for a in d.assumptions)
    begin = ("".join(f"    {n} = np.asarray({n}, dtype=np.float64)\n" for n in inner.values())
             + f"    {_POINT}({arguments})\n" + _size_bindings(d, renamed))
    forward = bool(renamed.keys() & set(d.inputs))  # an input's name is the module's: pass the arguments on
    user_names = _user_names(d)

    def public(name: str, doc: str, body: str) -> str:
        if not forward:
            return f"\n\ndef {name}({parameters}):\n    {doc}\n" + body
        computes = _fresh(f"_{name}", user_names)
        return (f"\n\ndef {name}({parameters}):\n    {doc}\n    return {computes}({parameters})\n"
                f"\n\ndef {computes}({arguments}):\n" + body)

    docstring = (f"The value and gradients of {d.source}, derived by autodiff (symbolic, simplified).\n\n"
                 f"Inputs and the shapes they were derived for: {shapes}"
                 + (" (every size: the names are sizes)" if d.sizes else "") + ".\n"
                 + (f"Derived assuming (checked at each call):\n{assumed}" if assumed else "")
                 + f"Needs only NumPy: value, {'jacobians' if d.jacobian else 'grads'} = {main}({parameters})"
                 + (f"; hessian({parameters})" if second else "") + "\n")
    doc = (f'"""({_docstring_text(d.output)}, {{input name: the Jacobian d{_docstring_text(d.output)}/d input, '
           f"{_docstring_text(d.output)}'s shape then the input's}})\"\"\"" if d.jacobian else
           f'"""({_docstring_text(d.output)}, {{input name: d{_docstring_text(d.output)}/d input}})"""')
    out = [
        '"""' + _docstring_text(docstring, keep_lines=True) + '"""\n\n',
        "import numpy as np\n",
        helpers,
        "\n\n" + _AS,
        "".join(constants) + ("\n\n" if constants else ""),
        _point_check(d, point, checks, renamed),
        public(main, doc, begin + grads
               + "    return _as({}, {}), {{{}}}\n".format(
                   printer._name(_value_name(d)), value_shape,
                   ", ".join(f"{x.wrt[0]!r}: _as({x.name}, {printer._static(tuple(x.expr.shape))})" for x in first))),
    ]
    if second:
        blocks: dict = {}
        for x in second:
            a, b = x.wrt
            blocks.setdefault(a, {})[b] = f"_as({x.name}, {printer._static(tuple(x.expr.shape))})"
            if b != a:  # ∂²/∂b∂a is ∂²/∂a∂b with a's and b's dimensions swapped
                na, nb = len(d.inputs[a]), len(d.inputs[b])
                axes = tuple(range(na, na + nb)) + tuple(range(na))
                block = blocks[a][b] if not axes else f"np.transpose({blocks[a][b]}, {axes})"
                blocks.setdefault(b, {})[a] = block
        rows = ", ".join(f"{a!r}: {{{', '.join(f'{b!r}: {text}' for b, text in row.items())}}}"
                         for a, row in blocks.items())
        doc = f'"""{{input a: {{input b: d2{_docstring_text(d.output)}/(da db)}}}}"""'
        out.append(public("hessian", doc, begin + hessian + f"    return {{{rows}}}\n"))
    return "".join(out)


def _module_names(d: Derivation) -> dict:
    """{a name of the program: what the module calls it}, for each name the module's own code
    needs: np, Python's keywords and builtins, and the names the module gives its helpers and
    constants (they begin with `_`)."""
    import builtins
    import keyword

    names = _user_names(d)
    reserved = {"np"} | set(dir(builtins)) | set(keyword.kwlist)
    clashing = sorted(n for n in names if n in reserved or n.startswith("_"))
    out: dict = {}
    for name in clashing:
        out[name] = _fresh(name + "_", names | set(out.values()) | reserved)
    return out


def _user_names(d: Derivation) -> set:
    """The names of the program a derived module writes: inputs, variables, sizes."""
    return set(d.inputs) | set(d.labels.values()) | {s for dims in d.shapes.values() for s in dims if isinstance(s, str)}


def _fresh(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    return name


def _docstring_text(text: str, keep_lines: bool = False) -> str:
    """Text inside a triple-quoted Python string, exactly as it reads: backslashes and quotes
    escaped, characters that are not printable (and bytes that were not UTF-8) as escapes."""
    out = []
    for c in str(text):
        if c == "\\" or c == '"':
            out.append("\\" + c)
        elif c == "\n" and keep_lines:
            out.append(c)
        elif c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF:
            out.append(c)
        else:
            out.append(ascii(c)[1:-1])
    return "".join(out)


def _shape_text(d: Derivation, name: str) -> str:
    """An input's shape as derived: `[n, n]` by its sizes' names where they are named."""
    dims = d.shapes.get(name) if d.sizes else None
    return "[" + ", ".join(str(s) for s in dims) + "]" if dims is not None else str(list(d.inputs[name]))


def _size_bindings(d: Derivation, renamed: dict) -> str:
    """`    n = x.shape[0]`: each named size, from the first input that has it."""
    return "".join(f"    {renamed.get(size, size)} = {renamed.get(name, name)}.shape[{dim}]\n"
                   for size, name, dim in d.bindings) if d.sizes else ""


_POINT = "_check_point"
_AS = (
    "def _as(value, shape):\n"
    "    value = np.asarray(value, dtype=np.float64)\n"
    "    return value if value.shape == shape else np.broadcast_to(value, shape).copy()\n\n\n")


def _function_body(program: Statements, printer, constants: list) -> str:
    """The statements of `program` as a function's body; array constants are made once, at import,
    into `constants`."""
    arrays = [e for e in E.postorder(list(program.roots.values())) if e.op == "tensor" and e not in program.names
              and e not in printer.names]
    for e in arrays:
        name = f"_C{sum(1 for n in printer.names.values() if n.startswith('_C')) + 1}"
        constants.append(f"{name} = {printer.text(e)}\n")
        printer.names[e] = name
    body = []
    for name, e, text in program.written(printer):
        if e.op == "tensor" and name not in program.roots:  # a named constant (X), made once too
            constants.append(f"{printer._name(name)} = {text}\n")
            printer.names[e] = name
        else:
            body.append(f"    {printer._name(name)} = {text}\n")
    for e, name in list(printer.names.items()):  # a function's own names are not the next one's
        if not name.startswith("_C") and e.op != "tensor":
            del printer.names[e]
    return "".join(body)


def _point_check(d: Derivation, body: str, checks: dict, renamed: dict) -> str:
    """`_check_point(<inputs>)`: ValueError unless each input (an array by then) has the shape it
    was derived for (each named size one size wherever it is used) and each assumption holds.
    Its parameters are the module's names of the inputs; its messages say the user's."""
    lines = [f"def {_POINT}({', '.join(renamed.get(n, n) for n in d.inputs)}):\n",
             '    """ValueError where this module does not hold: another shape, another path."""\n']
    bound = set()
    for name, shape in d.inputs.items():
        code = renamed.get(name, name)
        dims = d.shapes.get(name) if d.sizes else None
        if dims is None:
            lines.append(f"    if {code}.shape != {tuple(shape)!r}:\n"
                         f"        raise ValueError(f\"{name} has shape {{list({code}.shape)}}; derived for shape "
                         f"{list(shape)}\")\n")
            continue
        lines.append(f"    if {code}.ndim != {len(dims)}:\n"
                     f"        raise ValueError(f\"{name} has shape {{list({code}.shape)}}; derived for shape "
                     f"{_shape_text(d, name)}\")\n")
        for dim, size in enumerate(dims):
            if isinstance(size, str) and size not in bound:
                bound.add(size)
                lines.append(f"    {renamed.get(size, size)} = {code}.shape[{dim}]\n")
        expected = "(" + ", ".join(renamed.get(s, s) if isinstance(s, str) else str(s) for s in dims) \
            + ("," if len(dims) == 1 else "") + ")"
        values = ", ".join(f"{s} = {{{renamed.get(s, s)}}}" for s in dict.fromkeys(s for s in dims if isinstance(s, str)))
        lines.append(f"    if {code}.shape != {expected}:\n"
                     f"        raise ValueError(f\"{name} has shape {{list({code}.shape)}}; derived for shape "
                     f"{_shape_text(d, name)}" + (f" with {values}" if values else "") + "\")\n")
    if checks:  # the inputs are arrays already: each function converts them before calling this
        lines.append(body)
        for (name, _), a in zip(checks.items(), [a for a in d.assumptions if a.test is not None]):
            held = f"np.array_equal({name}, {a.value!r})" if isinstance(a.value, (bool, list)) and _is_bool(a.value) \
                else f"np.allclose({name}, {a.value!r}, rtol=1e-9, atol=0)"
            message = f"derived assuming {a.condition} ({a.where}); at this point {a.condition} is False"
            lines.append(f"    if not {held}:\n        raise ValueError({message!r})\n")
    lines.append("    return None\n")
    return "".join(lines)


def _is_bool(value) -> bool:
    if isinstance(value, list):
        return all(_is_bool(v) for v in value)
    return isinstance(value, bool)


def _value_name(d: Derivation) -> str:
    """The module's name for the output's value: the output's own, unless another name of the
    derivation has it (an input called as the output), then one of no name there."""
    taken = _user_names(d) | {x.name for x in d.derivatives}
    return d.output if d.output not in taken - {d.labels.get(d.value)} else _fresh("value", taken)


def for_json(d: Derivation) -> dict:
    out = {
        "output": d.output,
        "inputs": {x.wrt[0]: {"name": x.name, "formula": x.formula, "shape": _json_shape(d, x)}
                   for x in d.derivatives if len(x.wrt) == 1},
        "program": d.program,
        "assumptions": [{"line": a.line, "condition": a.condition, **({"turn": a.turn} if a.turn else {})}
                        for a in d.assumptions],
    }
    if d.jacobian:
        out["jacobian"] = True
    if d.order == 2:
        out["second"] = [{"wrt": list(x.wrt), "name": x.name, "formula": x.formula, "shape": _json_shape(d, x)}
                         for x in d.derivatives if len(x.wrt) == 2]
    if d.fixed:
        out["only_at"] = {n: list(shape) for n, shape in d.fixed.items()}
    if d.check is not None:
        out["check"] = d.check.for_json()
    return out


def _json_shape(d: Derivation, x: Derived) -> list:
    """A derivative's shape, its sizes by name where they are named (`["n"]`, `["m", 3]`)."""
    if not d.sizes:
        return list(x.shape)
    by_input = [list(d.shapes.get(w, d.inputs[w])) for w in x.wrt]
    if d.jacobian:
        out = [d.sizes.integer_text(v) or v for v in (d.value.shape if d.value is not None else ())]
        return out + by_input[0]
    return [size for dims in by_input for size in dims]


def expr_program(d: Derivation) -> str:
    """A program `autodiff eval` runs: inputs with defaults declared, then the statements; where
    it holds only at some sizes, the inputs are declared with them, so other sizes are refused."""
    head = "".join(f"{n}: input{list(d.fixed[n]) if n in d.fixed else ''} = {text}\n" for n, text in d.declared.items())
    head += "".join(f"{n}: input{list(shape)}\n" for n, shape in d.fixed.items() if n not in d.declared and shape)
    # an input called as a library (np, math) or a function of the language is: declared, so that
    # `np.T` and `exp * 2` read the input
    head += "".join(f"{n}: input\n" for n in d.inputs if (n in MODULES or n in KNOWN_NAMES) and n not in d.declared
                    and n not in d.fixed)
    notes = "".join(f"# assumes ({a.where}): {_comment_text(a.condition)}\n" for a in d.assumptions)
    if d.fixed:
        notes += f"# {only_at(d)}\n"
    return notes + head + d.program


def _comment_text(text: str) -> str:
    """User text on one comment line: a line break or other control character as an escape."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def markdown(d: Derivation) -> str:
    rows = [f"| `{left}` | `{right}` |" for left, right in readable_lines(d)]
    text = f"Derivatives of `{d.output}` ({d.source})\n\n| | formula |\n|---|---|\n" + "\n".join(rows) + "\n"
    if d.assumptions:
        text += "\nAssumptions (the path `--at` chose):\n\n" + "".join(
            f"- {a.where}: `{_comment_text(a.condition)}`\n" for a in d.assumptions)
    if d.fixed:
        text += f"\nThe formulas {only_at(d)}.\n"
    return text


# -- --check: the derived program against the engine -------------------------------------------------------------

CHECK_RTOL, CHECK_ATOL = 1e-7, 1e-9
RANDOM_POINTS = 3


@record
class DeriveCheck:
    points: int
    mismatches: list  # (point number, derivative name, engine value, derived value)

    @property
    def passed(self) -> bool:
        return not self.mismatches

    def for_json(self) -> dict:
        from .values import for_json as plain

        return {"passed": self.passed, "points": self.points,
                "mismatches": [{"point": p, "name": n, "engine": plain(a), "derived": plain(b)}
                               for p, n, a, b in self.mismatches]}


def check(d: Derivation, source: Source | str, at: dict | None, *, output=None, options=None, seed: int = 0) -> DeriveCheck:
    """Run the derived program and the engine's backward at the --at point (or at random
    points in [0.5, 1.5] when none is given); every derivative must agree."""
    from .run import differentiate

    source, program = _source_and_program(source, None)
    points = [dict(at)] if at else []
    if not points:
        rng = np.random.default_rng(seed)
        for _ in range(RANDOM_POINTS):
            points.append({n: rng.uniform(0.5, 1.5, size=s).tolist() if s else float(rng.uniform(0.5, 1.5))
                           for n, s in d.inputs.items() if n not in d.declared})
    derived_program = parse(Source(expr_program(d), "<derived>"))
    wrt = sorted({w for x in d.derivatives for w in x.wrt})
    mismatches = []
    for number, point in enumerate(points, 1):
        run = differentiate(source, point, program=program, wrt=wrt, output=output, order=d.order,
                            options=Options() if options is None else options,
                            **({"mode": "forward"} if d.jacobian else {}))
        engine = {q.name: q.grad for q in run.inputs}
        used = {n: v for n, v in point.items() if n in d.inputs}
        values = evaluate(derived_program, Source(expr_program(d), "<derived>"), at=used).variables
        for x in d.derivatives:
            got = np.asarray(_host_value(values.get(x.name, None)), dtype=float)
            want = engine.get(x.wrt[0]) if len(x.wrt) == 1 else run.hessian.get(x.wrt) if run.hessian else None
            want = np.zeros(x.shape) if want is None else np.asarray(want, dtype=float)
            if got.shape != want.shape and got.size == want.size:
                got = got.reshape(want.shape)
            if got.shape != want.shape or not np.allclose(got, want, rtol=CHECK_RTOL, atol=CHECK_ATOL, equal_nan=True):
                mismatches.append((number, x.name, want, got))
    return DeriveCheck(len(points), mismatches)


def _host_value(value):
    if isinstance(value, Tensor):
        return value.detach().numpy(force=True)
    return value

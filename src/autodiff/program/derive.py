"""Symbolic derivatives of a program: `autodiff derive` and `autodiff.derive()`.

The program runs once, traced (symbolic/trace.py): its inputs are symbols, and the engine's
own backward with `create_graph=True` builds each derivative's expression from every op's
`defop` formula. The expressions come out simplified and shared (symbolic/expr.py) and are
written as a program (symbolic/printing.py). Values matter only where the program reads one
as a Python value (`if x > 0`, `range(n)`): the path `--at` picks is followed and its
conditions are listed as assumptions; with no value given there, derive refuses.

What it gives is derived.py's; how it is written, derived_text.py (for people: plain, LaTeX,
Markdown, JSON, the `expr` program) and derived_module.py (the NumPy module); derive_check.py
runs a derivation against the engine.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import field, replace

import numpy as np

from .._record import record
from .. import Tensor, autograd
from ..language import InputProblem, Options, Program, ProgramError, Source, evaluate
from ..language.errors import EvaluationProblem, LimitProblem
from ..language.errors import Warning_
from ..language._gc import collector_paused
from ..language.analysis import analyze
from ..language.builtins import CONSTANTS, FUNCTIONS, KNOWN_NAMES, WORDS
from ..language.option_names import option
from ..symbolic import expr as E
from ..ops import hooks
from ..ops.spelling import SUM
from ..symbolic.printing import Printer, UnsupportedOperation
from ..symbolic.statements import Statements
from ..symbolic.jacobian import jacobian_of, linear_map, seed
from ..symbolic.matrix import assuming, simplify, sized
from ..symbolic.sizes import CHECKED, TRACED, SizeNames, assign, in_order
from ..symbolic.trace import Traced, Tracer
from .errors import GradientProblem, UsageProblem
from .run import _source_and_program, refuse_non_tensor

DEFAULT_VALUE = 0.75  # an input's value where --at gives none: it only fixes a 0-d shape


from .derived import Assumption, Derivation, Derived, fixed_text as _fixed_text, only_at  # noqa: F401


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

    def assumed_off(self, evaluation, conditions: list) -> None:
        """Masks the textbook forms wrote off their one value (a std at 0, a determinant's sign at
        -1): each `a == b` is assumed False, placed at the output's line as the formulas' choices."""
        if not conditions:
            return
        node = evaluation.output_node
        line = self.source.line_column(node.start)[0] if node is not None else 0
        for condition in conditions:
            self.assumptions.append(Assumption(line, _decision_text(condition, False), ("derivative", 1), condition,
                                               False))
        self._turns.setdefault("derivative", 1)

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
        with assuming() as assumed:
            if jacobian:
                derivatives = _jacobians(result, inputs, chosen, left_out)
            else:
                derivatives, first = _first_order(result, inputs, chosen, evaluation.output_name)
                if order == 2:
                    derivatives += _second_order(first, inputs, chosen, left_out)
        watcher.derivative_read(evaluation)  # a formula's choice by value (det's, at a singular matrix)
    if any(leaf.ndim for leaf in inputs.values()):  # matrices and vectors: in textbook form
        with assuming() as more, sized(sizes.values if sizes else {}):
            *simplified, value = simplify([d.expr for d in derivatives] + [value])
        for d, e in zip(derivatives, simplified):
            d.expr = e
        assumed += [c for c in more if c not in assumed]
    watcher.assumed_off(evaluation, assumed)  # masks of one value, written off it
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
    letters = (n for n in itertools.chain(("n", "m", "k", "p", "q", "r", "s", "u", "v", "w"),
                                          (f"n{k}" for k in itertools.count(1))) if n not in taken)
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
        # The formulas run on traced tensors, their expressions the derivatives; a graph of them is
        # built only where a second derivative will differentiate them (the tracer's `recording`).
        in_force = hooks.push(tensors_in_backward=True)
        try:
            return list(autograd.grad([plain], needing, grad_outputs=[seed], create_graph=Tracer.active.recording,
                                      allow_unused=True, retain_graph=True))
        finally:
            hooks.pop(in_force)
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


# The writers and the check, where callers have always found them (`derive.latex(d)`).
from .derived_text import expr_program, for_json, latex, markdown, readable_lines, _latex_escaped  # noqa: E402,F401
from .derived_module import python_module  # noqa: E402,F401
from .derive_check import CHECK_ATOL, CHECK_RTOL, RANDOM_POINTS, DeriveCheck, check  # noqa: E402,F401

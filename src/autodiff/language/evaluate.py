"""Running a program: the syntax tree, lowered into the engine's dynamic graph.

Each expression becomes engine operations on tensors, so running the program *is* building
its graph: an `if` on a value picks which operations are recorded, a loop records its body
once per turn. Inputs become leaves that require grad; each assignment names its tensor,
and every recorded node remembers the syntax node it came from, so an engine error, a NaN
or a graph display can point at the source.

Expressions are evaluated with an explicit stack, never by recursion, so a 100,000-term sum
runs. Limits bound what a program may ask for: elements created, loop turns, call depth.

The values given are bound to the inputs by input_binding.py (a part of the runner), and an
input with no value is explained with missing_inputs.py's hints.
"""

from __future__ import annotations

import math
import operator
import warnings
import weakref
from dataclasses import field

import numpy as np

from .._record import record
from .. import Tensor, creation, dtypes, return_types
from ..ops.batching import DataDependent
from ..ops.running import ShapeError
from ..ops.surface import METHOD_FORMS
from . import ast, numbers
from ._gc import collector_paused
from .analysis import Analysis, analyze, bound_in, equality_advice, input_advice, leaf_advice
from .builtins import (CONSTANTS, FUNCTIONS, LOSSES, WORDS, CallProblem, GradModeWord, call, reduction_word,
                       signature_text, suggestion)
from .errors import EvaluationProblem, InputProblem, LimitProblem, NameProblem, Warning_
from .input_binding import InputBinding
from .origins import Origins
from .source import Source
from .option_names import given, input_values, option


@record
class Options:
    """How a program runs, and the limits it runs under."""

    dtype: str = "float64"
    device: str = "cpu"
    seed: int = 0
    max_elements: int = 50_000_000  # per tensor created by a function call or a broadcast
    max_iterations: int = 1_000_000  # loop turns and calls of the program's own functions, in one run
    max_call_depth: int = 100  # nested calls of the program's own functions
    check_finite: bool = True  # warn where nan or inf first appears
    keep_tensors: bool = False  # remember every recorded tensor (for showing a graph's values)
    points: int | None = None  # how many points the Batched inputs hold (--points): defaults are batched too
    # A watcher of the run (program/derive.py): `input(name, leaf)` may stand in for an input's
    # leaf; `located(node, outcome)` is told where values were just read as Python values: a
    # condition's test with its outcome, a loop's iterable, each statement when it is done;
    # `constant(name, value)` may stand in for pi.
    trace: object = None


@record
class Evaluation:
    """What running a program produced."""

    source: Source
    analysis: Analysis
    inputs: dict = field(default_factory=dict)  # input name -> leaf tensor
    constants: dict = field(default_factory=dict)  # declared constant name -> tensor
    variables: dict = field(default_factory=dict)  # top-level assigned name -> last value
    output_name: str | None = None
    output: object = None
    output_node: ast.Node | None = None
    origins: Origins = field(default_factory=Origins)  # grad_fn -> the syntax node that recorded it
    labels: dict = field(default_factory=dict)  # grad_fn -> the variable its tensor was assigned to
    tensors: dict = field(default_factory=dict)  # grad_fn -> its tensor (with Options.keep_tensors)
    warnings: list = field(default_factory=list)


class UserFunction:
    """A function the program defines with `def`: as in Python, its defaults are computed once,
    where the def runs, and it sees the variables of the functions it is defined in."""

    def __init__(self, node: ast.FunctionDef, defaults: dict, enclosing: _Frame | None) -> None:
        self.node = node
        self.name = node.name
        self.defaults = defaults
        self.enclosing = enclosing
        self.local_names = bound_in(node)

    def __repr__(self) -> str:
        return f"<function {self.name}>"


class _Frame(dict):
    """The variables of one call of a user function. `local_names` are all the names it binds
    (reading one before it is bound is an error, as in Python); the others are looked up in
    the frames of the enclosing functions, then among the globals."""

    __slots__ = ("local_names", "enclosing")

    def __init__(self, local_names: frozenset, enclosing: _Frame | None) -> None:
        super().__init__()
        self.local_names = local_names
        self.enclosing = enclosing


_MISSING = object()  # a name bound nowhere (None is a value a function may return)


class _Return(Exception):
    def __init__(self, value) -> None:
        self.value = value


_BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "@": operator.matmul,
    "**": operator.pow, "//": operator.floordiv, "%": operator.mod,
}
# Arithmetic of two bools counts, as Python's (True + True is 2), where PyTorch's bool tensors
# would compute `or` (True) or refuse (True - True): comparisons are bool tensors here.
_BOOLS_AS_INTEGERS = frozenset(("+", "-", "*", "**", "//", "%"))
_COMPARE = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge, "==": operator.eq,
            "!=": operator.ne}
_ATTRIBUTES = {"T": lambda t: t.T, "mT": lambda t: t.mT, "shape": lambda t: tuple(t.shape), "ndim": lambda t: t.ndim}
_NUMBER_TYPES = (int, float)
_PAIRS = return_types.PAIRS  # what x.max(dim), sort(x)... give: .values, .indices, [0], [1]


def evaluate(program: ast.Program, source: Source, at: dict | None = None, wrt=None, output: str | None = None,
             options: Options | None = None, analysis: Analysis | None = None) -> Evaluation:
    """Run `program` with input values `at` (tensors or numbers); returns what it produced.
    `analysis`: the program's analyze() when the caller has it already (it is not changed)."""
    options = options or Options()
    with collector_paused():
        if analysis is None:
            analysis = analyze(program, source)
        runner = _Runner(program, source, analysis, dict(at or {}), wrt, options)
        return runner.run(output)


class _Placeholder:
    """An absent part of a slice (`x[:2]` has no start), evaluated as None."""

    __slots__ = ()


_NONE = _Placeholder()


class _IndexList:
    """A literal list used as an index (`x[[0, 2]]`): integers, not a tensor."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node


class _Runner(InputBinding):
    def __init__(self, program, source, analysis, at, wrt, options) -> None:
        self.program = program
        self.source = source
        self.options = options
        self.at = at
        self.result = Evaluation(source, analysis)
        inputs = analysis.inputs
        # A value for a name the program does not take is unused, not fatal: a regression suite may
        # give one set of points to several programs. A misspelt name is pointed out all the same.
        self.unused_at = [name for name in at if name not in inputs and name not in analysis.declared]
        for name in self.unused_at:
            del self.at[name]
            listed = ", ".join(inputs) if inputs else "none"
            self.result.warnings.append(Warning_(
                f"{option('at')} gives {name!r}, which is not an input of the program (its inputs: {listed}): "
                f"the value is not used{suggestion(name, inputs)}"))
        body = program.body
        for statement in analysis.equalities:  # a comparison whose value nobody sees
            if not body or statement is not body[-1]:
                advice = equality_advice(statement, source, "is a comparison whose value is thrown away")
                self.result.warnings.append(Warning_(advice, source, statement.start, statement.end))
        for name, call in analysis.leaves:  # randn(3, requires_grad=True): a leaf, but no input
            self.result.warnings.append(Warning_(leaf_advice(name, call, source), source, call.start, call.end))
        if wrt is not None:
            for name in wrt:
                if name not in inputs:
                    raise InputProblem(f"{option('wrt')} names {name!r}, which is not an input of the program"
                                       f"{input_advice(program, source, name) or suggestion(name, inputs)}")
        self.wrt = None if wrt is None else set(wrt)
        self.globals: dict = {}
        self.iterations = 0
        self.depth = 0
        self.finite_warning_given = False
        self.dtype = dtypes.from_name(options.dtype)
        self.sizes: dict = {}  # a declared size's name -> the size the inputs give it
        # The values that are lists in Python's meaning (a list literal's, or lists joined), by id:
        # `+` of two joins them and `*` by an integer repeats one, as in Python.
        self.lists = weakref.WeakValueDictionary()
        self._located_at = options.trace.located if options.trace is not None else None

    # -- the run -------------------------------------------------------------------------------------

    def run(self, output_name: str | None) -> Evaluation:
        from .. import get_default_dtype, manual_seed, set_default_dtype

        previous_dtype = get_default_dtype()
        set_default_dtype(self.dtype)
        manual_seed(self.options.seed)
        try:
            with creation.element_limit(self.options.max_elements), np.errstate(all="ignore"):
                self._bind_undeclared_inputs()
                self._execute(self.program.body, self.globals)
        finally:
            set_default_dtype(previous_dtype)
        result = self.result
        if output_name is not None:
            self._select_output(output_name)
        elif result.output_name is None:
            if not self.program.body:
                raise NameProblem("the program is empty: write an expression, as `e = a * b + log(d) * c`",
                                  self.source)
            raise NameProblem("the program computes nothing: end it with an expression or an assignment",
                              self.source, self.program.body[-1].start, self.program.body[-1].end)
        return result

    def _select_output(self, name: str) -> None:
        result = self.result
        for table in (result.variables, result.inputs, result.constants):
            if name in table:
                result.output_name, result.output, result.output_node = name, table[name], None
                return
        known = list(result.variables) + list(result.inputs) + list(result.constants)
        raise InputProblem(f"{given('output', name)}: the program has no variable {name!r}{suggestion(name, known)}")

    # -- statements -----------------------------------------------------------------------------------

    def _execute(self, statements, env: dict) -> None:
        steps = self._STATEMENT_STEPS
        located = self._located_at
        for node in statements:
            steps[type(node)](self, node, env)
            if located is not None:
                located(node, None)

    # One step per kind of statement, each (self, node, env); env is self.globals at the top level.

    def _exec_assign(self, node: ast.Assign, env: dict) -> None:
        value = self._evaluate(node.value, env)
        env[node.target] = value
        if env is self.globals:
            self._assigned(node.target, value, node)

    def _exec_unpack(self, node: ast.Unpack, env: dict) -> None:
        """`a, b = value`, as Python unpacks: a tuple's elements, or a tensor's rows."""
        value = self._evaluate(node.value, env)
        where = node.value
        if isinstance(value, Tensor):
            if value.ndim == 0:
                raise EvaluationProblem("cannot unpack a 0-d tensor", self.source, where.start, where.end,
                                        python_class="TypeError")
            items = [self._recorded(value[i], node, (value,)) for i in range(len(value))]
        elif isinstance(value, tuple):
            items = list(value)
        else:
            raise EvaluationProblem(f"cannot unpack {describe(value)} (a tuple or a tensor's rows can be unpacked)",
                                    self.source, where.start, where.end, python_class="TypeError")
        expected = len(node.targets)
        if len(items) != expected:
            few = "not enough" if len(items) < expected else "too many"
            raise EvaluationProblem(f"{few} values to unpack (expected {expected}, got {len(items)})", self.source,
                                    node.start, node.end, python_class="ValueError")
        for name, item in zip(node.targets, items):
            env[name] = item
            if env is self.globals:
                self._assigned(name, item, node)

    def _exec_augassign(self, node: ast.AugAssign, env: dict) -> None:
        current = self._lookup(ast.Name(node.target, node.start, node.start + len(node.target)), env)
        value = self._binary(node.op, current, self._evaluate(node.value, env), node, node.op_start)
        env[node.target] = value
        if env is self.globals:
            self._assigned(node.target, value, node)

    def _exec_expression(self, node: ast.ExprStatement, env: dict) -> None:
        value = self._evaluate(node.value, env)
        if env is self.globals:
            self._set_output("output", value, node)

    def _exec_declare(self, node: ast.Declare, env: dict) -> None:
        name = node.name
        # The default is computed even when --at replaces it, so that random defaults of the
        # declarations after it stay the same whatever is given.
        default = self._evaluate(node.value, self.globals) if node.value is not None else None
        if name in self.at:
            value = self.at[name]
        elif node.value is not None:
            value = self._batched_default(name, default, node)
        else:
            raise InputProblem(f"no value for input {name!r}: give one with {input_values([name])}",
                               self.source, node.start, node.end)
        tensor = self._bind_input(name, value, node, requires_grad=node.kind == "input")
        self._set_output(name, tensor, node)

    def _exec_if(self, node: ast.If, env: dict) -> None:
        branch = node.body if self._truth(self._evaluate(node.test, env), node.test) else node.orelse
        self._execute(branch, env)

    def _exec_for(self, node: ast.For, env: dict) -> None:
        iterable = self._evaluate(node.iterable, env)
        if self._located_at is not None:
            self._located_at(node.iterable, None)
        if isinstance(iterable, Tensor):
            if iterable.ndim == 0:
                raise EvaluationProblem("cannot loop over a 0-d tensor", self.source, node.iterable.start,
                                        node.iterable.end, python_class="TypeError")
            items = (iterable[i] for i in range(len(iterable)))
        elif isinstance(iterable, (range, tuple)):
            items = iter(iterable)
        else:
            raise EvaluationProblem(f"a for loop needs range(...), a tuple or a tensor, not {describe(iterable)}",
                                    self.source, node.iterable.start, node.iterable.end, python_class="TypeError")
        for item in items:
            self.iterations += 1
            if self.iterations > self.options.max_iterations:
                raise LimitProblem(f"more than {self.options.max_iterations:,} loop turns ({option('max_iterations')})",
                                   self.source, node.start, node.iterable.end)
            env[node.target] = item
            self._execute(node.body, env)
            if env is self.globals:
                self.result.variables[node.target] = item

    def _exec_with(self, node: ast.With, env: dict) -> None:
        context = self._evaluate(node.context, env)
        if not isinstance(context, GradModeWord):
            raise EvaluationProblem("`with` takes no_grad or enable_grad", self.source,
                                    node.context.start, node.context.end, python_class="TypeError")
        with context.context():
            self._execute(node.body, env)

    def _exec_def(self, node: ast.FunctionDef, env: dict) -> None:
        defaults = {p.name: self._evaluate(p.default, env) for p in node.params if p.default is not None}
        env[node.name] = UserFunction(node, defaults, env if type(env) is _Frame else None)

    def _exec_return(self, node: ast.Return, env: dict) -> None:
        raise _Return(self._evaluate(node.value, env))

    def _exec_pass(self, node: ast.Pass, env: dict) -> None:
        pass

    _STATEMENT_STEPS = {
        ast.Assign: _exec_assign, ast.Unpack: _exec_unpack, ast.AugAssign: _exec_augassign,
        ast.ExprStatement: _exec_expression,
        ast.Declare: _exec_declare, ast.If: _exec_if, ast.For: _exec_for, ast.With: _exec_with,
        ast.FunctionDef: _exec_def, ast.Return: _exec_return, ast.Pass: _exec_pass,
    }

    def _assigned(self, name: str, value, node) -> None:
        self.result.variables[name] = value
        told = getattr(self.options.trace, "assigned", None)  # derive --steps names each value assigned
        if told is not None:
            told(name, value, node)
        fn = value.grad_fn if isinstance(value, Tensor) else None
        if fn is not None:
            self.result.labels[fn] = name
        self._set_output(name, value, node)

    def _set_output(self, name: str, value, node) -> None:
        result = self.result
        result.output_name, result.output, result.output_node = name, value, node

    # -- expressions ------------------------------------------------------------------------------------

    def _evaluate(self, root, env: dict):
        """The value of an expression, computed with an explicit stack (post-order)."""
        steps = self._EXPRESSION_STEPS
        values: list = []
        work: list = [(root, 0)]
        name = ast.Name
        while work:
            node, step = work.pop()
            kind = type(node)
            if kind is name and node.id in env:  # the commonest step, taken without a call
                values.append(env[node.id])
                continue
            steps[kind](self, node, step, work, values, env)
        return values[-1]

    # One step per kind of expression, each (self, node, step, work, values, env): step 0 pushes
    # the node's operands onto `work` (and the node again, with a later step); a later step
    # combines the operands' values, on top of `values`, into the node's value.

    def _eval_name(self, node: ast.Name, step: int, work: list, values: list, env: dict) -> None:
        values.append(self._lookup(node, env))

    def _eval_number(self, node: ast.Number, step: int, work: list, values: list, env: dict) -> None:
        values.append(numbers.literal(node.value))

    def _eval_constant(self, node: ast.Constant, step: int, work: list, values: list, env: dict) -> None:
        values.append(node.value)

    def _eval_binop(self, node: ast.BinOp, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work += ((node, 1), (node.right, 0), (node.left, 0))
        else:
            right = values.pop()
            values[-1] = self._binary(node.op, values[-1], right, node, node.op_start)

    def _eval_unaryop(self, node: ast.UnaryOp, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work += ((node, 1), (node.operand, 0))
        else:
            values[-1] = self._unary(node, values[-1])

    def _eval_boolop(self, node: ast.BoolOp, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work += ((node, 1), (node.left, 0))
        elif self._truth(values[-1], node.left) != (node.op == "or"):
            values.pop()  # no short circuit: the right value is the result
            work.append((node.right, 0))

    def _eval_ifexp(self, node: ast.IfExp, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work += ((node, 1), (node.test, 0))
        else:
            test = values.pop()
            work.append((node.body if self._truth(test, node.test) else node.orelse, 0))

    def _eval_subscript(self, node: ast.Subscript, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work.append((node, 1))
            for index in reversed(node.indices):
                work.append((index, 0) if not _constant_list(index) else (_IndexList(index), 0))
            work.append((node.value, 0))
        else:
            indices = values[len(values) - len(node.indices):]
            del values[len(values) - len(node.indices):]
            values[-1] = self._index(node, values[-1], indices)

    def _eval_slice(self, node: ast.Slice, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work.append((node, 1))
            for part in (node.step, node.upper, node.lower):
                work.append((part, 0) if part is not None else (_NONE, 0))
        else:
            step_value, upper, lower = values.pop(), values.pop(), values.pop()
            values.append(slice(*(self._integer(v, node) if v is not None else None
                                  for v in (lower, upper, step_value))))

    def _eval_placeholder(self, node, step: int, work: list, values: list, env: dict) -> None:
        values.append(None)

    def _eval_index_list(self, node, step: int, work: list, values: list, env: dict) -> None:
        values.append(self._index_list(node.node))

    def _eval_attribute(self, node: ast.Attribute, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work += ((node, 1), (node.value, 0))
        else:
            values[-1] = self._attribute(node, values[-1])

    def _eval_list(self, node: ast.ListLiteral, step: int, work: list, values: list, env: dict) -> None:
        constant = _constant_value(node)
        if constant is not None:
            values.append(self._as_list(self._tensor(constant, node)))
        elif step == 0:
            work.append((node, 1))
            work.extend((element, 0) for element in reversed(node.elements))
        else:
            count = len(node.elements)
            elements = values[len(values) - count:]
            del values[len(values) - count:]
            values.append(self._as_list(self._list(node, elements)))

    def _as_list(self, value: Tensor) -> Tensor:
        self.lists[id(value)] = value
        return value

    def _is_list(self, value) -> bool:
        return isinstance(value, Tensor) and self.lists.get(id(value)) is value

    def _list_arithmetic(self, op: str, left, right, node, op_start: int):
        """Python's meaning of `+` and `*` on lists: `[1, 2] + [3]` is `[1, 2, 3]` (joined along the
        first dimension) and `[1, 2] * 2` is `[1, 2, 1, 2]`; None where the operands are not such a
        pair (a list with a tensor or a float is arithmetic, element by element)."""
        if op == "+" and self._is_list(left) and self._is_list(right):
            one, times = None, 1
        elif op == "*" and self._is_list(left) and isinstance(right, int):
            one, times = left, max(right, 0)
        elif op == "*" and isinstance(left, int) and self._is_list(right):
            one, times = right, max(left, 0)
        else:
            return None
        count = left.numel() + right.numel() if one is None else one.numel() * times
        if count > self.options.max_elements:
            raise LimitProblem(f"'{op}' of lists would create {count:,} elements; the limit is "
                               f"{self.options.max_elements:,} ({option('max_elements')})",
                               self.source, op_start, op_start + len(op))
        if one is not None and not one.numel():  # [[]] * 3: rows of nothing, never a loop over them
            return self._as_list(self._tensor(np.zeros((one.shape[0] * times, *one.shape[1:])), node))
        parts = [left, right] if one is None else [one] * times
        parts = [part for part in parts if not (part.ndim == 1 and part.shape[0] == 0)]  # [] joins as nothing
        if not parts:
            return self._as_list(self._tensor([], node))
        if len(parts) == 1:
            return parts[0]
        from .. import cat

        with self._located(op_start, op_start + len(op), "lists joined by '+' hold elements of one shape: "):
            result = cat(parts, 0)
        return self._as_list(self._recorded(result, node, parts))

    def _eval_tuple(self, node: ast.TupleLiteral, step: int, work: list, values: list, env: dict) -> None:
        if step == 0:
            work.append((node, 1))
            work.extend((element, 0) for element in reversed(node.elements))
        else:
            count = len(node.elements)
            elements = tuple(values[len(values) - count:])
            del values[len(values) - count:]
            values.append(elements)

    def _resolve(self, name: str, env: dict, node):
        """A variable not in `env` itself, by Python's rules: a local not yet bound is an error;
        otherwise the enclosing functions' frames, innermost first, then the globals. _MISSING
        when the name is none of these."""
        frame = env if type(env) is _Frame else None
        if frame is not None and name in frame.local_names:
            raise EvaluationProblem(f"cannot access local variable {name!r} where it is not associated with a "
                                    "value: it is assigned later in the function", self.source, node.start, node.end,
                                    python_class="UnboundLocalError")
        while frame is not None:
            frame = frame.enclosing
            if frame is None:
                break
            if name in frame:
                return frame[name]
            if name in frame.local_names:
                raise EvaluationProblem(f"cannot access free variable {name!r} where it is not associated with a "
                                        "value in enclosing scope", self.source, node.start, node.end,
                                        python_class="NameError")
        return self.globals.get(name, _MISSING)

    def _lookup(self, node: ast.Name, env: dict):
        name = node.id
        if name in env:
            return env[name]
        value = self._resolve(name, env, node)
        if value is not _MISSING:
            return value
        if name in CONSTANTS:
            trace = self.options.trace
            if name == "pi" and trace is not None:  # derive writes pi by name, never 3.14159...
                return trace.constant(name, CONSTANTS[name])
            return CONSTANTS[name]
        if name in WORDS:
            return WORDS[name]
        analysis = self.result.analysis
        if name in analysis.sizes:
            raise EvaluationProblem(f"{name!r} is a size of {analysis.sizes[name]!r}, which is declared after this "
                                    "line", self.source, node.start, node.end, python_class="NameError")
        if name in analysis.assigned or name in analysis.declared:
            raise EvaluationProblem(f"{name!r} is used before it is assigned", self.source, node.start, node.end,
                                    python_class="NameError")
        raise NameProblem(f"unknown name {name!r}", self.source, node.start, node.end)

    # -- operators ------------------------------------------------------------------------------------

    def _binary(self, op: str, left, right, node, op_start: int):
        if _is_number(left) and _is_number(right):
            if op == "@":
                raise EvaluationProblem("'@' multiplies tensors, not numbers", self.source, op_start, op_start + 1,
                                        python_class="TypeError")
            result = numbers.binary(op, left, right)
            if not math.isfinite(result) and math.isfinite(left) and math.isfinite(right):
                self._warn_non_finite(node, result)
            return result
        for value in (left, right):
            if not isinstance(value, Tensor) and not _is_number(value):
                raise EvaluationProblem(f"'{op}' cannot be applied to {describe(value)}", self.source,
                                        op_start, op_start + len(op), python_class="TypeError")
        if (op == "+" or op == "*") and self.lists:
            joined = self._list_arithmetic(op, left, right, node, op_start)
            if joined is not None:
                return joined
        if isinstance(left, Tensor) and isinstance(right, Tensor) and left.shape != right.shape and op != "@":
            self._check_broadcast(left, right, op, op_start)
        if op in _BOOLS_AS_INTEGERS and _is_bool(left) and _is_bool(right):
            left, right = _as_integer(left), _as_integer(right)
        try:  # the context manager only on the way out of a failure: operators are the hot path
            result = _BINARY[op](left, right)
        except BaseException:
            with self._located(op_start, op_start + len(op), lambda: _operands(op, left, right), f"computing '{op}'"):
                raise
        return self._recorded(result, node, (left, right))

    def _check_broadcast(self, left: Tensor, right: Tensor, op: str, op_start: int) -> None:
        try:
            shape = np.broadcast_shapes(tuple(left.shape), tuple(right.shape))
        except ValueError:
            return  # the operation reports it, in PyTorch's words
        count = math.prod(shape)
        if count > self.options.max_elements:
            raise LimitProblem(f"'{op}' of shapes {list(left.shape)} and {list(right.shape)} would create "
                               f"{count:,} elements; the limit is {self.options.max_elements:,} ({option('max_elements')})",
                               self.source, op_start, op_start + len(op))

    def _unary(self, node: ast.UnaryOp, value):
        if node.op == "not":
            return not self._truth(value, node.operand)
        if _is_number(value):
            return -value if node.op == "-" else +value
        if not isinstance(value, Tensor):
            raise EvaluationProblem(f"'{node.op}' cannot be applied to {describe(value)}", self.source,
                                    node.start, node.end, python_class="TypeError")
        try:
            result = -value if node.op == "-" else value
        except BaseException:
            with self._located(node.start, node.start + 1, f"'{node.op}': ", f"computing '{node.op}'"):
                raise
        return self._recorded(result, node, (value,))

    def _eval_compare(self, node: ast.Compare, step: int, work: list, values: list, env: dict) -> None:
        """`a < b <= c` is `(a < b) and (b <= c)`, each comparator evaluated once, as Python."""
        if step == 0:
            work += ((node, 1), (node.left, 0))
            return
        index = step - 1  # the comparator to evaluate next
        if index > 0:  # combine the previous pair
            right = values.pop()
            left = values.pop()
            outcome = self._comparison(node, index - 1, left, right)
            if index == len(node.comparators) or not self._truth(outcome, node):
                values.append(outcome)
                return
            values.append(right)
        work += ((node, step + 1), (node.comparators[index], 0))

    def _comparison(self, node: ast.Compare, index: int, left, right):
        op = node.ops[index]
        if _is_number(left) and _is_number(right):
            return numbers.compare(op, left, right)
        start = node.op_starts[index]
        try:
            return _COMPARE[op](left, right)
        except BaseException:
            with self._located(start, start + len(op), lambda: _operands(op, left, right), f"computing '{op}'"):
                raise

    def _truth(self, value, node) -> bool:
        if isinstance(value, Tensor):
            if value.numel() != 1:
                raise EvaluationProblem(
                    f"a condition must be a single value, but this one has {value.numel()} "
                    "(use all(...) or any(...))", self.source, node.start, node.end, python_class="RuntimeError")
            try:
                outcome = bool(value.item())
                if self._located_at is not None:
                    self._located_at(node, outcome)
                return outcome
            except DataDependent as split:  # points that disagree here: the caller groups them
                split.node = node
                raise
        if value is None or isinstance(value, (bool, int, float, tuple)):
            return bool(value)
        raise EvaluationProblem(f"{describe(value)} is not a condition", self.source, node.start, node.end,
                                python_class="TypeError")

    # -- calls, indexing, literals -------------------------------------------------------------------------

    def _eval_call(self, node: ast.Call, step: int, work: list, values: list, env: dict) -> None:
        method = isinstance(node.func, ast.Attribute)
        count = len(node.args) + len(node.keywords) + (1 if method else 0)
        if step == 0:
            work.append((node, 1))
            for keyword in reversed(node.keywords):
                word = reduction_word(node, keyword, self.result.analysis.functions)  # the language has no strings
                work.append((keyword.value if word is None else ast.Constant(word, keyword.start, keyword.end), 0))
            for argument in reversed(node.args):
                work.append((argument, 0))
            if method:
                work.append((node.func.value, 0))
            return
        arguments = values[len(values) - count:]
        del values[len(values) - count:]
        positional = arguments[: len(arguments) - len(node.keywords)]
        keywords = {k.name: v for k, v in zip(node.keywords, arguments[len(positional):])}
        if len(keywords) != len(node.keywords):
            raise NameProblem("a keyword argument is repeated", self.source, node.start, node.end)
        if method:
            name = node.func.name
            function = METHOD_FORMS.get(name) or FUNCTIONS[name]  # x.repeat(2, 1): the method's own arguments
        else:
            name = node.func.id
            function = env[name] if name in env else self._resolve(name, env, node.func)
            if function is None or function is _MISSING:
                function = FUNCTIONS.get(name) or WORDS.get(name)
        if isinstance(function, UserFunction):
            values.append(self._call_user(function, positional, keywords, node))
            return
        values.append(self._call_builtin(name, function, positional, keywords, node, method))

    def _call_builtin(self, name: str, function, args: list, kwargs: dict, node: ast.Call, method: bool = False):
        for value in list(args) + list(kwargs.values()):
            if isinstance(value, (UserFunction, GradModeWord)) or callable(value) and not isinstance(value, Tensor):
                raise EvaluationProblem(f"{name}() cannot take {describe(value)} as an argument", self.source,
                                        node.start, node.end, python_class="TypeError")
        inputs = [v for v in list(args) + list(kwargs.values()) if isinstance(v, Tensor)]
        arguments = (name, function, list(args), dict(kwargs), lambda v: self._number_tensor(v, node))
        device = None if self.options.device == "cpu" else self.options.device
        try:
            try:
                if name in LOSSES:  # PyTorch's warnings (a target's size...) become the program's, at the call
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        result = call(*arguments, device=device, method=method)
                    self._warn_at(node, [str(w.message) for w in caught])
                else:
                    result = call(*arguments, device=device, method=method)
            except BaseException:
                with self._located(node.start, node.end, f"{name}(): ", f"in {name}()"):
                    raise
        except CallProblem as exc:
            raise NameProblem(f"{exc}: {signature_text(name, function)}", self.source, node.start, node.end) from None
        except AttributeError:  # something other than a tensor where the engine needs one
            raise EvaluationProblem(f"{name}() was given an argument of the wrong kind: "
                                    f"{signature_text(name, function)}", self.source, node.start, node.end,
                                    python_class="TypeError") from None
        if isinstance(result, np.ndarray) or isinstance(result, np.generic):
            result = self._tensor(result, node)
        if isinstance(result, _PAIRS):  # x.max(0), sort(x): the values carry the graph
            self._recorded(result.values, node, inputs)
            return result
        if isinstance(result, tuple) and hasattr(result, "_fields"):  # linalg_eigh(A): each result its node
            for part in result:
                if isinstance(part, Tensor):
                    self._recorded(part, node, inputs)
            return result
        return self._recorded(result, node, inputs)

    def _warn_at(self, node, messages: list) -> None:
        """Each warning once per place, however often the place runs."""
        for message in messages:
            if not any(w.message == message and w.start == node.start for w in self.result.warnings):
                self.result.warnings.append(Warning_(message, self.source, node.start, node.end))

    def _call_user(self, function: UserFunction, args: list, kwargs: dict, node: ast.Call):
        definition = function.node
        if self.depth >= self.options.max_call_depth:
            raise LimitProblem(f"calls nested more than {self.options.max_call_depth} deep (a limit of the language)",
                               self.source, node.start, node.end)
        params = definition.params
        local = _Frame(function.local_names, function.enclosing)
        if len(args) > len(params):
            raise NameProblem(f"{function.name}() takes {len(params)} arguments but {len(args)} were given: "
                              f"def {function.name}({', '.join(p.name for p in params)})",
                              self.source, node.start, node.end)
        for param, value in zip(params, args):
            local[param.name] = value
        for key, value in kwargs.items():
            if key not in {p.name for p in params} or key in local:
                raise NameProblem(f"{function.name}() got an unexpected keyword argument {key!r}", self.source,
                                  node.start, node.end)
            local[key] = value
        for param in params:
            if param.name not in local:
                if param.default is None:
                    raise NameProblem(f"{function.name}() is missing the argument {param.name!r}", self.source,
                                      node.start, node.end)
                local[param.name] = function.defaults[param.name]
        self.iterations += 1  # calls share the loop budget: a doubly recursive function ends too
        if self.iterations > self.options.max_iterations:
            raise LimitProblem(f"more than {self.options.max_iterations:,} loop turns and function calls "
                               f"({option('max_iterations')})", self.source, node.start, node.end)
        self.depth += 1
        try:
            self._execute(definition.body, local)
        except _Return as returned:
            return returned.value
        finally:
            self.depth -= 1
        return None

    def _index(self, node: ast.Subscript, value, indices: list):
        if isinstance(value, tuple):
            return self._tuple_item(node, value, indices)
        if not isinstance(value, Tensor):
            raise EvaluationProblem(f"only tensors can be indexed, not {describe(value)}", self.source,
                                    node.start, node.end, python_class="TypeError")
        key = []
        for index, index_node in zip(indices, node.indices):
            if isinstance(index, Tensor) and index.dtype.is_floating_point:
                index = self._integer(index, index_node)
            elif _is_number(index):
                index = self._integer(index, index_node)
            key.append(index)
        with self._located(node.start, node.end, "", "indexing"):
            result = value[tuple(key) if len(key) != 1 else key[0]]
        return self._recorded(result, node, (value,))

    def _integer(self, value, node) -> int:
        if isinstance(value, Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise EvaluationProblem(f"an index must be an integer, not {describe(value)}", self.source,
                                    node.start, node.end, python_class="IndexError")
        return value

    def _index_list(self, node: ast.ListLiteral) -> list:
        values = _constant_value(node)
        flat = np.asarray(values, dtype=float)
        if not np.all(flat == np.round(flat)):
            raise EvaluationProblem("index lists must hold integers", self.source, node.start, node.end,
                                    python_class="IndexError")
        return np.asarray(values, dtype=np.int64).tolist()

    def _tuple_item(self, node: ast.Subscript, value: tuple, indices: list):
        """`pair[0]`: one integer picks an element, as in Python."""
        if len(indices) != 1 or isinstance(indices[0], slice):
            raise EvaluationProblem(f"{describe(value)} is indexed by one integer", self.source, node.start, node.end,
                                    python_class="TypeError")
        index = self._integer(indices[0], node.indices[0])
        if not -len(value) <= index < len(value):
            raise EvaluationProblem(f"index {index} is out of range for {describe(value)}", self.source,
                                    node.start, node.end, python_class="IndexError")
        return value[index]

    def _attribute(self, node: ast.Attribute, value):
        if isinstance(value, tuple) and node.name in getattr(value, "_fields", ()):  # .values, .eigenvectors
            return getattr(value, node.name)
        if node.name not in _ATTRIBUTES:
            raise NameProblem(f"unknown attribute {node.name!r}{suggestion(node.name, _ATTRIBUTES)}", self.source,
                              node.start, node.end)
        if not isinstance(value, Tensor):
            raise EvaluationProblem(f".{node.name} needs a tensor, not {describe(value)}", self.source,
                                    node.start, node.end, python_class="AttributeError")
        return self._recorded(_ATTRIBUTES[node.name](value), node, (value,))

    def _list(self, node: ast.ListLiteral, elements: list):
        from .. import stack

        tensors = []
        for element, element_node in zip(elements, node.elements):
            if _is_number(element):
                element = self._tensor(float(element), element_node)
            elif not isinstance(element, Tensor):
                raise EvaluationProblem(f"a list holds numbers or tensors, not {describe(element)}", self.source,
                                        element_node.start, element_node.end, python_class="TypeError")
            tensors.append(element)
        if not tensors:
            return self._tensor([], node)
        with self._located(node.start, node.end, "the elements of this list differ in shape: "):
            result = stack(tensors)
        return self._recorded(result, node, tensors)

    def _number_tensor(self, value, node) -> Tensor:
        """A number as a function's tensor argument; under derive, one made of sizes (`sqrt(n)`)
        keeps its name."""
        if self.options.trace is not None and getattr(value, "sym", None) is not None:
            return self.options.trace.number(value)
        return self._tensor(float(value), node)

    def _tensor(self, value, node) -> Tensor:
        from .. import tensor

        with self._located(node.start, node.end, "this list is not rectangular: "):
            return tensor(value, dtype=self.dtype, device=self.options.device)

    _EXPRESSION_STEPS = {
        ast.Name: _eval_name, ast.Number: _eval_number, ast.Constant: _eval_constant, ast.BinOp: _eval_binop,
        ast.UnaryOp: _eval_unaryop, ast.BoolOp: _eval_boolop, ast.Compare: _eval_compare, ast.IfExp: _eval_ifexp,
        ast.Call: _eval_call, ast.Subscript: _eval_subscript, ast.Slice: _eval_slice, ast.Attribute: _eval_attribute,
        ast.ListLiteral: _eval_list, ast.TupleLiteral: _eval_tuple, _Placeholder: _eval_placeholder,
        _IndexList: _eval_index_list,
    }

    # -- bookkeeping ----------------------------------------------------------------------------------------

    def _located(self, start: int, end: int, prefix="", doing: str = "", problem=EvaluationProblem) -> "_Located":
        """`with self._located(...)`: an engine error inside becomes a program error at start..end.

        Its message is `prefix` (a string, or a function giving one) and the engine's own words;
        more elements than the limit, or no memory left (`out of memory {doing}`), a LimitProblem."""
        return _Located(self.source, start, end, prefix, doing, problem)

    def _recorded(self, result, node, operands):
        """Remember where a recorded node came from, and warn where nan or inf first appears."""
        if isinstance(result, Tensor):
            self.result.origins.note(result, node)
            if self.options.keep_tensors and result._node is not None:
                self.result.tensors.setdefault(result.grad_fn, result)
            if self.options.check_finite and not self.finite_warning_given and not _all_finite(result):
                if all(_all_finite(v) for v in operands if isinstance(v, Tensor)):
                    self._warn_non_finite(node, result)
        return result

    def _warn_non_finite(self, node, value) -> None:
        """Warn once, at the first expression that turned finite values into nan or inf."""
        if not self.options.check_finite or self.finite_warning_given:
            return
        self.finite_warning_given = True
        nan = _any_nan(value) if isinstance(value, Tensor) else math.isnan(value)
        self.result.warnings.append(Warning_(
            f"{self.source.snippet(node.start, node.end)} produced {'nan' if nan else 'inf'}",
            self.source, node.start, node.end))


ENGINE_ERRORS = (ShapeError, RuntimeError, ValueError, TypeError, IndexError)


class _Located:
    __slots__ = ("source", "start", "end", "prefix", "doing", "problem")

    def __init__(self, source, start, end, prefix, doing, problem) -> None:
        self.source, self.start, self.end = source, start, end
        self.prefix, self.doing, self.problem = prefix, doing, problem

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> bool:
        if kind is None or issubclass(kind, DataDependent):  # many points: regrouped, not an error
            return False
        if issubclass(kind, creation.ElementLimitError):
            raise LimitProblem(f"{exc} ({option('max_elements')})", self.source, self.start, self.end) from None
        if issubclass(kind, MemoryError):
            what = f"out of memory {self.doing}" if self.doing else "out of memory"
            what += f" (a lower {option('max_elements')} refuses such tensors before allocating them)"
            raise LimitProblem(what, self.source, self.start, self.end) from None
        if issubclass(kind, ENGINE_ERRORS):
            prefix = self.prefix() if callable(self.prefix) else self.prefix
            problem = self.problem(f"{prefix}{exc}", self.source, self.start, self.end)
            if isinstance(problem, EvaluationProblem):  # the engine raises PyTorch's classes (ShapeError: RuntimeError)
                problem.python_class = next(c.__name__ for c in kind.__mro__ if c.__module__ == "builtins")
            raise problem from None
        return False


def _operands(op: str, left, right) -> str:
    """How an operator's error begins: `'+' of shapes [2, 3] and [4]: `."""
    shapes = [list(v.shape) if isinstance(v, Tensor) else "a number" for v in (left, right)]
    return f"'{op}' of shapes {shapes[0]} and {shapes[1]}: "


def _constant_list(node) -> bool:
    return isinstance(node, ast.ListLiteral) and _constant_value(node) is not None


def _constant_value(node):
    """A literal list of numbers as nested Python lists, or None if it holds anything else."""
    if isinstance(node, ast.Number):
        return numbers.literal(node.value)
    if isinstance(node, ast.UnaryOp) and node.op in "-+" and isinstance(node.operand, ast.Number):
        value = numbers.literal(node.operand.value)
        return -value if node.op == "-" else value
    if isinstance(node, ast.ListLiteral):
        out = []
        for element in node.elements:  # nesting is bounded by the tokenizer's bracket limit
            value = _constant_value(element)
            if value is None:
                return None
            out.append(value)
        return out
    return None


def _is_bool(value) -> bool:
    return isinstance(value, bool) or (isinstance(value, Tensor) and value.dtype is dtypes.bool_)


def _as_integer(value):
    """A bool as Python computes with it: an integer (a bool tensor as int64)."""
    return value.long() if isinstance(value, Tensor) else int(value)


def _is_number(value) -> bool:
    return isinstance(value, _NUMBER_TYPES)


def _all_finite(value: Tensor) -> bool:
    data = value._data
    if isinstance(data, float):  # NumPy float scalars are floats
        return math.isfinite(data)
    if data.dtype.kind != "f":
        return True
    xp = np if isinstance(data, (np.ndarray, np.generic)) else _module(data)
    return bool(xp.isfinite(data).all())


def _any_nan(value: Tensor) -> bool:
    data = value._data
    xp = np if isinstance(data, (np.ndarray, np.generic)) else _module(data)
    return bool(xp.isnan(data).any())


def _module(data):
    from ..backend import array_module

    return array_module(data)


def describe(value) -> str:
    if isinstance(value, UserFunction):
        return f"the function {value.name}"
    if isinstance(value, GradModeWord):
        return value.name
    if value is None:
        return "None"
    if isinstance(value, _PAIRS):
        return f"the (values, indices) pair of {type(value).__name__}() (take its .values)"
    if isinstance(value, tuple):
        return f"the tuple {value!r}"
    if isinstance(value, range):
        return "a range"
    if isinstance(value, bool):
        return f"the truth value {value}"
    if callable(value):
        return f"the function {getattr(value, '__name__', value)}"
    return type(value).__name__

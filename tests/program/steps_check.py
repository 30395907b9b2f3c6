"""Whether the steps of `derive --steps` are true, two ways, and whether one skips a level.

- SymPy (test-only; it reads only text derive --steps wrote): each definition, each step's `of`
  and each step's `result` become SymPy expressions; `result`, with each placeholder replaced by
  SymPy's derivative of its step's `of`, must equal SymPy's derivative of `of`, at the point and
  at points beside it.
- The engine: the program of the definitions with `of` as its output, differentiated by autodiff
  at the point, must give what `result` evaluates to there (the placeholders given their steps'
  derivatives, found the same way).
- No step skips a level: the `of` of each step a result uses is a direct operand of its own `of`
  (the terms of a sum, the factors of a product, a quotient's two sides, a power's base and
  exponent, a call's arguments; for a name, its value).

Used by tests/program/test_steps.py and bench/steps.py.
"""

from __future__ import annotations

import ast
import math
import re

import numpy as np

from autodiff.program import differentiate
from autodiff.program import steps as S


def _sympy_namespace():
    import sympy

    class detach(sympy.Function):  # noqa: N801 - the language's name
        """The value, without a derivative."""

        @classmethod
        def eval(cls, arg):
            return arg if arg.is_Number else None

        def fdiff(self, argindex=1):
            return sympy.S.Zero

        def _eval_evalf(self, prec):
            return self.args[0].evalf(prec)

    namespace = {name: getattr(sympy, name) for name in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh",
                                                            "cosh", "asin", "acos", "atan", "floor", "ceiling",
                                                            "sign")}
    namespace.update(abs=sympy.Abs, sigmoid=lambda z: 1 / (1 + sympy.exp(-z)), relu=lambda z: sympy.Max(0, z),
                     where=lambda c, a, b: sympy.Piecewise((a, c), (b, True)), maximum=sympy.Max,
                     minimum=sympy.Min, detach=detach, pi=sympy.pi, log1p=lambda z: sympy.log(1 + z),
                     expm1=lambda z: sympy.exp(z) - 1, ceil=sympy.ceiling, square=lambda z: z ** 2,
                     rsqrt=lambda z: 1 / sympy.sqrt(z), logical_and=sympy.And, logical_or=sympy.Or,
                     logical_not=sympy.Not)
    return namespace


def _sympy(text: str, namespace: dict):
    import sympy

    tree = ast.parse(text, mode="eval")  # our own text: names, numbers, operators, calls
    return sympy.sympify(eval(compile(tree, "<steps>", "eval"), dict(namespace)))  # noqa: S307 - generated here


def _number(value) -> float | None:
    try:
        number = complex(value)
    except (TypeError, ValueError):
        return None
    if abs(number.imag) > 1e-9 * max(1.0, abs(number.real)):
        return None
    return number.real if math.isfinite(number.real) else None


def check_with_sympy(d, points: list) -> list:
    """Problems (text) with d's steps by SymPy at `points` ({input: value} each)."""
    import sympy

    problems = []
    namespace = _sympy_namespace()
    symbols = {}
    for block in d.inputs:
        symbols[block.wrt] = sympy.Symbol(block.wrt, real=True)
    for name in d.derived.inputs:
        symbols.setdefault(name, sympy.Symbol(name, real=True))
    namespace.update(symbols)
    for x in d.definitions:
        namespace[x.name] = _sympy(x.value, namespace)
    output = None
    for name, text in d.derived.statements:  # derive's program, for the simplify step's names
        if name in namespace and name not in {x.name for x in d.definitions}:
            continue
        try:
            value = _sympy(text, {**namespace, **(output or {})})
        except Exception:  # noqa: BLE001 - a function SymPy is not given here: that step is left to the engine
            continue
        output = {**(output or {}), name: value}
    derive_names = output or {}
    for block in d.inputs:
        x = symbols[block.wrt]
        derivatives = {step.id: sympy.diff(_sympy(step.of, namespace), x) for step in block.steps
                       if step.rule != S.SIMPLIFY}
        for step in block.steps:
            where = f"∂/∂{block.wrt} step {step.id} ({step.rule}) of {step.of!r}"
            if step.rule == S.SIMPLIFY:
                of_text = _output_text(d)
                result_text = step.result[0]
                names = {**namespace, **derive_names}
            else:
                of_text, result_text = step.of, "".join(d.placeholder(p) if isinstance(p, int) else p
                                                         for p in step.result)
                names = namespace
            want = derivatives.get(step.id)
            if want is None:
                want = sympy.diff(_sympy(of_text, namespace), x)
            got = _sympy(result_text, {**names, **{d.placeholder(k): v for k, v in derivatives.items()}})
            for point in points:
                values = {symbols[n]: v for n, v in point.items() if n in symbols}
                a, b = _number(_at(want, values)), _number(_at(got, values))
                if a is None or b is None:
                    continue
                if not math.isclose(a, b, rel_tol=1e-7, abs_tol=1e-9):
                    problems.append(f"{where}: SymPy's derivative {a}, the step's result {b} at {point}")
    return problems


def _at(expression, values: dict):
    """The expression's number where its symbols have `values`: each function folded as the numbers
    come in (much faster than evalf's substitution on a deep expression)."""
    import sympy

    try:
        return expression.xreplace({s: sympy.Float(v, 30) for s, v in values.items()}).evalf(20)
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _output_text(d) -> str:
    """The output's value as the first step writes it."""
    first = d.inputs[0].steps[0]
    return first.of if first.rule != S.SIMPLIFY else d.output


def check_with_engine(d, point: dict) -> list:
    """Problems (text) with d's steps by the engine's gradients at `point`."""
    problems = []
    definitions = "".join(f"{x.name} = {x.value}\n" for x in d.definitions)
    inputs = {n: v for n, v in point.items() if n in d.derived.inputs}
    for block in d.inputs:
        x = block.wrt
        values = {step.id: _engine_gradient(definitions, step, inputs, x) for step in block.steps
                  if step.rule != S.SIMPLIFY}
        for step in block.steps:
            if step.rule == S.SIMPLIFY:
                continue
            want = values[step.id]
            given = {**inputs, **{d.placeholder(k): values[k] for k in step.uses}}
            text = "".join(d.placeholder(p) if isinstance(p, int) else p for p in step.result)
            got = float(differentiate(definitions + f"__result = {text}\n", given, wrt=[]).output.value)
            if not (math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-9) or (math.isnan(got) and math.isnan(want))):
                problems.append(f"∂/∂{x} step {step.id} ({step.rule}) of {step.of!r}: engine {want}, result {got} "
                                f"at {point}")
    return problems


def _engine_gradient(definitions: str, step, inputs: dict, x: str) -> float:
    if step.rule == "constant":  # x is not in it: the engine's gradient is None (0)
        return 0.0
    run = differentiate(definitions + f"__of = {step.of}\n", inputs, wrt=[x])
    want = run.grads.get(x)
    return 0.0 if want is None else float(want)


def _operands(tree) -> list:
    """The direct operands of an expression as a person reads it: a sum's terms and a product's
    factors (Python nests them to the left), a quotient's two sides, a power's base and
    exponent, a negation's operand, a call's arguments."""
    node = tree.body if isinstance(tree, ast.Expression) else tree
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        out = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            out.append(node.right)
            node = node.left
        return [node] + out[::-1]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        out = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            out.append(node.right)
            node = node.left
        return [node] + out[::-1]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Call):
        return list(node.args)
    return []


def _dump(text_or_node) -> str:
    node = ast.parse(text_or_node, mode="eval").body if isinstance(text_or_node, str) else text_or_node
    return ast.dump(node, annotate_fields=False)


def check_levels(d) -> list:
    """Problems (text) where a step's result uses a derivative of anything but its direct operands."""
    problems = []
    values = {x.name: x.value for x in d.definitions}
    for block in d.inputs:
        by_id = {s.id: s for s in block.steps}
        for step in block.steps:
            if step.rule == S.SIMPLIFY:
                if step.uses:
                    problems.append(f"the simplify step uses {step.uses}")
                continue
            if step.name:
                allowed = {_dump(values[step.of])}
            else:
                allowed = {_dump(o) for o in _operands(ast.parse(step.of, mode="eval"))}
            for k in step.uses:
                used = by_id[k]
                if _dump(used.of) not in allowed:
                    problems.append(f"∂/∂{block.wrt} step {step.id} ({step.rule}) of {step.of!r} uses step {k} "
                                    f"of {used.of!r}, which is not one of its operands")
            if re.search(r"\b" + re.escape(d.prefix) + r"\d+\b", "".join(p for p in step.result if isinstance(p, str))):
                problems.append(f"step {step.id}'s text holds a placeholder name")
    return problems


def nearby(point: dict, count: int, seed: int) -> list:
    """`point` and `count` points within 1e-3 of it (relative): on the same path."""
    rng = np.random.default_rng(seed)
    return [point] + [{n: v * (1 + 1e-3 * rng.uniform(-1, 1)) for n, v in point.items()} for _ in range(count)]

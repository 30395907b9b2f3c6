"""Whatever the text, a program either runs or fails with one of autodiff's own errors; and
where the text is Python (numbers, names, operators, conditions and calls of `math`'s
functions), what it computes is what Python computes.

Programs are drawn from the grammar itself (hypothesis.extra.lark), from random text, and
from valid programs with random damage. Nothing else may escape: no Python exception, no
hang (the limits are small here), and every error renders. Python itself is the oracle of the
value, run on the same text with its integer literals as floats (the language's numbers) and
no loops (Python has no iteration limit).
"""

import ast
import math
import re

import pytest

from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.lark import from_lark

from autodiff import Tensor
from autodiff.cli.exit_codes import status_for
from autodiff.language import Options, ProgramError, Source, evaluate, parse
from autodiff.language.analysis import analyze
from autodiff.language.builtins import FUNCTIONS
from autodiff.language.grammar import lark_parser

SMALL = Options(max_elements=10_000, max_iterations=300, max_call_depth=15)

PROGRAMS_FROM_GRAMMAR = from_lark(
    lark_parser(),
    explicit={"_NL": st.just("\n"), "_INDENT": st.just("    "), "_DEDENT": st.just("")},
)

VALID = [
    "u = a * b\nt = log(d)\ne = u + t * c\n",
    "x: input = [[1, 2], [3, 4]]\ng: const = 9.81\ny = sum(x @ x.T, axis=0)[1] * g\n",
    "def f(x, k=2):\n    return x ** k\ns = 0\nfor i in range(3):\n    s += f(a, i)\ns\n",
    "if a > 0:\n    y = a ^ 2\nelse:\n    y = -a\nwith no_grad:\n    z = y * 2\nmaximum(y, z)\n",
]
NOISE = list("()[]{}:,;=+-*/@^%.<>!#'\"\\ \t\n0123456789eEjxyzab_") + ["\u2212", "\u00d7", "\u00a0", "if ", "for ",
                                                                           "def ", "return ", "**", "//", "=="]


PYTHON = {name: getattr(math, name) for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh")}
PYTHON.update(abs=abs, pi=math.pi, inf=math.inf, nan=math.nan)
# What the language means otherwise than Python, or Python cannot run without limits.
NOT_COMPARED = (ast.List, ast.Tuple, ast.Subscript, ast.Attribute, ast.With, ast.AnnAssign, ast.For, ast.While,
                ast.Lambda, ast.Starred, ast.Dict, ast.Set, ast.ListComp, ast.GeneratorExp, ast.JoinedStr,
                ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.ClassDef, ast.Delete, ast.Assert,
                ast.Raise, ast.Try, ast.MatMult, ast.BitXor, ast.BitAnd, ast.BitOr, ast.Invert, ast.LShift,
                ast.RShift, ast.keyword)


class _Floats(ast.NodeTransformer):
    """Integer literals as floats (the language's numbers), and every `**` through _real_power."""

    def visit_Constant(self, node):  # noqa: N802 - ast's name
        if isinstance(node.value, int) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Constant(float(node.value)), node)
        return node

    def visit_BinOp(self, node):  # noqa: N802 - ast's name
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            return ast.copy_location(ast.Call(ast.Name("__real_power", ast.Load()), [node.left, node.right], []), node)
        return node


class _Complex(Exception):
    pass


def _real_power(base, exponent):
    """Python's `**`, where its value is real: a negative base to a fractional power is complex in
    Python ((-2) ** 0.5 is 1.414j) and nan in the language, as in PyTorch: outside what the
    language means as Python, so not compared (abs() would make it a real 1.414 again)."""
    value = base ** exponent
    if isinstance(value, complex):
        raise _Complex
    return value


def python_value(text: str, at: dict):
    """What Python computes for `text` (its last statement's value), or None where the text is
    not Python of numbers, or Python refuses it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if not tree.body or any(isinstance(node, NOT_COMPARED) for node in ast.walk(tree)):
        return None
    last = tree.body[-1]
    if isinstance(last, ast.Expr):
        tree.body[-1] = ast.copy_location(ast.Assign([ast.Name("__value", ast.Store())], last.value), last)
    elif isinstance(last, ast.Assign) and len(last.targets) == 1 and isinstance(last.targets[0], ast.Name):
        tree.body.append(ast.Assign([ast.Name("__value", ast.Store())], ast.Name(last.targets[0].id, ast.Load())))
    else:
        return None
    namespace = {"__builtins__": {}, **PYTHON, **at, "__real_power": _real_power}
    try:
        exec(compile(ast.fix_missing_locations(_Floats().visit(tree)), "<fuzz>", "exec"), namespace)  # noqa: S102
        value = namespace["__value"]
        return float(value) if isinstance(value, (bool, int, float)) else None
    except Exception:  # noqa: BLE001 - Python refused it (ZeroDivisionError, a math domain error...)
        return None


def assert_well_reported(problem: ProgramError, text: str, name: str = "fuzz.txt") -> None:
    """A problem renders as the contract says: one header line `file:line:col: error: message` whose
    place is inside the text, then the line quoted and a caret under the column; no traceback."""
    rendered = problem.render()
    header, *rest = rendered.split("\n")
    place = re.match(re.escape(name) + r"(?::(\d+):(\d+))?: error: \S", header)
    assert place, rendered
    assert "Traceback" not in rendered, rendered
    if place.group(1) is None:  # about the whole program (an empty one): the header alone
        assert not rest, rendered
        return
    line, column = int(place.group(1)), int(place.group(2))
    lines = text.split("\n")
    assert 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1, (rendered, text)
    assert len(rest) == 2 and re.fullmatch(r" *\^~*", rest[1]), rendered


def outcome(text: str) -> None:
    """Run `text` with every input at 0.5; only ProgramError may come out, and it must render.
    Where the text is Python, the value is Python's."""
    try:
        source = Source(text, "fuzz.txt")
        program = parse(source)
        names = analyze(program, source)
        at = {name: 0.5 for name in names.inputs if name not in names.declared}
        result = evaluate(program, source, at=at, options=SMALL)
        for warning in result.warnings:
            assert warning.render()
    except ProgramError as problem:
        assert_well_reported(problem, text)
        assert status_for(problem) in (2, 3, 4)
        return
    output = result.output
    if isinstance(output, Tensor) and output.numel() == 1 and output.ndim == 0:
        output = output.item()
    expected = python_value(text, at)
    if expected is not None and isinstance(output, (bool, int, float)):
        got = float(output)
        assert got == expected or (math.isnan(got) and math.isnan(expected)) or \
            math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-300), (text, got, expected)


@settings(max_examples=100, deadline=None)  # drawing from the grammar is the slow part
@given(PROGRAMS_FROM_GRAMMAR)
def test_programs_drawn_from_the_grammar(text):
    outcome(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_random_text(text):
    outcome(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NOISE), max_size=60).map("".join))
def test_random_text_made_of_the_languages_characters(text):
    outcome(text)


@st.composite
def damaged(draw):
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if action == "delete":
            text = text[:position] + text[position + draw(st.integers(1, 5)):]
        elif action == "insert":
            text = text[:position] + draw(st.sampled_from(NOISE)) + text[position:]
        else:
            end = min(len(text), position + draw(st.integers(1, 10)))
            text = text[:end] + text[position:end] + text[end:]
    return text


@settings(max_examples=400, deadline=None)
@given(damaged())
def test_valid_programs_with_random_damage(text):
    outcome(text)


# -- well-formed programs, so that evaluation (not just parsing) is exercised ---------------------------

SHAPED_VALUES = {"a": 0.5, "b": -2.0, "x": [1.0, 2.0, 3.0], "W": [[1.0, 2.0], [3.0, 4.0]], "z": 0.0}
FUNCTION_NAMES = sorted(FUNCTIONS)
BINARY = ["+", "-", "*", "/", "@", "**", "^", "//", "%", "<", ">=", "==", "and", "or"]


def _expressions():
    atoms = st.sampled_from(list(SHAPED_VALUES) + ["0", "1", "2.5", ".5", "1e-3", "100", "2", "True", "pi"])

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["-", "+", "not "]), inner).map(lambda t: f"({t[0]}{t[1]})"),
            st.tuples(st.sampled_from(FUNCTION_NAMES), st.lists(inner, min_size=1, max_size=3)).map(
                lambda t: f"{t[0]}({', '.join(t[1])})"),
            st.tuples(inner, st.sampled_from(["0", "1", "-1", ":", "::2", "0, 1", ":, 0", "[0, 1]"])).map(
                lambda t: f"{t[0]}[{t[1]}]"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
            st.tuples(inner, st.sampled_from(["T", "shape", "sum()", "exp()", "max(0)"])).map(lambda t: f"{t[0]}.{t[1]}"),
            st.lists(inner, min_size=1, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
        )

    return st.recursive(atoms, extend, max_leaves=10)


@st.composite
def _well_formed(draw):
    lines = []
    for target in draw(st.lists(st.sampled_from(["y", "z", "s"]), max_size=3)):
        lines.append(f"{target} = {draw(_expressions())}")
    lines.append(draw(_expressions()))
    return "\n".join(lines)


@settings(max_examples=200, deadline=None)
@given(_well_formed())
def test_well_formed_programs_on_inputs_of_several_shapes(text):
    try:
        source = Source(text, "fuzz.txt")
        program = parse(source)
        names = analyze(program, source)
        evaluate(program, source, at={n: SHAPED_VALUES[n] for n in names.inputs}, options=SMALL)
    except ProgramError as problem:
        assert_well_reported(problem, text)


def test_the_valid_programs_are_valid():
    for text in VALID:
        source = Source(text)
        program = parse(source)
        names = analyze(program, source)
        evaluate(program, source, at={name: 0.5 for name in names.inputs if name not in names.declared})


# -- Python's own programs: numbers, operators, conditions, and/or, math's functions ------------------

SCALAR_VALUES = {"a": 0.5, "b": -2.0, "z": 0.0}
PYTHON_BINARY = ["+", "-", "*", "/", "**", "//", "%", "<", ">=", "==", "!=", "and", "or"]


def _python_expressions():
    atoms = st.sampled_from(list(SCALAR_VALUES) + ["0", "1", "2", "-7", "7", "-3", "2.5", ".5", "1e-3", "True",
                                                   "False", "pi"])

    def extend(inner):
        return st.one_of(
            st.tuples(inner, st.sampled_from(PYTHON_BINARY), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(inner, st.sampled_from(PYTHON_BINARY), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
            st.tuples(st.sampled_from(["-", "+", "not "]), inner).map(lambda t: f"{t[0]}{t[1]}"),
            st.tuples(st.sampled_from(sorted(set(PYTHON) - {"pi", "inf", "nan"})), inner).map(
                lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        )

    return st.recursive(atoms, extend, max_leaves=8)


@settings(max_examples=500, deadline=None)
@given(st.lists(_python_expressions(), min_size=1, max_size=3))
@example(["abs(b ** a)"])  # every case it has found, tried first on every run
@example(["(a >= a) + (a >= a)"])
@example(["cos(a >= a)"])
def test_what_is_python_means_what_python_means(expressions):
    """Python's precedence, chained comparisons, and/or giving an operand, // and % rounding
    towards minus infinity with negative operands, ** right-associative under unary minus."""
    text = "\n".join(f"v{i} = {e}" for i, e in enumerate(expressions[:-1])) + f"\n{expressions[-1]}\n"
    source = Source(text, "python.txt")
    try:
        result = evaluate(parse(source), source, at=dict(SCALAR_VALUES), options=SMALL)
    except ProgramError as problem:
        assert_well_reported(problem, text, "python.txt")
        return
    expected = python_value(text, dict(SCALAR_VALUES))
    output = result.output.item() if isinstance(result.output, Tensor) and result.output.ndim == 0 else result.output
    if expected is None or not isinstance(output, (bool, int, float)):
        return
    got = float(output)
    assert got == expected or (math.isnan(got) and math.isnan(expected)) or \
        math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-300), (text, got, expected)


def test_the_python_oracle_compares():
    assert python_value("a = 7\n-a // 2", {}) == -4.0 and python_value("-7 % 3", {}) == 2.0
    assert python_value("0.5 and 2", {}) == 2.0 and python_value("1 < 2 < 1.5", {}) == 0.0
    assert python_value("x = [1]\nx", {}) is None and python_value("1 / 0", {}) is None
    assert python_value("abs(b ** a)", {"a": 0.5, "b": -2.0}) is None  # complex in Python: not the language's
    assert python_value("abs(b ** 2) ** a", {"a": 0.5, "b": -2.0}) == 2.0


@pytest.mark.parametrize("text", [
    "-7 // 2", "7 // -2", "-7 % 3", "7 % -3", "-7.5 // 2", "7.5 % -2", "-2 ** 2", "2 ** -1", "2 ** 3 ** 2",
    "1 < 2 < 1.5", "0.5 and 2", "0 or -3", "not 0.5", "True + True", "-7 // 2 * 3 % 4", "a // -0.3",
    "b % 0.75", "(a > 0) + (b > 0)", "(a >= a) + (a >= a)", "(a > 0) - (b > 0)", "(a > 0) * (a > 0) + True",
])
def test_python_arithmetic_means_what_python_means(text):
    """The corners where other languages round or group otherwise: // and % towards minus infinity,
    ** right-associative and above unary minus, chained comparisons, and/or giving an operand."""
    source = Source(text + "\n", "python.txt")
    result = evaluate(parse(source), source, at=dict(SCALAR_VALUES))
    output = result.output.item() if isinstance(result.output, Tensor) else result.output
    assert float(output) == python_value(text, dict(SCALAR_VALUES)), text

"""Whatever the text, a program either runs or fails with one of autodiff's own errors.

Programs are drawn from the grammar itself (hypothesis.extra.lark), from random text, and
from valid programs with random damage. Nothing else may escape: no Python exception, no
hang (the limits are small here), and every error renders.
"""

import math

from hypothesis import given, settings
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


def outcome(text: str) -> None:
    """Run `text` with every input at 0.5; only ProgramError may come out, and it must render."""
    try:
        source = Source(text, "fuzz.txt")
        program = parse(source)
        names = analyze(program, source)
        at = {name: 0.5 for name in names.inputs if name not in names.declared}
        result = evaluate(program, source, at=at, options=SMALL)
        for warning in result.warnings:
            assert warning.render()
        if isinstance(result.output, Tensor):
            assert result.output.shape is not None
        elif isinstance(result.output, float):
            assert result.output == result.output or math.isnan(result.output)
    except ProgramError as problem:
        assert problem.render()
        assert status_for(problem) in (2, 3, 4)


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


@settings(max_examples=400, deadline=None)
@given(_well_formed())
def test_well_formed_programs_on_inputs_of_several_shapes(text):
    try:
        source = Source(text, "fuzz.txt")
        program = parse(source)
        names = analyze(program, source)
        evaluate(program, source, at={n: SHAPED_VALUES[n] for n in names.inputs}, options=SMALL)
    except ProgramError as problem:
        assert problem.render()


def test_the_valid_programs_are_valid():
    for text in VALID:
        source = Source(text)
        program = parse(source)
        names = analyze(program, source)
        evaluate(program, source, at={name: 0.5 for name in names.inputs if name not in names.declared})

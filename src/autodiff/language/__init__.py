"""The autodiff expression language: parse a program, run it on the engine.

    from autodiff.language import run
    evaluation = run("u = a * b\\nt = log(d)\\ne = u + t * c", at={"a": 2, "b": 3, "c": 5, "d": 10})
    evaluation.output.backward()
    evaluation.inputs["d"].grad      # tensor(0.5000)

See docs/language.md for the language. Errors are ProgramError subclasses carrying the place in
the source and their category (an ErrorKind).
"""

from __future__ import annotations

from .ast import Program, dump
from .errors import (
    ErrorKind,
    EvaluationProblem,
    InputProblem,
    LimitProblem,
    NameProblem,
    ProgramError,
    SyntaxProblem,
    Warning_,
)
from .evaluate import Evaluation, Options, evaluate
from .parser import parse
from .source import Source

__all__ = [
    "ErrorKind", "Evaluation", "EvaluationProblem", "InputProblem", "LimitProblem", "NameProblem", "Options", "Program",
    "ProgramError", "Source", "SyntaxProblem", "Warning_", "dump", "evaluate", "parse", "parse_value", "run",
]


def run(text: str, name: str = "<expr>", at: dict | None = None, wrt=None, output: str | None = None,
        options: Options | None = None) -> Evaluation:
    """Parse and run a program; `at` maps input names to numbers, lists or tensors."""
    source = Source(text, name)
    return evaluate(parse(source), source, at, wrt, output, options)


def parse_value(text: str, name: str = "<value>", options: Options | None = None):
    """A value given on the command line (`2`, `-1.5e3`, `[[1, 2], [3, 4]]`) as a tensor.

    It is read with the same grammar, and may use numbers, lists, arithmetic and the constants
    pi, inf and nan, but no names: a problem is an InputProblem (exit status 2).
    """
    from .analysis import analyze
    from .ast import ExprStatement

    source = Source(text, name)
    if not text.strip():
        raise InputProblem("the value is missing", source)
    try:
        program = parse(source)
        if len(program.body) != 1 or not isinstance(program.body[0], ExprStatement):
            raise InputProblem("a value must be one number or [list]", source, 0, len(text))
        names = analyze(program, source)
        if names.inputs:
            first = names.first_use[names.inputs[0]]
            raise InputProblem("a value cannot use names, only numbers and [lists]", source, first.start, first.end)
        return evaluate(program, source, options=options).output
    except InputProblem:
        raise
    except ProgramError as problem:  # whatever is wrong with a value, it is a usage error
        raise InputProblem(problem.message, problem.source, problem.start, problem.end) from None

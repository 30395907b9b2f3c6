"""Hints for an input given no value: what the program's author probably meant.

A name the program reads but never binds is an input, so a typo, a comparison written for an
assignment, a function named without its call or Euler's number written `e` all first show up
as an input with no value. The evaluator's message for it ends with these hints.
"""

from __future__ import annotations

from . import ast
from .analysis import Analysis, equality_advice
from .builtins import suggestion
from .foreign import power_of_e_advice
from .source import Source


def missing_input_hints(missing: list, analysis: Analysis, source: Source, given: set) -> str:
    """The hints for the inputs `missing`, in the order a message gives them; `given`: the names
    the caller gave values for (used or not)."""
    return (_misspelt(missing, analysis, given) + _meant_assignment(missing, analysis, source)
            + _meant_exp(missing, analysis, source) + _meant_call(missing, analysis))


def _misspelt(missing: list, analysis: Analysis, given: set) -> str:
    """"; did you mean 'u'?" when a missing input is close to another name: one the program
    assigns, an input that has its value, or a value given (--at) that nothing uses. `uu`
    used where `u` was meant is an input, and its missing value the first sign of it."""
    known = analysis.assigned | set(analysis.declared) | given
    assigned = sorted(known - set(missing))
    if len(missing) == 1:
        return suggestion(missing[0], assigned)
    import difflib  # only when values are missing: not part of every start

    close = [(name, difflib.get_close_matches(name, assigned, n=1, cutoff=0.6)) for name in missing]
    pairs = [f"{match[0]!r} for {name!r}" for name, match in close if match]
    return f"; did you mean {', '.join(pairs)}?" if pairs else ""


def _meant_assignment(missing: list, analysis: Analysis, source: Source) -> str:
    """"; `y == x*2` is a comparison...": a missing input first met as the left of `==`."""
    for statement in analysis.equalities:
        left = statement.value.left
        if type(left) is ast.Name and left.id in missing and analysis.first_use.get(left.id) is left:
            return "; " + equality_advice(statement, source)
    return ""


def _meant_call(missing: list, analysis: Analysis) -> str:
    """"; or, for the function, call it: exp(...)": a missing input named as a function is."""
    named = [name for name in missing if name in analysis.function_names]
    if not named:
        return ""
    return f"; or, for the function {named[0]}, call it: {named[0]}(...)"


def _meant_exp(missing: list, analysis: Analysis, source: Source) -> str:
    """"; for Euler's number to a power write exp(x)": `e ** x` with no value for e."""
    powers = analysis.powers_of_e
    if "e" not in missing:
        return ""
    if not powers:
        return "; " + power_of_e_advice(None)
    right = powers[0].right
    return "; " + power_of_e_advice(" ".join(source.snippet(right.start, right.end).split()))

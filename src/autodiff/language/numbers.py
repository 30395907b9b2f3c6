"""Arithmetic between plain numbers in a program (`2 * 3`, `9 ** 9 ** 9 ** 9`).

Integers stay integers while they are small (sizes, axes and indices need them); anything that
would grow past 2**63 is computed in float64 instead, so no expression can make Python build a
huge integer (and hang). Division by zero and overflow give inf or nan, as float64 does.
"""

from __future__ import annotations

import math
import operator

INT_LIMIT = 2**63
EXACT_INT_LIMIT = 2**53  # larger integer literals become floats


def literal(value):
    """A number literal's value: ints that float64 cannot hold exactly become floats."""
    if isinstance(value, int) and abs(value) >= EXACT_INT_LIMIT:
        return float(value)
    return value


_INT_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv, "%": operator.mod}


_SIZE_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}


def binary(op: str, a, b):
    """`a op b` for two numbers (bools count as ints), with float64's results on overflow."""
    a = int(a) if isinstance(a, bool) else a
    b = int(b) if isinstance(b, bool) else b
    if (getattr(a, "sym", None) is not None or getattr(b, "sym", None) is not None) and op in _SIZE_OPS:
        return _SIZE_OPS[op](a, b)  # sizes under derive: the result keeps its formula (n - 1)
    if isinstance(a, int) and isinstance(b, int):
        if op in _INT_OPS and not (op in ("//", "%") and b == 0):
            result = _INT_OPS[op](a, b)
            if abs(result) < INT_LIMIT:
                return result
        elif op == "**" and b >= 0 and (abs(a) <= 1 or b * math.log2(abs(a)) < 62):
            return a**b
    return _float(op, float(a), float(b))


def _float(op: str, a: float, b: float) -> float:
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "//":
            return a // b
        if op == "%":
            return a % b
        if op == "**":
            return _power(a, b)
    except ZeroDivisionError:
        if op == "/" or op == "//":
            return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
        return math.nan
    except OverflowError:
        return math.inf
    raise ValueError(f"'{op}' is not an operation on numbers")


def _power(a: float, b: float) -> float:
    try:
        result = a**b
    except OverflowError:
        return math.inf if a > 0 or b % 2 == 0 else -math.inf
    except ZeroDivisionError:  # 0.0 ** -1
        return math.inf
    if isinstance(result, complex):  # a negative number to a fractional power
        return math.nan
    return result


def compare(op: str, a, b) -> bool:
    return {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}[op](a, b)

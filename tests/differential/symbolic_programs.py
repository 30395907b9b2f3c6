"""Random straight-line scalar programs for `derive`, and the same program as a SymPy
expression (test and benchmark code only: exec runs text generated here, never a user's)."""

from __future__ import annotations

UNARY = ("sin", "cos", "exp", "tanh", "log", "sqrt")
INPUTS = ("x", "y", "z")


def straight_program(rng, statements: int = 4) -> tuple:
    """(text, inputs): `statements` assignments over x, y, z, the last one the output."""
    names = list(INPUTS)
    lines = []
    for i in range(statements):
        a, b = rng.choice(names), rng.choice(names)
        kind = rng.randint(0, 9)
        if kind == 0:
            e = f"{a} + {b}"
        elif kind == 1:
            e = f"{a} - {rng.choice(('2', '0.5', b))}"
        elif kind == 2:
            e = f"{a} * {b}"
        elif kind == 3:
            e = f"{a} / ({b} * {b} + 1)"
        elif kind == 4:
            e = f"{a} ** {rng.choice((2, 3))}"
        elif kind == 5:
            f = rng.choice(UNARY)
            e = f"{f}({a} * {a} + 0.5)" if f in ("log", "sqrt") else f"{f}({a})"
        elif kind == 6:
            e = f"{rng.choice(('2', '3'))} * {a} * {b}"
        elif kind == 7:
            e = f"{rng.choice(('sin', 'tanh'))}({a}) * {b}"
        elif kind == 8:  # an exponent that is itself an expression
            e = f"({a} * {a} + 0.5) ** tanh({b})"
        else:  # a power of a power
            e = f"(({a} * {a} + 0.5) ** {rng.choice(('1.5', '-0.5', '3'))}) ** {rng.choice(('2', '0.5', b))}"
        name = f"v{i}"
        lines.append(f"{name} = {e}")
        names.append(name)
    return "\n".join(lines) + "\n", {n: round(rng.uniform(0.3, 1.7), 3) for n in INPUTS}


def as_sympy(text: str):
    """(expression of the last statement, {name: Symbol}) for a program of straight_program."""
    import sympy

    symbols = {n: sympy.Symbol(n, real=True) for n in INPUTS}
    namespace = {f: getattr(sympy, f) for f in UNARY}
    namespace.update(symbols)
    exec(compile(text, "<generated>", "exec"), namespace)  # noqa: S102 - text generated above, not a user's
    last = text.strip().splitlines()[-1].split("=")[0].strip()
    return namespace[last], symbols


def sympy_operations(expressions) -> int:
    """Operations, as SymPy's count_ops counts them, in expressions computed once each."""
    import sympy

    return sum(int(sympy.count_ops(e)) for e in expressions)


def derived_as_sympy(statements, symbols) -> list:
    """The derived program's right-hand sides as SymPy expressions, names as symbols."""
    import sympy

    namespace = {f: getattr(sympy, f) for f in UNARY}
    namespace.update(symbols)
    namespace.update(where=sympy.Piecewise, sign=sympy.sign)
    out = []
    for name, text in statements:
        expression = eval(compile(text, "<derived>", "eval"), namespace)  # noqa: S307 - our own output
        out.append(sympy.sympify(expression))
        namespace[name] = sympy.Symbol(name)
    return out

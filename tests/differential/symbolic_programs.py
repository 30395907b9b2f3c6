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
    namespace.update(where=lambda c, a, b: sympy.Piecewise((a, c), (b, True)), sign=sympy.sign,
                     logical_and=sympy.And, logical_or=sympy.Or)
    out = []
    for name, text in statements:
        expression = eval(compile(text, "<derived>", "eval"), namespace)  # noqa: S307 - our own output
        out.append(sympy.sympify(expression))
        namespace[name] = sympy.Symbol(name)
    return out


NESTED_UNARY = ("sin", "cos", "exp", "tanh", "sigmoid")


def nested_program(rng, depth: int = 4) -> tuple:
    """(text, inputs): one statement, a random expression nested `depth` deep over x and y, with
    powers of powers and exponents that are expressions; finite for inputs in [0.3, 1.2]."""
    def expression(level: int) -> str:
        if level == 0 or rng.random() < 0.2:
            return rng.choice(("x", "y", "x", "0.5", "2"))
        a = expression(level - 1)
        kind = rng.randint(0, 8)
        if kind == 0:
            return f"({a} + {expression(level - 1)})"
        if kind == 1:
            return f"({a} - {expression(level - 1)})"
        if kind == 2:
            return f"({a} * {expression(level - 1)})"
        if kind == 3:
            return f"({a} / ({expression(level - 1)} ** 2 + 1))"
        if kind == 4:
            return f"({a} ** 2 + 0.5) ** {rng.choice(('2', '3', '0.5', '-1', '1.5'))}"
        if kind == 5:
            return f"({a} ** 2 + 0.5) ** tanh({expression(level - 1)})"
        if kind == 6:
            return f"(({a} ** 2 + 0.5) ** {rng.choice(('0.5', '3'))}) ** {rng.choice(('2', 'y', '-0.5'))}"
        if kind == 7:
            return f"{rng.choice(('sqrt', 'log'))}({a} ** 2 + 0.5)"
        return f"{rng.choice(NESTED_UNARY)}({a})"

    text = "out = " + expression(depth)
    while "x" not in text.replace("exp", ""):
        text = "out = " + expression(depth)
    return text + "\n", {"x": round(rng.uniform(0.3, 1.2), 3), "y": round(rng.uniform(0.3, 1.2), 3)}


def torch_hessian(text: str, at: dict):
    """PyTorch's Hessian of the program (text generated here) in (x, y), float64, as a dict."""
    import torch

    def tensor_function(f):  # numbers too, as the language's functions take them
        return lambda v: f(v if isinstance(v, torch.Tensor) else torch.tensor(float(v), dtype=torch.float64))

    namespace = {f: tensor_function(getattr(torch, f)) for f in NESTED_UNARY + ("sqrt", "log")}

    def f(x, y):
        scope = dict(namespace, x=x, y=y)
        exec(compile(text, "<nested>", "exec"), scope)  # noqa: S102 - text generated above, not a user's
        return scope["out"]

    point = tuple(torch.tensor(at[n], dtype=torch.float64) for n in ("x", "y"))
    h = torch.autograd.functional.hessian(f, point)
    return {(a, b): float(h[i][j]) for i, a in enumerate("xy") for j, b in enumerate("xy")}

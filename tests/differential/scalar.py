"""Scalar programs with control flow and functions, run by Python (with `math`) and by autodiff.

The same text is exec'd by Python's interpreter with the inputs as globals and `exp log sin cos
tanh sqrt` bound to `math`'s, and run by `autodiff.language.run`. They must give the same
number (rtol 1e-12), or, where Python raises, autodiff must raise a ProgramError.
"""

from __future__ import annotations

import math

from autodiff.language import ProgramError, run

from .programs import RandomProgram

PYTHON_FLAGS = ("closure", "default_once", "read_then_assign", "max_two_args")
MATH = {name: getattr(math, name) for name in ("exp", "log", "sin", "cos", "tanh", "sqrt")}
BOUNDED = ("sin", "cos", "tanh")


class ScalarGen:
    def __init__(self, rng, flags=frozenset()):
        self.rng = rng
        self.flags = set(flags)
        self.lines: list[str] = []
        self.inputs = {name: round(rng.uniform(0.2, 2.0) * rng.choice((-1, 1)), 3) for name in ("a", "b", "c")}
        self.globals = ["a", "b", "c"]  # names always bound at top level
        self.count = 0
        self.functions = []  # (name, number of required parameters)

    def literal(self):
        return self.rng.choice(["0.5", "1.5", "2.0", "-1.0", "3.0", "0.25"])

    def expr(self, names, depth=2):
        text = self._expr(names, depth)
        return text if text.replace("_", "").isalnum() or text[0] == "-" and text[1:].replace(".", "").isdigit() \
            else f"({text})"

    def _expr(self, names, depth):
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            return r.choice(names) if r.random() < 0.8 else self.literal()
        e = self.expr(names, depth - 1)
        kind = r.randint(0, 15)
        if kind == 0:
            return f"{e} + {self.expr(names, depth - 1)}"
        if kind == 1:
            return f"{e} - {self.expr(names, depth - 1)}"
        if kind == 2:
            return f"{r.choice(BOUNDED)}({e}) * {self.expr(names, depth - 1)}"
        if kind == 3:
            f = self.expr(names, depth - 1)
            return f"{e} / (1.0 + {f} * {f})"
        if kind == 4:
            return f"{r.choice(('log', 'sqrt'))}({e} * {e} + 0.5)"
        if kind == 5:
            return f"exp({r.choice(BOUNDED)}({e}))"
        if kind == 6:
            return f"abs({e})"
        if kind == 7:
            return f"-{e}"
        if kind == 8:
            return f"{r.choice(BOUNDED)}({e}) ** 2"
        if kind == 9:
            return f"{e} if {self.cond(names)} else {self.expr(names, depth - 1)}"
        if kind == 11:  # a power with an exponent that is itself an expression, and a power of a power
            base = f"({e} * {e} + 0.5)"
            inner = f"{base} ** {r.choice(BOUNDED)}({self.expr(names, depth - 1)})"
            return inner if r.random() < 0.5 else f"({base} ** {r.choice(('1.5', '-0.5', '2.0'))}) ** {r.choice(BOUNDED)}({e})"
        if kind == 12:  # floor division and remainder with negative operands, as Python rounds them
            return f"{r.choice(('7', '-7', '9', '-9.5'))} // {r.choice(('2', '-2', '4', '-3'))} * {e}"
        if kind == 13:
            return f"({e} * 3.0) % {r.choice(('2.0', '-2.0', '1.5', '-0.75'))}"
        if kind == 14:
            return f"({r.choice(('7', '-7', '5'))} % {r.choice(('-2', '3', '-4'))}) * {e}"
        if kind == 10 and self.functions:
            name, required = r.choice(self.functions)
            args = [self.expr(names, 0) for _ in range(required)]
            if r.random() < 0.4:
                args.append(self.expr(names, 0))
            return f"{name}({', '.join(args)})"
        return f"{r.choice(BOUNDED)}({e})"

    def cond(self, names):
        r = self.rng
        c = f"{self.expr(names, 1)} {r.choice(['>', '<', '>=', '<='])} {self.literal()}"
        if r.random() < 0.2:
            c = f"{c} {r.choice(['and', 'or'])} {r.choice(names)} > 0.0"
        if r.random() < 0.1:
            c = f"not {c}"
        return c

    def block(self, names, indent, local_prefix, statements, in_function=False):
        """Statements that assign new names (returned) using `names`."""
        r = self.rng
        names = list(names)
        for _ in range(statements):
            kind = r.random()
            target = f"{local_prefix}{self.count}"
            self.count += 1
            if kind < 0.35 or not names:
                self.lines.append(f"{indent}{target} = {self.expr(names or ['1.0'])}")
            elif kind < 0.5:
                self.lines.append(f"{indent}{target} = {self.expr(names)}")
                op = r.choice(["+=", "-=", "*="])
                rhs = self.expr(names, 1)
                if op == "*=":
                    rhs = f"{r.choice(BOUNDED)}({rhs})"
                self.lines.append(f"{indent}{target} {op} {rhs}")
            elif kind < 0.7:
                self.lines.append(f"{indent}if {self.cond(names)}:")
                self.lines.append(f"{indent}    {target} = {self.expr(names)}")
                if r.random() < 0.5:
                    self.lines.append(f"{indent}elif {self.cond(names)}:")
                    self.lines.append(f"{indent}    {target} = {self.expr(names)}")
                self.lines.append(f"{indent}else:")
                self.lines.append(f"{indent}    {target} = {self.expr(names)}")
            elif kind < 0.85:
                self.lines.append(f"{indent}{target} = {self.expr(names, 1)}")
                self.lines.append(f"{indent}for i in range({r.randint(0, 4)}):")
                self.lines.append(f"{indent}    {target} = tanh({target}) * {self.expr(names, 1)} + i * 0.5")
                if r.random() < 0.3:
                    self.lines.append(f"{indent}    if {target} > 1.0:")
                    self.lines.append(f"{indent}        {target} -= 0.5")
            elif in_function and kind < 0.93:
                self.lines.append(f"{indent}if {self.cond(names)}:")
                self.lines.append(f"{indent}    return {self.expr(names)}")
                continue
            elif kind < 0.97:
                self.lines.append(f"{indent}{target} = {self.expr(names)}")
            else:  # bound on one branch only: Python's NameError when the branch is not taken
                self.lines.append(f"{indent}if {self.cond(names)}:")
                self.lines.append(f"{indent}    {target} = {self.expr(names)}")
            names.append(target)
        return names

    def function(self):
        r = self.rng
        name = f"f{len(self.functions)}"
        required = r.randint(1, 2)
        params = ["p", "q"][:required]
        default = self.literal()
        forced = []
        self.lines.append(f"def {name}({', '.join(params)}, k={default}):")
        names = self.block(params + ["k"] + self.globals, "    ", "l", r.randint(0, 3), in_function=True)
        if r.random() < 0.5:  # a nested function, using only its own parameters and globals
            self.lines.append(f"    def g{name}(s, t=0.5):")
            self.lines.append(f"        return {self.expr(['s', 't'] + self.globals)}")
            names.append(f"g{name}(p)")
        if "closure" in self.flags:
            local = f"l{self.count}"
            self.count += 1
            self.lines.append(f"    {local} = p * 2.0 + 1.0")
            self.lines.append(f"    def h{name}(s):")
            self.lines.append(f"        return s + {local}")
            forced.append(f"h{name}(p)")
            if r.random() < 0.5:  # a global of the same name, which the closure must not see
                self.lines.insert(0, f"{local} = -7.0")
        if "read_then_assign" in self.flags:
            victim = r.choice(self.globals)
            self.lines.append(f"    l{self.count} = {victim} + p")
            self.lines.append(f"    {victim} = 1.0")
            forced.append(f"l{self.count}")
            self.count += 1
        self.lines.append(f"    return {' + '.join([self.expr(names[:1] + names[-3:], 1)] + forced)}")
        self.functions.append((name, required))

    def build(self, statements) -> RandomProgram:
        r = self.rng
        names = list(self.globals)
        if "default_once" in self.flags:
            self.lines += ["d = 1.0", "def fd(p, k=d):", "    return p * k", f"d = {self.expr(names, 1)}"]
            self.functions.append(("fd", 1))
        for _ in range(statements):
            if r.random() < 0.3:
                self.function()
            else:
                new = self.block(names, "", "g", 1)
                self.globals.append(new[-1])
                names = new
        if "max_two_args" in self.flags:
            names.append(f"{r.choice(('max', 'min'))}({names[-1]}, {r.choice(['0.0', '0'])})")
        calls = [f"{f}({', '.join(['a', 'b'][:n])})" for f, n in self.functions] if self.flags else []
        if "max_two_args" in self.flags:
            calls.append(names[-1])
        self.lines.append(f"result = {' + '.join([self.expr(names[-4:], 2)] + calls)}")
        self.lines.append("result")
        return RandomProgram("\n".join(self.lines) + "\n", dict(self.inputs), "result", "scalar")


def scalar_program(rng, flags=frozenset(), statements=None) -> RandomProgram:
    return ScalarGen(rng, flags).build(statements if statements is not None else rng.randint(1, 6))


def compare_python(program: RandomProgram) -> str | None:
    """None when Python and autodiff agree (same value, or both refuse), else what differs."""
    namespace = dict(MATH)
    namespace.update(program.inputs)
    try:
        exec(compile(program.text, "<program>", "exec"), namespace)  # noqa: S102 - our own generated text
        expected, python_error = float(namespace[program.output]), None
    except (NameError, ZeroDivisionError, ValueError, OverflowError, TypeError) as exc:
        expected, python_error = None, exc
    try:
        got = float(run(program.text, at=program.inputs).output)
    except ProgramError as exc:
        if python_error is not None:
            return None
        return f"autodiff raised {type(exc).__name__} ({str(exc).splitlines()[0]}); Python gave {expected!r}"
    if python_error is not None:
        return f"Python raised {type(python_error).__name__} ({python_error}); autodiff returned {got!r}"
    if math.isnan(expected) and math.isnan(got):
        return None
    if not math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12):
        return f"autodiff {got!r}, Python {expected!r}"
    return None

"""Habits from other tools, and what to write here instead.

A newcomer writes what PyTorch, NumPy, Python or a maths textbook taught them: `torch.sum(x)`,
`ln(x)`, `2x`, `x²`, `while`, `e ** x`, `log(x, 2)`, and the autograd tutorials' own lines
(`e.backward()`, `u.retain_grad()`, `a.grad`, `a.requires_grad = False`). Each is recognised
here and answered with the spelling this language has, or, where it has none, with what it
has: the commands run backward and show the gradients themselves.
"""

from __future__ import annotations

# Prefixes of other libraries: autodiff's functions are called by their names alone.
MODULES = frozenset({"torch", "np", "numpy", "math", "cmath", "F", "nn", "functional", "jnp", "jax", "tf",
                     "scipy", "sp", "sympy", "autodiff", "linalg"})

# Functions of other tools that autodiff does not have -> what to write instead (a `{x}` stands for
# the arguments' text, `{xp}` for them in parentheses where they need them).
FOREIGN_FUNCTIONS = {
    "ln": "log({x})",
    "power": "pow({x})",
    "fabs": "abs({x})",
    "average": "mean({x})",
    "logistic": "sigmoid({x})",
    "expit": "sigmoid({x})",
    "cbrt": "sign({x}) * abs({x}) ** (1/3)",
    "array": "a list, [1, 2, 3]",
    "tensor": "a list, [1, 2, 3]",
    "asarray": "a list, [1, 2, 3]",
    "print": "the value alone: the output is shown",
}
NOT_AVAILABLE: dict = {}  # names of other tools with no counterpart here -> what to say

# Python statements the language does not have -> what it has.
PYTHON_CONSTRUCTS = {
    "while": "'while' loops are not part of the language: use a bounded loop, `for i in range(n):`",
    "import": "'import' is not part of the language, nor needed: every function is built in (write log(x), "
              "not math.log(x))",
    "from": "'from ... import' is not part of the language, nor needed: every function is built in",
    "lambda": "'lambda' is not part of the language: define a function, `def f(x): return ...`",
    "class": "'class' is not part of the language: a program is statements and functions (`def`)",
    "try": "'try' is not part of the language: a program's errors end it with a message",
    "except": "'except' is not part of the language: a program's errors end it with a message",
    "raise": "'raise' is not part of the language",
    "assert": "'assert' is not part of the language: check derivatives with `autodiff grad --check`",
    "del": "'del' is not part of the language",
    "global": "'global' is not part of the language",
    "nonlocal": "'nonlocal' is not part of the language",
    "yield": "'yield' is not part of the language: use `return`",
    "async": "'async' is not part of the language",
    "await": "'await' is not part of the language",
}

# The autograd tutorials' Tensor methods and attributes: what the commands do in their place. `{x}`
# stands for the receiver's text (`u` in `u.retain_grad()`).
_GRAD_SHOWN = "`autodiff grad` runs backward from the program's output (its last statement) and prints every " \
              "input's gradient"
AUTOGRAD_METHODS = {
    "backward": _GRAD_SHOWN + ": end the program with `{x}` instead of calling backward",
    "retain_grad": "is an option of the commands here, not a method: `autodiff grad FILE --retain {x}` "
                   "(`%%autodiff --retain {x}` in a notebook) shows {x}'s gradient; remove this line",
    "requires_grad_": "inputs require grad already; to differentiate with respect to a value the program makes, "
                      "declare it an input: `NAME: input = {x}`",
    "register_hook": "a program has no hooks: `autodiff explain` shows every gradient that flows, edge by edge",
    "item": "a program's values are shown as they are: write `{x}`",
}
AUTOGRAD_ATTRIBUTES = {
    "grad": _GRAD_SHOWN + " ({x}'s among them, and a variable's with --retain NAME); a program cannot read one",
    "requires_grad": "the tables of `autodiff grad` show each value's requires_grad; every input requires grad",
    "is_leaf": "the tables of `autodiff grad` show each value's is_leaf",
    "grad_fn": "the tables of `autodiff grad` show each value's grad_fn, and `autodiff graph` the whole graph",
    "data": "write detach({x}) for its value without a history",
}


def autograd_advice(name: str, receiver: str, called: bool) -> str | None:
    """What the commands do for `x.backward()`, `u.retain_grad()`, `a.grad`..., or None."""
    table = AUTOGRAD_METHODS if called else AUTOGRAD_ATTRIBUTES
    if name not in table:
        return None
    advice = table[name].format(x=receiver or "x")
    if advice.startswith("is "):  # a whole sentence of its own
        return f"{name!r} {advice}"
    return f"{name!r} is not {'a method' if called else 'an attribute'} here: {advice}"


def assignment_advice(receiver: str, attribute: str, value: str) -> str | None:
    """`a.requires_grad = False`: what the language writes instead (None: no advice but the usual)."""
    if attribute == "requires_grad":
        if value == "False":
            return (f"inputs require grad; to hold {receiver} constant, declare it a constant: "
                    f"`{receiver}: const = VALUE` (or name the others with --wrt)")
        return f"inputs require grad already: remove this line ({receiver}, used and never assigned, is an input)"
    if attribute == "grad":
        return "gradients are not kept between runs: remove this line"
    return None


def power_of_e_advice(exponent: str | None) -> str:
    """`e ** x` with no value for e: Euler's number is exp(1) here (`exponent`: x's text, None
    where e is not raised to a power)."""
    if exponent is None:
        return "e is not a constant here: write exp(1) for Euler's number"
    if exponent.startswith("(") and exponent.endswith(")") and _balanced(exponent[1:-1]):
        exponent = exponent[1:-1]
    return f"for Euler's number to a power write exp({exponent}) (e is not a constant here; exp(1) is e)"


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if depth < 0:
            return False
    return depth == 0


def two_argument_log_advice(arguments: list) -> str:
    """`log(x, 2)`: the language's log takes one argument, the natural logarithm."""
    x, base = arguments
    named = {"2": "log2", "2.0": "log2", "10": "log10", "10.0": "log10"}.get(base.strip())
    if named:
        return f"log takes one argument (the natural logarithm): write {named}({x}) for the logarithm base {base}"
    return (f"log takes one argument (the natural logarithm): write log({x}) / log({base}) for the logarithm "
            f"base {base}")


SUPERSCRIPTS = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8", "⁹": "9"}
SYMBOL_NAMES = {"π": "pi", "∞": "inf", "θ": None}


def function_advice(name: str, arguments: str = "x") -> str | None:
    """What to write instead of another tool's function `name` (None: not one we know)."""
    if name in NOT_AVAILABLE:
        return NOT_AVAILABLE[name]
    if name in FOREIGN_FUNCTIONS:
        x = arguments or "x"
        operand = x if x.replace(".", "").replace("_", "").isalnum() else f"({x})"
        return "write " + FOREIGN_FUNCTIONS[name].format(x=x, xp=operand)
    return None


def module_advice(module: str, attribute: str, arguments: str, called: bool) -> str:
    """`torch.sum(x)` -> "write sum(x): functions are called by their names alone, without 'torch.'".
    Dropping the prefix is advised only where the bare name exists."""
    from .builtins import CONSTANTS, FUNCTIONS, KNOWN_NAMES, WORDS, suggestion

    without = f"without {module + '.'!r}"
    if module.split(".")[-1] == "linalg" and f"linalg_{attribute}" in FUNCTIONS:  # torch.linalg.solve(A, b)
        name = f"linalg_{attribute}"
        return f"write {name}({arguments}): the language names torch.linalg's functions linalg_<name>" \
            if called else f"write {name}(...): the language names torch.linalg's functions linalg_<name>"
    if attribute in ("no_grad", "enable_grad"):
        return f"write `with {attribute}:`, {without}"
    if attribute in FUNCTIONS or attribute in WORDS:
        return f"write {attribute}({arguments})" + f": functions are called by their names alone, {without}" \
            if called else f"write {attribute}: names stand alone, {without}"
    if attribute in CONSTANTS:
        return f"write {attribute}, {without}"
    if attribute == "e" and not called:
        return f"write exp(1) for e, {without}"
    advice = function_advice(attribute, arguments)
    if advice is not None:
        return f"{advice} ({without})"
    what = "function " if called else ""
    return f"autodiff has no {what}{attribute!r}, with or {without}{suggestion(attribute, KNOWN_NAMES)}"


def name_advice(name: str) -> str | None:
    """A name made of maths symbols: `x²` -> write x**2; `π` -> write pi."""
    if name in SYMBOL_NAMES and SYMBOL_NAMES[name]:
        return f"{name!r} is not a name here: write {SYMBOL_NAMES[name]}"
    for index, ch in enumerate(name):
        if ch in SUPERSCRIPTS:
            base = name[:index]
            power = "".join(SUPERSCRIPTS.get(c, c) for c in name[index:])
            if base and all(c in SUPERSCRIPTS for c in name[index:]):
                return f"write {base}**{power} for {name}: superscripts are not powers here"
    return None

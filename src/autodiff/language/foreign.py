"""Habits from other tools, and what to write here instead.

A newcomer writes what PyTorch, NumPy, Python or a maths textbook taught them: `torch.sum(x)`,
`ln(x)`, `2x`, `x²`, `while`. Each is recognised here and answered with the spelling this
language has, or, where it has none, with what it has.
"""

from __future__ import annotations

# Prefixes of other libraries: autodiff's functions are called by their names alone.
MODULES = frozenset({"torch", "np", "numpy", "math", "cmath", "F", "nn", "functional", "jnp", "jax", "tf",
                     "scipy", "sp", "sympy", "autodiff", "linalg"})

# Functions of other tools -> what to write in autodiff (a `{x}` stands for the arguments' text).
FOREIGN_FUNCTIONS = {
    "ln": "log({x})",
    "power": "pow({x})",
    "fabs": "abs({x})",
    "amax": "max({x})",
    "amin": "min({x})",
    "average": "mean({x})",
    "logistic": "sigmoid({x})",
    "expit": "sigmoid({x})",
    "softplus": "log1p(exp({x}))",
    "cbrt": "sign({x}) * abs({x}) ** (1/3)",
    "norm": "sqrt(sum({xp}**2))",
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

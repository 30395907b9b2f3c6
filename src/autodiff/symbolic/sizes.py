"""Named sizes: formulas that hold for every size.

A derivation with named sizes (`--shape x=n`, `x: input[n]`) is traced with each name at a
distinct prime (`TRACED`), so that every integer the trace makes from sizes (a shape, a count,
mean's 1/n) factors into them one way only, and is written back as the names: `(7, 11)` as
`(n, m)`, `1/77` as `1 / (n * m)`. A literal of the program that happens to be such a product
would be misread, which is why derive traces a second time with other primes (`CHECKED`) and
keeps the generic text only where both traces write the same.
"""

from __future__ import annotations

import math

from . import expr as E

TRACED = (7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)
CHECKED = (53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103)


class SizeNames:
    """{name: its size in this trace}; writes integers and fractions made of them by name."""

    def __init__(self, values: dict, likes: dict | None = None) -> None:
        self.values = dict(values)
        self.by_prime = {v: n for n, v in values.items() if _is_prime(v)}
        self.likes = likes or {}  # shape -> the first input of that shape (ones_like(x))

    def __bool__(self) -> bool:
        return bool(self.by_prime)

    def renamed(self, names: dict) -> "SizeNames":
        """The same sizes, those in `names` written by their new names."""
        return SizeNames({names.get(n, n): v for n, v in self.values.items()},
                         {shape: names.get(n, n) for shape, n in self.likes.items()})

    def factors(self, value: int) -> tuple:
        """(the part of `value` that is no named size, [names with multiplicity])."""
        names = []
        rest = int(value)
        if rest <= 0:
            return rest, names
        for prime, name in sorted(self.by_prime.items()):
            while rest % prime == 0:
                names.append(name)
                rest //= prime
        return rest, names

    def integer_text(self, value: int) -> str | None:
        """`n`, `n * m`, `2 * n`: an integer made of named sizes, or None."""
        rest, names = self.factors(value)
        if not names:
            return None
        parts = ([] if rest == 1 else [str(rest)]) + names
        return " * ".join(parts)

    def ratio(self, value: float):
        """(plain number, names above, names below) with value == plain * above / below, where
        some names are used; else None."""
        if not self.by_prime or not math.isfinite(value) or value == 0:
            return None
        from fractions import Fraction  # only here: fractions costs start-up time

        fraction = Fraction(value).limit_denominator(10 ** 12)
        if abs(float(fraction) - value) > 1e-15 * abs(value):
            return None
        top, above = self.factors(abs(fraction.numerator))
        bottom, below = self.factors(fraction.denominator)
        if not above and not below:
            return None
        if top > 1000 or bottom > 1000:  # an irrational constant (1/√2) that happens to factor: not sizes
            return None
        plain = math.copysign(top / bottom, value)
        return plain, above, below


def _is_prime(value) -> bool:
    return isinstance(value, int) and value in TRACED + CHECKED


def assign(names, taken: dict, primes: tuple) -> dict:
    """{name: size}: the sizes `taken` gives, the others a prime of `primes` each, the larger to
    the name met first: a data matrix X (m, n) is traced taller than wide, as data is, so that
    XᵀX is invertible where it is traced."""
    free_names = [name for name in names if name not in taken]
    free = iter([p for p in primes if p not in taken.values()][:len(free_names)][::-1])
    return {name: taken[name] if name in taken else next(free) for name in names}


def in_order(shapes: dict) -> list:
    """The size names of `shapes` ({input: its sizes}), in the order they are first met."""
    return list(dict.fromkeys(size for dims in shapes.values() for size in dims if isinstance(size, str)))


# -- sizes as numbers that remember what they are -----------------------------------------------------
#
# While derive traces at prime sizes, a traced tensor's shape is made of `SizeInt`s: ints that
# carry the expression of the size they are (`n`, `n * m`). The engine's formulas compute with
# shapes in plain Python (`2 / (n - correction)`, `math.prod(shape)`), and every such number
# carries its expression on (`SizeFloat`), so that the derivative says `2 / (n - 1)` where the
# trace computed 2 / 6. Where a formula leaves Python's arithmetic (NumPy's, math.sqrt) the
# number is plain again, and the two traces at different primes find it out.


class _SizeArithmetic:
    """The arithmetic of a number that carries `sym`, an expression of named sizes."""

    def _other(self, other):
        """(other's value, its expression) for a number; None for anything else."""
        sym = getattr(other, "sym", None)
        if sym is not None:
            return other, sym
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return other, E.const(float(other))
        return None

    def _made(self, value, sym):
        if isinstance(value, int) and not isinstance(value, bool):
            return SizeInt(value, sym)
        if isinstance(value, float):
            return SizeFloat(value, sym)
        return value

    def _binary(self, other, compute, combine, reflected: bool = False):
        found = self._other(other)
        if found is None:
            return NotImplemented
        value, sym = found
        plain_self, plain_other = self._plain(), value._plain() if isinstance(value, _SizeArithmetic) else value
        if reflected:
            return self._made(compute(plain_other, plain_self), combine(sym, self.sym))
        return self._made(compute(plain_self, plain_other), combine(self.sym, sym))

    def __add__(self, other):
        return self._binary(other, lambda a, b: a + b, lambda a, b: a + b)

    def __radd__(self, other):
        return self._binary(other, lambda a, b: a + b, lambda a, b: a + b, True)

    def __sub__(self, other):
        return self._binary(other, lambda a, b: a - b, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._binary(other, lambda a, b: a - b, lambda a, b: a - b, True)

    def __mul__(self, other):
        return self._binary(other, lambda a, b: a * b, lambda a, b: a * b)

    def __rmul__(self, other):
        return self._binary(other, lambda a, b: a * b, lambda a, b: a * b, True)

    def __truediv__(self, other):
        return self._binary(other, lambda a, b: a / b, lambda a, b: a / b)

    def __rtruediv__(self, other):
        return self._binary(other, lambda a, b: a / b, lambda a, b: a / b, True)

    def __pow__(self, other):
        if isinstance(other, (int, float)) and not isinstance(other, bool) and getattr(other, "sym", None) is None:
            return self._made(self._plain() ** other, E.power(self.sym, float(other)))
        return NotImplemented

    def __neg__(self):
        return self._made(-self._plain(), -self.sym)

    def __pos__(self):
        return self


class SizeInt(_SizeArithmetic, int):
    """A size, or an integer made of sizes, that knows its expression (`n`, `n * m`)."""

    def __new__(cls, value: int, sym):
        made = int.__new__(cls, value)
        made.sym = sym
        return made

    def _plain(self) -> int:
        return int(self)

    __hash__ = int.__hash__
    __repr__ = int.__repr__
    __str__ = int.__repr__


class SizeFloat(_SizeArithmetic, float):
    """A number computed from sizes (`2 / (n - 1)`) that knows its expression."""

    def __new__(cls, value: float, sym):
        made = float.__new__(cls, value)
        made.sym = sym
        return made

    def _plain(self) -> float:
        return float(self)

    __hash__ = float.__hash__
    __repr__ = float.__repr__
    __str__ = float.__repr__


def symbolic_size(value: int, by_prime: dict, sizes: dict):
    """`value` (a dimension of a traced shape) as a SizeInt where it is a product of named sizes
    at their traced primes, else itself. `sizes` caches {value: SizeInt}."""
    found = sizes.get(value)
    if found is not None:
        return found
    rest, names = int(value), []
    if rest > 1:
        for prime, name in sorted(by_prime.items()):
            while rest % prime == 0:
                names.append(name)
                rest //= prime
    if not names:
        return value
    sym = E.const(float(rest))
    for name in names:
        sym = sym * E.size(name)
    made = sizes[value] = SizeInt(value, sym)
    return made

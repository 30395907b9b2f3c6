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

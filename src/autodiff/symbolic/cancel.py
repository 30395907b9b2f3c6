"""Sums of products multiplied out where that makes them smaller, and common factors taken out.

A derivative by the chain rule keeps the factors each step wrote: the gradient of a logistic
loss comes out as `p * (1 - p) * ((1 - y) / (1 - p) - y / p)`, which is `p - y`. Multiplying
out lets the algebra's canonical products cancel (`(1 - p) * (1 - p) ** -1` is 1) and its sums
collect like terms; taking out a factor every term shares writes `p - p ** 2` as `p * (1 - p)`;
a sum of fractions over their common denominator, its numerator multiplied out, is one fraction
where that is shorter (`t / u - t ** 2 / u ** 2` with `u = t + 1` is `t / u ** 2`).
`smaller(e)` gives whichever of e and its rewrites has the fewest operations, so it never makes
a formula longer. It works within limits (how deep it looks, how many terms it makes): past
them, e is kept as it is.
"""

from __future__ import annotations

from . import expr as E

_DEPTH = 12  # how deep into nested sums and products it multiplies out
_TERMS = 48  # the most terms a multiplied-out sum may have
_POWER = 3  # a sum raised to a whole power up to this is multiplied out


def smaller(e: E.Expr) -> E.Expr:
    """e, or an equal expression with fewer operations (multiplied out, a common factor out)."""
    if e.op not in ("add", "mul") or not any(b.op == "add" for b in _sums_inside(e)):
        return e
    terms = _expanded(e, 0)
    if terms is None:
        return e
    flat = E.with_shape(E.add(*[E.mul(E.const(k), m) for m, k in terms]), e.shape)
    return min((e, flat, _factored(flat), _together(flat), _factored(e)), key=operations)


def _sums_inside(e: E.Expr):
    """The sums a product or sum holds directly (what multiplying out would open)."""
    if e.op == "add":
        for t, _ in e.args[1]:
            if t.op == "mul":
                yield from (b for b, _ in t.args[1])
            yield t
    else:
        yield from (b for b, _ in e.args[1])


def _expanded(e: E.Expr, depth: int):
    """e as [(monomial, coefficient)], products of sums multiplied out; None past the limits."""
    if depth > _DEPTH:
        return [(e, 1.0)]
    if e.op == "add":
        number, terms = e.args
        return _terms_of(terms, depth, [(E.const(1.0, ()), number)] if number else [])
    if e.op == "expand":
        return _expanded(e.args[0], depth + 1)
    if e.op != "mul":
        return [(e, 1.0)]
    chosen = _sum_to_open(e)
    if chosen is None:
        return [(e, 1.0)]
    base, exponent = chosen
    rest = E.mul(*[E.power(b, x) for b, x in e.args[1] if b is not base], E.const(e.args[0]),
                 E.power(base, exponent - 1.0))
    number, terms = base.args
    # each term times the rest, the product merged first: what cancels, cancels
    return _terms_of([(E.mul(rest, t), k) for t, k in terms + (((E.const(1.0), number),) if number else ())], depth)


def _terms_of(terms, depth: int, out: list | None = None):
    """The monomials of Σ k·t over `terms` ([(t, k)]), after `out`; None past the limits."""
    out = [] if out is None else out
    for t, k in terms:
        inner = _expanded(t, depth + 1)
        if inner is None:
            return None
        out.extend((m, k * c) for m, c in inner)
        if len(out) > _TERMS:
            return None
    return out


def _sum_to_open(e: E.Expr):
    """The factor of a product to multiply out first: a sum (to a whole power) one of whose terms
    divides by another factor of the product, so that they cancel; else the first sum."""
    sums = [(b, x) for b, x in e.args[1]
            if b.op == "add" and x.__class__ is float and x.is_integer() and 0 < x <= _POWER]
    if not sums:
        return None
    bases = {b for b, _ in e.args[1]}
    for b, x in sums:
        for t, _ in b.args[1]:
            if any(base in bases and (y.__class__ is not float or y < 0) for base, y in _factors(t).items()):
                return b, x
    return sums[0]


def _together(e: E.Expr) -> E.Expr:
    """A sum over a common denominator, its numerator multiplied out: t / u - t ** 2 / u ** 2 is
    t * (u - t) / u ** 2, and with u = t + 1, t / u ** 2."""
    if e.op != "add":
        return e
    number, terms = e.args
    denominator: dict = {}
    for t, _ in terms:
        for base, exponent in _factors(t).items():
            if exponent.__class__ is float and exponent < 0:
                denominator[base] = max(denominator.get(base, 0.0), -exponent)
    if not denominator:
        return e
    common = [E.power(b, x) for b, x in denominator.items()]
    numerator = [(E.mul(t, *common), k) for t, k in terms] + ([(E.mul(*common), number)] if number else [])
    expanded = _terms_of(numerator, 0)
    if expanded is None:
        return e
    top = E.add(*[E.mul(E.const(k), m) for m, k in expanded])
    return E.with_shape(E.mul(_factored(top), *[E.power(b, -x) for b, x in denominator.items()]), e.shape)


def _factors(t: E.Expr) -> dict:
    """{base: exponent} of a term (a plain node is its own base, to the first power)."""
    if t.op == "mul":
        return {b: x for b, x in t.args[1]}
    if t.op == "pow":
        return {t.args[0]: t.args[1]}
    return {t: 1.0}


def _factored(e: E.Expr) -> E.Expr:
    """A sum with what every term shares taken out: p - p ** 2 is p * (1 - p), a / √u + b / u^1.5
    is (a + b / u) / √u."""
    if e.op != "add" or e.args[0]:
        return e
    terms = e.args[1]
    each = [_factors(t) for t, _ in terms]
    common = {}
    for base, exponent in each[0].items():  # a power every term has, of one sign: the least of it
        if exponent.__class__ is not float or exponent == 0:
            continue
        sign = 1.0 if exponent > 0 else -1.0  # p, p²: p; 1/√u, u^-1.5: 1/√u
        lowest = exponent
        for other in each[1:]:
            x = other.get(base)
            if x is None or x.__class__ is not float or x * sign <= 0:
                lowest = None
                break
            lowest = min(lowest, x) if sign > 0 else max(lowest, x)
        if lowest is not None:
            common[base] = lowest
    if not common:
        return e
    taken = E.mul(*[E.power(b, x) for b, x in common.items()])
    rest = E.add(*[E.mul(E.const(k), t, E.power(taken, -1.0)) for t, k in terms])
    return E.with_shape(E.mul(taken, _factored(rest)), e.shape)


def operations(e: E.Expr) -> int:
    """How many operations e takes: each call, each + or * between parts, each power and each
    number that scales a part (each shared node once)."""
    count = 0
    for node in E.postorder([e]):
        op = node.op
        if op in ("sym", "const", "tensor"):
            continue
        if op == "add":
            number, terms = node.args
            count += len(terms) - 1 + (number != 0) + sum(k not in (1.0, -1.0) for _, k in terms)
        elif op == "mul":
            k, factors = node.args
            count += len(factors) - 1 + (k not in (1.0, -1.0)) + sum(x != 1.0 for _, x in factors)
        else:
            count += 1
    return count

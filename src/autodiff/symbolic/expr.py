"""Symbolic expressions: a hash-consed DAG kept in a canonical form as it is built.

Every node is made once per structure (`Expr` objects are interned), so equal subexpressions
are one object and a derivative's shared parts are found for free. The constructors simplify
as they build, as computer algebra does:

- sums keep one coefficient per term (`x + x` is `2 * x`) and one number;
- products keep one exponent per base (`x * x` is `x ** 2`) and one number;
- a call whose arguments are all numbers is computed (constant folding);
- shape-only operations that change nothing are dropped (`sum_to(g, shape of g)` is `g`).

Shapes follow NumPy broadcasting. A node's `shape` is the shape of the value it stands for;
where simplifying a sum or a product loses the term that gave it its shape (`0 * x + 1` for a
vector x), the result is wrapped in `expand(..., shape)` so that the shape is never lost.

The algebra is the real numbers': `x / x` is `1` and `0 * y` is `0` even where y is infinite,
as in SymPy; `--check` compares a derived program with the engine at points.
"""

from __future__ import annotations

import itertools
import math
import weakref

import numpy as np

# A sum or product nested in another is merged into it only up to this many parts: beyond, it
# stays one part, so that reverse mode's shared partial products (a chain's running gradient)
# are kept, and a derivative stays linear in the size of the program.
FLATTEN = 4

_TABLE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_ORDER = itertools.count()


class Expr:
    """One node. `op` is "sym", "const", "tensor", "add", "mul" or an operation's name."""

    __slots__ = ("op", "args", "shape", "symbolic", "order", "parts", "__weakref__")

    def __repr__(self) -> str:
        from .printing import to_text

        return f"Expr({to_text(self)})"

    # Python's operators build expressions, so that a rule reads as the formula it applies.
    def __add__(self, other):
        return add(self, lift(other))

    def __radd__(self, other):
        return add(lift(other), self)

    def __sub__(self, other):
        return add(self, neg(lift(other)))

    def __rsub__(self, other):
        return add(lift(other), neg(self))

    def __mul__(self, other):
        return mul(self, lift(other))

    def __rmul__(self, other):
        return mul(lift(other), self)

    def __truediv__(self, other):
        return mul(self, power(lift(other), -1.0))

    def __neg__(self):
        return neg(self)

    def __pow__(self, other):
        return power(self, other)

    @property
    def number(self):
        """The value of a uniform constant (a number), else None."""
        return self.args[0] if self.op == "const" else None


def _intern(op: str, args: tuple, shape: tuple, symbolic: bool) -> Expr:
    key = (op, args, shape)
    found = _TABLE.get(key)
    if found is not None:
        return found
    e = object.__new__(Expr)
    e.op, e.args, e.shape, e.symbolic, e.order, e.parts = op, args, shape, symbolic, next(_ORDER), None
    _TABLE[key] = e
    return e


# -- leaves -----------------------------------------------------------------------------------------


def symbol(name: str, shape: tuple = ()) -> Expr:
    return _intern("sym", (name,), tuple(shape), True)


def const(value: float, shape: tuple = ()) -> Expr:
    """A number, repeated over `shape` (a uniform constant)."""
    value = float(value)
    if value == 0:
        value = 0.0  # -0.0 and 0.0 are one constant
    return _intern("const", (value,), tuple(shape), False)


class ArrayKey:
    """An array as a hashable value: constants that are not uniform (a literal, a mask)."""

    __slots__ = ("array", "_key")

    def __init__(self, array) -> None:
        self.array = np.ascontiguousarray(array)
        self._key = (self.array.dtype.str, self.array.shape, self.array.tobytes())

    def __eq__(self, other) -> bool:
        return isinstance(other, ArrayKey) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)


def constant(array) -> Expr:
    """An array constant: uniform ones become `const`; booleans and others stay arrays."""
    array = np.asarray(array)
    if array.dtype.kind in "fiu" and array.size and (array == array.flat[0]).all():
        return const(float(array.flat[0]), array.shape)
    if array.dtype.kind in "fiu" and not array.size:
        return const(0.0, array.shape)
    return _intern("tensor", (ArrayKey(array),), array.shape, False)


def lift(value) -> Expr:
    return value if isinstance(value, Expr) else constant(value)


def call(op: str, args: tuple, shape: tuple) -> Expr:
    """An operation the algebra does not look inside (`exp(x)`, `sum(x, 1)`): args are
    expressions or static parameters (dims, shapes)."""
    symbolic = any(isinstance(a, Expr) and a.symbolic for a in args) or \
        any(isinstance(x, Expr) and x.symbolic for a in args if isinstance(a, tuple) for x in a)  # cat's tensors
    return _intern(op, tuple(args), tuple(shape), symbolic)


# -- shapes -----------------------------------------------------------------------------------------


def broadcast(*shapes) -> tuple:
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


def with_shape(e: Expr, shape: tuple) -> Expr:
    """`e` broadcast to `shape` (which it must broadcast to)."""
    shape = tuple(shape)
    if e.shape == shape:
        return e
    if e.op == "const":
        return const(e.args[0], shape)
    return call("expand", (e, shape), shape)


# -- sums -------------------------------------------------------------------------------------------


def _split_coefficient(e: Expr) -> tuple:
    """(k, rest): e == k * rest with k a number (rest None for a plain number)."""
    if e.op == "const":
        return e.args[0], None
    if e.op == "mul" and e.args[0] != 1.0:
        k, factors = e.args
        return k, _product(1.0, factors, broadcast(*(b.shape for b, _ in factors)))
    return 1.0, e


def add(*parts: Expr) -> Expr:
    shape = broadcast(*(p.shape for p in parts))
    number = 0.0
    terms: dict = {}
    pending = list(parts)
    while pending:
        p = pending.pop()
        if p.op == "expand":  # the sum's shape is restored at the end
            p = p.args[0]
        if p.op == "add" and len(p.args[1]) <= FLATTEN:
            number += p.args[0]
            pending.extend(term if k == 1.0 else mul(const(k), term) for term, k in p.args[1])
            continue
        k, rest = _split_coefficient(p)
        if rest is None:
            number += k
        else:
            terms[rest] = terms.get(rest, 0.0) + k
    kept = tuple(sorted(((t, k) for t, k in terms.items() if k != 0), key=lambda tk: tk[0].order))
    if not kept:
        return const(number, shape)
    if number == 0 and len(kept) == 1:
        term, k = kept[0]
        return with_shape(term if k == 1.0 else mul(const(k), term), shape)
    inner = broadcast(*(t.shape for t, _ in kept))
    symbolic = any(t.symbolic for t, _ in kept)
    return with_shape(_intern("add", (number, frozenset(kept)), inner, symbolic), shape)


def neg(e: Expr) -> Expr:
    return mul(const(-1.0), e)


# -- products and powers ----------------------------------------------------------------------------


def _number(e):
    """A plain number's value (an exponent), else None."""
    if isinstance(e, (int, float)):
        return float(e)
    if isinstance(e, Expr) and e.op == "const" and e.shape == ():
        return e.args[0]
    return None


def _add_exponents(a, b):
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None:
        return na + nb
    return add(lift(a), lift(b))


def mul(*parts: Expr) -> Expr:
    shape = broadcast(*(p.shape for p in parts))
    number = 1.0
    bases: dict = {}
    pending = list(parts)
    while pending:
        p = pending.pop()
        if p.op == "expand":  # the product's shape is restored at the end
            p = p.args[0]
        if p.op == "const":
            number *= p.args[0]
        elif p.op == "mul" and len(p.args[1]) <= FLATTEN:
            number *= p.args[0]
            for base, exponent in p.args[1]:
                bases[base] = _add_exponents(bases[base], exponent) if base in bases else exponent
        elif p.op == "pow":
            base, exponent = p.args
            bases[base] = _add_exponents(bases[base], exponent) if base in bases else exponent
        else:
            bases[p] = _add_exponents(bases[p], 1.0) if p in bases else 1.0
    if number == 0 or math.isnan(number):
        return const(number, shape)
    factors = []
    for base, exponent in bases.items():
        n = _number(exponent)
        if n == 0:
            continue
        factors.append((base, n if n is not None else exponent))
    return with_shape(_product(number, factors, None), shape)


def _product(number: float, factors, shape) -> Expr:
    factors = tuple(sorted(factors, key=lambda bf: bf[0].order))
    if not factors:
        return const(number, shape or ())
    if len(factors) == 1 and number == 1.0:
        base, exponent = factors[0]
        return base if exponent == 1.0 else _pow_node(base, exponent)
    inner = broadcast(*(b.shape for b, _ in factors), *(x.shape for _, x in factors if isinstance(x, Expr)))
    symbolic = any(b.symbolic or (isinstance(x, Expr) and x.symbolic) for b, x in factors)
    return _intern("mul", (number, frozenset(factors)), inner, symbolic)


def _pow_node(base: Expr, exponent) -> Expr:
    symbolic = base.symbolic or (isinstance(exponent, Expr) and exponent.symbolic)
    return _intern("pow", (base, exponent), broadcast(base.shape, getattr(exponent, "shape", ())), symbolic)


def power(base: Expr, exponent) -> Expr:
    """base ** exponent: a number or an expression as the exponent."""
    n = _number(exponent)
    shape = broadcast(base.shape, getattr(exponent, "shape", ()))
    if n is not None:
        if n == 0:
            return const(1.0, shape)
        if n == 1:
            return with_shape(base, shape)
        if base.op == "const":
            with np.errstate(all="ignore"):
                return const(float(np.power(base.args[0], n)), shape)
        integer = n == int(n)
        if base.op == "pow" and integer and _number(base.args[1]) is not None:
            return with_shape(power(base.args[0], _number(base.args[1]) * n), shape)
        if base.op == "mul" and integer:  # (2 * x * y) ** 2 = 4 * x**2 * y**2
            k, factors = base.args
            parts = [const(float(k) ** n)] + [power(b, (x * n) if not isinstance(x, Expr) else mul(x, const(n)))
                                               for b, x in factors]
            return with_shape(mul(*parts), shape)
        return with_shape(_pow_node(base, n), shape)
    exponent = lift(exponent)
    if base.op == "const" and exponent.op == "const":
        with np.errstate(all="ignore"):
            return const(float(np.power(base.args[0], exponent.args[0])), shape)
    return with_shape(_pow_node(base, exponent), shape)


# -- walking ----------------------------------------------------------------------------------------


def children(e: Expr):
    """The expressions `e` is made of, in order (worked out once per node)."""
    parts = e.parts
    if parts is None:
        parts = e.parts = _children(e)
    return parts


def _children(e: Expr):
    op, args = e.op, e.args
    if op in ("sym", "const", "tensor"):
        return ()
    if op == "add":
        return tuple(t for t, _ in sorted(args[1], key=lambda tk: tk[0].order))
    if op == "mul":
        out = []
        for b, x in sorted(args[1], key=lambda bx: bx[0].order):
            out.append(b)
            if isinstance(x, Expr):
                out.append(x)
        return tuple(out)
    if op == "pow":
        return (args[0],) + ((args[1],) if isinstance(args[1], Expr) else ())
    out = []
    for a in args:
        if isinstance(a, Expr):
            out.append(a)
        elif isinstance(a, tuple):
            out.extend(x for x in a if isinstance(x, Expr))
    return tuple(out)


def postorder(roots) -> list:
    """Every node under `roots`, each once, children before parents (no recursion)."""
    seen: set = set()
    order: list = []
    for root in roots:
        if id(root) in seen:
            continue
        stack = [(root, False)]
        while stack:
            e, done = stack.pop()
            if done:
                order.append(e)
                continue
            if id(e) in seen:
                continue
            seen.add(id(e))
            stack.append((e, True))
            for c in reversed(children(e)):
                if id(c) not in seen:
                    stack.append((c, False))
    return order


def symbols_of(e: Expr) -> set:
    return {n.args[0] for n in postorder([e]) if n.op == "sym"}

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

import numpy as np

# A sum or product nested in another is merged into it only up to this many parts: beyond, it
# stays one part, so that reverse mode's shared partial products (a chain's running gradient)
# are kept, and a derivative stays linear in the size of the program.
FLATTEN = 4

# The table of every node made, by structure: a plain dict, since interning is on the path of
# every traced operation. Each trace starts a new one (`new_table`), which keeps memory to one
# trace and makes its output independent of what ran before: a node's `order` (which
# orders the terms of a sum and the factors of a product) is its place in this derivation.
# A node made before still works; it only no longer merges with an equal one made after.
_TABLE: dict = {}
_ORDER = itertools.count()


_HAS_SYMBOLS: dict = {}  # node -> whether an input's symbol is in it (sizes alone are not)


def new_table() -> None:
    """Start a new table (as a trace begins, never inside one)."""
    _TABLE.clear()
    _HAS_SYMBOLS.clear()


class Expr:
    """One node. `op` is "sym", "size", "const", "tensor", "add", "mul" or an operation's name."""

    __slots__ = ("op", "args", "shape", "symbolic", "order", "parts")

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


def size(name: str) -> Expr:
    """A named size (`n`): a whole number the inputs' shapes give, a symbol of the algebra that
    no derivative is taken by."""
    return _intern("size", (name,), (), True)


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
        contiguous = np.ascontiguousarray(array)
        self.array = contiguous if contiguous.ndim == np.ndim(array) else contiguous.reshape(())  # 0-d stays 0-d
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
    if value.__class__ is Expr:
        return value
    if value.__class__ is float or value.__class__ is int:  # a formula's number: no array made
        return const(value)
    return constant(value)


def call(op: str, args: tuple, shape: tuple) -> Expr:
    """An operation the algebra does not look inside (`exp(x)`, `sum(x, 1)`): args are
    expressions or static parameters (dims, shapes)."""
    symbolic = False
    for a in args:
        if a.__class__ is Expr:
            if a.symbolic:
                symbolic = True
                break
        elif a.__class__ is tuple and any(x.__class__ is Expr and x.symbolic for x in a):  # cat's tensors
            symbolic = True
            break
    return _intern(op, tuple(args), tuple(shape), symbolic)


# -- shapes -----------------------------------------------------------------------------------------


def broadcast(*shapes) -> tuple:
    if not shapes:
        return ()
    first = shapes[0]
    for other in shapes:
        if other != first:
            return tuple(np.broadcast_shapes(*shapes))
    return first  # the common case, asked of every sum and product: no NumPy call


def with_shape(e: Expr, shape: tuple) -> Expr:
    """`e` broadcast to `shape` (which it must broadcast to)."""
    shape = tuple(shape)
    if e.shape == shape:
        return e
    if e.op == "const":
        return const(e.args[0], shape)
    return call("expand", (e, shape), shape)


# -- sums -------------------------------------------------------------------------------------------


def _coefficient_and_term(e: Expr) -> tuple:
    """(k, rest): e == k * rest with k a number (rest None for a plain number), as a sum keeps its
    terms: add's own split, so the rest is interned as it stands, never rebuilt by mul (unlike
    number_factor's; matrix.scalar_factor takes a product's 0-d factors with its number)."""
    op = e.op
    if op == "const":
        return e.args[0], None
    if op == "mul" and e.args[0] != 1.0:
        k, factors = e.args  # already canonical: the rest is the same product with 1 as its number
        if len(factors) == 1:
            base, exponent = factors[0]
            return k, base if exponent == 1.0 else _pow_node(base, exponent)
        return k, _intern("mul", (1.0, factors), e.shape, e.symbolic)
    return 1.0, e


def number_factor(e: Expr) -> tuple:
    """(k, rest) with e == k * rest and k a number (1 where e is no multiple of one, a plain number
    included): the number and the rest, rebuilt by mul and power, as the matrix rewrites and the
    Jacobians split a term. matrix.scalar_factor takes the product's 0-d factors with k; a sum's
    own split of its terms is _coefficient_and_term."""
    if e.op == "mul":
        k, factors = e.args
        if k != 1:
            if not factors:
                return k, const(1.0, e.shape)
            if len(factors) == 1 and factors[0][1] == 1.0:
                return k, factors[0][0]
            return k, mul(*[power(b, x) for b, x in factors])
    return 1.0, e


# Nodes a sum or a product looks inside; any other is one term or one factor as it is.
_OPENED_BY_ADD = frozenset(("const", "mul", "add", "expand"))
_OPENED_BY_MUL = frozenset(("const", "mul", "pow", "expand"))


def _pair(op: str, a: Expr, b: Expr, number: float) -> Expr:
    """`op` of two distinct plain nodes of one shape, each with coefficient or exponent 1: the
    commonest sum and product of a derivative, made without the general path's dict and sort."""
    if a.order > b.order:
        a, b = b, a
    return _intern(op, (number, ((a, 1.0), (b, 1.0))), a.shape, a.symbolic or b.symbolic)


def _joined(pairs: tuple, pair: tuple) -> tuple:
    """`pairs` (in their nodes' order) with `pair` in its place: most often the last."""
    order, i = pair[0].order, len(pairs)
    while i and pairs[i - 1][0].order > order:
        i -= 1
    return pairs[:i] + (pair,) + pairs[i:]


def _add_term(total: Expr, p: Expr):
    """total + p, where total is a short sum and p a new term of its shape; None when p's node is
    already a term (like terms merge on the general path)."""
    k, rest = _coefficient_and_term(p) if p.op == "mul" else (1.0, p)
    number, terms = total.args
    for t, _ in terms:
        if t is rest:
            return None
    return _intern("add", (number, _joined(terms, (rest, k))), total.shape, total.symbolic or rest.symbolic)


def _two_terms(a: Expr, b: Expr):
    """a + b, each a product or a plain node: None when they are like terms."""
    ka, ra = _coefficient_and_term(a) if a.op == "mul" else (1.0, a)
    kb, rb = _coefficient_and_term(b) if b.op == "mul" else (1.0, b)
    if ra is rb:
        return None
    if ra.order > rb.order:
        ra, ka, rb, kb = rb, kb, ra, ka
    return _intern("add", (0.0, ((ra, ka), (rb, kb))), a.shape, ra.symbolic or rb.symbolic)


def add(*parts: Expr) -> Expr:
    if len(parts) == 2 and parts[0].shape == parts[1].shape:
        a, b = parts
        aop, bop = a.op, b.op
        if a is not b:
            if aop not in _OPENED_BY_ADD and bop not in _OPENED_BY_ADD:
                return _pair("add", a, b, 0.0)
            if (aop == "mul" or aop not in _OPENED_BY_ADD) and (bop == "mul" or bop not in _OPENED_BY_ADD):
                fast = _two_terms(a, b)
                if fast is not None:
                    return fast
            elif aop == "const" and (bop == "mul" or bop not in _OPENED_BY_ADD) and a.args[0] != 0:
                k, rest = _coefficient_and_term(b) if bop == "mul" else (1.0, b)
                return _intern("add", (a.args[0], ((rest, k),)), a.shape, rest.symbolic)
            if aop == "add" and len(a.args[1]) <= FLATTEN and (bop == "mul" or bop not in _OPENED_BY_ADD):
                fast = _add_term(a, b)
                if fast is not None:
                    return fast
            elif bop == "add" and len(b.args[1]) <= FLATTEN and (aop == "mul" or aop not in _OPENED_BY_ADD):
                fast = _add_term(b, a)
                if fast is not None:
                    return fast
        shape = a.shape
    else:
        shape = broadcast(*[p.shape for p in parts])
    number = 0.0
    terms: dict = {}
    for p in reversed(parts):
        if p.op == "expand":  # the sum's shape is restored at the end
            p = p.args[0]
        if p.op == "add" and len(p.args[1]) <= FLATTEN:  # its terms are already split from their numbers
            number += p.args[0]
            for term, k in p.args[1]:
                terms[term] = terms.get(term, 0.0) + k
            continue
        k, rest = _coefficient_and_term(p)
        if rest is None:
            number += k
        else:
            terms[rest] = terms.get(rest, 0.0) + k
    kept = [(t, k) for t, k in terms.items() if k != 0]
    if not kept:
        return const(number, shape)
    if number == 0 and len(kept) == 1:
        term, k = kept[0]
        return with_shape(term if k == 1.0 else mul(const(k), term), shape)
    kept.sort(key=_first_order)
    inner = broadcast(*[t.shape for t, _ in kept])
    symbolic = False
    for t, _ in kept:
        if t.symbolic:
            symbolic = True
            break
    return with_shape(_intern("add", (number, tuple(kept)), inner, symbolic), shape)


def neg(e: Expr) -> Expr:
    op = e.op
    if op == "pow" and e.args[1].__class__ is float:  # -x**2, as mul makes it, without its loop
        return _intern("mul", (-1.0, (e.args,)), e.shape, e.symbolic)
    if op not in _OPENED_BY_MUL:
        return _intern("mul", (-1.0, ((e, 1.0),)), e.shape, e.symbolic)
    return mul(const(-1.0), e)


# -- products and powers ----------------------------------------------------------------------------


def _plain_number(e):
    """A plain number's value (an exponent), else None."""
    if isinstance(e, (int, float)):
        return float(e)
    if isinstance(e, Expr) and e.op == "const" and e.shape == ():
        return e.args[0]
    return None


def _add_exponents(a, b):
    if a.__class__ is float and b.__class__ is float:
        return a + b
    na, nb = _plain_number(a), _plain_number(b)
    if na is not None and nb is not None:
        return na + nb
    return add(lift(a), lift(b))


def mul(*parts: Expr) -> Expr:
    if len(parts) == 2 and parts[0].shape == parts[1].shape:
        a, b = parts
        aop, bop = a.op, b.op
        if a is b:
            if aop not in _OPENED_BY_MUL:
                return _pow_node(a, 2.0)
        else:
            if aop not in _OPENED_BY_MUL and bop not in _OPENED_BY_MUL:
                return _pair("mul", a, b, 1.0)
            if aop == "mul" and bop not in _OPENED_BY_MUL:
                fast = _add_factor(a, b)
                if fast is not None:
                    return fast
            elif bop == "mul" and aop not in _OPENED_BY_MUL:
                fast = _add_factor(b, a)
                if fast is not None:
                    return fast
        shape = a.shape
    else:
        shape = broadcast(*[p.shape for p in parts])
    number = 1.0
    bases: dict = {}
    for p in reversed(parts):
        op = p.op
        if op == "expand":  # the product's shape is restored at the end
            p = p.args[0]
            op = p.op
        if op == "const":
            number *= p.args[0]
        elif op == "mul" and len(p.args[1]) <= FLATTEN:
            number *= p.args[0]
            for base, exponent in p.args[1]:
                old = bases.get(base)
                bases[base] = exponent if old is None else _add_exponents(old, exponent)
        elif op == "pow":
            base, exponent = p.args
            old = bases.get(base)
            bases[base] = exponent if old is None else _add_exponents(old, exponent)
        else:
            old = bases.get(p)
            bases[p] = 1.0 if old is None else _add_exponents(old, 1.0)
    if number == 0 or math.isnan(number):
        return const(number, shape)
    factors = []
    for base, exponent in bases.items():
        if exponent.__class__ is not float:
            n = _plain_number(exponent)
            if n is not None:
                exponent = n
        if exponent == 0.0:  # an expression is never equal to a number
            continue
        factors.append((base, exponent))
    return with_shape(_product_node(number, factors, None), shape)


def _add_factor(product: Expr, p: Expr):
    """product * p, where product is a short product and p a new plain factor of its shape; None
    when p is already a factor (exponents add on the general path)."""
    k, factors = product.args
    if len(factors) > FLATTEN:
        return _pair("mul", product, p, 1.0)
    for b, _ in factors:
        if b is p:
            return None
    return _intern("mul", (k, _joined(factors, (p, 1.0))), product.shape, product.symbolic or p.symbolic)


def _first_order(pair) -> int:
    return pair[0].order


def _product_node(number: float, factors, shape) -> Expr:
    if not factors:
        return const(number, shape or ())
    if len(factors) == 1:
        if number == 1.0:
            base, exponent = factors[0]
            return base if exponent == 1.0 else _pow_node(base, exponent)
    elif len(factors) == 2:  # the common case, without a sort
        first, second = factors
        if first[0].order > second[0].order:
            factors = (second, first)
    else:
        factors = sorted(factors, key=_first_order)
    common, mixed, symbolic = factors[0][0].shape, False, False
    for b, x in factors:  # the shapes are most often all one: no list, no broadcast then
        mixed = mixed or b.shape != common or (x.__class__ is Expr and x.shape != common)
        symbolic = symbolic or b.symbolic or (x.__class__ is Expr and x.symbolic)
    if mixed:
        common = broadcast(*[s for b, x in factors for s in ((b.shape, x.shape) if x.__class__ is Expr else (b.shape,))])
    return _intern("mul", (number, tuple(factors)), common, symbolic)


def _pow_node(base: Expr, exponent) -> Expr:
    symbolic = base.symbolic or (isinstance(exponent, Expr) and exponent.symbolic)
    return _intern("pow", (base, exponent), broadcast(base.shape, getattr(exponent, "shape", ())), symbolic)


def power(base: Expr, exponent) -> Expr:
    """base ** exponent: a number or an expression as the exponent."""
    n = _plain_number(exponent)
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
        if base.op == "pow" and integer and _plain_number(base.args[1]) is not None:
            return with_shape(power(base.args[0], _plain_number(base.args[1]) * n), shape)
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
    if op in ("sym", "const", "tensor", "size"):
        return ()
    if op == "add":
        return tuple([t for t, _ in args[1]])
    if op == "mul":
        out = []
        for b, x in args[1]:
            out.append(b)
            if x.__class__ is Expr:
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


def postorder(roots, uses: dict | None = None) -> list:
    """Every node under `roots`, each once, children before parents (no recursion). `uses`, a
    dict, counts as it goes how many times each node is used: by a root place or by a parent."""
    seen: set = set()
    order: list = []
    for root in roots:
        if uses is not None:
            uses[root] = uses.get(root, 0) + 1
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(children(root)))]
        while stack:
            node, rest = stack[-1]
            for child in rest:
                if uses is not None:
                    uses[child] = uses.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(children(child))))
                    break
            else:  # every child is done
                stack.pop()
                order.append(node)
    return order


def symbols_of(e: Expr) -> set:
    return {n.args[0] for n in postorder([e]) if n.op == "sym"}


def reaches(e: Expr, hit, memo: dict, worth=None) -> bool:
    """Whether a node for which `hit(node)` holds is in `e`, `e` included; `memo` keeps every
    node's answer, so each is worked out once, and nothing recurses. A node `worth` rejects
    (where given) holds none below it and is not walked."""
    found = memo.get(e)
    if found is not None:
        return found
    stack = [e]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        if worth is not None and not worth(node):
            memo[node] = False
            stack.pop()
            continue
        pending = [c for c in children(node) if c not in memo]
        if pending:
            stack.extend(pending)
            continue
        memo[node] = hit(node) or any(memo[c] for c in children(node))
        stack.pop()
    return memo[e]


def has_symbols(e: Expr) -> bool:
    """Whether an input's symbol is in `e` (a number made of sizes has none)."""
    return reaches(e, _is_symbol, _HAS_SYMBOLS, _is_symbolic)


def _is_symbol(e: Expr) -> bool:
    return e.op == "sym"


def _is_symbolic(e: Expr) -> bool:
    return e.symbolic

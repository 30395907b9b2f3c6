"""Textbook forms: the engine's derivatives of matrix programs, rewritten the way the Matrix
Cookbook writes them.

The engine's formulas work on arrays of any rank, so a derivative comes out with the steps
PyTorch takes: a vector raised to a (1, n) matrix and back (`reshape(reshape(x, (1, n)) @ A,
(n,))`), identity matrices written out (trace's gradient), solves against the identity
(log det's). `simplify` rebuilds a derivative bottom up, every node through the algebra again
(so that like terms meet and merge), with these identities, each of which holds for every
value and every size:

- a vector's row or column product is a matrix-vector product: `x @ A` is `Aᵀ @ x`, and
  `aᵀ b` of a column and a row is `outer(a, b)`;
- the identity vanishes from products (`A @ I` is `A`), and is written `eye(n)` where it stays;
- a chain of matrix products is one, left to right (`A (B C)` is `(A B) C`: one node however it
  was bracketed; a vector at its end keeps `A (B x)`), and a rule that must see the whole chain
  reads it as the list of its factors;
- a trace turns its chain to begin at one fixed factor (`tr(X A)` is `tr(A X)`), so traces of
  one cycle are one node and collect;
- transposes go through products, sums and numbers (`(A B)ᵀ = Bᵀ Aᵀ`), and twice is none;
- a number leaves a product (`A @ (2 * x)` is `2 * A @ x`) and a sum (`sum(-y)` is `-sum(y)`), and a
  number kept in dimensions of size 1 is the number where it broadcasts (`sum(y, dim=0,
  keepdim=True) * z` is `sum(y) * z`);
- terms that share a factor are collected (`A @ x + Aᵀ @ x` is `(A + Aᵀ) @ x`);
- a sum of products is multiplied out, and what its terms share taken out, where that makes it
  shorter (`p * (1 - p) * ((1 - y) / (1 - p) - y / p)` is `p - y`: symbolic/cancel.py);
- `exp(z - logsumexp(z, d))` and `exp(log_softmax(z, d))` are `softmax(z, d)`;
- a solve against the identity is an inverse (`solve(X, I)` is `X⁻¹`), against a multiple of
  it a multiple of the inverse, and `(Xᵀ)⁻¹` is written `(X⁻¹)ᵀ`;
- a square matrix and its inverse cancel where they meet in a chain of products, the inverse
  of a product of square matrices taken apart where that lets them meet (`Aᵀ (Bᵀ Xᵀ Aᵀ)⁻¹ Bᵀ`
  is `X⁻ᵀ`: det(AXB)'s gradient); a Gram matrix XᵀX and its inverse are symmetric, and their
  determinant is never negative (log det's sign mask is 1 there);
- terms masked by one condition are one `where` (Huber's gradient is `where(|r| <= 1, r,
  sign(r))`), where the masked factors are finite wherever the inputs are (0 · inf is nan);
- where derive asks, a mask that one value selects (`where(std == 0, 0, y)`, log det's sign
  at -1, where the value is not finite either) is written off that value, and the condition is
  stated as an assumption that the module checks;
- the derivative of e^A along a multiple of the identity, which commutes with A, is that
  multiple of e^A (trace(e^X)'s gradient is e^{Xᵀ}, not a block of a 2n × 2n exponential).
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from ..ops.spelling import ATOM, Spelling, declare
from . import expr as E
from .build import Builder, build
from .cancel import smaller

_PRODUCTS = ("mm", "mv")

# What the rewrites write that no op of the engine is: the identity matrix (eye(n)) and the outer
# product of two vectors, as the language calls them.
declare("eye", Spelling(numpy="np.eye", latex=lambda w, n: rf"I_{{{w(n)}}}"), public=True)
declare("outer", Spelling(numpy="np.outer", latex=lambda w, a, b: rf"{w(a, ATOM)} {w(b, ATOM)}^{{\top}}"),
        public=True)


def simplify(roots: list) -> list:
    """The same expressions in textbook form (the DAG's sharing kept): rewritten until a pass
    changes nothing (a rewrite's result may open another), three passes at most."""
    for _ in range(3):
        memo: dict = {}
        for e in E.postorder(roots):
            memo[e] = _rewritten(e, memo)
        rewritten = [memo[r] for r in roots]
        if all(a is b for a, b in zip(rewritten, roots)):
            break
        roots = rewritten
    return roots


def softmax_from_log_softmax(roots: dict) -> dict:
    """The roots with softmax(z, d) written exp(log_softmax(z, d)) wherever log_softmax(z, d)
    is computed too (a cross-entropy's value beside its gradient): one exponential, not a
    second normalization. For code that computes; the formulas keep softmax."""
    order = E.postorder(list(roots.values()))
    logs = {(e.args[0], e.args[1]): e for e in order if e.op == "log_softmax"}
    swap = {e: E.call("exp", (logs[(e.args[0], e.args[1])],), e.shape) for e in order
            if e.op == "softmax" and (e.args[0], e.args[1]) in logs}
    return dict(zip(roots, substituted(list(roots.values()), swap))) if swap else roots


def substituted(roots: list, swap: dict) -> list:
    """The roots with each node of `swap` replaced by its value there: every node above one is
    rebuilt through the algebra (its sums and products merge again), every other kept as it
    is. An explicit walk, no recursion."""
    memo = dict(swap)
    for e in E.postorder(roots):
        if e in memo:
            continue
        op, args = e.op, e.args
        if all(memo.get(c, c) is c for c in E.children(e)):  # nothing under it changed: itself
            memo[e] = e
        elif op == "add":
            memo[e] = E.with_shape(E.add(E.const(args[0]), *[E.mul(E.const(k), memo[t]) for t, k in args[1]]), e.shape)
        elif op == "mul":
            memo[e] = E.with_shape(E.mul(E.const(args[0]), *[E.power(memo[b], memo[x] if x.__class__ is E.Expr else x)
                                                              for b, x in args[1]]), e.shape)
        elif op == "pow":
            memo[e] = E.power(memo[args[0]], memo[args[1]] if args[1].__class__ is E.Expr else args[1])
        else:
            memo[e] = build(op, [_arg(a, memo) for a in args], e.shape)
    return [memo[r] for r in roots]


def _arg(a, memo):
    if a.__class__ is E.Expr:
        return memo[a]
    if a.__class__ is tuple:
        return tuple(_arg(x, memo) for x in a)
    return a


def _rewritten(e: E.Expr, memo: dict) -> E.Expr:
    op = e.op
    if op in ("sym", "const"):
        return e
    if op == "tensor":
        return _eye(e) or e
    if op == "add":
        number, terms = e.args
        parts = [E.mul(E.const(k), _unraised(memo[t])) for t, k in terms]
        if number:
            parts.append(E.const(number))
        total = smaller(_collected(E.with_shape(E.add(*parts), e.shape)))
        return _matrix_rule(total) or total
    if op == "mul":
        number, factors = e.args
        parts = [E.const(number)] + [E.power(_unraised(memo[b]), x if x.__class__ is not E.Expr else memo[x])
                                     for b, x in factors]
        product = E.mul(*parts)
        if product.op == "mul" and any(_unraised(b) is not b for b, _ in product.args[1]):  # a factor's number came out
            product = E.mul(E.const(product.args[0]), *[E.power(_unraised(b), x) for b, x in product.args[1]])
        product = smaller(_outer(E.with_shape(product, e.shape)))
        return _matrix_rule(product) or product
    if op == "pow":
        base, exponent = e.args
        return E.power(memo[base], exponent if exponent.__class__ is not E.Expr else memo[exponent])
    args = [_arg(a, memo) for a in e.args]
    if op in _BROADCASTING:  # operands that broadcast: a number in dimensions of size 1 is the number
        args = [_unraised(a) if a.__class__ is E.Expr else a for a in args]
    rebuilt = build(op, args, e.shape)
    return _matrix_rule(rebuilt) or rebuilt


# -- the identities ------------------------------------------------------------------------------------


def _unraised(e: E.Expr) -> E.Expr:
    """A number kept in dimensions of size 1 as a term of a sum, a factor of a product, or an
    operand of a comparison: the number itself (it broadcasts). So is a sum or a mean over every
    dimension kept (`sum(y, dim=0, keepdim=True)` is `sum(y)`)."""
    if e.op == "reshape" and e.args[0].shape == () and all(size == 1 for size in e.shape):
        return e.args[0]
    if e.op == "sum_dim" and e.args[2] and all(size == 1 for size in e.shape) \
            and len({d % len(e.shape) for d in _dims(e.args[1])}) == len(e.shape):
        return _sum_rule(E.call("sum", (e.args[0],), ())) or E.call("sum", (e.args[0],), ())
    if e.op == "mean_dim" and e.args[2] and all(size == 1 for size in e.shape) \
            and len({d % len(e.shape) for d in _dims(e.args[1])}) == len(e.shape):
        return E.call("mean", (e.args[0],), ())  # mean(y, dim=0, keepdim=True) of a vector: mean(y)
    return e


def _dims(dim) -> tuple:
    return dim if isinstance(dim, tuple) else (dim,)


def _sum_rule(e: E.Expr):
    """A number leaves a sum: sum(-y) is -sum(y); so does a scalar of the program from a whole
    sum: sum(a / s) is sum(a) / s."""
    x = e.args[0]
    k, rest = E.number_factor(x) if x.op == "mul" else (1.0, x)
    scalars = []
    if e.op in ("sum", "mean") and rest.op == "mul":
        scalars = [(b, p) for b, p in rest.args[1] if not b.shape]
        if scalars and len(scalars) < len(rest.args[1]):
            others = [(b, p) for b, p in rest.args[1] if b.shape]
            rest = E.with_shape(E.mul(E.const(rest.args[0]), *[E.power(b, p) for b, p in others]), x.shape)
        else:
            scalars = []
    if k == 1 and not scalars:
        return None
    inner = E.call(e.op, (rest,) + tuple(e.args[1:]), e.shape)
    return E.mul(E.const(k), *[E.power(b, p) for b, p in scalars], _sum_rule(inner) or inner)


_BROADCASTING = frozenset(("where", "eq", "ne", "lt", "le", "gt", "ge"))


def _eye(e: E.Expr):
    """An identity matrix, or a multiple of one, given as an array: eye(n), k * eye(n)."""
    array = e.args[0].array
    if array.ndim == 2 and array.shape[0] == array.shape[1] and array.size > 1 and array.dtype.kind in "fiu":
        k = float(array[0, 0])
        if k and np.array_equal(array, k * np.eye(array.shape[0])):
            return E.mul(E.const(k), E.call("eye", (array.shape[0],), array.shape))
    return None


def _is_eye(e) -> bool:
    return e.__class__ is E.Expr and e.op == "eye"


def scalar_factor(e: E.Expr) -> tuple:
    """(s, rest) with e == s * rest, s a 0-d expression (a number's or a scalar's product), rest
    the matrix; (None, e) where e is no such product. expr.number_factor takes the number alone."""
    if e.op != "mul":
        return None, e
    k, factors = e.args
    scalars = [(b, x) for b, x in factors if b.shape == () and (x.__class__ is not E.Expr or x.shape == ())]
    rest = [(b, x) for b, x in factors if (b, x) not in scalars]
    if not scalars and k == 1 or not rest:
        return None, e
    scalar = E.mul(E.const(k), *[E.power(b, x) for b, x in scalars])
    matrix = E.mul(*[E.power(b, x) for b, x in rest]) if len(rest) > 1 or rest[0][1] != 1.0 else rest[0][0]
    return scalar, matrix


def transpose_matrix(e: E.Expr) -> E.Expr:
    """eᵀ, in textbook form (diag(d) is its own transpose)."""
    if e.op == "diag":
        return e
    return _transpose(e)


def _transpose(e: E.Expr) -> E.Expr:
    """eᵀ for a matrix, pushed through what it is made of (a vector or a number is its own)."""
    if len(e.shape) < 2:
        return e
    return _matrix_rule(E.call("t", (e,), e.shape[::-1])) or E.call("t", (e,), e.shape[::-1])


def matrix_product(a: E.Expr, b: E.Expr, shape=None) -> E.Expr:
    """a @ b, as mm (two matrices) or mv (a matrix and a vector), in textbook form; its shape is
    a's rows and b's columns unless given."""
    op = "mv" if len(b.shape) == 1 else "mm"
    if shape is None:
        shape = a.shape[:1] + b.shape[1:]
    node = E.call(op, (a, b), tuple(shape))
    return _matrix_rule(node) or node


class Rule:
    """One identity of the algebra: `name` says it as a textbook would, `ops` are the operations
    whose nodes it may rewrite, `rewrite(node)` gives the node in the identity's other form, or
    None where the identity does not apply. Every rule holds for every value and every size."""

    __slots__ = ("name", "ops", "rewrite")

    def __init__(self, name: str, ops: tuple, rewrite) -> None:
        self.name, self.ops, self.rewrite = name, ops, rewrite

    def __repr__(self) -> str:
        return f"Rule({self.name!r})"


def _identity_vanishes(e):
    a, b = e.args
    return b if _is_eye(a) else a if _is_eye(b) else None


def _scalar_leaves_product(e):
    a, b = e.args
    for k_of, rest_of in ((a, b), (b, a)):  # a number, or a scalar, leaves the product
        scalar, matrix = scalar_factor(k_of)
        if scalar is not None:
            pair = (matrix, rest_of) if k_of is a else (rest_of, matrix)
            return E.mul(scalar, matrix_product(pair[0], pair[1], e.shape))
    return None


def _column_times_row(e):
    column, row = _column(e.args[0]), _row(e.args[1])
    return E.call("outer", (column, row), e.shape) if column is not None and row is not None else None


def _vector_product(e):
    x, shape = e.args
    return _as_vector_product(x, shape)


def _symmetric(e):
    (x,) = e.args
    return x if _is_eye(x) or x.op == "diag" else None


def _gram_symmetric(e):
    (x,) = e.args
    return x if _is_symmetric(x) else None


def _is_symmetric(e: E.Expr) -> bool:
    """A Gram matrix (XᵀX, X Xᵀ), or the inverse of one (the checks a textbook makes at sight)."""
    if e.op == "linalg_inv":
        e = e.args[0]
    if e.op != "mm":
        return False
    a, b = e.args
    return a.op == "t" and a.args[0] is b or b.op == "t" and b.args[0] is a


def _gram_sign(e):
    """where(sign(det(G)) == -1, a, b) is b for a Gram matrix G, whose determinant is never
    negative (log det's formulas mask the sign that PyTorch's logdet makes nan)."""
    condition, _, otherwise = e.args
    if condition.op != "eq":
        return None
    left, right = condition.args
    if left.op == "linalg_slogdet_sign" and _is_symmetric(left.args[0]) and left.args[0].op == "mm" and \
            right.op == "const" and right.number == -1.0:
        return E.with_shape(otherwise, e.shape)
    return None


def _twice_transposed(e):
    (x,) = e.args
    return x.args[0] if x.op == "t" else None


def _transposed_product(e):
    (x,) = e.args
    if x.op != "mm":
        return None
    factors, stack = [], [x]  # the chain's factors, left to right, without recursion however long it is
    while stack:
        node = stack.pop()
        if node.op == "mm":
            stack += (node.args[1], node.args[0])
        else:
            factors.append(node)
    result = None  # (F1 F2 ... Fk)ᵀ = Fkᵀ ... F1ᵀ
    for factor in reversed(factors):
        t = _transpose(factor)
        result = t if result is None else matrix_product(result, t, (result.shape[0], t.shape[1]))
    return result


def _transposed_outer(e):
    (x,) = e.args
    return E.call("outer", (x.args[1], x.args[0]), e.shape) if x.op == "outer" else None


def _transposed_sum(e):
    (x,) = e.args
    if x.op != "add":
        return None
    number, terms = x.args  # a term broadcast over rows (X - mu) is transposed as the matrix it stands for
    parts = [E.mul(E.const(k), _transpose(E.with_shape(t, x.shape))) for t, k in terms]
    return E.add(*parts, E.const(number)) if number else E.add(*parts)


def _transposed_multiple(e):
    (x,) = e.args
    k, rest = E.number_factor(x)
    if k != 1:
        return E.mul(E.const(k), _transpose(rest))
    scalar, matrix = scalar_factor(x)
    return E.mul(scalar, _transpose(matrix)) if scalar is not None else None


def _transposed_uniform(e):
    (x,) = e.args
    return E.const(x.number, e.shape) if x.op == "const" else None


def _transposed_triangle(e):
    (x,) = e.args
    other = {"triu": "tril", "tril": "triu"}.get(x.op)
    if other is None or len(x.args) != 1:
        return None
    return E.call(other, (_transpose(x.args[0]),), e.shape)


def _rows_all_one_vector(e):
    x = e.args[0]
    if len(x.shape) == 1 and len(e.shape) == 2:
        return E.call("outer", (E.const(1.0, (e.shape[0],)), x), e.shape)
    return None


def _transpose_by_dims(e):
    if len(e.shape) != 2:
        return None
    if e.op == "transpose" and {e.args[1] % 2, e.args[2] % 2} == {0, 1}:
        return _transpose(e.args[0])
    if e.op == "permute" and tuple(d % 2 for d in e.args[1]) == (1, 0):
        return _transpose(e.args[0])
    return None


def _solve_of_zero(e):
    B = e.args[1]
    return B if B.op == "const" and B.number == 0.0 else None


def _solve_against_identity(e):
    A, B, left = e.args
    if not left:
        return None
    if _is_eye(B):
        return _inverse(A)
    scalar, matrix = scalar_factor(B)
    return E.mul(scalar, _inverse(A)) if scalar is not None and _is_eye(matrix) else None


def _exp_of_log_softmax(e):
    x = e.args[0]
    return E.call("softmax", x.args, e.shape) if x.op == "log_softmax" else None


def _exp_less_logsumexp(e):
    return _softmax(e.args[0])


def _summed_to_a_number(e):
    x, shape = e.args
    return E.call("sum", (x,), ()) if tuple(shape) == () and x.shape else None


def _constant_factors_leave(e):
    """sum_to(a b, s) = a sum_to(b, s) where a is constant along every summed dimension (its
    size there is 1): a layer norm's 1/√(v + ε) leaves its row sums."""
    x, shape = e.args
    shape = tuple(shape)
    if x.op != "mul" or not shape:
        return None
    k, factors = x.args
    rank = len(x.shape)
    target = (1,) * (rank - len(shape)) + shape
    summed = [d for d in range(rank) if target[d] == 1 and x.shape[d] != 1]

    def constant(base) -> bool:
        size = (1,) * (rank - len(base.shape)) + tuple(base.shape)
        return all(size[d] == 1 for d in summed)

    leaving = [(b, p) for b, p in factors if constant(b)]
    staying = [(b, p) for b, p in factors if not constant(b)]
    if not leaving or not staying:
        return None
    inner = E.with_shape(E.mul(*[E.power(b, p) for b, p in staying]), x.shape)
    summed_inner = E.call("sum_to", (inner, shape), shape)
    return E.with_shape(E.mul(E.const(k), summed_inner, *[E.power(b, p) for b, p in leaving]), shape)


def _numbers_leave_reshape(e):
    """reshape(k s x, shape) = k s reshape(x, shape) for numbers and 0-d factors s: a reshape of a
    reshape then meets it (and one back to x's own shape is x)."""
    x, shape = e.args
    if x.op != "mul":
        return None
    k, factors = x.args
    scalars = [(b, p) for b, p in factors if not b.shape]
    if k == 1.0 and not scalars:
        return None
    rest = [(b, p) for b, p in factors if b.shape]
    if not rest:
        return None
    inner = E.with_shape(E.mul(*[E.power(b, p) for b, p in rest]), x.shape)
    return E.mul(E.const(k), *[E.power(b, p) for b, p in scalars], Builder(tuple(shape)).reshape(inner))


def _repeated_then_summed(e):
    """sum_to(y repeated, shape) where y varies only along the summed dims: y's sum, repeated."""
    x, shape = e.args
    shape = tuple(shape)
    if x.op != "expand" or not shape:
        return None
    y = x.args[0]
    rank = len(x.shape)
    target = (1,) * (rank - len(shape)) + shape
    ys = (1,) * (rank - len(y.shape)) + tuple(y.shape)
    for d in range(rank):
        kept = target[d] != 1 or x.shape[d] == 1
        if kept and ys[d] != 1 or not kept and ys[d] != x.shape[d]:
            return None
    return E.with_shape(E.call("sum", (y,), ()), shape)


def _sum_sees_no_reshape(e):
    """sum(reshape(x)) = sum(x), and so for a power of one: the same numbers, summed."""
    (y,) = e.args
    if y.op == "reshape":
        return E.call("sum", (y.args[0],), ())
    if y.op == "pow" and y.args[0].op == "reshape":
        return E.call("sum", (E.power(y.args[0].args[0], y.args[1]),), ())
    if y.op == "mul" and len(y.args[1]) == 1 and y.args[1][0][0].op == "reshape":
        (base, p), = y.args[1]
        return E.mul(E.const(y.args[0]), E.call("sum", (E.power(base.args[0], p),), ()))
    return None


def _inverse_of_transpose(e):
    x = e.args[0]
    return _transpose(E.call("linalg_inv", (x.args[0],), e.shape)) if x.op == "t" else None


def _exp_along_identity(e):
    """The derivative of e^A along G is the top-right block of e^[[A, G], [0, A]] (PyTorch's
    matrix_exp backward); along G = c I, which commutes with A, it is c e^A."""
    inner = e.args[0]
    if inner.op != "narrow" or len(e.shape) != 2:
        return None
    n = e.shape[0]
    if tuple(e.args[1:]) != (1, n, n) or tuple(inner.args[1:]) != (0, 0, n):
        return None
    block = inner.args[0]
    if block.op != "linalg_matrix_exp" or block.args[0].op != "cat" or block.args[0].args[1] != 0:
        return None
    rows = block.args[0].args[0]
    if len(rows) != 2 or any(r.op != "cat" or r.args[1] != 1 or len(r.args[0]) != 2 for r in rows):
        return None
    (a, g), (zero, a2) = rows[0].args[0], rows[1].args[0]
    if a2 is not a or a.shape != (n, n) or not _zeros(zero):
        return None
    c, rest = E.number_factor(g) if g.op == "mul" else (1.0, g)
    if rest.op != "eye":
        return None
    return E.mul(E.const(c), E.call("linalg_matrix_exp", (a,), (n, n)))


def _inverses_cancel(e):
    """A chain of products in which a square matrix meets its inverse: the pair is the identity
    (A A⁻¹ = I), the inverse of a product of square matrices taken apart where that lets a pair
    meet ((A X B)⁻¹ = B⁻¹ X⁻¹ A⁻¹). Written only where the chain comes out shorter."""
    factors = _chain(e)
    if len(factors) < 2:
        return None
    expanded = []
    for f in factors:
        inner = _chain(f.args[0]) if f.op == "linalg_inv" else ()
        if len(inner) > 1 and all(_square(x) for x in inner):
            expanded.extend(_inverse(x) for x in reversed(inner))
        else:
            expanded.append(f)
    kept: list = []
    for f in expanded:
        if kept and _square(f) and (_inverse_of(f) is kept[-1] or _inverse_of(kept[-1]) is f):
            kept.pop()
        else:
            kept.append(f)
    if _cost(kept) >= _cost(factors):
        return None
    if not kept:
        return E.call("eye", (e.shape[0],), e.shape)
    product = kept[-1]
    for f in reversed(kept[:-1]):
        product = matrix_product(f, product)
    return product


def _left_associated(e):
    """A chain of matrix products in one canonical form, left to right: A (B C) is (A B) C, so
    one chain is one node however it was bracketed (a vector at the end keeps its products
    right to left: A (B x), never (A B) x)."""
    a, b = e.args
    if e.op != "mm" or b.op != "mm":
        return None
    inner_left, inner_right = b.args
    return matrix_product(matrix_product(a, inner_left), inner_right, e.shape)


def _trace_cycled(e):
    """tr(A B C) = tr(B C A) = tr(C A B): a trace of a chain begins at the factor first in one
    fixed order (_order_key), so traces of one cycle are one node (tr(A X) + tr(X A) is 2 tr(A X))."""
    (x,) = e.args
    factors = _chain(x) if x.op == "mm" else []
    if len(factors) < 2 or not all(len(f.shape) == 2 for f in factors):
        return None
    keys = [_order_key(f) for f in factors]
    start = min(range(len(factors)), key=lambda k: (keys[k:] + keys[:k]))
    if start == 0:
        return None
    turned = factors[start:] + factors[:start]
    if turned[0].shape[0] != turned[-1].shape[1]:
        return None
    product = turned[0]
    for f in turned[1:]:
        product = matrix_product(product, f)
    return E.call("trace", (product,), ())


def _order_key(e: E.Expr) -> tuple:
    """A key that orders expressions the same way at any sizes: their operations and symbols,
    children first (an explicit walk, however deep e is; its first 64 nodes)."""
    return tuple((n.op, n.args[0] if n.op in ("sym", "size") else "") for n in E.postorder([e])[:64])


def _chain(e: E.Expr) -> list:
    """The factors of a chain of matrix products, left to right (an explicit stack)."""
    factors, stack = [], [e]
    while stack:
        x = stack.pop()
        if x.op in _PRODUCTS:
            stack.append(x.args[1])
            stack.append(x.args[0])
        else:
            factors.append(x)
    return factors


def _square(e: E.Expr) -> bool:
    return len(e.shape) == 2 and e.shape[0] == e.shape[1]


def _inverse_of(e: E.Expr):
    """M where e is M⁻¹ (A⁻¹, or A⁻ᵀ written (A⁻¹)ᵀ), else None."""
    if e.op == "linalg_inv":
        return e.args[0]
    if e.op == "t" and e.args[0].op == "linalg_inv":
        return _transpose(e.args[0].args[0])
    return None


def _cost(factors: list) -> int:
    """Operations of a chain: its products and the inverses in it."""
    return len(factors) + sum(1 for f in factors if _inverse_of(f) is not None)


def _masks_merged(e):
    """Terms masked by one condition, one where: where(c, 0, 1) p + q where(c, 1, 0) is
    where(c, q, p) (Huber's gradient), where each term's other factors are finite wherever
    they are (0 · inf would be nan, and the engine computes it so)."""
    if e.op != "add" or e.args[0]:
        return None
    groups: dict = {}
    others = []
    for t, k in e.args[1]:
        masked = _masked(t)
        if masked is None:
            others.append(E.mul(E.const(k), t))
        else:
            condition, on_true, on_false = masked
            groups.setdefault(condition, []).append((E.mul(E.const(k), on_true), E.mul(E.const(k), on_false)))
    if not any(len(terms) > 1 for terms in groups.values()):
        return None
    for condition, terms in groups.items():
        if len(terms) == 1:
            others.append(E.call("where", (condition, *terms[0]), e.shape))
        else:
            others.append(E.call("where", (condition, E.add(*[a for a, _ in terms]), E.add(*[b for _, b in terms])),
                                 e.shape))
    return E.with_shape(E.add(*others), e.shape)


def _masked(t: E.Expr):
    """(c, a, b) where t is where(c, a, b) with a branch 0, or such a where times finite factors
    (as where(c, a p, b p)); None otherwise."""
    if t.op == "where":
        condition, a, b = t.args
        return (condition, a, b) if _zero(a) or _zero(b) else None
    if t.op != "mul":
        return None
    k, factors = t.args
    wheres = [(b, x) for b, x in factors if b.op == "where" and x == 1.0 and (_zero(b.args[1]) or _zero(b.args[2]))]
    if len(wheres) != 1:
        return None
    mask = wheres[0][0]
    rest = E.mul(E.const(k), *[E.power(b, x) for b, x in factors if (b, x) != wheres[0]])
    if not _finite(rest):
        return None
    condition, a, b = mask.args
    return condition, E.mul(rest, a), E.mul(rest, b)


def _zero(e) -> bool:
    return e.__class__ is E.Expr and e.op == "const" and e.number == 0.0


# Operations whose result is finite wherever their operands are (overflow aside): a mask's 0
# times them stays 0.
_FINITE_OPS = {"sym", "size", "add", "where", "sign", "abs", "tanh", "sigmoid", "relu", "lt", "le", "gt", "ge",
               "eq", "ne", "mm", "mv", "sum", "sum_dim", "sum_to", "t", "reshape", "expand", "outer", "eye"}


def _finite(e: E.Expr) -> bool:
    """Whether e is finite wherever the program's inputs are: built only of the operations above,
    numbers, and products with whole, non-negative powers."""
    for node in E.postorder([e]):
        op = node.op
        if op == "const":
            if not np.isfinite(node.number):
                return False
        elif op == "mul":
            if any(x.__class__ is E.Expr or x < 0 or x != int(x) for _, x in node.args[1]):
                return False
        elif op == "pow":
            x = node.args[1]
            if x.__class__ is E.Expr or x < 0 or x != int(x):
                return False
        elif op not in _FINITE_OPS:
            return False
    return True


# Where derive asks for it (`assuming()`), a mask that one value of a number selects,
# where(a == b, 0, y) (a standard deviation or a norm at exactly 0, a determinant's sign at -1,
# where the program's value is not finite either), is the formula off that value, y, and the
# condition is collected: derive states it as an assumption and the module checks it at each call.
_ASSUMED: contextvars.ContextVar = contextvars.ContextVar("autodiff_assumed", default=None)


@contextlib.contextmanager
def assuming():
    """`with assuming() as assumed:` simplify writes masks of one value off it; `assumed` gets
    each such condition (an `a == b` whose being False the formulas assume)."""
    assumed: list = []
    token = _ASSUMED.set(assumed)
    try:
        yield assumed
    finally:
        _ASSUMED.reset(token)


# The sizes derive traced at, by name (`sized`): a rule may read a size's name as a count.
_SIZES: contextvars.ContextVar = contextvars.ContextVar("autodiff_sizes", default=None)


@contextlib.contextmanager
def sized(values: dict):
    """`with sized({name: size}):` simplify knows what each named size counts in this trace (a
    second trace at other sizes checks whatever it concluded)."""
    token = _SIZES.set(dict(values))
    try:
        yield
    finally:
        _SIZES.reset(token)


def _mean_of_a_sum(e):
    """sum(y) / n is mean(y) where n is the number of y's elements (a named size)."""
    sizes = _SIZES.get()
    if not sizes or e.op != "mul":
        return None
    k, factors = e.args
    sums = [b for b, p in factors if b.op == "sum" and p == 1.0]
    counts = {b.args[0]: b for b, p in factors if b.op == "size" and p == -1.0 and b.args[0] in sizes}
    for total in sums:
        count = int(np.prod(total.args[0].shape, dtype=int))
        for name, node in counts.items():
            if sizes[name] == count:
                rest = [E.power(b, p) for b, p in factors if b is not total and b is not node]
                return E.with_shape(E.mul(E.const(k), E.call("mean", (total.args[0],), ()), *rest), e.shape)
    return None


def _single_value_masked(e):
    assumed = _ASSUMED.get()
    if assumed is None:
        return None
    condition, a, b = e.args
    if condition.op != "eq" or condition.shape != () or not _zero(a) or _zero(b):
        return None
    if condition not in assumed:
        assumed.append(condition)
    return E.with_shape(b, e.shape)


def _zeros(e: E.Expr) -> bool:
    return e.op == "const" and e.number == 0.0 or e.op == "zeros_like"


# The identities, in the order they are tried on a node: the first that applies rewrites it, and
# the rewriter (simplify) passes over the result again. Adding one is a row here and a row in
# tests/program/test_matrix_calculus.py's Cookbook table.
RULES = (
    Rule("the identity vanishes from a product: A I = A", _PRODUCTS, _identity_vanishes),
    Rule("a number leaves a product: A (k x) = k A x", _PRODUCTS, _scalar_leaves_product),
    Rule("a matrix and its inverse cancel where they meet: A (A⁻¹ B) = B, Aᵀ (A X)⁻ᵀ = X⁻ᵀ", _PRODUCTS,
         _inverses_cancel),
    Rule("a chain of matrix products is one, left to right: A (B C) = (A B) C", ("mm",), _left_associated),
    Rule("a trace turns its chain: tr(A B C) = tr(B C A), begun at one fixed factor", ("trace",), _trace_cycled),
    Rule("a column times a row is an outer product: a bᵀ", ("mm",), _column_times_row),
    Rule("a row or column product is a matrix-vector product: xᵀ A = (Aᵀ x)ᵀ", ("reshape",), _vector_product),
    Rule("the identity and a diagonal are symmetric: Iᵀ = I", ("t",), _symmetric),
    Rule("a Gram matrix and its inverse are symmetric: ((XᵀX)⁻¹)ᵀ = (XᵀX)⁻¹", ("t",), _gram_symmetric),
    Rule("twice transposed is itself: (Aᵀ)ᵀ = A", ("t",), _twice_transposed),
    Rule("a transpose goes through a product: (A B)ᵀ = Bᵀ Aᵀ", ("t",), _transposed_product),
    Rule("an outer product transposed: (a bᵀ)ᵀ = b aᵀ", ("t",), _transposed_outer),
    Rule("a transpose goes through a sum: (A + B)ᵀ = Aᵀ + Bᵀ", ("t",), _transposed_sum),
    Rule("a number leaves a transpose: (k A)ᵀ = k Aᵀ", ("t",), _transposed_multiple),
    Rule("a matrix of one number is its own transpose", ("t",), _transposed_uniform),
    Rule("an upper triangle transposed is a lower one: triu(A)ᵀ = tril(Aᵀ)", ("t",), _transposed_triangle),
    Rule("rows that are all one vector: 1 xᵀ", ("expand",), _rows_all_one_vector),
    Rule("swapping a matrix's two dims is its transpose", ("transpose", "permute"), _transpose_by_dims),
    Rule("the solution of A X = 0 is 0", ("linalg_solve",), _solve_of_zero),
    Rule("a solve against the identity is an inverse: A⁻¹ (k I) = k A⁻¹", ("linalg_solve",), _solve_against_identity),
    Rule("a number leaves a sum: sum(k x) = k sum(x)", ("sum", "sum_dim", "mean"), _sum_rule),
    Rule("summed to a number is the sum: sum_to(x, ()) = sum(x)", ("sum_to",), _summed_to_a_number),
    Rule("a factor constant along the summed dims leaves the sum: sum_to(a b) = a sum_to(b)", ("sum_to",),
         _constant_factors_leave),
    Rule("an array repeated, then summed over what it varies along, is its sum repeated", ("sum_to",),
         _repeated_then_summed),
    Rule("a sum sees no reshape: sum(reshape(x) ** p) = sum(x ** p)", ("sum",), _sum_sees_no_reshape),
    Rule("numbers leave a reshape: reshape(k x) = k reshape(x)", ("reshape",), _numbers_leave_reshape),
    Rule("exp of log_softmax is softmax", ("exp",), _exp_of_log_softmax),
    Rule("exp(z - logsumexp(z)) is softmax(z)", ("exp",), _exp_less_logsumexp),
    Rule("the inverse of a transpose is the inverse transposed: (Xᵀ)⁻¹ = X⁻ᵀ", ("linalg_inv",),
         _inverse_of_transpose),
    Rule("e^A's derivative along the identity is e^A: L(A, c I) = c e^A", ("narrow",), _exp_along_identity),
    Rule("a Gram matrix's determinant is never negative: sign det(XᵀX) ≠ -1", ("where",), _gram_sign),
    Rule("a sum over a count of its elements is a mean: sum(y) / n = mean(y)", ("mul",), _mean_of_a_sum),
    Rule("a mask of one value is assumed away, and said: where(a == b, 0, y) = y, assuming a ≠ b", ("where",),
         _single_value_masked),
    Rule("masks of one condition are one where: where(c, 0, 1) p + q where(c, 1, 0) = where(c, q, p)", ("add",),
         _masks_merged),
)
_RULES_BY_OP: dict = {}
for _rule in RULES:
    for _op in _rule.ops:
        _RULES_BY_OP.setdefault(_op, []).append(_rule)


def _matrix_rule(e: E.Expr):
    """The node in textbook form by the first rule of RULES that applies, or None."""
    for rule in _RULES_BY_OP.get(e.op, ()):
        rewritten = rule.rewrite(e)
        if rewritten is not None:
            return rewritten
    return None


def _softmax(x: E.Expr):
    """exp(z - logsumexp(z, d) kept as z's dims) is softmax(z, d)."""
    if x.op != "add" or x.args[0] or len(x.args[1]) != 2:
        return None
    (a, ka), (b, kb) = x.args[1]
    for z, k, lse, kl in ((a, ka, b, kb), (b, kb, a, ka)):
        if k == 1.0 and kl == -1.0 and lse.op == "logsumexp" and len(z.shape) == 1:  # a vector's, as a number
            inner, dims = lse.args[0], lse.args[1]
            if inner is z and len(dims) == 1:
                return E.call("softmax", (z, 0), z.shape)
        if k == 1.0 and kl == -1.0 and lse.op == "reshape" and lse.args[0].op == "logsumexp":
            inner, dims = lse.args[0].args[0], lse.args[0].args[1]
            if inner is z and len(dims) == 1 and len(lse.shape) == len(z.shape):
                return E.call("softmax", (z, dims[0] % len(z.shape)), z.shape)
    return None


def _inverse(A: E.Expr) -> E.Expr:
    node = E.call("linalg_inv", (A,), A.shape)
    return _matrix_rule(node) or node


def _column(e: E.Expr):
    """The vector v where e is v as an (n, 1) column, else None."""
    if e.op == "reshape" and len(e.shape) == 2 and e.shape[1] == 1 and len(e.args[0].shape) == 1:
        return e.args[0]
    if e.op == "t":
        return _row(e.args[0])
    return None


def _row(e: E.Expr):
    """The vector v where e is v as a (1, n) row, else None."""
    if e.op == "reshape" and len(e.shape) == 2 and e.shape[0] == 1 and len(e.args[0].shape) == 1:
        return e.args[0]
    if e.op == "t":
        return _column(e.args[0])
    return None


def _as_vector_product(x: E.Expr, shape: tuple):
    """reshape(row(v) @ B, (m,)) is Bᵀ @ v; reshape(A @ column(v), (m,)) is A @ v."""
    if len(shape) != 1 or x.op != "mm":
        return None
    a, b = x.args
    row = _row(a)
    if row is not None and x.shape[0] == 1:
        return matrix_product(_transpose(b), row, shape)
    column = _column(b)
    if column is not None and x.shape[1] == 1:
        return matrix_product(a, column, shape)
    return None


def _outer(e: E.Expr) -> E.Expr:
    """A column times a row vector, broadcast: `reshape(a, (m, 1)) * b` is outer(a, b)."""
    if e.op != "mul" or len(e.shape) != 2:
        return e
    k, factors = e.args
    if len(factors) != 2 or any(x != 1.0 for _, x in factors):
        return e
    for (a, _), (b, _) in (factors, factors[::-1]):
        column = _column(a)
        if column is not None and len(b.shape) == 1:
            return E.mul(E.const(k), E.call("outer", (column, b), e.shape))
    return e


def _collected(e: E.Expr) -> E.Expr:
    """Terms that share a factor, collected: A @ x + B @ x is (A + B) @ x (again, until no two
    terms share one)."""
    while True:
        collected = _collected_once(e)
        if collected is e:
            return e
        e = collected


def _collected_once(e: E.Expr) -> E.Expr:
    if e.op != "add":
        return e
    number, terms = e.args
    for side in (1, 0):  # the right factor first: (A + Aᵀ) @ x
        groups: dict = {}
        for t, k in terms:
            if t.op in _PRODUCTS:
                groups.setdefault((t.op, t.args[side]), []).append((t, k))
        shared = {key: members for key, members in groups.items() if len(members) > 1}
        if not shared:
            continue
        kept = [(t, k) for t, k in terms if not any((t, k) in m for m in shared.values())]
        parts = [E.mul(E.const(k), t) for t, k in kept]
        for (op, factor), members in shared.items():
            other = E.add(*[E.mul(E.const(k), t.args[1 - side]) for t, k in members])
            parts.append(matrix_product(factor, other, members[0][0].shape) if side == 0 else
                         matrix_product(other, factor, members[0][0].shape))
        if number:
            parts.append(E.const(number))
        return E.add(*parts)
    return e

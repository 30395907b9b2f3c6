"""Jacobians and Hessians as matrix formulas.

Backward gives the vector–Jacobian product: traced with a symbolic seed `s`, the derivative of
an output is an expression V(s) that is linear in s, V(s) = M · s. `linear_map(V, s)` finds M as
a formula in the forms a reader of the Matrix Cookbook writes, for the cases where one exists:

- a vector seed: M is a matrix, made of matrix products, `diag(d) M` for an elementwise
  factor d (computed as `d[:, None] * M`, never through an n × n diagonal), sums and numbers
  (the Jacobian of A @ x is A; of sigmoid(x), diag(s ⊙ (1 − s)); the Hessian of a logistic
  loss, Xᵀ diag(s ⊙ (1 − s)) X);
- a matrix seed: M is a sum of maps s ↦ P s Rᵀ (`kron_map(P, R)`, the Kronecker product P ⊗ R
  with its rows and columns as v's and s's shapes: element [i, a, j, b] is P[i, j] R[a, b]), of
  maps s ↦ P sᵀ Rᵀ (`kron_t_map(P, R)`, (P ⊗ R) K with K the commutation matrix: element
  [i, a, j, b] is P[i, b] R[a, j]) and of elementwise maps s ↦ D ⊙ s (`diag_map(D)`).

Where V is not of these forms, `linear_map` gives None, and the caller computes M column by
column from V itself.
"""

from __future__ import annotations

import numpy as np

from ..ops.spelling import ATOM, PRODUCT, Spelling, carried, declare
from . import expr as E
from .matrix import matrix_product, scalar_factor, substituted, transpose_matrix

SEED = "_s"  # the seed's symbol: no program's name (the language's names do not start so)


def _diag_times_numpy(w, d, m) -> str:
    return f"{w(d, ATOM)}[:, None] * {w(m, PRODUCT + 1)}"


def _kron_language(w, p, r) -> str:
    return f"reshape(kron({w(p)}, {w(r)}), {w((p.shape[0], r.shape[0], p.shape[1], r.shape[1]))})"


def _kron_t_language(w, p, r) -> str:
    (i, b), (a, j) = p.shape, r.shape
    return f"permute(reshape(kron({w(p)}, {w(r)}), {w((i, a, b, j))}), (0, 1, 3, 2))"


def _diag_map_language(w, d) -> str:
    m, r = d.shape
    return f"reshape(diag(reshape({w(d)}, (-1,))), {w((m, r, m, r))})"


# The forms a Jacobian is written in, as the language, NumPy and LaTeX write them.
declare("diag", Spelling(numpy="np.diag", latex=r"\operatorname{diag}"), public=True)
declare("diag_times", Spelling(language=lambda w, d, m: f"diag({w(d)}) @ {w(m, PRODUCT + 1)}",
                               numpy=_diag_times_numpy, level=PRODUCT,
                               latex=lambda w, d, m: rf"\operatorname{{diag}}\left({w(d)}\right) {w(m, PRODUCT)}"),
        public=False)
declare("kron_map", Spelling(language=_kron_language, numpy="np.einsum('ij,ab->iajb', {0}, {1})",
                             latex=lambda w, p, r: rf"{w(p, ATOM)} \otimes {w(r, ATOM)}"), public=False)
declare("kron_t_map", Spelling(language=lambda w, p, r: _kron_t_language(w, p, r),
                               numpy="np.einsum('ib,aj->iajb', {0}, {1})",
                               latex=lambda w, p, r: rf"\left({w(p, ATOM)} \otimes {w(r, ATOM)}\right) K"),
        public=False)
declare("diag_map", Spelling(language=_diag_map_language,
                             numpy=lambda w, d: f"np.diag(np.ravel({w(d)})).reshape({w(d, ATOM)}.shape * 2)",
                             latex=lambda w, d: rf"\operatorname{{diag}}\left({w(d)}\right)"), public=False)


def _outer_map_language(w, p, b) -> str:
    (j, i), (k,) = p.shape, b.shape
    return f"reshape(kron({w(p)}, reshape({w(b)}, {w((k, 1))})), {w((j, k, i))})"


def _jacobian_outer_language(w, q, b) -> str:
    (i, j), (k,) = q.shape, b.shape
    return f"reshape(kron({w(q)}, reshape({w(b)}, {w((1, k))})), {w((i, j, k))})"


def _outer_map_t_language(w, p, a) -> str:
    (k, i), (j,) = p.shape, a.shape
    return f"reshape(kron(reshape({w(a)}, {w((j, 1))}), {w(p)}), {w((j, k, i))})"


def _jacobian_outer_t_language(w, q, a) -> str:
    (i, k), (j,) = q.shape, a.shape
    return f"permute(reshape(kron({w(q)}, reshape({w(a)}, {w((1, j))})), {w((i, k, j))}), (0, 2, 1))"


# v = outer(a, P s) as a map of s: element [j, k, i] is a[j] P[k, i]; its Jacobian, element
# [i, j, k] a[j] Q[i, k] with Q = Pᵀ.
# v = outer(P s, b) as a map of s: element [j, k, i] is P[j, i] b[k]; its Jacobian, element
# [i, j, k] Q[i, j] b[k] with Q = Pᵀ.
declare("outer_map", Spelling(language=_outer_map_language, numpy="np.einsum('ji,k->jki', {0}, {1})",
                              latex=lambda w, p, b: rf"{w(p, ATOM)} \otimes {w(b, ATOM)}"), public=False)
declare("outer_map_t", Spelling(language=lambda w, p, a: _outer_map_t_language(w, p, a),
                                numpy="np.einsum('ki,j->jki', {0}, {1})",
                                latex=lambda w, p, a: rf"{w(a, ATOM)} \otimes {w(p, ATOM)}"), public=False)
declare("jacobian_outer_t", Spelling(language=lambda w, q, a: _jacobian_outer_t_language(w, q, a),
                                     numpy="np.einsum('ik,j->ijk', {0}, {1})",
                                     latex=lambda w, q, a: rf"{w(a, ATOM)}^{{\top}} \otimes {w(q, ATOM)}"),
        public=False)
declare("jacobian_outer", Spelling(language=_jacobian_outer_language, numpy="np.einsum('ij,k->ijk', {0}, {1})",
                                   latex=lambda w, q, b: rf"{w(q, ATOM)} \otimes {w(b, ATOM)}^{{\top}}"),
        public=False)


# Block forms, where each output's row depends on one row of the input (a batch):
# - row_scale_map(G), the map s ↦ diag(s) G of a vector seed s (m,) (a per-example loss's by its
#   logits): element [i, q, p] is δ_ip G[i, q]; its Jacobian, jacobian_row_scale(G) (m, m, k),
#   element [p, i, q] δ_pi G[i, q]: the block-diagonal matrix whose p-th block is G's p-th row;
# - rows_diag_map(D), the map s ↦ 1ᵀ (D ⊙ s) of a matrix seed s (m, k) (a batched layer's by its
#   bias): element [l, i, j] is δ_lj D[i, j]; its Jacobian, jacobian_rows_diag(D) (m, k, k),
#   element [i, j, l] D[i, j] δ_jl: a diagonal block diag(D[i]) per example.
def _row_scale_language(w, g) -> str:
    m, k = g.shape
    return f"reshape({w(g)}, {w((m, k, 1))}) * reshape(eye({w(m)}), {w((m, 1, m))})"


def _jacobian_row_scale_language(w, g) -> str:
    m = g.shape[0]
    return f"reshape(eye({w(m)}), {w((m, m, 1))}) * {w(g, PRODUCT + 1)}"


def _rows_diag_language(w, d) -> str:
    k = d.shape[1]
    return f"reshape(eye({w(k)}), {w((k, 1, k))}) * {w(d, PRODUCT + 1)}"


def _jacobian_rows_diag_language(w, d) -> str:
    m, k = d.shape
    return f"reshape({w(d)}, {w((m, k, 1))}) * eye({w(k)})"


declare("row_scale_map", Spelling(language=_row_scale_language, level=PRODUCT,
                                  numpy=lambda w, g: f"{w(g, ATOM)}[:, :, None] * np.eye({w(g.shape[0])})[:, None, :]",
                                  latex=lambda w, g: rf"\operatorname{{blockdiag}}\left({w(g)}\right)^{{\top}}"),
        public=False)
declare("jacobian_row_scale", Spelling(language=_jacobian_row_scale_language, level=PRODUCT,
                                       numpy=lambda w, g: f"np.eye({w(g.shape[0])})[:, :, None] * {w(g, PRODUCT + 1)}",
                                       latex=lambda w, g: rf"\operatorname{{blockdiag}}\left({w(g)}\right)"),
        public=False)
declare("rows_diag_map", Spelling(language=_rows_diag_language, level=PRODUCT,
                                  numpy=lambda w, d: f"np.eye({w(d.shape[1])})[:, None, :] * {w(d, PRODUCT + 1)}",
                                  latex=lambda w, d: rf"\left(\mathbf{{1}} \otimes I\right)^{{\top}} "
                                                     rf"\operatorname{{diag}}\left(\operatorname{{vec}} {w(d, ATOM)}\right)"),
        public=False)
declare("jacobian_rows_diag", Spelling(language=_jacobian_rows_diag_language, level=PRODUCT,
                                       numpy=lambda w, d: f"{w(d, ATOM)}[:, :, None] * np.eye({w(d.shape[1])})",
                                       latex=lambda w, d: r"\mathbf{1} \otimes I" if d.op == "const" and d.number == 1.0
                                       else rf"\operatorname{{diag}}\left(\operatorname{{vec}} {w(d, ATOM)}"
                                            rf"\right) \left(\mathbf{{1}} \otimes I\right)"),
        public=False)


def chain_einsum(m: E.Expr) -> tuple:
    """(subscripts, operands) of one einsum that computes the map `m` (a then_map over a
    kron_map), v's indices then s's: each Kronecker factor and elementwise factor an operand,
    an identity none (its two indices are one), so no n × n identity of a batch is made."""
    layers = []
    pieces, operands = [], []
    while True:
        scalar, rest = scalar_factor(m)
        if scalar is not None:  # a number or a scalar of the program: an operand without indices
            pieces.append("")
            operands.append(scalar)
            m = rest
        if m.op != "then_map":
            break
        layers.append(m.args[:3])
        m = m.args[3]
    if m.op == "diag_map":  # D ⊙ s
        layers.append((*_eyes(m.shape[:2]), m.args[0]))
        m = _identity_map(m.shape[2:])
    if m.op != "kron_map":
        raise ValueError(f"no einsum for the map {m.op}")
    base_p, base_r = m.args  # s ↦ P s Rᵀ
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    b, j = next(letters), next(letters)  # s's indices

    def mapped(factor: E.Expr, index: str) -> str:
        if factor.op == "eye":
            return index
        new = next(letters)
        pieces.append(new + index)
        operands.append(factor)
        return new

    x, y = mapped(base_p, b), mapped(base_r, j)
    for p, r, d in reversed(layers):
        if not (d.op == "const" and d.number == 1.0):
            pieces.append((x + y)[2 - len(d.shape):])  # a vector D runs along the second index
            operands.append(d)
        x, y = mapped(p, x), mapped(r, y)
    out = x + y + b + j
    shape = (*layers[0][0].shape[:1], *layers[0][1].shape[:1]) if layers else (base_p.shape[0], base_r.shape[0])
    sizes = dict(zip(out, (*shape, *base_p.shape[1:], *base_r.shape[1:])))
    for k, index in enumerate(out):  # an index that passed only identities: v's and s's equal there
        if index in out[:k]:
            new = next(letters)
            pieces.append(index + new)
            operands.append(E.call("eye", (sizes[index],), (sizes[index], sizes[index])))
            out = out[:k] + new + out[k + 1:]
    return ",".join(pieces) + "->" + out, operands


def _einsum_by_sides(subscripts, *operands):
    """A chained map's einsum (the derived module carries this function). An identity operand
    merges its two indices (the result is spread on that diagonal at the end); where then one
    index is summed, over a batch, and every other operand holds indices of the output's first
    half or of its second (the map's two sides), with indices both share, each side is
    multiplied out over the batch and one (batched) matrix product sums it; otherwise einsum's
    own contraction order."""
    inputs, out = subscripts.split("->")
    terms, kept, merged = [], [], []
    for term, operand in zip(inputs.split(","), operands):
        if len(term) == 2 and term[0] != term[1] and operand.ndim == 2 and operand.shape[0] == operand.shape[1] \
                and np.array_equal(operand, np.eye(operand.shape[0])):
            merged.append(term)  # δ: its second index is its first from here on
            continue
        terms.append(term)
        kept.append(operand)
    for k in range(len(terms) - 1, -1, -1):  # ones whose indices all others hold: only a broadcast
        others = "".join(t for j, t in enumerate(terms) if j != k)
        if kept[k].ndim and set(terms[k]) <= set(others) and np.all(kept[k] == 1):
            del terms[k], kept[k]
    reduced = out
    for first, second in merged:
        terms = [t.replace(second, first) for t in terms]
        reduced = reduced.replace(second, first)
    both = {i for i in reduced if reduced.count(i) > 1}
    reduced = "".join(i for k, i in enumerate(reduced) if i not in reduced[:k])
    summed = set("".join(terms)) - set(reduced)
    half = len(out) // 2
    left_side, right_side = set(out[:half]) - set(out[half:]), set(out[half:]) - set(out[:half])
    for first, second in merged:
        for side in (left_side, right_side):
            if second in side:
                side.discard(second)
                side.add(first)
    shared = (left_side & right_side) | both
    left_side -= shared
    right_side -= shared
    result = None
    if len(summed) == 1:
        (c,) = summed
        left = [k for k, t in enumerate(terms) if set(t) <= left_side | shared | {c}]
        right = [k for k, t in enumerate(terms) if k not in left and set(t) <= right_side | shared | {c}]
        batch = "".join(i for i in reduced if i in shared)
        rows = "".join(i for i in reduced if i in left_side)
        cols = "".join(i for i in reduced if i in right_side)
        left_indices = set("".join(terms[k] for k in left))
        right_indices = set("".join(terms[k] for k in right))
        if len(left) + len(right) == len(terms) and left and right and left_indices >= set(rows) | {c} and \
                right_indices >= set(cols) | {c}:
            a_batch = "".join(i for i in batch if i in left_indices)
            b_batch = "".join(i for i in batch if i in right_indices)
            a = np.einsum(",".join(terms[k] for k in left) + "->" + a_batch + rows + c, *[kept[k] for k in left])
            b = np.einsum(",".join(terms[k] for k in right) + "->" + b_batch + c + cols, *[kept[k] for k in right])
            row_sizes, col_sizes = a.shape[len(a_batch):-1], b.shape[len(b_batch) + 1:]
            # each side's batch axes in `batch` order, size 1 where it lacks one (matmul broadcasts)
            a = a.reshape(tuple(a.shape[a_batch.index(i)] if i in a_batch else 1 for i in batch)
                          + (int(np.prod(row_sizes, dtype=int)), a.shape[-1]))
            b = b.reshape(tuple(b.shape[b_batch.index(i)] if i in b_batch else 1 for i in batch)
                          + (b.shape[len(b_batch)], int(np.prod(col_sizes, dtype=int))))
            product = np.matmul(a, b)
            product = product.reshape(product.shape[:len(batch)] + row_sizes + col_sizes)
            result = np.einsum(batch + rows + cols + "->" + reduced, product)
    if result is None:
        result = np.einsum(",".join(terms) + "->" + reduced, *kept, optimize=True)
    if merged:  # spread on each merged diagonal
        eyes = [np.eye(result.shape[reduced.index(first)]) for first, _ in merged]
        result = np.einsum(reduced + "," + ",".join(first + second for first, second in merged) + "->" + out,
                           result, *eyes)
    return result


def _einsum_text(head: str, w, m: E.Expr, swapped: bool = False) -> str:
    """`head(subscripts, operands...)` for the chained map m: its einsum, the output's two halves
    swapped for its Jacobian (output first)."""
    subscripts, operands = chain_einsum(m)
    if swapped:
        inputs, out = subscripts.split("->")
        subscripts = f"{inputs}->{out[2:]}{out[:2]}"
    return f"{head}({subscripts!r}, {', '.join(w(o) for o in operands)})"


def _then_numpy(w, *args) -> str:
    return _einsum_text("_einsum_by_sides", w, E.call("then_map", args, ()))


def _then_language(w, *args) -> str:
    return _einsum_text("einsum", w, E.call("then_map", args, ()))


def _then_math(w, p, r, d, inner, latex: bool = False) -> str:
    """(P ⊗ R) diag(vec(D)) M, the identities and a factor of ones left out."""
    kron, diag = (r" \otimes ", r"\operatorname{diag}\left(\operatorname{vec} ") if latex else (" ⊗ ", "diag(vec(")
    parts = []
    if not (p.op == "eye" and r.op == "eye"):
        parts.append(f"({w(p, ATOM)}{kron}{w(r, ATOM)})")
    if not (d.op == "const" and d.number == 1.0):
        if len(d.shape) == 1:  # a row repeated down the rows: 1 dᵀ
            parts.append(rf"{diag}\mathbf{{1}} {w(d, ATOM)}^{{\top}}\right)" if latex else f"{diag}1 {w(d, ATOM)}ᵀ))")
        else:
            parts.append(f"{diag}{w(d, ATOM)}\\right)" if latex else f"{diag}{w(d)}))")
    if not (inner.op == "kron_map" and all(f.op == "eye" for f in inner.args)) or not parts:
        parts.append(rf"\left({w(inner)}\right)" if latex and inner.op == "kron_map" else w(inner, ATOM))
    return " ".join(parts)


declare("then_map", Spelling(language=_then_language, numpy=_then_numpy, level=PRODUCT,
                             helper=carried(globals(), "_einsum_by_sides"),
                             latex=lambda w, p, r, d, inner: _then_math(w, p, r, d, inner, latex=True)), public=False)


# The Jacobian of a chained map: the same einsum, its output's two halves swapped.
declare("jacobian_then", Spelling(
    language=lambda w, m: _einsum_text("einsum", w, m, swapped=True),
    numpy=lambda w, m: _einsum_text("_einsum_by_sides", w, m, swapped=True),
    helper=carried(globals(), "_einsum_by_sides"),
    latex=lambda w, m: rf"\left({w(m)}\right)^{{\top}}"), public=False)


def jacobian_of(m: E.Expr, shape: tuple):
    """The Jacobian (the output's dimensions first, `shape`) from M (the input's first), or None."""
    if m.op == "const":
        return E.const(m.number, shape)
    if len(m.shape) == 1:
        return m
    if len(m.shape) == 2:
        return transpose_matrix(m)
    if m.op == "outer_map":
        p, b = m.args
        return E.call("jacobian_outer", (transpose_matrix(p), b), shape)
    if m.op == "outer_map_t":
        p, a = m.args
        return E.call("jacobian_outer_t", (transpose_matrix(p), a), shape)
    if m.op == "kron_map":  # element [j, b, i, a] of the Jacobian is P[i, j] R[a, b]
        p, r = m.args
        return _kron(transpose_matrix(p), transpose_matrix(r))
    if m.op == "kron_t_map":  # element [j, b, i, a] of the Jacobian is P[i, b] R[a, j]
        p, r = m.args
        return _kron_t(transpose_matrix(r), transpose_matrix(p))
    if m.op == "diag_map":
        return m
    if m.op == "row_scale_map":
        return E.call("jacobian_row_scale", m.args, shape)
    if m.op == "then_map":
        return E.call("jacobian_then", (m,), shape)
    if m.op == "rows_diag_map":
        return E.call("jacobian_rows_diag", m.args, shape)
    if m.op == "add" and not m.args[0]:
        parts = [jacobian_of(t, shape) for t, _ in m.args[1]]
        return None if any(p is None for p in parts) else E.add(*[E.mul(E.const(k), p)
                                                                  for p, (_, k) in zip(parts, m.args[1])])
    if m.op == "mul":
        scalar, rest = m.args[0], [(b, x) for b, x in m.args[1]]
        if len(rest) == 1 and rest[0][1] == 1.0:
            inner = jacobian_of(rest[0][0], shape)
            return None if inner is None else E.mul(E.const(scalar), inner)
    return None


def seed(shape: tuple) -> E.Expr:
    return E.symbol(SEED, tuple(shape))


def linear_map(v: E.Expr, s: E.Expr):
    """M with v == M · s (M's shape v's then s's), or None where v is not of a form written here."""
    if not s.shape:  # a number: v is M s, so M is v at s = 1
        return _at_one(v, s)
    if len(s.shape) == 1:
        return _vector_map(v, s)
    if len(s.shape) == 2:
        return _matrix_map(v, s)
    return None


def _at_one(v: E.Expr, s: E.Expr) -> E.Expr:
    """v with the number s replaced by 1, rebuilt bottom up through the algebra (no recursion)."""
    (at_one,) = substituted([v], {s: E.const(1.0)})
    return at_one


def _contains(e: E.Expr, s: E.Expr, memo: dict) -> bool:
    """Whether s is in e (memo: every node's answer so far)."""
    return E.reaches(e, lambda node: node is s, memo)


def _driven(step, v: E.Expr, s: E.Expr, memo: dict | None):
    """Run a map's `step` (a generator that yields each subexpression whose map it needs and is
    sent that map back) with an explicit stack: no recursion however deep the expression; each
    node's map is worked out once."""
    memo = {} if memo is None else memo
    maps: dict = {}
    stack = [(v, step(v, s, memo))]
    sent = None
    while True:
        node, running = stack[-1]
        try:
            wanted = running.send(sent)
        except StopIteration as done:
            maps[node] = done.value
            stack.pop()
            if not stack:
                return done.value
            sent = done.value
            continue
        if wanted in maps:
            sent = maps[wanted]
        else:
            stack.append((wanted, step(wanted, s, memo)))
            sent = None


def _split_product(v: E.Expr, s: E.Expr, memo: dict):
    """(d, u) with v == d * u, u the one factor that holds s (to the first power), d the rest; None
    where s is in more than one factor or under a power."""
    k, factors = v.args
    holding = [(b, x) for b, x in factors if _contains(b, s, memo) or (x.__class__ is E.Expr and _contains(x, s, memo))]
    if len(holding) != 1 or holding[0][1] != 1.0:
        return None
    rest = [E.power(b, x) for b, x in factors if (b, x) != holding[0]]
    return E.mul(E.const(k), *rest), holding[0][0]


# -- a vector seed: matrices ------------------------------------------------------------------------------


def _vector_map(v: E.Expr, s: E.Expr, memo: dict | None = None):
    """M for a vector seed s (m,): a vector (m,) where v is a number, a matrix (n, m) where v is a
    vector (n,), `outer_map` (n, k, m) where v is a matrix (n, k)."""
    return _driven(_vector_step, v, s, memo)


def _vector_step(v: E.Expr, s: E.Expr, memo: dict):
    """One node of _vector_map: `yield u` asks for u's map."""
    n = s.shape[0]
    if v is s:
        return E.call("eye", (n,), (n, n))
    if not _contains(v, s, memo):
        return E.const(0.0, v.shape + s.shape)
    op = v.op
    if op == "add":
        parts = []
        for t, _ in v.args[1]:
            parts.append(_broadcast_map((yield t), t.shape, v.shape))
        return _row_scales_merged(_sum_map(v, parts))
    if op == "mul":
        split = _split_product(v, s, memo)
        if split is None:
            return None
        d, u = split
        inner = (yield u)
        if inner is None:
            return None
        scaled = _row_scale(inner)
        if scaled is not None and len(v.shape) == 2:  # d ⊙ (diag(s) G) is diag(s) (d ⊙ G)
            return _row_scale_map(E.with_shape(E.mul(d, scaled), v.shape), s)
        if d.shape == ():
            return E.mul(d, inner)
        if len(d.shape) == 1 and _numberlike(u):  # a vector times a number made from s: an outer product
            return _outer(d, _as_vector(inner))
        if d.shape == u.shape == v.shape and len(v.shape) == 1:
            return _diag_times(d, inner)
        return None
    if op == "mv":
        a, b = v.args
        if _contains(a, s, memo):
            return None
        inner = (yield b)
        return None if inner is None else _times(a, inner)
    if op == "dot":
        a, b = v.args
        if _contains(a, s, memo):
            a, b = b, a
        if _contains(a, s, memo):
            return None
        inner = (yield b)
        return None if inner is None else _times(E.call("reshape", (a, (1,) + a.shape), (1,) + a.shape), inner, row=True)
    if op == "outer":
        a, b = v.args
        if _contains(a, s, memo) == _contains(b, s, memo):
            return None
        if _contains(a, s, memo):
            inner = (yield a)  # a = P s: v[j, k] = (P s)[j] b[k]
            return None if inner is None else E.call("outer_map", (inner, b), v.shape + s.shape)
        inner = (yield b)  # b = P s: v[j, k] = a[j] (P s)[k]
        return None if inner is None else E.call("outer_map_t", (inner, a), v.shape + s.shape)
    if op in ("sum_to", "sum", "sum_dim") and v.shape in ((), (1,)) and len(v.args[0].shape) == 1:
        inner = (yield v.args[0])  # sum(u) = 1ᵀ u: the map's columns summed
        summed = None if inner is None else _summed(inner)
        if summed is None or v.shape == ():
            return summed
        return E.call("reshape", (summed, (1,) + s.shape), (1,) + s.shape)
    if op == "where" and len(v.shape) == 1 and _contains(v.args[1], s, memo) and _contains(v.args[2], s, memo):
        # each branch a multiple of one u (softplus's where(x > 20, s, s * sigmoid(x))): diag(where(c, a, b)) u
        condition, a, b = v.args
        if _contains(condition, s, memo):
            return None
        scaled = [_scaled_by(branch, s, memo) for branch in (a, b)]
        if None in scaled or scaled[0][1] is not scaled[1][1] or scaled[0][1].shape != v.shape:
            return None
        inner = (yield scaled[0][1])
        scale = E.call("where", (condition, scaled[0][0], scaled[1][0]), v.shape)
        return None if inner is None else _diag_times(E.with_shape(scale, v.shape), inner)
    if op == "flip" and len(v.shape) == 1 and v.args[0].op == "cumsum" and v.args[0].args[0].op == "flip":
        # cumsum's vector-Jacobian product, flip(cumsum(flip(u))), is Uᵀ u with U the upper triangle of ones
        u = v.args[0].args[0].args[0]
        inner = (yield u)
        n = v.shape[0]
        upper = E.call("triu", (E.const(1.0, (n, n)),), (n, n))
        return None if inner is None else _times(upper, inner)
    if op == "where" and len(v.shape) == 1:  # a mask: where(c, 0, u) is diag(where(c, 0, 1)) u
        condition, a, b = v.args
        if _contains(condition, s, memo) or (_contains(a, s, memo) and _contains(b, s, memo)):
            return None
        zero, u = (a, b) if _contains(b, s, memo) else (b, a)
        if zero.op != "const" or zero.number != 0.0 or u.shape != v.shape:
            return None
        inner = (yield u)
        ones = E.const(1.0, ())
        mask = E.call("where", (condition, E.const(0.0, ()), ones) if u is b else (condition, ones, E.const(0.0, ())),
                      condition.shape)
        return None if inner is None else _diag_times(E.with_shape(mask, v.shape), inner)
    if op == "t":
        return (yield v.args[0])
    if op == "reshape" and len(v.shape) == 2 and v.shape[0] == 1 and v.args[0].shape == s.shape[:1]:
        # u as a row (1, n): v = 1 (M s)ᵀ with M u's map
        inner = (yield v.args[0])
        return None if inner is None or len(inner.shape) != 2 else \
            E.call("outer_map_t", (inner, E.const(1.0, (1,))), v.shape + s.shape)
    if op == "expand" and len(v.shape) == 2 and v.args[0].shape == (1, v.shape[1]):
        # a row repeated: v = a (P s)ᵀ with a's ones repeated too
        rows = _rows_of((yield v.args[0]))
        if rows is None or rows[2].op != "const":
            return None
        k, p, a = rows
        return E.mul(k, E.call("outer_map_t", (p, E.const(a.number, v.shape[:1])), v.shape + s.shape))
    if op == "expand" and len(v.shape) == 2 and v.args[0].shape == (v.shape[0], 1):
        scaled = _row_scale((yield v.args[0]))  # a column repeated: diag(s) C, C's column repeated
        return None if scaled is None else _row_scale_map(E.with_shape(scaled, v.shape), s)
    if op == "mm" and len(v.shape) == 2:
        left, right = v.args
        if _contains(left, s, memo) == _contains(right, s, memo):
            return None
        if not _contains(right, s, memo):  # (a (P s)ᵀ) B = a (Bᵀ P s)ᵀ; diag(s) G B = diag(s) (G B)
            inner = (yield left)
            rows = _rows_of(inner)
            if rows is not None:
                k, p, a = rows
                return E.mul(k, E.call("outer_map_t", (matrix_product(transpose_matrix(right), p), a),
                                       v.shape + s.shape))
            scaled = _row_scale(inner)
            return None if scaled is None else _row_scale_map(matrix_product(scaled, right), s)
        rows = _rows_of((yield right))  # A (a (P s)ᵀ) = (A a) (P s)ᵀ
        if rows is None:
            return None
        k, p, a = rows
        return E.mul(k, E.call("outer_map_t", (p, E.call("mv", (left, a), left.shape[:1])), v.shape + s.shape))
    if op in ("sum_to", "sum_dim") and len(v.args[0].shape) == 2 and v.shape in (v.args[0].shape[1:], (1,) + v.args[0].shape[1:]) \
            and (op == "sum_to" or _dims_of(v.args[1], 2) == {0}):
        summed = _rows_summed((yield v.args[0]))  # the rows summed: a matrix M, v = M s
        if summed is None or len(v.shape) == 1:
            return summed
        return E.call("outer_map_t", (summed, E.const(1.0, (1,))), v.shape + s.shape)  # kept as a row
    if op == "reshape" and len(v.shape) == 1 and v.args[0].shape == (1,) + v.shape:
        rows = _rows_of((yield v.args[0]))  # a row (1, n) as a vector: α (P s)ᵀ is α P s
        if rows is None or rows[2].op != "const":
            return None
        k, p, a = rows
        return E.mul(k, E.const(a.number), p)
    if op == "reshape" and len(v.shape) == 2 and v.shape[1] == 1 and v.args[0].shape == s.shape:
        # u as a column (m, 1): it scales the rows of what it multiplies
        inner = (yield v.args[0])
        column = _column(inner, v.shape)
        return None if column is None else _row_scale_map(column, s)
    if op == "sum_dim" and len(v.shape) == 2 and v.args[2] and _dims_of(v.args[1], 2) == {1}:
        inner = _row_scale((yield v.args[0]))  # the rows of diag(s) G summed: diag(s) (G 1)
        return None if inner is None else _row_scale_map(E.call("sum_dim", (inner, v.args[1], True), v.shape), s)
    return None


def _terms(m: E.Expr | None):
    """[(k, map)] of a sum of maps (one term where m is no sum); None where m is None."""
    if m is None:
        return None
    if m.op == "add" and not m.args[0]:
        return [(k, t) for t, k in m.args[1]]
    scalar, rest = scalar_factor(m)
    if scalar is not None and rest.op == "add" and not rest.args[0]:
        return [(k, E.mul(scalar, t)) for t, k in rest.args[1]]
    return [(1.0, m)]


def _rows_of(m: E.Expr | None):
    """(k, P, a) where m is the map s ↦ k a (P s)ᵀ (outer_map_t, a multiple of it included)."""
    if m is None:
        return None
    if m.op == "outer_map_t":
        return E.const(1.0), m.args[0], m.args[1]
    scalar, rest = scalar_factor(m)
    if scalar is not None and rest.op == "outer_map_t":
        return scalar, rest.args[0], rest.args[1]
    return None


def _rows_summed(m: E.Expr | None):
    """M with 1ᵀ v = M s, for v's map m (a matrix v): of a (P s)ᵀ, (1ᵀ a) P; of diag(s) G, Gᵀ."""
    terms = _terms(m)
    if terms is None:
        return None
    summed = []
    for k, term in terms:
        rows = _rows_of(term)
        scaled = _row_scale(term)
        if rows is not None:
            c, p, a = rows
            summed.append(E.mul(E.const(k), c, _total(a), p))
        elif scaled is not None:
            summed.append(E.mul(E.const(k), transpose_matrix(scaled)))
        else:
            return None
    return E.add(*summed)


def _total(a: E.Expr) -> E.Expr:
    """1ᵀ a: for ones, the number of them (a size of the program where it has one)."""
    return E.call("sum", (a,), ())


def _column_of(a: E.Expr):
    """(k, c) where the vector a is k times the column c (m, 1) read as a vector; None otherwise."""
    k, rest = E.number_factor(a) if a.op == "mul" else (1.0, a)
    if rest.op == "reshape" and len(rest.shape) == 1 and rest.args[0].shape == rest.shape + (1,):
        return E.const(k), rest.args[0]
    return None


def _dims_of(dims, rank: int) -> set:
    return {d % rank for d in (dims if isinstance(dims, tuple) else (dims,))}


def _column(m: E.Expr | None, shape: tuple):
    """The column d (m, 1) with u's map M = diag(d), for u a vector (m,) of the seed; None where
    M is not diagonal."""
    if m is None:
        return None
    if m.op == "eye":
        return E.const(1.0, shape)
    if m.op == "diag":
        return E.call("reshape", (m.args[0], shape), shape)
    scalar, rest = scalar_factor(m)
    if scalar is not None:
        inner = _column(rest, shape)
        return None if inner is None else E.mul(scalar, inner)
    return None


def _row_scale_map(g: E.Expr, s: E.Expr) -> E.Expr:
    return E.call("row_scale_map", (g,), g.shape + s.shape)


def _row_scale(m: E.Expr | None):
    """G where m is the map s ↦ diag(s) G (a multiple of it included); None otherwise."""
    if m is None:
        return None
    if m.op == "row_scale_map":
        return m.args[0]
    scalar, rest = scalar_factor(m)
    if scalar is not None and rest.op == "row_scale_map":
        return E.mul(scalar, rest.args[0])
    return None


def _row_scales_merged(m: E.Expr | None):
    """A sum of maps diag(s) G_k as one, diag(s) (Σ G_k): the Jacobian is then one block form."""
    if m is None or m.op != "add" or m.args[0]:
        return m
    parts = [_row_scale(t) for t, _ in m.args[1]]
    if any(p is None for p in parts):
        return m
    g = E.add(*[E.mul(E.const(k), p) for p, (_, k) in zip(parts, m.args[1])])
    return E.call("row_scale_map", (g,), m.shape)


def _summed(m: E.Expr):
    """1ᵀ M, the columns of a map summed (the map of sum(u) from u's): a vector."""
    if m.op == "eye":
        return E.const(1.0, m.shape[1:])
    if m.op == "diag":
        return m.args[0]
    if m.op == "diag_times":
        d, p = m.args
        return E.call("mv", (transpose_matrix(p), d), p.shape[1:])
    if m.op == "outer":
        a, b = m.args
        return E.mul(E.call("sum", (a,), ()), b)
    if m.op == "const":
        return E.const(m.number * m.shape[0], m.shape[1:])
    if m.op == "add" and not m.args[0]:
        parts = [_summed(t) for t, _ in m.args[1]]
        return None if any(p is None for p in parts) else E.add(*[E.mul(E.const(k), p)
                                                                  for p, (_, k) in zip(parts, m.args[1])])
    if m.op == "mul" and len(m.args[1]) == 1 and m.args[1][0][1] == 1.0:
        inner = _summed(m.args[1][0][0])
        return None if inner is None else E.mul(E.const(m.args[0]), inner)
    if len(m.shape) == 2:
        return E.call("mv", (transpose_matrix(m), E.const(1.0, m.shape[:1])), m.shape[1:])
    return None


def _sum_map(v: E.Expr, parts: list) -> E.Expr | None:
    """The map of a sum: the sum of its terms' maps (`parts`, None where one has none); a number
    in the sum is not linear in s."""
    number, terms = v.args
    if number:
        return None
    if any(p is None for p in parts):
        return None
    return E.add(*[E.mul(E.const(k), p) for p, (_, k) in zip(parts, terms)])


def _scaled_by(e: E.Expr, s: E.Expr, memo: dict):
    """(d, u) with e == d * u, u the one factor holding s (d 1 where e is u); None otherwise."""
    if e.op == "mul":
        return _split_product(e, s, memo)
    return E.const(1.0), e


def _numberlike(e: E.Expr) -> bool:
    """A number, or a vector of one (sum(..., keepdim=True)): it broadcasts over a vector."""
    return e.shape in ((), (1,))


def _as_vector(m: E.Expr) -> E.Expr:
    """The map of a number as a vector (m,): from a (1, m) row where it was a (1,) vector."""
    if len(m.shape) == 2 and m.shape[0] == 1:
        return m.args[0] if m.op == "reshape" else E.call("reshape", (m, m.shape[1:]), m.shape[1:])
    return m


def _broadcast_map(m: E.Expr | None, term_shape: tuple, shape: tuple):
    """The map of a term that broadcasts to the sum's shape: a number's map, repeated per row."""
    if m is None or term_shape == shape:
        return m
    if len(shape) == 1 and _numberlike(E.const(0.0, term_shape)):
        return E.call("outer", (E.const(1.0, shape), _as_vector(m)), shape + _as_vector(m).shape)
    return None


def _diag_times(d: E.Expr, m: E.Expr) -> E.Expr:
    """diag(d) @ m, written without the diagonal matrix where m is not the identity: through a
    sum, a number and an outer product (diag(d) a bᵀ is (d ⊙ a) bᵀ)."""
    if m.op == "eye":
        return E.call("diag", (d,), m.shape)
    if m.op == "add" and not m.args[0]:
        return E.add(*[E.mul(E.const(k), _diag_times(d, t)) for t, k in m.args[1]])
    scalar, matrix = scalar_factor(m)
    if scalar is not None:  # diag(d) (c M) is diag(c d) M
        return _diag_times(E.mul(scalar, d), matrix)
    if m.op == "mul" and len(m.args[1]) == 1 and m.args[1][0][1] == 1.0:
        return E.mul(E.const(m.args[0]), _diag_times(d, m.args[1][0][0]))
    if m.op == "outer":
        a, b = m.args
        return _outer(E.mul(d, a), b)
    if m.op == "diag":  # diag(d) diag(e) is diag(d ⊙ e)
        return E.call("diag", (E.mul(d, m.args[0]),), m.shape)
    if m.op == "diag_times":
        return _diag_times(E.mul(d, m.args[0]), m.args[1])
    return E.call("diag_times", (d, m), m.shape)


def _outer(a: E.Expr, b: E.Expr) -> E.Expr:
    """a bᵀ, the numbers of a and b in front: -(a bᵀ), not a (-b)ᵀ."""
    ka, ra = E.number_factor(a)
    kb, rb = E.number_factor(b)
    return E.mul(E.const(ka * kb), E.call("outer", (ra, rb), a.shape + b.shape))


def _times(a: E.Expr, m: E.Expr, row: bool = False) -> E.Expr:
    """a @ m for the matrix a (the identity vanishes); `row`: a is a vector as a (1, n) row, and
    the product a vector again."""
    if row:
        vector = a.args[0]
        if m.op == "eye":
            return vector
        return E.call("mv", (transpose_matrix(m), vector), m.shape[1:])
    if m.op == "eye":
        return a
    return E.call("mm", (a, m), (a.shape[0], m.shape[1]))


# -- a matrix seed: maps s ↦ P s Q and s ↦ D ⊙ s ------------------------------------------------------------


def _matrix_map(v: E.Expr, s: E.Expr, memo: dict | None = None):
    """M for a matrix seed s (m, r), where v is a matrix: P s Rᵀ and the like (kron_map...)."""
    return _driven(_matrix_step, v, s, memo)


def _matrix_step(v: E.Expr, s: E.Expr, memo: dict):
    """One node of _matrix_map: `yield u` asks for u's map."""
    m, r = s.shape
    if v is s:
        return _kron(E.call("eye", (m,), (m, m)), E.call("eye", (r,), (r, r)))
    if not _contains(v, s, memo):
        return E.const(0.0, v.shape + s.shape)
    if v.shape == s.shape[1:] and v.args and v.args[0].__class__ is E.Expr and v.args[0].shape == s.shape and (
            v.op == "sum_to" or v.op == "sum_dim" and not v.args[2] and _dims_of(v.args[1], 2) == {0}):
        # the rows of D ⊙ s summed (a batched layer's bias): 1ᵀ (D ⊙ s)
        elementwise = _elementwise((yield v.args[0]), s)
        return None if elementwise is None else E.call("rows_diag_map", (elementwise,), v.shape + s.shape)
    if len(v.shape) != 2:
        return None
    op = v.op
    if op == "add":
        parts = []
        for t, _ in v.args[1]:
            parts.append((yield t))
        return _sum_map(v, parts)
    if op == "mul":
        split = _split_product(v, s, memo)
        if split is None:
            return None
        d, u = split
        inner = (yield u)
        if inner is None:
            return None
        if d.shape == ():
            return E.mul(d, inner)
        if d.shape == v.shape == s.shape and u is s:
            return E.call("diag_map", (d,), v.shape + s.shape)
        if (d.shape == v.shape or d.shape == v.shape[1:]) and len(u.shape) == 2:  # D ⊙ u, u repeated first
            if u.shape == (v.shape[0], 1) and v.shape[1] != 1:  # u 1ᵀ
                ones = E.const(1.0, (v.shape[1], 1))
                inner = _each_map(inner, lambda kind, p, r: (kind, p, _mm_folding_ones(ones, r)))
            elif u.shape == (1, v.shape[1]) and v.shape[0] != 1:  # 1 u
                ones = E.const(1.0, (v.shape[0], 1))
                inner = _each_map(inner, lambda kind, p, r: (kind, _mm_folding_ones(ones, p), r))
            elif u.shape != v.shape:
                return None
            return None if inner is None else _then(*_eyes(v.shape), d, inner)
        return None
    if op == "outer" and _contains(v.args[0], s, memo) and not _contains(v.args[1], s, memo):
        column = _column_of(v.args[0])  # (k c) bᵀ with c a column: R becomes b Rᵀ's
        if column is None:
            return None
        k, c = column
        b = v.args[1]
        column_b = E.call("reshape", (b, b.shape + (1,)), b.shape + (1,))
        inner = _each_map((yield c), lambda kind, p, r: (kind, p, _mm_folding_ones(column_b, r)))
        return None if inner is None else E.mul(k, inner)
    if op == "sum_to" and len(v.args[0].shape) == 2 and v.shape in ((v.args[0].shape[0], 1), (1, v.args[0].shape[1])):
        u = v.args[0]  # summed to a column (u 1) or a row (1ᵀ u)
        if v.shape == (u.shape[0], 1):
            ones = E.const(1.0, (1, u.shape[1]))
            return _each_map((yield u), lambda kind, p, r: (kind, p, _mm_folding_ones(ones, r)))
        ones = E.const(1.0, (1, u.shape[0]))
        return _each_map((yield u), lambda kind, p, r: (kind, _mm_folding_ones(ones, p), r))
    if op == "sum_dim" and v.args[2] and len(v.args[0].shape) == 2:  # u 1 or 1ᵀ u, kept as a column or row
        dims = _dims_of(v.args[1], 2)
        ones = E.const(1.0, (1, v.args[0].shape[1] if dims == {1} else v.args[0].shape[0]))
        if dims == {1}:  # u 1: R becomes 1ᵀ R
            return _each_map((yield v.args[0]), lambda kind, p, r: (kind, p, _mm_folding_ones(ones, r)))
        if dims == {0}:
            return _each_map((yield v.args[0]), lambda kind, p, r: (kind, _mm_folding_ones(ones, p), r))
        return None
    if op == "mm":
        a, b = v.args
        if not _contains(a, s, memo):  # a (P s Rᵀ) is (a P) s Rᵀ
            return _each_map((yield b), lambda kind, p, r: (kind, matrix_product(a, p), r))
        if not _contains(b, s, memo):  # (P s Rᵀ) b is P s (bᵀ R)ᵀ
            return _each_map((yield a),
                             lambda kind, p, r: (kind, p, matrix_product(transpose_matrix(b), r)))
        return None
    if op == "t":  # (P s Rᵀ)ᵀ is R sᵀ Pᵀ, and (P sᵀ Rᵀ)ᵀ is R s Pᵀ
        swapped = {"kron_map": "kron_t_map", "kron_t_map": "kron_map"}
        return _each_map((yield v.args[0]), lambda kind, p, r: (swapped[kind], r, p))
    if op == "linalg_solve" and v.args[2] and not _contains(v.args[0], s, memo):  # A⁻¹ B
        a, b = v.args[0], v.args[1]
        inverse = E.call("linalg_inv", (a,), a.shape)
        return _each_map((yield b), lambda kind, p, r: (kind, matrix_product(inverse, p), r))
    return None


def _elementwise(m: E.Expr | None, s: E.Expr):
    """D where m is the map s ↦ D ⊙ s (the identity: D ones); None otherwise."""
    if m is None:
        return None
    if m.op == "diag_map":
        return m.args[0]
    if m.op == "kron_map" and all(f.op == "eye" for f in m.args):
        return E.const(1.0, s.shape)
    scalar, rest = scalar_factor(m)
    if scalar is not None:
        inner = _elementwise(rest, s)
        return None if inner is None else E.mul(scalar, inner)
    return None


def _each_map(m, change):
    """A sum of kron maps with `change(kind, P, R) -> (kind, P, R)` applied to each; None where
    m is not such a sum."""
    if m is None:
        return None
    if m.op in ("kron_map", "kron_t_map"):
        kind, p, r = change(m.op, *m.args)
        return _kron(p, r) if kind == "kron_map" else _kron_t(p, r)
    if m.op in ("then_map", "diag_map"):  # P (D ⊙ M s) Rᵀ: the change is to P and R
        p, r, d, inner = m.args if m.op == "then_map" else (*_eyes(m.shape[:2]), m.args[0], _identity_map(m.shape[2:]))
        kind, p, r = change("kron_map", p, r)
        return None if kind != "kron_map" else _then(p, r, d, inner)
    if m.op == "add" and not m.args[0]:
        parts = [_each_map(t, change) for t, _ in m.args[1]]
        return None if any(p is None for p in parts) else E.add(*[E.mul(E.const(k), p)
                                                                  for p, (_, k) in zip(parts, m.args[1])])
    scalar, rest = scalar_factor(m)
    if scalar is not None:
        inner = _each_map(rest, change)
        return None if inner is None else E.mul(scalar, inner)
    return None


def _eyes(shape: tuple) -> tuple:
    return tuple(E.call("eye", (n,), (n, n)) for n in shape)


def _identity_map(shape: tuple) -> E.Expr:
    return _kron(*_eyes(shape))


def _then(p: E.Expr, r: E.Expr, d: E.Expr, inner: E.Expr) -> E.Expr:
    """The map s ↦ P (D ⊙ M s) Rᵀ, M the map `inner`: an elementwise factor between two Kronecker
    maps (a softmax's rows, a layer's activation), as an array of v's shape then s's. One
    elementwise factor after another is their product."""
    if inner.op == "add" and not inner.args[0]:  # through a sum of maps, term by term
        return E.add(*[E.mul(E.const(k), _then(p, r, d, t)) for t, k in inner.args[1]])
    scalar, rest = scalar_factor(inner)
    if scalar is not None:
        return E.mul(scalar, _then(p, r, d, rest))
    if d.op == "const" and d.number == 1.0 and inner.op in ("kron_map", "then_map") and _is_identity(p) and \
            _is_identity(r):
        return inner
    if inner.op == "then_map" and _is_identity(inner.args[0]) and _is_identity(inner.args[1]):
        d = E.mul(d, inner.args[2])
        inner = inner.args[3]
    elif inner.op == "diag_map":
        d = E.mul(d, inner.args[0])
        inner = _identity_map(inner.shape[2:])
    return E.call("then_map", (p, r, d, inner), (p.shape[0], r.shape[0]) + inner.shape[2:])


def _mm_folding_ones(a: E.Expr, b: E.Expr) -> E.Expr:
    """a @ b, where an outer product of ones is ones (1 1ᵀ: a column and a row of them)."""
    if a.op == "const" and b.op == "const" and a.shape[1] == 1:
        return E.const(a.number * b.number, (a.shape[0], b.shape[1]))
    return matrix_product(a, b)


def _is_identity(e: E.Expr) -> bool:
    return e.op == "eye"


def _kron_t(p: E.Expr, r: E.Expr) -> E.Expr:
    """The map s ↦ p @ sᵀ @ rᵀ, as an array of v's shape then s's."""
    return E.call("kron_t_map", (p, r), (p.shape[0], r.shape[0], r.shape[1], p.shape[1]))


def _kron(p: E.Expr, r: E.Expr) -> E.Expr:
    """The map s ↦ p @ s @ rᵀ, as an array of v's shape then s's."""
    return E.call("kron_map", (p, r), (p.shape[0], r.shape[0], p.shape[1], r.shape[1]))



"""The matrix algebra's identities, one row each (symbolic/matrix.py's RULES): every rule has an
example here and rewrites it as the textbook does (test_matrix_calculus.py holds the derived
formulas to PyTorch's numbers at two sizes). Adding a rule is a row in RULES and a row here;
the first test says which rule has none."""

from __future__ import annotations

import pytest

from autodiff.symbolic import expr as E
from autodiff.symbolic import matrix as M
from autodiff.symbolic.printing import MathPrinter

n, m = 3, 4
A, B = E.symbol("A", (n, n)), E.symbol("B", (n, m))
x, b = E.symbol("x", (n,)), E.symbol("b", (m,))
k = E.symbol("k")
I = E.call("eye", (n,), (n, n))


def call(op, *args, shape):
    return E.call(op, args, shape)


# rule name -> (an expression it rewrites, the rewritten expression as a page of mathematics writes it)
EXAMPLES = {
    "the identity vanishes from a product: A I = A": (lambda: call("mm", A, I, shape=(n, n)), "A"),
    "a number leaves a product: A (k x) = k A x": (lambda: call("mv", A, 2 * x, shape=(n,)), "2 * (A @ x)"),
    "a column times a row is an outer product: a bᵀ": (
        lambda: call("mm", call("reshape", x, (n, 1), shape=(n, 1)), call("reshape", b, (1, m), shape=(1, m)),
                     shape=(n, m)), "x bᵀ"),
    "a row or column product is a matrix-vector product: xᵀ A = (Aᵀ x)ᵀ": (
        lambda: call("reshape", call("mm", call("reshape", x, (1, n), shape=(1, n)), B, shape=(1, m)), (m,),
                     shape=(m,)), "Bᵀ @ x"),
    "the identity and a diagonal are symmetric: Iᵀ = I": (lambda: call("t", I, shape=(n, n)), "I"),
    "twice transposed is itself: (Aᵀ)ᵀ = A": (lambda: call("t", call("t", A, shape=(n, n)), shape=(n, n)), "A"),
    "a transpose goes through a product: (A B)ᵀ = Bᵀ Aᵀ": (
        lambda: call("t", call("mm", A, B, shape=(n, m)), shape=(m, n)), "Bᵀ @ Aᵀ"),
    "an outer product transposed: (a bᵀ)ᵀ = b aᵀ": (
        lambda: call("t", call("outer", x, b, shape=(n, m)), shape=(m, n)), "b xᵀ"),
    "a transpose goes through a sum: (A + B)ᵀ = Aᵀ + Bᵀ": (
        lambda: call("t", A + call("t", A, shape=(n, n)), shape=(n, n)), "A + Aᵀ"),
    "a number leaves a transpose: (k A)ᵀ = k Aᵀ": (lambda: call("t", 3 * A, shape=(n, n)), "3 * Aᵀ"),
    "a matrix of one number is its own transpose": (lambda: call("t", E.const(2.0, (n, m)), shape=(m, n)),
                                                     "full((4, 3), 2)"),
    "an upper triangle transposed is a lower one: triu(A)ᵀ = tril(Aᵀ)": (
        lambda: call("t", call("triu", A, shape=(n, n)), shape=(n, n)), "tril(Aᵀ)"),
    "rows that are all one vector: 1 xᵀ": (lambda: call("expand", x, (m, n), shape=(m, n)), "1 xᵀ"),
    "swapping a matrix's two dims is its transpose": (lambda: call("transpose", B, 0, 1, shape=(m, n)), "Bᵀ"),
    "the solution of A X = 0 is 0": (lambda: call("linalg_solve", A, E.const(0.0, (n, m)), True, shape=(n, m)),
                                     "zeros(3, 4)"),
    "a solve against the identity is an inverse: A⁻¹ (k I) = k A⁻¹": (
        lambda: call("linalg_solve", A, 2 * I, True, shape=(n, n)), "2 * A⁻¹"),
    "a number leaves a sum: sum(k x) = k sum(x)": (lambda: call("sum", -3 * x, shape=()), "-3 * sum(x)"),
    "summed to a number is the sum: sum_to(x, ()) = sum(x)": (lambda: call("sum_to", x, (), shape=()), "sum(x)"),
    "exp of log_softmax is softmax": (lambda: call("exp", call("log_softmax", x, 0, shape=(n,)), shape=(n,)),
                                      "softmax(x, 0)"),
    "exp(z - logsumexp(z)) is softmax(z)": (
        lambda: call("exp", x - call("reshape", call("logsumexp", x, (0,), shape=()), (1,), shape=(1,)),
                     shape=(n,)), "softmax(x, 0)"),
    "the inverse of a transpose is the inverse transposed: (Xᵀ)⁻¹ = X⁻ᵀ": (
        lambda: call("linalg_inv", call("t", A, shape=(n, n)), shape=(n, n)), "A⁻ᵀ"),
    "e^A's derivative along the identity is e^A: L(A, c I) = c e^A": (lambda: exp_block(2 * I), "2 * linalg_matrix_exp(A)"),
    "a matrix and its inverse cancel where they meet: A (A⁻¹ B) = B, Aᵀ (A X)⁻ᵀ = X⁻ᵀ": (
        lambda: call("mm", call("t", A, shape=(n, n)),
                     call("linalg_inv", call("mm", call("t", X, shape=(n, n)), call("t", A, shape=(n, n)), shape=(n, n)),
                          shape=(n, n)), shape=(n, n)), "X⁻ᵀ"),
    "a Gram matrix and its inverse are symmetric: ((XᵀX)⁻¹)ᵀ = (XᵀX)⁻¹": (
        lambda: call("t", call("linalg_inv", gram(), shape=(m, m)), shape=(m, m)), "(Bᵀ @ B)⁻¹"),
    "a Gram matrix's determinant is never negative: sign det(XᵀX) ≠ -1": (
        lambda: call("where", call("eq", call("linalg_slogdet_sign", gram(), shape=()), E.const(-1.0), shape=()),
                     E.const(0.0), E.const(1.0), shape=()), "1"),
    "a factor constant along the summed dims leaves the sum: sum_to(a b) = a sum_to(b)": (
        lambda: call("sum_to", E.mul(E.symbol("c", (n, 1)), B), (n, 1), shape=(n, 1)), "c * sum_to(B, (3, 1))"),
    "an array repeated, then summed over what it varies along, is its sum repeated": (
        lambda: call("sum_to", call("expand", call("reshape", x, (1, n), shape=(1, n)), (m, n), shape=(m, n)), (m, 1),
                     shape=(m, 1)), "expand(sum(x), (4, 1))"),
    "a sum sees no reshape: sum(reshape(x) ** p) = sum(x ** p)": (
        lambda: call("sum", E.power(call("reshape", B, (m, n), shape=(m, n)), 2.0), shape=()), "sum(B ** 2)"),
    "numbers leave a reshape: reshape(k x) = k reshape(x)": (
        lambda: call("reshape", E.mul(E.const(2.0), k, B), (m, n), shape=(m, n)), "2 * k * reshape(B, (4, 3))"),
    "a chain of matrix products is one, left to right: A (B C) = (A B) C": (
        lambda: call("mm", A, call("mm", A, B, shape=(n, m)), shape=(n, m)), "A @ A @ B"),
    "a trace turns its chain: tr(A B C) = tr(B C A), begun at one fixed factor": (
        lambda: call("trace", call("mm", X, A, shape=(n, n)), shape=()), "trace(A @ X)"),
    "a sum over a count of its elements is a mean: sum(y) / n = mean(y)": (
        lambda: E.mul(call("sum", x, shape=()), E.power(E.size("n"), -1.0)), "mean(x)"),
    "a mask of one value is assumed away, and said: where(a == b, 0, y) = y, assuming a ≠ b": (
        lambda: call("where", call("eq", k, E.const(0.0), shape=()), E.const(0.0), 2 * k, shape=()), "2 * k"),
    "masks of one condition are one where: where(c, 0, 1) p + q where(c, 1, 0) = where(c, q, p)": (
        lambda: masked(E.symbol("p", (n,))) + E.symbol("q", (n,)) * mask(1.0, 0.0), "where(x <= 1, q, p)"),
}

X = E.symbol("X", (n, n))


def mask(on_true: float, on_false: float):
    return call("where", call("le", x, E.const(1.0), shape=(n,)), E.const(on_true, (n,)), E.const(on_false, (n,)),
                shape=(n,))


def masked(p):
    return mask(0.0, 1.0) * p


def test_a_mask_over_a_factor_that_may_be_infinite_is_kept():
    """0 · inf is nan, as the engine computes it: where(c, 0, 1) / sqrt(x) stays as it is."""
    E.new_table()
    unsafe = masked(E.power(call("sqrt", x, shape=(n,)), -1.0)) + E.symbol("q", (n,)) * mask(1.0, 0.0)
    assert M._masks_merged(unsafe) is None


def gram():
    return call("mm", call("t", B, shape=(m, n)), B, shape=(m, m))


def exp_block(g):
    """The top-right block of e^[[A, g], [0, A]], as matrix_exp's backward writes it."""
    rows = (call("cat", (A, g), 1, shape=(n, 2 * n)), call("cat", (E.const(0.0, (n, n)), A), 1, shape=(n, 2 * n)))
    block = call("linalg_matrix_exp", call("cat", rows, 0, shape=(2 * n, 2 * n)), shape=(2 * n, 2 * n))
    return call("narrow", call("narrow", block, 0, 0, n, shape=(n, 2 * n)), 1, n, n, shape=(n, n))


def test_the_derivative_of_exp_along_a_matrix_that_need_not_commute_stays_the_block():
    E.new_table()
    assert M._exp_along_identity(exp_block(A)) is None


def test_every_rule_has_an_example():
    assert [r.name for r in M.RULES if r.name not in EXAMPLES] == []
    assert [name for name in EXAMPLES if name not in {r.name for r in M.RULES}] == []


@pytest.mark.parametrize("rule", M.RULES, ids=lambda r: r.name)
def test_a_rule_rewrites_its_example_as_the_textbook_does(rule):
    E.new_table()
    make, written = EXAMPLES[rule.name]
    before = make()
    with M.assuming(), M.sized({"n": n}):  # (as derive asks: masks written off, sizes known by name)
        assert rule.rewrite(before) is not None, "the rule applies to its example"
        (after,) = M.simplify([before])
    assert MathPrinter().text(after) == written


def test_a_mask_of_one_value_is_kept_unless_derive_says_it_will_state_the_condition():
    E.new_table()
    k = E.symbol("k")
    masked = call("where", call("eq", k, E.const(0.0), shape=()), E.const(0.0), 2 * k, shape=())
    assert M.simplify([masked]) == [masked]
    with M.assuming() as assumed:
        assert MathPrinter().text(M.simplify([masked])[0]) == "2 * k"
    assert [MathPrinter().text(c) for c in assumed] == ["k == 0"]


@pytest.mark.parametrize("left", [True, False])
def test_an_outer_product_beside_at_is_in_parentheses(left):
    """Juxtaposition (a bᵀ) and @ never mix on one level: `(a bᵀ) @ x`, `A @ (a bᵀ)`."""
    E.new_table()
    outer = call("outer", x, x, shape=(n, n))
    product = call("mm", outer, A, shape=(n, n)) if left else call("mm", A, outer, shape=(n, n))
    vector = call("mv", outer, x, shape=(n,))
    assert MathPrinter().text(product) == ("(x xᵀ) @ A" if left else "A @ (x xᵀ)")
    assert MathPrinter().text(vector) == "(x xᵀ) @ x"


def test_a_power_every_term_has_is_taken_out_of_the_sum_at_its_least():
    """a / √u + b / √u - c / u^1.5 is (a + b - c / u) / √u: the layer norm's gradient, short."""
    from autodiff.symbolic.cancel import operations, smaller

    E.new_table()
    u = E.add(E.symbol("u", (n,)), E.const(1e-5))
    e = E.add(E.mul(E.symbol("a", (n,)), E.power(u, -0.5)), E.mul(E.symbol("b", (n,)), E.power(u, -0.5)),
              E.mul(E.const(-1.0), E.symbol("c", (n,)), E.power(u, -1.5)))
    shorter = smaller(e)
    assert operations(shorter) < operations(e)
    assert MathPrinter().text(shorter) == "(a + b - c / (u + 1e-05)) / sqrt(u + 1e-05)"


def test_a_sum_over_a_size_is_a_mean_only_where_that_size_counts_its_elements():
    E.new_table()
    total = E.mul(call("sum", x, shape=()), E.power(E.size("m"), -1.0))
    with M.sized({"m": m, "n": n}):
        assert MathPrinter().text(M.simplify([total])[0]) == "sum(x) / m"  # m counts something else
    assert M.simplify([E.mul(call("sum", x, shape=()), E.power(E.size("n"), -1.0))])[0].op == "mul"  # no sizes told


def test_a_chain_bracketed_two_ways_is_one_node():
    E.new_table()
    C = E.symbol("C", (m, m))
    left = call("mm", call("mm", A, B, shape=(n, m)), C, shape=(n, m))
    right = call("mm", A, call("mm", B, C, shape=(n, m)), shape=(n, m))
    assert left is not right
    (a,), (b,) = M.simplify([left]), M.simplify([right])
    assert a is b
    vector = call("mv", A, call("mv", A, x, shape=(n,)), shape=(n,))  # A (A x): never (A A) x
    assert M.simplify([vector])[0] is vector


def test_traces_of_one_cycle_are_one_node_and_collect():
    E.new_table()
    C = E.symbol("C", (m, n))
    turns = [call("trace", call("mm", call("mm", A, B, shape=(n, m)), C, shape=(n, n)), shape=()),
             call("trace", call("mm", call("mm", B, C, shape=(n, n)), A, shape=(m, m)), shape=()),
             call("trace", call("mm", call("mm", C, A, shape=(m, n)), B, shape=(m, m)), shape=())]
    simplified = M.simplify(turns)
    assert simplified[0] is simplified[1] is simplified[2]
    (total,) = M.simplify([E.add(*turns)])
    assert MathPrinter().text(total) == "3 * trace(A @ B @ C)"

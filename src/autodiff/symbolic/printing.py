"""Expressions as text: the expression language (also Python), LaTeX, NumPy code and a page of
mathematics, each printer a generic reader of the ops' spellings (ops/spelling.py). Which
nodes are named and computed once is statements.py's."""

from __future__ import annotations

import math

import numpy as np

from .. import codec
from ..ops.spelling import ATOM as _ATOM, CALL, COMPARE as _COMPARE, POWER as _POWER, PRODUCT as _PRODUCT, \
    SPELLINGS, SUM as _SUM, UNARY as _UNARY
from . import expr as E

MAX_INLINE = 24  # a node nested deeper than this is named (statements.py)


class UnsupportedOperation(Exception):
    """An operation a target (the language, NumPy, LaTeX) has no spelling for."""


def number_text(value: float) -> str:
    if not math.isfinite(value):
        return codec.word(value)  # the language's constants nan and inf
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return repr(float(value))


def _fraction(k: float):
    """(|p|, q) with k == p / q in float64, q a small whole number above 1, where p / q reads
    better than k's decimals (1/3, 2/3, 1/4: a division; 0.5 and 1.5 stay as they are); else None."""
    if not math.isfinite(k) or k == int(k):
        return None
    from fractions import Fraction  # only for a number with decimals: fractions costs start-up time

    fraction = Fraction(k).limit_denominator(64)
    if fraction.denominator < 2 or fraction.numerator / fraction.denominator != k:
        return None
    if abs(fraction.numerator) != 1 and len(repr(abs(k))) <= 4:  # 1.5, 2.5: short already
        return None
    return float(abs(fraction.numerator)), fraction.denominator


def _static_text(value) -> str:
    if isinstance(value, tuple):
        inner = ", ".join(_static_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, E.Expr):  # an array inside an index key
        return to_text(value)
    if value is Ellipsis:
        return "..."
    return repr(value)


def _array_text(array) -> str:
    if array.dtype == bool:
        return repr(array.tolist())
    values = np.asarray(array, dtype=float) + 0.0  # -0 is 0
    return repr(values.tolist()).replace(".0,", ",").replace(".0]", "]")


class Printer:
    """Language text for expressions, with `names` for the nodes that are named; `sizes`
    (symbolic/sizes.py) writes the integers and fractions made of named sizes by their names."""

    def __init__(self, names: dict | None = None, sizes=None) -> None:
        self.names = names or {}
        self.sizes = sizes if sizes else None

    def text(self, e: E.Expr) -> str:
        return self._text(e)[0]

    def _name(self, name: str) -> str:
        """A named node's text (LaTeX sets it upright)."""
        return name

    def _wrap(self, e: E.Expr, level: int, right: bool = False) -> str:
        text, own = self._text(e)
        return f"({text})" if own < level or (right and own == level) else text

    # Which of an op's spellings this printer writes (ops/spelling.py), and how it writes a call.
    FORM = "language"

    def _text(self, e: E.Expr) -> tuple:
        name = self.names.get(e)
        if name is not None:
            return self._name(name), _ATOM
        op, args = e.op, e.args
        # the commonest first: this runs for every node printed
        if op == "mul":
            return self._signed_product(e)
        if op == "add":
            return self._sum(e), _SUM
        if op == "sym" or op == "size":
            return self._symbol(args[0]), _ATOM
        if op == "pow":
            return self._power(args[0], args[1])
        if op == "const":
            return self._constant(e)
        if op == "tensor":
            return self._array(args[0].array), _ATOM
        if op == "expand" and self.sizes is not None and not args[0].shape and args[0].symbolic:
            like = self.sizes.likes.get(e.shape)
            if like is not None and not E.symbols_of(args[0]):  # mean's 1 / n over x's shape
                return self._like(like, args[0])
        return self._spelled(op, args)

    def _like(self, like: str, k: E.Expr) -> tuple:
        """A number made of sizes over an input's shape: `ones_like(x) / n`."""
        ones = f"ones_like({like})"
        if k.op == "pow" and k.args[1] == -1.0:
            return f"{ones} / {self._wrap(k.args[0], _POWER)}", _PRODUCT
        return f"{self._wrap(k, _PRODUCT)} * {ones}", _PRODUCT

    def _symbol(self, name: str) -> str:
        return name

    def _constant(self, e: E.Expr) -> tuple:
        value = e.args[0]
        like = self.sizes.likes.get(e.shape) if self.sizes is not None and e.shape else None
        if like is not None:  # ones_like(x) / n: mean's gradient, for every size
            word = {1.0: "ones_like", 0.0: "zeros_like"}.get(value)
            if word is not None:
                return f"{word}({like})", _ATOM
            number = self._number_by_sizes(value)
            if number.startswith("1 / "):
                return f"ones_like({like}) / {number[4:]}", _PRODUCT
            return f"{number} * ones_like({like})", _PRODUCT
        if e.shape:
            word = {1.0: "ones", 0.0: "zeros"}.get(value)
            size = ", ".join(self._static(s) for s in e.shape)
            text = f"{word}({size})" if word else f"full({self._static(e.shape)}, {self._number_by_sizes(value)})"
            return text, _ATOM
        if self.sizes is not None and self.sizes.ratio(value) is not None:
            return self._number_by_sizes(value), _PRODUCT
        fraction = _fraction(value)
        if fraction is not None:  # 1 / 3, as a program writes it
            p, q = fraction
            return f"{'-' if value < 0 else ''}{number_text(p)} / {q}", _PRODUCT
        return number_text(value), (_UNARY if value < 0 else _ATOM)

    def _number_by_sizes(self, value: float) -> str:
        """A number as text: by named sizes where it is made of them (`n`, `2 / n`)."""
        ratio = self.sizes.ratio(value) if self.sizes is not None else None
        if ratio is None:
            return number_text(value)
        plain, above, below = ratio
        top = ([] if abs(plain) == 1 and above else [number_text(abs(plain))]) + above
        text = " * ".join(top or ["1"])
        if below:
            text += " / " + (below[0] if len(below) == 1 else "(" + " * ".join(below) + ")")
        return ("-" if plain < 0 else "") + text

    def _array(self, array) -> str:
        return _array_text(array)

    def _argument(self, value, level: int | None = None) -> str:
        """An argument's text: an expression (parenthesized where it binds less tightly than
        `level`), or a parameter's literal."""
        if isinstance(value, E.Expr):
            return self.text(value) if level is None else self._wrap(value, level)
        if isinstance(value, tuple) and any(isinstance(v, E.Expr) for v in value):  # cat's tensors
            inner = ", ".join(self.text(v) if isinstance(v, E.Expr) else _static_text(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        return self._static(value)

    def _static(self, value) -> str:
        if self.sizes is not None:
            if isinstance(value, tuple):
                inner = ", ".join(self._static(v) for v in value)
                return f"({inner},)" if len(value) == 1 else f"({inner})"
            if isinstance(value, int) and not isinstance(value, bool):
                text = self.sizes.integer_text(value)
                if text is not None:
                    return text
        return _static_text(value)

    def _spelled(self, op: str, args) -> tuple:
        """(text, precedence) of op applied to args, as the op's spelling says."""
        spelling = SPELLINGS.get(op)
        form = getattr(spelling, self.FORM, None) if spelling is not None else None
        if spelling is not None and spelling.infix is not None and self._infix(spelling) is not None:
            level = spelling.level
            # comparisons chain in Python (a < b < c): one inside another is parenthesized on either side
            left = level + 1 if level == _COMPARE else level
            symbol = self._infix(spelling)
            between = f" {symbol} " if symbol.strip() else " "
            right = level if self._chained(op, args[1]) else level + 1
            return f"{self._argument(args[0], left)}{between}{self._argument(args[1], right)}", level
        if form is None:
            raise UnsupportedOperation(op)
        if form is CALL:
            return self._call_of(op, [self._argument(a) for a in args]), _ATOM
        if callable(form):
            return form(self._argument, *args), spelling.level
        if "{0}" not in form:  # a function's name
            return self._call_of(form, [self._argument(a) for a in args], named=True), _ATOM
        return form.format(*[self._argument(a) for a in args]), spelling.level

    def _infix(self, spelling) -> str | None:
        return spelling.infix

    # A printer for people writes a chain of matrix products as one (A Bᵀ C, not A (Bᵀ C)): the
    # same value on paper; code keeps the order it computes in, which its cost depends on.
    ASSOCIATIVE = False

    def _chained(self, op: str, right) -> bool:
        return self.ASSOCIATIVE and op in ("mm", "mv") and right.__class__ is E.Expr \
            and right.op in _MATRIX_PRODUCTS and right not in self.names

    def _call_of(self, name: str, parts: list, named: bool = False) -> str:
        return f"{name}({', '.join(parts)})"

    def _sum(self, e: E.Expr) -> str:
        number, terms = e.args
        ordered = terms  # in the order they were made
        pieces = []
        names = self.names
        for term, k in ordered:
            name = names.get(term)
            if name is not None and (k == 1 or k == -1):  # most terms of a long sum: a name
                pieces.append((k < 0, self._name(name)))
            else:
                pieces.append(self._scaled(term, k))
        if number:  # as a constant is written: 3 / 7 as a fraction, 1 / n by its size
            pieces.append((number < 0, self._constant(E.const(abs(number)))[0]))
        if pieces[0][0]:  # `1 - x**2` and `h - y`, rather than `-x**2 + 1` and `-y + h`
            positive = next((i for i, (negative, _) in enumerate(pieces) if not negative), None)
            if positive is not None:
                pieces.insert(0, pieces.pop(positive))
        first_negative, first = pieces[0]
        out = ("-" + first) if first_negative else first
        for negative, text in pieces[1:]:
            out += (" - " if negative else " + ") + text
        return out

    def _scaled(self, term: E.Expr, k: float) -> tuple:
        """(negative, text of |k| * term) for one term of a sum."""
        if term.op == "mul" and term not in self.names:
            # A product kept whole as a term (past FLATTEN factors) has a number of its own: it
            # joins k, and the factors are written after it.
            k *= term.args[0]
            return k < 0, self._product_text(abs(k), term)
        if k == 1 or k == -1:
            text, level = self._text(term)
            if (level < _PRODUCT and not (k == 1 and level == _SUM)) or level == _UNARY:
                text = f"({text})"
            return k < 0, text
        text = self._product_text(abs(k), term)
        return k < 0, text

    def _signed_product(self, e: E.Expr) -> tuple:
        """A product node's text and level: |k| times its factors, its sign in front."""
        k, _ = e.args
        text = self._product_text(abs(k), e, own=True)
        if k < 0:  # `-x` is a negation; `-2 * x` and `-x / y` are products: `a @ (-2 * x)` keeps its parentheses
            (_, exponent), *more = e.args[1]
            single = k == -1 and not more and not (isinstance(exponent, float) and exponent < 0)
            return "-" + text, (_UNARY if single else _PRODUCT)
        return text, _PRODUCT

    def _factors(self, e: E.Expr, own: bool) -> tuple:
        """(base, exponent) pairs of the product e (or e alone, when not `own` and it is named or no product)."""
        return e.args[1] if own or (e.op == "mul" and e not in self.names) else ((e, 1.0),)

    def _product_text(self, k: float, e: E.Expr, own: bool = False) -> str:
        """|k| times e's factors (e a product, or any expression when not `own`)."""
        factors = self._factors(e, own)
        top, bottom = [], []
        names = self.names
        ratio = self.sizes.ratio(k) if self.sizes is not None and k != 1 else None
        if ratio is not None:  # a number made of named sizes: 1/77 is 1 / (n * m)
            plain, above, below = ratio
            k = abs(plain)
            top, bottom = list(above), list(below)
        for base, exponent in factors:
            if exponent == 1.0:
                name = names.get(base)
                if name is not None:  # most factors of a long product: a name
                    top.append(self._name(name))
                    continue
            if isinstance(exponent, float) and exponent < 0:
                bottom.append(self._factor(base, -exponent))
            else:
                top.append(self._factor(base, exponent))
        fraction = _fraction(k) if ratio is None else None
        if fraction is not None:  # x / 3, 2 * x / 3: as the program wrote it, not 0.3333333333333333 * x
            k, below = fraction
            bottom.insert(0, str(below))
        if k not in (1, -1) or not top:
            top.insert(0, number_text(k))
        elif k == -1:
            top[0] = "-" + top[0]
        text = " * ".join(top)
        if bottom:
            below = bottom[0] if len(bottom) == 1 else "(" + " * ".join(bottom) + ")"
            text += " / " + below
        return text

    def _factor(self, base: E.Expr, exponent) -> str:
        if exponent == 1.0:
            return self._wrap(base, _PRODUCT, True)
        text, level = self._power(base, exponent)
        return text if level >= _PRODUCT else f"({text})"

    def _power(self, base: E.Expr, exponent) -> tuple:
        if exponent == 0.5:
            return f"sqrt({self.text(base)})", _ATOM
        if isinstance(exponent, float) and exponent < 0:
            return f"1 / {self._factor(base, -exponent)}", _PRODUCT
        power = number_text(exponent) if isinstance(exponent, float) else self._wrap(exponent, _POWER)
        return f"{self._wrap(base, _POWER + 1)} ** {power}", _POWER


def to_text(e: E.Expr, names: dict | None = None) -> str:
    return Printer(names).text(e)


# -- LaTeX ----------------------------------------------------------------------------------------------


def latex_name(name: str) -> str:
    """`de_da` as `de_{da}`; a name with several underscores keeps them as text; pi as π."""
    if name == "pi":
        return r"\pi"
    head, _, tail = name.partition("_")
    if tail and "_" not in tail:
        return f"{latex_name(head)}_{{{tail}}}"
    if len(name) == 1:
        return name
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


class LatexPrinter(Printer):
    """The same expressions in LaTeX: fractions, powers and the usual function names."""

    FORM = "latex"
    ASSOCIATIVE = True

    def _name(self, name: str) -> str:
        return latex_name(name)

    def _symbol(self, name: str) -> str:
        return latex_name(name)

    def _infix(self, spelling) -> str | None:
        return spelling.latex_infix

    def _call_of(self, name: str, parts: list, named: bool = False) -> str:
        head = name if named else r"\operatorname{" + name.replace("_", r"\_") + "}"
        return head + r"\left(" + ", ".join(parts) + r"\right)"

    def _product_text(self, k: float, e: E.Expr, own: bool = False) -> str:
        top, bottom = [], []
        ratio = self.sizes.ratio(k) if self.sizes is not None else None
        fraction = _fraction(k) if ratio is None else None
        if ratio is not None:  # \frac{2 x}{n}: a number made of named sizes
            k, above, below = ratio
            top.extend(above)
            bottom.extend(below)
        elif fraction is not None:  # \frac{x}{3}
            k, q = fraction
            bottom.append(str(q))
        matrices = sum(1 for base, _ in self._factors(e, own) if base.shape)
        dot = r" \odot " if matrices > 1 else r" \cdot "  # an elementwise product of non-scalars
        for base, exponent in self._factors(e, own):
            if isinstance(exponent, float) and exponent < 0:
                bottom.append(self._factor(base, -exponent, plain=True))
            else:
                top.append(self._factor(base, exponent, plain=not bottom))
        if k not in (1, -1) or not top:
            top.insert(0, number_text(k))
        elif k == -1:
            top[0] = "-" + top[0]
        numerator = dot.join(top)
        if bottom:
            denominator = dot.join(bottom)
            return rf"\frac{{{numerator}}}{{{denominator}}}"
        return numerator

    def _factor(self, base: E.Expr, exponent, plain: bool = False) -> str:
        if exponent == 1.0:
            return self._wrap(base, _PRODUCT, True)
        text, level = self._power(base, exponent)
        return text if level >= _PRODUCT else rf"\left({text}\right)"

    def _wrap(self, e: E.Expr, level: int, right: bool = False) -> str:
        text, own = self._text(e)
        return rf"\left({text}\right)" if own < level or (right and own == level) else text

    def _constant(self, e: E.Expr) -> tuple:
        """A number as a fraction (by named sizes where it is made of them: mean's 1/n); an array
        of one number as that number times a vector of ones, 𝟏."""
        value = e.args[0]
        number, level = self._latex_number(value)
        if not e.shape:
            return number, level
        if value == 0.0:
            return r"\mathbf{0}", _ATOM
        return (r"\mathbf{1}", _ATOM) if value == 1.0 else (number + r" \mathbf{1}", _PRODUCT)

    def _like(self, like: str, k: E.Expr) -> tuple:
        return f"{self._wrap(k, _PRODUCT)} " + r"\mathbf{1}", _PRODUCT

    def _latex_number(self, value: float) -> tuple:
        ratio = self.sizes.ratio(value) if self.sizes is not None else None
        if ratio is not None:
            plain, above, below = ratio
            top = " ".join(([] if abs(plain) == 1 and above else [number_text(abs(plain))]) + above) or "1"
            text = rf"\frac{{{top}}}{{{' '.join(below)}}}" if below else top
            return ("-" if plain < 0 else "") + text, _PRODUCT
        fraction = _fraction(value)
        if fraction is not None:
            p, q = fraction
            return rf"{'-' if value < 0 else ''}\frac{{{number_text(p)}}}{{{q}}}", _PRODUCT
        return number_text(value), (_UNARY if value < 0 else _ATOM)

    def _power(self, base: E.Expr, exponent) -> tuple:
        if exponent == 0.5:
            return rf"\sqrt{{{self.text(base)}}}", _ATOM
        if isinstance(exponent, float) and exponent < 0:
            return rf"\frac{{1}}{{{self._factor(base, -exponent)}}}", _ATOM
        power = number_text(exponent) if isinstance(exponent, float) else self.text(exponent)
        return f"{self._wrap(base, _POWER + 1)}^{{{power}}}", _POWER


# -- NumPy ----------------------------------------------------------------------------------------------

class NumpyPrinter(Printer):
    """The same expressions as NumPy code (`np.exp(x)`, `x @ w`); `helpers` collects the small
    functions a module must define (`_softplus`), by name."""

    FORM = "numpy"

    def __init__(self, names: dict | None = None, sizes=None, renamed: dict | None = None) -> None:
        super().__init__(names, sizes)
        self.helpers: dict = {}  # the source of each helper the code calls, in the order first used
        # the program's names that would shadow the module's own (np, a builtin, a helper), and
        # what the module calls them instead
        self.renamed = renamed or {}
        if self.renamed and self.sizes is not None:
            self.sizes = self.sizes.renamed(self.renamed)

    def _name(self, name: str) -> str:
        return self.renamed.get(name, name)

    def _constant(self, e: E.Expr) -> tuple:
        value = e.args[0]
        like = self.sizes.likes.get(e.shape) if self.sizes is not None and e.shape else None
        if like is not None:
            return f"np.full(np.shape({like}), {self._number_by_sizes(value)})", _ATOM
        if e.shape:
            number = _numpy_number(value) if not math.isfinite(value) else self._number_by_sizes(value)
            return f"np.full({self._static(e.shape)}, {number})", _ATOM
        if not math.isfinite(value):
            return _numpy_number(value), (_UNARY if value < 0 else _ATOM)
        return super()._constant(e)

    def _array(self, array) -> str:
        return f"np.array({_array_text(array)})"

    def _like(self, like: str, k: E.Expr) -> tuple:
        return f"np.full(np.shape({like}), {self.text(k)})", _ATOM

    def _symbol(self, name: str) -> str:
        return "np.pi" if name == "pi" else self.renamed.get(name, name)

    def _static(self, value) -> str:
        if isinstance(value, float) and not math.isfinite(value):
            return _numpy_number(value)
        if isinstance(value, str):
            return repr(value)
        return super()._static(value)

    def _power(self, base: E.Expr, exponent) -> tuple:
        if exponent == 0.5:
            return f"np.sqrt({self.text(base)})", _ATOM
        return super()._power(base, exponent)

    def _spelled(self, op: str, args) -> tuple:
        spelling = SPELLINGS.get(op)
        if spelling is not None and spelling.helper and spelling.numpy is not None:
            helper = spelling.helper() if callable(spelling.helper) else spelling.helper
            self.helpers.setdefault(helper, None)
        return super()._spelled(op, args)


def _numpy_number(value: float) -> str:
    """A number as NumPy code: np.nan, np.inf and -np.inf for the non-finite ones."""
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return number_text(value)


# -- mathematics, for people ------------------------------------------------------------------------------

_SUPERSCRIPT_T = "ᵀ"
_MATRIX_PRODUCTS = ("mm", "mv", "diag_times")


class MathPrinter(Printer):
    """The language's text, with the notation of a page of mathematics where it differs: Aᵀ,
    X⁻¹ (and X⁻ᵀ), a bᵀ for an outer product (1 xᵀ where a is ones), I for the identity, A B C
    for a chain of matrix products, P ⊗ R for a Hessian block's Kronecker product."""

    ASSOCIATIVE = True

    def _spelled(self, op: str, args) -> tuple:
        if op == "t":
            (x,) = args
            if x.op == "linalg_inv" and x not in self.names:
                return f"{self._argument(x.args[0], _ATOM)}⁻ᵀ", _ATOM
            return f"{self._argument(x, _ATOM)}{_SUPERSCRIPT_T}", _ATOM
        if op == "linalg_inv":
            return f"{self._argument(args[0], _ATOM)}⁻¹", _ATOM
        if op == "eye":
            return "I", _ATOM
        if op == "outer":
            a, b = args
            left, right = (("1" if v.op == "const" and v.number == 1.0 else self._argument(v, _ATOM)) for v in (a, b))
            return f"{left} {right}{_SUPERSCRIPT_T}", _PRODUCT
        if op in ("mm", "mv") and args[0].op == "outer" and args[0] not in self.names:
            # an outer product is written by juxtaposition: in parentheses before @, never `a bᵀ @ c`
            right = _PRODUCT if self._chained(op, args[1]) else _PRODUCT + 1
            return f"({self.text(args[0])}) @ {self._argument(args[1], right)}", _PRODUCT
        if op == "kron_map":  # the Kronecker product, its rows and columns in the shapes of a Hessian block
            return f"{self._argument(args[0], _POWER)} ⊗ {self._argument(args[1], _POWER)}", _PRODUCT
        if op == "kron_t_map":  # with the commutation matrix K: s ↦ P sᵀ Rᵀ
            return f"({self._argument(args[0], _POWER)} ⊗ {self._argument(args[1], _POWER)}) K", _PRODUCT
        if op == "diag_map":
            return f"diag(vec({self._argument(args[0])}))", _ATOM
        if op == "then_map":  # (P ⊗ R) diag(vec(D)) M: a Kronecker map after an elementwise one
            from .jacobian import _then_math

            return _then_math(self._argument, *args), _PRODUCT
        if op == "jacobian_then":
            return f"({self.text(args[0])}){_SUPERSCRIPT_T}", _ATOM
        if op == "jacobian_row_scale":  # block p of row p: G's row p (a per-example loss by its logits)
            return f"blockdiag({self._argument(args[0])})", _ATOM
        if op == "jacobian_rows_diag":  # diag(D[i]) for each row i (a batched layer by its bias)
            d = args[0]
            if d.op == "const" and d.number == 1.0:
                return "1 ⊗ I", _PRODUCT
            return f"diag(vec({self._argument(d)})) (1 ⊗ I)", _PRODUCT
        if op == "jacobian_outer_t":  # element [i, j, k] is a[j] Q[i, k]
            return f"{self._argument(args[1], _ATOM)}{_SUPERSCRIPT_T} ⊗ {self._argument(args[0], _POWER)}", _PRODUCT
        if op == "jacobian_outer":
            return f"{self._argument(args[0], _POWER)} ⊗ {self._argument(args[1], _ATOM)}{_SUPERSCRIPT_T}", _PRODUCT
        return super()._spelled(op, args)

"""Expressions as text: the expression language (also Python), LaTeX, and NumPy code.

`Program` turns a few root expressions into statements: every node used more than once is
computed once and named (after the program's own variable where one holds that value), and
so is a node that would nest deeper than `MAX_INLINE` levels, so that no printed line, and no
walk over it, grows with the input's length.
"""

from __future__ import annotations

import math

import numpy as np

from .. import codec
from . import expr as E

MAX_INLINE = 24

# Precedence, as Python's: comparisons < + - < * / @ % < unary minus < ** < atoms.
_COMPARE, _SUM, _PRODUCT, _UNARY, _POWER, _ATOM = range(6)
_OPERATORS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BINARY = {"mm": "@", "mv": "@", "dot": "@", "bmm": "@", "remainder": "%", "remainder_scalar": "%"}
_REDUCTIONS = {"sum_dim": "sum", "mean_dim": "mean", "prod_dim": "prod", "max_dim": "max", "min_dim": "min"}
# What the printer writes other than by the op's own name (a call of the language's function).
# issue 24: var and std, whose ops take `correction` where the functions take `unbiased`: by keyword
_SPREADS = {"var_correction": "var", "std_correction": "std"}
# issue 24: linear algebra. A result of a function that gives several is that function's call,
# indexed (`linalg_eigh(A)[1]`); the parameters the function takes by keyword are written so, where
# they differ from its defaults (strings as the language's words: `mode=complete`).
_LINALG_PARTS = {"linalg_slogdet_sign": ("linalg_slogdet", 0), "linalg_slogdet_logabsdet": ("linalg_slogdet", 1),
                 "linalg_eigh_eigenvectors": ("linalg_eigh", 1), "linalg_svd_u": ("linalg_svd", 0),
                 "linalg_svd_vh": ("linalg_svd", 2), "linalg_qr_q": ("linalg_qr", 0), "linalg_qr_r": ("linalg_qr", 1)}
_LINALG_KEYWORDS = {"linalg_solve": {"left": True}, "linalg_cholesky": {"upper": False},
                    "linalg_svd_u": {"full_matrices": True}, "linalg_svd_vh": {"full_matrices": True},
                    "linalg_qr_q": {"mode": "reduced"}, "linalg_qr_r": {"mode": "reduced"},
                    "linalg_pinv": {"atol": None, "rtol": None, "hermitian": False}}
# issue 24: the indices sort, topk... find (ops/ordering.py), as the call that returns them
_INDICES = {"topk_indices": "topk", "cummax_indices": "cummax", "cummin_indices": "cummin",
            "median_indices": "median", "kthvalue_indices": "kthvalue"}
SPELLED = {"sym", "const", "tensor", "add", "mul", "pow", "reshape", "addmm", "cat", "stack", "logsumexp",
           *_OPERATORS, *_BINARY, *_REDUCTIONS, *_SPREADS, *_INDICES,
           *_LINALG_PARTS, *_LINALG_KEYWORDS}


def number_text(value: float) -> str:
    if not math.isfinite(value):
        return codec.word(value)  # the language's constants nan and inf
    if value == int(value) and abs(value) < 1e16:
        return str(int(value))
    return repr(float(value))


def _static_text(value) -> str:
    if isinstance(value, tuple):
        inner = ", ".join(_static_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, float):
        return number_text(value)
    if isinstance(value, E.Expr):  # an array inside an index key
        return to_text(value)
    return repr(value)


def _array_text(array) -> str:
    if array.dtype == bool:
        return repr(array.tolist())
    return repr(np.asarray(array, dtype=float).tolist()).replace(".0,", ",").replace(".0]", "]")


class Printer:
    """Language text for expressions, with `names` for the nodes that are named."""

    def __init__(self, names: dict | None = None) -> None:
        self.names = names or {}

    def text(self, e: E.Expr) -> str:
        return self._text(e)[0]

    def _name(self, name: str) -> str:
        """A named node's text (LaTeX sets it upright)."""
        return name

    def _wrap(self, e: E.Expr, level: int, right: bool = False) -> str:
        text, own = self._text(e)
        return f"({text})" if own < level or (right and own == level) else text

    def _text(self, e: E.Expr) -> tuple:
        name = self.names.get(e)
        if name is not None:
            return name, _ATOM
        op, args = e.op, e.args
        # the commonest first: this runs for every node printed
        if op == "mul":
            return self._product(e)
        if op == "add":
            return self._sum(e), _SUM
        if op == "sym":
            return args[0], _ATOM
        if op == "pow":
            return self._power(args[0], args[1])
        if op == "const":
            value = args[0]
            if e.shape:
                word = {1.0: "ones", 0.0: "zeros"}.get(value)
                size = ", ".join(str(s) for s in e.shape)
                text = f"{word}({size})" if word else f"full({_static_text(e.shape)}, {number_text(value)})"
                return text, _ATOM
            return number_text(value), (_UNARY if value < 0 else _ATOM)
        if op == "tensor":
            return _array_text(args[0].array), _ATOM
        if op in _OPERATORS:
            return f"{self._wrap(args[0], _SUM)} {_OPERATORS[op]} {self._wrap(args[1], _SUM)}", _COMPARE
        if op in _BINARY:
            return f"{self._wrap(args[0], _PRODUCT)} {_BINARY[op]} {self._wrap(args[1], _PRODUCT, True)}", _PRODUCT
        if op == "addmm":
            return f"{self._wrap(args[0], _SUM)} + {self._wrap(args[1], _PRODUCT)} @ " \
                   f"{self._wrap(args[2], _PRODUCT, True)}", _SUM
        return self._call(op, args), _ATOM

    def _call(self, op: str, args) -> str:
        if op in _REDUCTIONS:
            x, dim, keepdim = args
            keep = ", keepdim=True" if keepdim else ""
            return f"{_REDUCTIONS[op]}({self.text(x)}, dim={_static_text(dim)}{keep})"
        if op in ("cat", "stack"):
            tensors, dim = args
            # a tuple: the language reads a list of tensors as one tensor literal
            inner = ", ".join(self.text(t) for t in tensors) + ("," if len(tensors) == 1 else "")
            return f"{op}(({inner}), {dim})"
        if op == "logsumexp":
            x, dim, keepdim = args
            keep = ", keepdim=True" if keepdim else ""
            return f"logsumexp({self.text(x)}, {_static_text(dim)}{keep})"
        if op in _SPREADS:
            x, dim, correction, keepdim = args
            keep = ", keepdim=True" if keepdim else ""
            return f"{_SPREADS[op]}({self.text(x)}, dim={_static_text(dim)}, correction={_static_text(correction)}{keep})"
        if op in _LINALG_KEYWORDS or op in _LINALG_PARTS:
            return self._linalg(op, args)
        parts = [self.text(a) if isinstance(a, E.Expr) else _static_text(a) for a in args]
        if op in _INDICES:
            return f"{_INDICES[op]}({', '.join(parts)}).indices"
        if op == "argsort":  # stable is keyword-only, as PyTorch's
            return f"argsort({', '.join(parts[:3])}{', stable=True' if args[3] else ''})"
        return f"{op}({', '.join(parts)})"

    def _linalg(self, op: str, args) -> str:
        keywords = _LINALG_KEYWORDS.get(op, {})
        count = len(args) - len(keywords)
        parts = [self.text(a) if isinstance(a, E.Expr) else _static_text(a) for a in args[:count]]
        for (name, default), value in zip(keywords.items(), args[count:]):
            if value != default:
                parts.append(f"{name}={value if isinstance(value, str) else _static_text(value)}")
        name, index = _LINALG_PARTS.get(op, (op, None))
        call = f"{name}({', '.join(parts)})"
        return call if index is None else f"{call}[{index}]"

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
        if number:
            pieces.append((number < 0, number_text(abs(number))))
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

    def _product(self, e: E.Expr) -> tuple:
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
        if k != 1 or not top:
            top.insert(0, number_text(k))
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


# -- programs -------------------------------------------------------------------------------------------


class Program:
    """Statements computing `roots` ({name: expression}): shared nodes once, named.

    `labels` maps expressions to the names the user gave them (the forward's variables);
    `taken` are names no temporary may use.
    """

    def __init__(self, roots: dict, labels: dict | None = None, taken=()) -> None:
        self.roots = roots
        uses: dict = {}
        order = E.postorder(list(roots.values()), uses)
        self.operations = {e.op for e in order}  # every operation the program uses
        taken = set(taken) | set(roots)
        self.names: dict = {}
        depth: dict = {}
        counter = 0
        labels = labels or {}
        for e in order:
            op = e.op
            if op == "sym" or op == "const" or (op == "tensor" and e.args[0].array.size <= 4):
                depth[e] = 0
                continue
            d = 0
            for c in e.parts:
                if depth[c] > d:
                    d = depth[c]
            d += 1
            shared = (uses.get(e, 0) > 1 and not _trivial(e)) or (op == "tensor" and e in labels)
            if shared or d > MAX_INLINE:
                label = labels.get(e)
                if label is None or label in taken:
                    counter += 1
                    label = f"t{counter}"
                    while label in taken:
                        counter += 1
                        label = f"t{counter}"
                taken.add(label)
                self.names[e] = label
                d = 0
            depth[e] = d
        self.order = [e for e in order if e in self.names]

    def written(self, printer: Printer | None = None):
        """(name, expression, right-hand side text) per statement, each defined before use, the
        roots last; `printer` writes them (the language's by default; it keeps any names it has)."""
        printer = printer or Printer()
        printer.names.update(self.names)
        for e in self.order:
            name = printer.names.pop(e)  # a statement writes its own value, not its name
            yield name, e, printer.text(e)
            printer.names[e] = name
        for name, e in self.roots.items():
            yield name, e, printer.text(e)

    def statements(self) -> list:
        """[(name, right-hand side text)] in the expression language."""
        return [(name, text) for name, _, text in self.written()]


def _trivial(e: E.Expr) -> bool:
    """Too small to be worth a name: -x, 2 * x."""
    if e.op == "mul" and len(e.args[1]) == 1:
        (base, exponent), = e.args[1]
        return exponent == 1.0 and base.op == "sym"
    return False


# -- LaTeX ----------------------------------------------------------------------------------------------

_LATEX_FUNCTIONS = {"exp": r"\exp", "log": r"\log", "sin": r"\sin", "cos": r"\cos", "tan": r"\tan",
                    "tanh": r"\tanh"}
_LATEX_FUNCTIONS.update({"asin": r"\arcsin", "acos": r"\arccos", "atan": r"\arctan", "sinh": r"\sinh",
                         "cosh": r"\cosh"})  # issue 24


def latex_name(name: str) -> str:
    """`de_da` as `de_{da}`; a name with several underscores keeps them as text."""
    head, _, tail = name.partition("_")
    if tail and "_" not in tail:
        return f"{latex_name(head)}_{{{tail}}}"
    if len(name) == 1:
        return name
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


class LatexPrinter(Printer):
    """The same expressions in LaTeX: fractions, powers and the usual function names."""

    def _name(self, name: str) -> str:
        return latex_name(name)

    def _text(self, e: E.Expr) -> tuple:
        name = self.names.get(e)
        if name is not None:
            return latex_name(name), _ATOM
        if e.op == "sym":
            return latex_name(e.args[0]), _ATOM
        if e.op in _OPERATORS:
            symbols = {"eq": "=", "ne": r"\neq", "lt": "<", "le": r"\leq", "gt": ">", "ge": r"\geq"}
            return f"{self._wrap(e.args[0], _SUM)} {symbols[e.op]} {self._wrap(e.args[1], _SUM)}", _COMPARE
        text, level = super()._text(e)
        return text, level

    def _call(self, op: str, args) -> str:
        if op in _LATEX_FUNCTIONS and len(args) == 1:
            return rf"{_LATEX_FUNCTIONS[op]}\left({self.text(args[0])}\right)"
        if op == "where" and len(args) == 3:
            c, a, b = (self.text(x) for x in args)
            return rf"\begin{{cases}} {a} & \text{{if }} {c} \\ {b} & \text{{otherwise}} \end{{cases}}"
        parts = [self.text(a) if isinstance(a, E.Expr) else _static_text(a) for a in args]
        return r"\operatorname{" + op.replace("_", r"\_") + r"}\left(" + ", ".join(parts) + r"\right)"

    def _product_text(self, k: float, e: E.Expr, own: bool = False) -> str:
        top, bottom = [], []
        for base, exponent in self._factors(e, own):
            if isinstance(exponent, float) and exponent < 0:
                bottom.append(self._factor(base, -exponent, plain=True))
            else:
                top.append(self._factor(base, exponent, plain=not bottom))
        if k != 1 or not top:
            top.insert(0, number_text(k))
        dot = r" \cdot "
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

    def _power(self, base: E.Expr, exponent) -> tuple:
        if exponent == 0.5:
            return rf"\sqrt{{{self.text(base)}}}", _ATOM
        if isinstance(exponent, float) and exponent < 0:
            return rf"\frac{{1}}{{{self._factor(base, -exponent)}}}", _ATOM
        power = number_text(exponent) if isinstance(exponent, float) else self.text(exponent)
        return f"{self._wrap(base, _POWER + 1)}^{{{power}}}", _POWER


# -- NumPy ----------------------------------------------------------------------------------------------

_NUMPY_SAME = {"exp", "log", "sin", "cos", "tan", "tanh", "sign", "log1p", "expm1", "floor", "ceil", "abs",
               "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "maximum", "minimum",
               "where", "sqrt"}
_NUMPY_REDUCE = {"sum": "sum", "mean": "mean", "prod": "prod", "max": "max", "min": "min"}
# An operation's NumPy call, its arguments in the op's order ({0} the input).
_NUMPY_TEMPLATES = {
    "clamp": "np.clip({0}, {1}, {2})",
    "expand": "np.broadcast_to({0}, {1})",
    "reshape": "np.reshape({0}, {1})",
    "t": "np.transpose({0})",
    "transpose": "np.swapaxes({0}, {1}, {2})",
    "permute": "np.transpose({0}, {1})",
    "cumsum": "np.cumsum({0}, axis={1})",
    "flip": "np.flip({0}, axis={1})",
    "select": "np.take({0}, {2}, axis={1})",
    "argmax": "np.argmax({0}, axis={1}, keepdims={2})",
    "argmin": "np.argmin({0}, axis={1}, keepdims={2})",
    "detach": "np.asarray({0})",
}
HELPERS = {
    "sigmoid": "def _sigmoid(x):\n    return 1 / (1 + np.exp(-x))\n",
    "relu": "def _relu(x):\n    return np.maximum(x, 0)\n",
    "sum_to": (
        "def _sum_to(x, shape):\n"
        "    lead = x.ndim - len(shape)\n"
        "    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and x.shape[lead + i] != 1)\n"
        "    return np.sum(x, axis=axes, keepdims=True).reshape(shape) if axes else x.reshape(shape)\n"),
    "softmax": "def _softmax(x, dim):\n    e = np.exp(x - np.max(x, axis=dim, keepdims=True))\n"
               "    return e / np.sum(e, axis=dim, keepdims=True)\n",
    "log_softmax": "def _log_softmax(x, dim):\n    return x - _logsumexp(x, dim, True)\n",
    "logsumexp": "def _logsumexp(x, dim, keepdim=False):\n    m = np.max(x, axis=dim, keepdims=True)\n"
                 "    out = m + np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True))\n"
                 "    return out if keepdim else np.squeeze(out, axis=dim)\n",
}


# -- issue 24: the elementwise functions' NumPy spellings
_NUMPY_SAME |= {"log2", "log10", "exp2", "sinh", "cosh", "sinc", "deg2rad", "rad2deg", "round", "trunc"}
_NUMPY_TEMPLATES.update({
    "asin": "np.arcsin({0})", "acos": "np.arccos({0})", "atan": "np.arctan({0})",
    "asinh": "np.arcsinh({0})", "acosh": "np.arccosh({0})", "atanh": "np.arctanh({0})",
    "rsqrt": "(1 / np.sqrt({0}))", "frac": "np.fmod({0}, 1)",
    "atan2": "np.arctan2({0}, {1})", "hypot": "np.hypot({0}, {1})", "logaddexp": "np.logaddexp({0}, {1})",
    "clamp_min": "np.maximum({0}, {1})", "clamp_max": "np.minimum({0}, {1})",
    # statistics
    "var_correction": "np.var({0}, axis={1}, ddof={2}, keepdims={3})",
    "std_correction": "np.std({0}, axis={1}, ddof={2}, keepdims={3})",
    "amax": "np.amax({0}, axis={1}, keepdims={2})", "amin": "np.amin({0}, axis={1}, keepdims={2})",
    "cumprod": "np.cumprod({0}, axis={1})", "logcumsumexp": "np.logaddexp.accumulate({0}, axis={1})",
    "xlogy": "np.where(np.isnan({1}), np.nan, np.where({0} == 0, 0.0, {0} * np.log({1})))",
})
# erf, erfc and lgamma by Python's math, element by element (erfinv, digamma, polygamma have no spelling yet)
HELPERS.update({name: f"def _{name}(x):\n    import math\n\n    return np.vectorize(math.{name}, otypes=[float])(x)\n"
                for name in ("erf", "erfc", "lgamma")})


HELPERS["norm"] = (
    "def _norm(x, p, dim, keepdim=False):\n    a = np.abs(x)\n"
    "    if np.isinf(p):\n        return (np.max if p > 0 else np.min)(a, axis=dim, keepdims=keepdim)\n"
    "    if p == 0:\n        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(x.dtype)\n"
    "    return np.sum(a ** p, axis=dim, keepdims=keepdim) ** (1 / p)\n")

# issue 24: linear algebra, where NumPy's function is the op's forward (the same LAPACK calls)
_NUMPY_TEMPLATES.update({
    "tril": "np.tril({0}, {1})", "triu": "np.triu({0}, {1})",
    "linalg_det": "np.linalg.det({0})", "linalg_inv": "np.linalg.inv({0})",
    "linalg_slogdet_sign": "np.linalg.slogdet({0})[0]", "linalg_slogdet_logabsdet": "np.linalg.slogdet({0})[1]",
    "linalg_eigvalsh": "np.linalg.eigh({0})[0]", "linalg_eigh_eigenvectors": "np.linalg.eigh({0})[1]",
    "linalg_svdvals": "np.linalg.svd({0}, compute_uv=False)",
    "linalg_svd_u": "np.linalg.svd({0}, full_matrices={1})[0]", "linalg_svd_vh": "np.linalg.svd({0}, full_matrices={1})[2]",
    "linalg_qr_q": "np.linalg.qr({0}, mode={1})[0]", "linalg_qr_r": "np.linalg.qr({0}, mode={1})[1]",
})
HELPERS["linalg_cholesky"] = HELPERS["cholesky"] = (
    "def _cholesky(x, upper):\n"
    "    if upper:\n        return np.swapaxes(np.linalg.cholesky(np.swapaxes(x, -2, -1)), -2, -1)\n"
    "    return np.linalg.cholesky(x)\n")

HELPERS["linalg_solve"] = (  # PyTorch's rule for a vector B, and left=False
    "def _linalg_solve(a, b, left):\n"
    "    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])\n"
    "    b = b[..., None] if vector else b\n"
    "    if not left:\n"
    "        a, b = np.swapaxes(a, -2, -1), np.swapaxes(b, -2, -1)\n"
    "    x = np.linalg.solve(a, b)\n"
    "    x = x if left else np.swapaxes(x, -2, -1)\n"
    "    return x[..., 0] if vector else x\n")

_HELPED = {"erf", "erfc", "lgamma", "norm", "linalg_solve"}  # issue 24: ops written as a call of their helper


class UnsupportedOperation(Exception):
    """An operation a target (the NumPy module) has no spelling for."""


class NumpyPrinter(Printer):
    """The same expressions as NumPy code (`np.exp(x)`, `x @ w`); `helpers` collects the
    small functions a module must define (`_sum_to`)."""

    def __init__(self, names: dict | None = None) -> None:
        super().__init__(names)
        self.helpers: set = set()

    def _text(self, e: E.Expr) -> tuple:
        if e.op == "const" and e.shape and e not in self.names:
            return f"np.full({_static_text(e.shape)}, {number_text(e.args[0])})", _ATOM
        if e.op == "tensor" and e not in self.names:
            return f"np.array({_array_text(e.args[0].array)})", _ATOM
        if e.op == "const" and not e.shape and e not in self.names and not math.isfinite(e.args[0]):
            return {"nan": "np.nan", "inf": "np.inf", "-inf": "-np.inf"}[codec.word(e.args[0])], _ATOM
        return super()._text(e)

    def _power(self, base: E.Expr, exponent) -> tuple:
        if exponent == 0.5:
            return f"np.sqrt({self.text(base)})", _ATOM
        return super()._power(base, exponent)

    def _call(self, op: str, args) -> str:
        def t(a):
            return self.text(a) if isinstance(a, E.Expr) else _static_text(a)

        if op in _NUMPY_SAME:
            return f"np.{op}({', '.join(t(a) for a in args)})"
        if op in _NUMPY_REDUCE and len(args) == 1:
            return f"np.{_NUMPY_REDUCE[op]}({t(args[0])})"
        if op in _REDUCTIONS:
            x, dim, keepdim = args
            return f"np.{_REDUCTIONS[op]}({t(x)}, axis={t(dim)}, keepdims={keepdim})"
        if op == "sum_to":  # the shapes are known: which axes to sum is worked out here, once
            x, target = args
            lead = len(x.shape) - len(target)
            axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(target)
                                              if n == 1 and x.shape[lead + i] != 1)
            summed = f"np.sum({t(x)}, axis={_static_text(axes)})"
            kept = tuple(x.shape[lead + i] for i in range(len(target)) if (lead + i) not in axes)
            return summed if kept == tuple(target) else f"np.reshape({summed}, {_static_text(tuple(target))})"
        if op in ("sigmoid", "relu", "softmax", "log_softmax", "logsumexp") or op in _HELPED:
            self.helpers.add(op)
            if op in ("log_softmax",):
                self.helpers.add("logsumexp")
            if op == "norm":  # p may be infinite: NumPy's spelling of it
                x, p, dim, keepdim = args
                return f"_norm({t(x)}, {'np.inf' if p == math.inf else '-np.inf' if p == -math.inf else t(p)}, " \
                       f"{t(dim)}, {keepdim})"
            return f"_{op}({', '.join(t(a) for a in args)})"
        if op in ("linalg_cholesky", "cholesky"):  # one helper for both
            self.helpers.add(op)
            return f"_cholesky({t(args[0])}, {args[1]})"
        template = _NUMPY_TEMPLATES.get(op)
        if template is not None:
            return template.format(*(t(a) for a in args))
        if op in ("cat", "stack"):
            tensors, dim = args
            word = "concatenate" if op == "cat" else "stack"
            return f"np.{word}([{', '.join(t(x) for x in tensors)}], axis={dim})"
        if op == "narrow":
            x, dim, start, length = args
            return f"{self._wrap(x, _ATOM)}[{':, ' * dim}{start}:{start + length}]"
        raise UnsupportedOperation(op)

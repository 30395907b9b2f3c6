"""Local derivatives as formulas, traced from each op's own `defop` declaration.

`autodiff explain` writes, for each edge of a backward graph, the local derivative of its op.
That text is not a second table of derivatives: the op's formula (ops/*.py) runs on traced
stand-ins (trace.py) — the op's tensor arguments as symbols named after them (`input`,
`other`, `exponent`), the gradient arriving as the symbol `g`, its other parameters (dims,
shapes, exponents) as the node saved them — and what it computes is the vector-Jacobian
product as an expression. The engine's own broadcast reduction (engine._conform) is part of
it, so the expression is exactly what backward passes on to the input.

Where that product is g times something, elementwise (g broadcast), the formula is written as
that something (`cos(input)`, `other`); otherwise as the map `g ↦ ...`.

- `node_formula(node, position)`: the formula of one edge of a recorded graph (explain);
- `local_formula(op_name, input_name, sample_args)`: the formula of a registry op at sample
  arguments (the registry's test checks each against the engine's numbers).
"""

from __future__ import annotations

import re

import numpy as np

from .. import backend
from .._record import record
from ..autograd.engine import _conform as conform
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.registry import REGISTRY
from ..tensor import Tensor, _make
from . import expr as E
from .build import build
from .printing import _ATOM, _COMPARE, LatexPrinter, Printer, number_text
from .text_latex import math_latex
from .trace import Traced, Tracer, _host

SEED = "g"  # the gradient arriving at the op's output
RESULT = "result"  # the op's output, where its expression cannot be built from the node
SHORT = 16  # array constants up to this many elements are written out in full


@record(frozen=True, eq=False)
class Formula:
    """The local derivative of op `op` by its argument `input`: `expr` is the vector-Jacobian
    product (in the seed symbol g and the op's argument symbols); `factor` is F where
    expr == g * F elementwise, else None."""

    op: str
    input: str
    expr: E.Expr
    factor: E.Expr | None
    seed: E.Expr

    @property
    def elementwise(self) -> bool:
        return self.factor is not None

    @property
    def symbols(self) -> list:
        """The names of the argument symbols it uses (not g), in a stable order."""
        roots = [self.factor] if self.factor is not None else [self.expr]
        return [e.args[0] for e in E.postorder(roots) if e.op == "sym" and e is not self.seed]

    def text(self, names: dict | None = None) -> str:
        """The formula in the expression language: `cos(input)`, or `g ↦ sum_to(g, (3,))`.
        `names` writes a symbol as other text ({"input": "x + 1"}), parenthesized where the
        operators around it need."""
        printer = _Printer(self, names or {})
        if self.factor is not None and self.factor.op == "const":  # the same number for each element
            return number_text(self.factor.number)
        if self.factor is not None:
            return printer.text(self.factor)
        return f"{SEED} ↦ {printer.text(self.expr)}"

    def latex(self, names: dict | None = None) -> str:
        """The same formula in LaTeX, through derive's printer: `names` as in `text` (language
        text, written as LaTeX math)."""
        printer = _LatexFormulaPrinter(self, names or {})
        if self.factor is not None and self.factor.op == "const":
            return number_text(self.factor.number)
        if self.factor is not None:
            return printer.text(self.factor)
        return rf"{SEED} \mapsto {printer.text(self.expr)}"

    def __str__(self) -> str:
        return self.text()


# -- tracing ----------------------------------------------------------------------------------------


def node_formula(node, position: int) -> Formula | None:
    """The formula of the edge from `node` (a registry op's node, its saved values still held)
    to its input `position`; None for a node without a registry op, or whose values are freed."""
    op = getattr(node, "op", None)
    if op is None or node._saved is None or Tracer.active is not None:
        return None
    child, nr = node.next_functions[position]
    if child is None:
        return None
    argument = op.arg_names[0 if op.variadic else op.diff_positions[position]]
    formula = op.formulas[0 if op.variadic else position]
    shape, dtype = node._output_metadata(0)
    with no_grad(), np.errstate(all="ignore"), Tracer():
        values = _stand_ins(op, node)
        xp = _module_of(node._saved)
        seed = Traced(_make(xp.ones(shape, dtype=dtype)), E.symbol(SEED, tuple(shape)))
        wanted = [values[name] for name in op._wanted(formula)]
        out = formula(seed, position, *wanted) if op.variadic else formula(seed, *wanted)
        if isinstance(out, Tensor):
            out = _conform(out, child, nr, node)
    if isinstance(out, Traced):
        expression = out.expr
    elif isinstance(out, Tensor):  # a constant: zeros_as(grad)
        expression = E.constant(_host(out))
    else:
        return None
    return Formula(op.name, argument, expression, factor_out(expression, seed.expr), seed.expr)


def local_formula(op_name: str, input_name: str, sample_args, index: int = 0) -> Formula | None:
    """The formula of registry op `op_name` by its argument `input_name` (for a list argument,
    cat's `tensors`, by its element `index`), in the shapes and parameters of `sample_args`
    (the op's positional arguments; the tensors that require grad are the differentiable ones).
    None where that input does not require grad there."""
    op = REGISTRY[op_name]
    args = [_leaf(a) for a in sample_args]
    with enable_grad():
        out = op.apply(*args)
    out = out[0] if isinstance(out, tuple) else out
    node = out.grad_fn
    if node is None:
        return None
    if op.variadic:
        position = index
    else:
        position = op.diff_positions.index(op.arg_names.index(input_name))
    return node_formula(node, position)


def _leaf(value):
    if isinstance(value, Tensor):
        return value.detach().requires_grad_(value.requires_grad)
    if isinstance(value, list):
        return [_leaf(v) for v in value]
    return value


def _module_of(saved):
    for value in saved:
        data = value._data if isinstance(value, Tensor) else value
        if hasattr(data, "shape") and hasattr(data, "dtype"):
            return backend.array_module(data)
    return np


def _symbol(name: str, value) -> Traced:
    data = value._data if isinstance(value, Tensor) else np.asarray(value)
    return Traced(_make(data), E.symbol(name, tuple(data.shape)))


def _stand_ins(op, node) -> dict:
    """What the node saved, by name, with each tensor argument (a number there too) a symbol
    named after it and the result an expression of the arguments."""
    tensors = {op.arg_names[i] for i in op.tensor_positions}
    values = {}
    for name, value in zip(op.saved_names, node._saved):
        if name in tensors and value is not None and not isinstance(value, (list, tuple, str)):
            values[name] = _symbol(name, value)
        else:
            values[name] = value
    if op.result_index is not None:
        result = node._saved[op.result_index]
        data = result._data if isinstance(result, Tensor) else result
        values[RESULT] = Traced(_make(data), _result_expr(op, node, values, tuple(np.shape(data))))
    return values


def _result_expr(op, node, values: dict, shape: tuple) -> E.Expr:
    """The op applied to its arguments' expressions: `tanh(input)`; the symbol `result` where
    an argument is neither saved nor an input with an edge."""
    args = []
    for i, name in enumerate(op.arg_names):
        if name in values:
            value = values[name]
            args.append(value.expr if isinstance(value, Traced) else value)
        elif i in op.diff_positions and not op.variadic:
            child, nr = node.next_functions[op.diff_positions.index(i)]
            if child is None:
                return E.symbol(RESULT, shape)
            args.append(E.symbol(name, tuple(child._output_metadata(nr)[0])))
        else:
            return E.symbol(RESULT, shape)
    return build(op.name, args, shape)


def _conform(out: Tensor, child, nr: int, node) -> Tensor:
    """The engine's own reduction of a broadcast gradient to the input's shape (and dtype)."""
    return conform(out, child, nr, node, [out], True)


# -- g times something --------------------------------------------------------------------------------


def factor_out(e: E.Expr, g: E.Expr) -> E.Expr | None:
    """F such that e == g * F (g broadcast against F), or None where e is no such product:
    a map that moves, sums or mixes the elements of g."""
    inside: set = set()
    for n in E.postorder([e]):  # children first: the nodes g is inside
        if n is g or any(id(c) in inside for c in E.children(n)):
            inside.add(id(n))

    def has(x) -> bool:
        return isinstance(x, E.Expr) and id(x) in inside

    def walk(x: E.Expr):
        if x is g:
            return E.const(1.0)
        if not has(x):
            return E.const(0.0, x.shape) if x.op == "const" and x.number == 0 else None
        if x.op == "mul":
            k, factors = x.args
            if (g, 1.0) not in factors:
                return None
            rest = [(b, p) for b, p in factors if b is not g]
            if any(has(b) or has(p) for b, p in rest):
                return None
            return E.mul(E.const(k), *(E.power(b, p) for b, p in rest))
        if x.op == "add":
            number, terms = x.args
            if number != 0:
                return None
            parts = [(walk(t), k) for t, k in terms]
            if any(p is None for p, _ in parts):
                return None
            return E.add(*(E.mul(E.const(k), p) for p, k in parts))
        if x.op == "where" and not has(x.args[0]):
            a, b = walk(x.args[1]), walk(x.args[2])
            if a is None or b is None:
                return None
            return build("where", [x.args[0], a, b], tuple(np.broadcast_shapes(x.args[0].shape, a.shape, b.shape)))
        if x.op == "expand":
            inner = walk(x.args[0])
            return None if inner is None else E.with_shape(inner, x.shape)
        return None

    factor = walk(e)
    if factor is None:
        return None
    try:  # a zero of the input's shape (norm's p=0) need not broadcast with g
        if tuple(np.broadcast_shapes(g.shape, factor.shape)) != tuple(e.shape):
            return None
    except ValueError:
        return None
    return factor


# -- text ----------------------------------------------------------------------------------------------


class _NamedSymbols:
    """A printer mixin: symbols written as given texts (the language's; `_written` converts each
    for the printer's notation), and long array constants cut short."""

    def __init__(self, formula: Formula, names: dict) -> None:
        super().__init__({})
        self.texts = {}
        for e in E.postorder([formula.expr] + ([formula.factor] if formula.factor is not None else [])):
            if e.op == "sym" and e.args[0] in names:
                text = names[e.args[0]]
                self.texts[e] = (self._written(text), _ATOM if atomic(text) else _COMPARE)

    @staticmethod
    def _written(text: str) -> str:
        return text

    def _text(self, e: E.Expr) -> tuple:
        found = self.texts.get(e)
        if found is not None:
            return found
        if e.op == "tensor":
            return self._written(array_text(e.args[0].array)), _ATOM
        return super()._text(e)


class _Printer(_NamedSymbols, Printer):
    """Language text with symbols written as given texts, and long array constants cut short."""


class _LatexFormulaPrinter(_NamedSymbols, LatexPrinter):
    """The same in LaTeX: the given texts written as LaTeX math."""

    _written = staticmethod(math_latex)


def array_text(array, limit: int = SHORT) -> str:
    """An array constant as a literal, nested as it is; a long one cut short, with its shape."""
    array = np.asarray(array)
    if array.dtype == bool:
        def word(v): return str(bool(v))
    else:
        def word(v): return number_text(float(v) + 0.0)  # -0 is 0
    if array.ndim == 0:
        return word(array)
    if array.size <= limit:
        def nested(a): return "[" + ", ".join(nested(x) if np.ndim(x) else word(x) for x in a) + "]"
        return nested(array)
    flat = array.reshape(-1)
    shown = ", ".join(word(v) for v in flat[:limit // 2])
    return f"[{shown}, …] (shape {list(array.shape)})"


_NAME = re.compile(r"[\w.]+")
_TURN = re.compile(r"⁽[⁰¹²³⁴⁵⁶⁷⁸⁹]+⁾$")  # y⁽²⁾: the second turn of a loop


def atomic(text: str) -> bool:
    """Whether `text` reads as one term next to operators: a name, a number, a call or a
    bracketed group (`x`, `y₁₂⁽²⁾`, `0.5`, `relu(h + b)`, `(1 - c)`, `[1, 2]`)."""
    base = _TURN.sub("", text)
    return bool(_NAME.fullmatch(base)) or enclosed(base)


def enclosed(text: str) -> bool:
    """Whether `text` is one parenthesized or bracketed group: `(x - y)`, `[1, 2]`, `f(x)`."""
    if not text or text[-1] not in ")]":
        return False
    depth = 0
    for i, char in enumerate(text):
        depth += 1 if char in "([" else -1 if char in ")]" else 0
        if depth == 0 and char in ")]" and i < len(text) - 1:
            return False
    start = text.find("(") if text[-1] == ")" else text.find("[")
    head = text[:start]
    return start >= 0 and (not head or bool(_NAME.fullmatch(head)))

"""Tracing: run the engine as usual while every operation also builds its expression.

A `Traced` tensor is an ordinary tensor's stand-in that carries the expression it stands for.
Operations given one leave their fast path (as for a batched tensor) and come here: the op runs
on the ordinary tensors, so autograd records it as always, and its result is wrapped with the
op's expression. The values an op saves for backward are the traced tensors themselves, so
backward with `create_graph=True` runs each op's own derivative formula (its `defop`
declaration) on traced tensors, and what it computes is the derivative's expression: no second
table of derivatives.

A traced value read as a Python value (`if x > 0`, `range(n)`, `.item()`) is a decision on the
path: `Tracer.decisions` lists each with its outcome, for the caller to state or refuse.
"""

from __future__ import annotations

import numpy as np

from ..autograd.grad_mode import STATE as GRAD_MODE
from ..ops import batching, hooks, registry
from ..tensor import Size, Tensor
from . import expr as E
from .build import build
from .sizes import symbolic_size


class Traced(Tensor):
    """A tensor that stands for `expr`; `plain` is the ordinary tensor autograd records."""

    __slots__ = ("plain", "expr")

    def __init__(self, plain: Tensor, expression: E.Expr) -> None:  # noqa: no Tensor.__init__
        self.plain = plain
        self.expr = expression
        self._data = plain._data
        self._requires_grad = plain._requires_grad
        self._node = plain._node
        self._at = plain._at
        self._token = plain._token
        self._grad = None
        self._output_nr = plain._output_nr
        self._version_log = plain._version_log
        self._backward_hooks = None
        self._accumulator = plain._accumulator

    # -- Python values: decisions on the path --------------------------------------------------------

    def item(self):
        value = self.plain.item()
        _decided(self, value)
        return value

    def tolist(self):
        value = self.plain.tolist()
        _decided(self, value)
        return value

    def numpy(self, *, force: bool = False):
        value = self.plain.numpy(force=force)
        _decided(self, value.tolist())
        return value

    def _values_read(self):
        _decided(self, self.plain.tolist())
        return self._data

    # -- sizes: named ones carry their names while derive traces at its primes ------------------------

    @property
    def shape(self) -> Size:
        tracer = Tracer.active
        if tracer is None or not tracer.by_prime:
            return Size(self._data.shape)
        return Size([tracer.size_of(s) for s in self._data.shape])

    def size(self, dim: int | None = None):
        if dim is None:
            return self.shape
        value = Tensor.size(self, dim)  # PyTorch's error for a dim out of range
        return self.shape[dim] if Tracer.active is not None and Tracer.active.by_prime else value

    def numel(self) -> int:
        return self.shape.numel() if self._data.ndim else 1

    def detach(self) -> Tensor:
        """The same values cut from the graph: `detach(x)` in the formulas, never x's value."""
        return Traced(self.plain.detach(), detached(self.expr))

    def __repr__(self) -> str:
        return f"Traced({self.plain!r})"


def detached(e: E.Expr) -> E.Expr:
    """`detach(e)`: e's value without its derivative (a constant stays itself, and so does a
    number made of sizes)."""
    if not e.symbolic or e.op == "detach" or not E.has_symbols(e):
        return e
    return E.call("detach", (e,), e.shape)


def _undetached(e):
    """An argument of an operation run under no_grad, without its own detach: the result is
    detached as a whole (`detach(2 * y)`, not `2 * detach(y)`)."""
    if e.__class__ is E.Expr:
        return e.args[0] if e.op == "detach" else e
    if e.__class__ is tuple:
        return tuple(_undetached(x) for x in e)
    return e


def _decided(t: Traced, value) -> None:
    tracer = Tracer.active
    if tracer is not None and t.expr.symbolic:
        tracer.decisions.append((t.expr, value))


def _registered(function, name: str) -> tuple:
    """(name, its registry op or None for an op without a derivative, whether the tracer keeps
    anything of its node) for an op's own apply: one the registry does not hold under its name
    is an error, never traced as a plain function."""
    op = registry.REGISTRY.get(name)
    if op is not None and op.apply is function:
        keeps = op.result_index is not None or any(kind in ("arg", "_shape") for kind, _ in op.save_plan)
        return name, op, keeps  # its saved arguments and result, traced (_keep_traced, _results)
    if registry.NONDIFF.get(name) is function:
        return name, None, False
    raise RuntimeError(f"derive: the operation {name!r} is not in the op registry")


class Tracer:
    """While active (`with Tracer() as tracer:`), operations on traced tensors are traced."""

    active: Tracer | None = None

    def __init__(self, *, detach_no_grad: bool = False, sizes=None) -> None:
        self.decisions: list = []  # (expression, the Python value it was read as)
        # {prime: size name} where derive traces named sizes at primes of its own: a traced
        # tensor's shape is then made of SizeInts (symbolic/sizes.py)
        self.by_prime = dict(sizes.by_prime) if sizes else {}
        self._sizes: dict = {}
        # derive's trace: what a program computes under no_grad is written detach(...), since no
        # derivative flows through it (explain traces formulas under no_grad: not there)
        self.detach_no_grad = detach_no_grad
        # Whether the ordinary tensors' operations are recorded by autograd: the forward's are,
        # for backward to run; a first derivative's need not be (only a second derivative
        # differentiates them), and not recording them is most of derive's time saved.
        self.recording = True
        self._results: dict = {}  # backward node -> the traced result its formulas may read
        # Where a caller sets a dict here, each traced result's expression -> the backward node
        # that made it (the first, where two made one expression): derive --steps reads an op's
        # own formula from it, one step at a time.
        self.made: dict | None = None
        # function -> _registered's (name, registry op or None, whether its node is kept), filled as
        # ops are met: the registry is read by name, which loads no op module a program does not use
        self._ops: dict = {}

    def __enter__(self) -> Tracer:
        if Tracer.active is not None:
            raise RuntimeError("derive: a trace is already running")
        Tracer.active = self
        E.new_table()  # each trace's expressions on their own: its output never depends on earlier ones
        batching.INTERCEPTED.add(Traced)
        self._hooks = hooks.push(tracer=self._apply, reattach=self._reattach)
        return self

    def __exit__(self, *exc_info) -> None:
        Tracer.active = None
        batching.INTERCEPTED.discard(Traced)
        hooks.pop(self._hooks)  # what was in force before, a dual level's included

    # -- leaves --------------------------------------------------------------------------------------

    def input(self, name: str, tensor: Tensor) -> Traced:
        return Traced(tensor, E.symbol(name, tuple(tensor.shape)))

    def size_of(self, value: int):
        """A dimension of a traced shape: a SizeInt where it is made of named sizes."""
        return symbolic_size(value, self.by_prime, self._sizes) if self.by_prime else value

    def number(self, value) -> Tensor:
        """A number a program computed from sizes (`sqrt(n)`), as a 0-d traced tensor."""
        from .. import tensor

        return Traced(tensor(float(value)), value.sym)

    # -- operations ----------------------------------------------------------------------------------

    def _apply(self, function, args: tuple, kwargs: dict):
        known = self._ops.get(function)
        if known is None:
            name = getattr(function, "_op_name", None)
            if name is None:
                return function(*args, **kwargs)  # a function made of ops: its ops are traced one by one
            known = self._ops[function] = _registered(function, name)
        name, op, keeps = known
        # Each argument as the engine takes it and as the builder sees it, in one pass: this
        # runs for every operation of the program and of its derivative.
        plain_args, exprs, symbolic = [], [], False
        operands = op.tensor_positions if op is not None else ()
        for i, a in enumerate(args):
            if a.__class__ is Traced:
                plain_args.append(a.plain)
                exprs.append(a.expr)
                symbolic = symbolic or a.expr.symbolic
            else:
                plain_args.append(_plain(a))
                e = a.sym if i in operands and getattr(a, "sym", None) is not None else _expr_of(a)
                exprs.append(e)
                symbolic = symbolic or _any_symbolic(e)
        plain_kwargs = {}
        for k, v in kwargs.items():
            plain_kwargs[k] = _plain(v)
            e = _expr_of(v)
            exprs.append(e)
            symbolic = symbolic or _any_symbolic(e)
        # (a derivative's formulas run without grad mode too, where no graph of them is built)
        under_no_grad = self.detach_no_grad and symbolic and not GRAD_MODE.enabled and \
            not hooks.current().tensors_in_backward
        if under_no_grad:
            exprs = [_undetached(e) for e in exprs]
        if self.recording or not GRAD_MODE.enabled:  # backward's formulas run with it off already
            result = function(*plain_args, **plain_kwargs)
        else:
            previous, GRAD_MODE.enabled = GRAD_MODE.enabled, False
            try:
                result = function(*plain_args, **plain_kwargs)
            finally:
                GRAD_MODE.enabled = previous
        if result.__class__ is not Tensor and not isinstance(result, Tensor):
            return result
        if not symbolic:
            return Traced(result, _constant(name, exprs, result))
        built = build(name, exprs, result._data.shape, result)
        traced = Traced(result, detached(built) if under_no_grad else built)
        if self.made is None and not keeps:
            return traced  # nothing reads its node: no grad_fn object is made for it
        node = result.grad_fn
        if self.made is not None and node is not None:
            self.made.setdefault(traced.expr, node)
        if node is not None and op is not None:
            if getattr(node, "op", None) is op:
                self._keep_traced(node, args, plain_args)
            if op.result_index is not None:
                self._results[node] = traced
        return traced

    def _keep_traced(self, node, args, plain_args) -> None:
        """Make the node's saved values the traced tensors, so its formulas build expressions:
        each saved argument (its array in the record) by the traced tensor given in its place (and
        a saved shape by the traced shape, by its sizes' names)."""
        saved = node._slots()
        if not saved:
            return
        op = node.op
        swapped = list(saved)
        changed = False
        for k, (kind, i) in enumerate(op.save_plan):
            if saved[k] is None or kind not in ("arg", "_shape") or i >= len(args):
                continue
            a = args[i]
            if kind == "_shape":
                if self.by_prime and a.__class__ is Traced:
                    swapped[k], changed = a.shape, True
                continue
            if kind != "arg":
                continue
            if a.__class__ is Traced:
                swapped[k], changed = a, True
            elif isinstance(a, list) and any(isinstance(x, Traced) for x in a):
                swapped[k] = [x if isinstance(x, Traced) else y for x, y in zip(a, saved[k])]
                changed = True
        if changed:
            node._saved = tuple(swapped)

    def _reattach(self, node, result: Tensor) -> Tensor:
        """The saved result a formula reads, as the traced tensor it stands for."""
        traced = self._results.get(node)
        return result if traced is None else Traced(result, traced.expr)


def _constant(name: str, exprs: list, result: Tensor) -> E.Expr:
    """The expression of a result that depends on no input: the algebra's own where it folds
    its arguments exactly (1/d * d is 1, not its rounding 0.9999999999999999), else the value."""
    # an identity matrix (a trace's gradient) is eye(n), so it stays one at every size
    structured = any(e.__class__ is E.Expr and e.op == "eye" for e in exprs)
    if structured or any(e.__class__ is E.Expr and e.op == "const" for e in exprs):
        built = build(name, exprs, result._data.shape, result)
        if built.op in ("const", "tensor") or structured:
            return built
        folded = _folded(built)  # a number times an array: -1 * I is -I, exactly
        if folded is not None:
            return E.constant(np.broadcast_to(folded, built.shape).astype(_host(result).dtype))
    return E.constant(_host(result))


def _folded(e: E.Expr):
    """The value of a product of numbers and constant arrays, computed from them; None for any
    other expression."""
    if e.op != "mul" or e.symbolic:
        return None
    value = np.float64(e.args[0])
    for base, exponent in e.args[1]:
        if exponent != 1.0 or base.op not in ("const", "tensor"):
            return None
        value = value * (base.args[0] if base.op == "const" else base.args[0].array)
    return value


def _plain(value):
    if isinstance(value, Traced):
        return value.plain
    if value.__class__ in (list, tuple) and any(isinstance(v, Traced) for v in value):
        return type(value)(_plain(v) for v in value)
    return value


def _expr_of(value):
    """An argument as the builder sees it: an expression for a tensor, the value otherwise."""
    if isinstance(value, Traced):
        return value.expr
    if isinstance(value, Tensor):
        array = _host(value)
        if array.ndim == 2 and array.shape[0] == array.shape[1] > 1 and array[0, 0] == 1 and _is_identity(array):
            from . import matrix  # noqa: F401 (declares how eye is written)

            return E.call("eye", (array.shape[0],), array.shape)
        return E.constant(array)
    if value.__class__ in (list, tuple) and any(isinstance(v, Tensor) for v in value):
        return tuple(_expr_of(v) for v in value)
    return value


def _is_identity(array) -> bool:
    return array.dtype.kind in "fiu" and bool((array == np.eye(array.shape[0], dtype=array.dtype)).all())


def _any_symbolic(value) -> bool:
    """Whether an argument (an expression, a tuple of them, or a parameter) stands for symbols."""
    if isinstance(value, E.Expr):
        return value.symbolic
    return isinstance(value, tuple) and any(isinstance(v, E.Expr) and v.symbolic for v in value)


def _host(t: Tensor):
    data = t._data
    return data if hasattr(data, "__array_interface__") else data.get()

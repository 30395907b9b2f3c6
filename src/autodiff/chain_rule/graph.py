"""The graph an explanation walks: its nodes in order, each named from the program (or as a
call of its inputs), each edge's local derivative as a formula (the op's own, traced: the
registry's record) and as numbers (the node's own backward, run on arrays)."""

from __future__ import annotations

import numpy as np

from ..ops.spelling import called_as
from ..autograd.engine import _conform, topological
from ..autograd.node import AccumulateGrad
from .model import NodeInfo
from .text import values_text

SMALL = 16  # tensor edges show their local derivative as values up to this many elements
CALL_LIMIT = 40  # a node without a name is written as a call of its inputs up to this many characters
FORMULA_LIMIT = 240  # a local derivative longer than this many characters is cut short (prod's)


def default_namer(inputs: dict):
    leaves = {id(t): name for name, t in inputs.items()}

    def namer(node) -> NodeInfo:
        if type(node) is AccumulateGrad:
            return NodeInfo(leaves.get(id(node.variable), "leaf"), None, None)
        return NodeInfo(None, None, None)

    return namer


class _Graph:
    """The nodes reachable from the output, in topological order, with names and formulas."""

    def __init__(self, root, seed, namer, output_name: str | None = None) -> None:
        self.root = root
        self.output_name = output_name  # the root's name where the namer has none
        self.seed = seed
        self.namer = namer
        self.order = _topological(root)
        self.infos = {node: namer(node) for node in self.order}
        self._locals: dict = {}
        self._formulas: dict = {}
        self._traces: dict = {}  # (node, position) -> (its formula, its operands' names)
        self._occurrence = None  # worked out when a name is first asked for
        self._called = None  # likewise

    # names

    def _base_name(self, node) -> str:
        info = self.infos[node]
        if info.name or info.text:
            return info.name or info.text
        if node is self.root and self.output_name:
            return self.output_name
        if self._called is None:
            self._called = self._calls()
        return self._called.get(node) or type(node).__name__

    def _calls(self) -> dict:
        """{node: `mm(unsqueeze(x), w)`} for the nodes without a name or a source text (the
        steps inside `x @ w`, every node of a graph built in Python) whose inputs all have names."""
        called: dict = {}
        for node in reversed(self.order):  # inputs first
            op = getattr(node, "op", None)
            info = self.infos[node]
            if op is None or info.name or info.text or not node.next_functions:
                continue
            terms = []
            for child, _ in node.next_functions:
                named = child is not None and (self.infos[child].name or self.infos[child].text or called.get(child))
                if not named:
                    break
                terms.append(_as_term(named))
            else:
                text = f"{called_as(op.name)}({', '.join(terms)})"
                if len(text) <= CALL_LIMIT:
                    called[node] = text
        return called

    def _occurrences(self) -> dict:
        """{node: k} for the k-th (in the order they were recorded) of nodes that would read the
        same: a loop's turns, a function's calls, `y = y * 0.5 + log(y)` run twice."""
        alike: dict = {}
        for node in self.order:
            if type(node) is not AccumulateGrad:
                alike.setdefault(self._base_name(node), []).append(node)
        occurrence = {}
        for nodes in alike.values():
            if len(nodes) > 1:
                for k, node in enumerate(sorted(nodes, key=lambda n: n._seq), 1):
                    occurrence[node] = k
        return occurrence

    def name(self, node) -> str:
        """The node's name, `y₁₂⁽²⁾` for the second of two nodes that line 12 assigned to y."""
        if self._occurrence is None:
            self._occurrence = self._occurrences()
        k = self._occurrence.get(node)
        if k is None:
            return self._base_name(node)
        return _as_term(self._base_name(node)) + f"⁽{k}⁾".translate(_SUPERSCRIPTS)

    def term(self, node) -> str:
        """The name as a term of a formula: in parentheses when it is an expression."""
        return _as_term(self.name(node))  # x, x₃, f(x), (a + b)

    def formula(self, node, position: int) -> str:
        """`∂(t * c)/∂t = c` for the edge from `node` to its input `position`."""
        key = (node, position)
        if key not in self._formulas:
            child = node.next_functions[position][0]
            head = f"∂{self.term(node)}/∂{self.term(child)}"
            if sum(c is child for c, _ in node.next_functions) > 1:  # v * v: which factor
                head += f" (argument {position + 1})"
            self._formulas[key] = f"{head} = {self._body(node, position)}"
        return self._formulas[key]

    def formula_latex(self, node, position: int) -> str:
        """The right side of `formula` in LaTeX, written by derive's printer."""
        return self._body(node, position, latex=True)

    def _body(self, node, position: int, latex: bool = False) -> str:
        """The local derivative's text: the op's own `defop` formula, traced (symbolic/formulas.py)
        and written in the node's operands."""
        formula, names = self._traced(node, position)
        if formula is None:  # an autograd.Function's backward
            text = f"g ↦ {type(node).__name__}(g)"
            if latex:
                from ..symbolic.text_latex import math_latex

                return math_latex(text)
            return text
        text = formula.text(names)
        if latex:  # cut short as the text is (an operand's long literal), else whole
            return formula.latex(names) if len(text) <= FORMULA_LIMIT else r"\dots"
        return text if len(text) <= FORMULA_LIMIT else text[:FORMULA_LIMIT - 1] + "…"

    def _traced(self, node, position: int) -> tuple:
        """(the edge's formula, its operands' names), traced once for its text and its LaTeX;
        (None, {}) where it has none."""
        key = (node, position)
        found = self._traces.get(key)
        if found is None:
            from ..symbolic.formulas import node_formula  # the symbolic tracer loads when a formula is first written

            try:
                formula = node_formula(node, position)
            except Exception:  # noqa: BLE001 - explain still explains; a test traces every registry op
                formula = None
            names = {}
            if formula is not None and formula.symbols:
                operands = self._operands(node, position)
                names = {name: _bare(operands[name]) for name in formula.symbols}
            found = self._traces[key] = (formula, names)
        return found

    def _operands(self, node, position: int) -> dict:
        """What each argument of `node`'s formulas reads as (looked up only when a formula uses
        it): a child's name, a named constant, the operand's source text, or its saved value;
        never the argument's bare name."""
        op = node.op
        saved = node._arrays() if node._saved is not None else ()
        tensors = node._saved if node._saved is not None else ()
        known = getattr(self.namer, "tensors", {})
        children = {} if op.variadic else {
            op.arg_names[p]: child for p, (child, _) in zip(op.diff_positions, node.next_functions)}
        texts = self._unnamed_operands(node, children)

        def resolve(argument: str) -> str:
            if argument == "result" and (self.infos[node].name or self.infos[node].text):
                return self.term(node)
            if op.variadic and argument == op.arg_names[0]:
                return self.term(node.next_functions[position][0])
            if children.get(argument) is not None:
                return self.term(children[argument])
            index = op.saved_names.index(argument) if argument in op.saved_names else None
            usable = index is not None and len(saved) == len(op.saved_names)
            kept = tensors[index] if usable and len(tensors) == len(saved) else None
            if kept is not None and id(kept) in known:  # a constant input, named
                return known[id(kept)]
            if argument in texts:
                return texts[argument]
            return _value_term(argument, saved[index]) if usable else "?"  # freed by backward

        return _Lookup(resolve)

    def _unnamed_operands(self, node, children: dict) -> dict:
        """{argument: source text} for a binary op's one operand that has no node (a constant
        expression, `(1 - c)` in `(1 - c) * x`), read from the program's source through the
        namer: the operand whose text is not the other one's name."""
        operands = getattr(self.namer, "operand_texts", None)
        texts = operands(node) if operands is not None else None
        op = node.op
        if not texts or len(texts) != 2 or len(op.arg_names) < 2:
            return {}
        first, second = op.arg_names[:2]
        named = {a: self.term(c) for a, c in children.items() if c is not None and a in (first, second)}
        missing = [a for a in (first, second) if a not in named]
        if len(missing) != 1 or len(named) != 1:
            return {}
        (other_text,) = named.values()
        plain = [_as_term(t) for t in texts]
        if plain.count(other_text) != 1:
            return {}
        return {missing[0]: plain[1 - plain.index(other_text)]}

    # numbers

    def vjp(self, node, nr: int, g) -> list:
        """The node's own formulas applied to `g` arriving at its output `nr`, each result in its
        input's shape and dtype (as the engine conforms them)."""
        grads = [None] * node.n_outputs
        grads[nr] = g
        outputs = node._apply(grads, False)
        result = []
        for (child, child_nr), out in zip(node.next_functions, outputs):
            if child is None or out is None:
                result.append(None)
                continue
            if child_nr or out.shape != child._shape or out.dtype is not child._dtype:
                out = _conform(out, child, child_nr, node, outputs, False)
            result.append(out)
        return result

    def locals_of(self, node) -> list:
        """Each input's local derivative as a number (for nodes of numbers)."""
        if node not in self._locals:
            shape, dtype = node._output_metadata(0)
            ones = np.ones(shape, dtype=dtype)
            self._locals[node] = [None if g is None else _scalar(g) for g in self.vjp(node, 0, ones)]
        return self._locals[node]

    def tensor_local(self, node, position: int):
        """A tensor edge's local derivative as values, such that gradient × local (broadcast) is
        what passes on: the diagonal of its Jacobian when the op is elementwise there and small,
        the Jacobian's one row when the output is one number (sum, mean) and the input small; else None."""
        key = (node, position, "tensor")
        if key in self._locals:
            return self._locals[key]
        shape, dtype = node._output_metadata(0)
        child = node.next_functions[position][0]
        local = None
        size = int(np.prod(shape))
        child_shape = child._output_metadata(node.next_functions[position][1])[0]
        if size == 1 and 0 < int(np.prod(child_shape)) <= SMALL and node.n_outputs == 1:  # a reduction: g × ∂out/∂input
            row = self.vjp(node, 0, np.ones(shape, dtype=dtype))[position]
            local = None if row is None else np.asarray(row)
        elif tuple(child_shape) == tuple(shape) and 0 < size <= SMALL and node.n_outputs == 1:
            rows = []
            for k in range(size):
                basis = np.zeros(size, dtype=dtype)
                basis[k] = 1
                out = self.vjp(node, 0, basis.reshape(shape))[position]
                rows.append(np.zeros(size) if out is None else np.asarray(out, dtype=float).reshape(-1))
            jacobian = np.array(rows)
            diagonal = np.diag(jacobian).copy()
            if np.all((jacobian - np.diag(diagonal) == 0) | np.isnan(jacobian)):
                local = diagonal.reshape(shape)
        self._locals[key] = local
        return local


class _Lookup(dict):
    """A mapping that works each value out when it is first asked for (by str.format_map)."""

    def __init__(self, resolve) -> None:
        super().__init__()
        self._resolve = resolve

    def __missing__(self, key: str) -> str:
        self[key] = value = self._resolve(key)
        return value


def _bare(term: str) -> str:
    """A term without the parentheses it has as a term: the formula's printer adds them where
    the operators around it need them (`sqrt(x + 1)`, `1 / (x + 1)`)."""
    return term[1:-1] if term.startswith("(") and _enclosed(term) else term


def _enclosed(text: str) -> bool:
    """Whether `text` is one parenthesized or bracketed group: `(x - y)`, `[1, 2]`, `f(x)`."""
    if not text or text[-1] not in ")]":
        return False
    depth = 0
    for i, char in enumerate(text):
        depth += char in "([" and 1 or (-1 if char in ")]" else 0)
        if depth == 0 and i < len(text) - 1 and char in ")]":
            return False
    start = text.find("(") if text[-1] == ")" else text.find("[")
    head = text[:start]
    return start >= 0 and (not head or head.replace("_", "").isalnum())


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _as_term(text: str) -> str:
    """Source text as a term of a formula: in parentheses when it is an expression."""
    base = text[:text.rindex("⁽")] if text.endswith("⁾") else text  # y₁₂⁽²⁾, (y * 0.5)⁽²⁾
    if base.replace("_", "").replace(".", "").isalnum() or _enclosed(base):
        return text
    return f"({text})"


def _value_term(argument: str, value) -> str:
    """A saved value as a formula writes it: a number, a shape, a tensor's values; a missing
    bound as ±inf and a missing weight as 1."""
    if value is None:
        return {"min": "-inf", "max": "inf"}.get(argument, "1")
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, bool) or np.ndim(value) == 0 and isinstance(value, (np.bool_,)):
        return str(bool(value))
    text = values_text(value)
    return f"({text})" if text.startswith("-") else text


def _scalar(array):
    return np.asarray(array).reshape(-1)[0].item() if np.size(array) == 1 else np.asarray(array)


def _topological(root) -> list:
    """Every node reachable from `root`, each after all the nodes that lead into it."""
    return topological([root])


def _is_number_graph(graph: _Graph, nodes) -> bool:
    return np.size(graph.seed) == 1 and all(int(np.prod(n._output_metadata(0)[0])) == 1 for n in nodes)

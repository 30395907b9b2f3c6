"""The chain rule, made visible: a backward pass as paths and as the engine's own steps.

    e = u + t * c;  explain(e, {"d": d})
    ∂e/∂d = ∂e/∂(t * c) · ∂(t * c)/∂t · ∂t/∂d = 1 × 5 × 0.1 = 0.5

Every number comes from the nodes' own backward formulas (`node._apply`, the registry's
derivatives), run on arrays at the recorded point, never from a second system; and so does
every local derivative's text: the same formula traced into an expression (symbolic/formulas.py):

- **Steps** replay `engine.run_backward`: the same schedule (`engine._schedule`), the same newest-first
  order, the same broadcast reduction (`engine._conform`) and the same sums, so the leaves'
  totals are the engine's gradients bit for bit.
- **Paths**: a path's share is the gradient carried along that path alone (each node's formula
  applied to only that path's gradient). For a graph of numbers it is the product of the local
  derivatives (each node's formula applied to 1) times the seed. The shares of all paths add up
  to the gradient (the chain rule is linear), to rounding.
- **Counting** paths is dynamic programming over the DAG in topological order (an exact int),
  never a listing: `x = x * a + x` forty times has 2**40 paths.
- **The largest shares first**: for graphs of numbers, a best-first search whose priority is
  |prefix product| × the largest |product| from the node to the input (itself found by dynamic
  programming), an exact bound, so shares come out largest first after about k × depth steps.
  For tensor graphs, every path when there are at most ENUMERATE_LIMIT, else a best-first search
  on the size (L2 norm) of the partial gradient, which is a heuristic: `exhaustive` says so.
  Either way `rest` is the gradient less the shares shown, so the sum is always exact.

This module is engine-level: it knows nodes and arrays, not source files. A `namer` gives a
node a name, a source text and a line (the program layer passes one built from the program);
without one, leaves are named by the inputs given and other nodes by their op.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from .. import codec
from ..tensor import Tensor
from .engine import _conform, _schedule, topological
from .grad_mode import no_grad
from .node import AccumulateGrad, edge

LIMIT = 10  # paths shown per input
ENUMERATE_LIMIT = 2_000  # tensor graphs with at most this many paths are listed in full
SEARCH_BUDGET = 100_000  # nodes the best-first search may expand
SMALL = 16  # tensor edges show their local derivative as values up to this many elements
CALL_LIMIT = 40  # a node without a name is written as a call of its inputs up to this many characters
FORMULA_LIMIT = 240  # a local derivative longer than this many characters is cut short (prod's)


# -- the result ------------------------------------------------------------------------------------------


@dataclass
class Edge:
    """One step of a path: the node's op, its local derivative as a formula, and its value
    (a number; a tensor's elementwise derivative when small; else None)."""

    op: str
    formula: str
    local: object = None


@dataclass
class Path:
    nodes: list  # display names, from the output to the input
    edges: list  # Edge, one per step
    product: object  # a number for a graph of numbers, else this path's share (an array in the input's shape)


@dataclass
class InputExplanation:
    name: str
    grad: object  # array, or None where no gradient reaches the input
    paths_count: int
    paths: list  # Path, largest share first
    rest: object  # grad less the shares shown (0 when all are shown)
    scalar: bool  # a graph of numbers: products are numbers
    exhaustive: bool = True  # the shown paths are certainly the largest
    why: str | None = None  # why the gradient is None or zero


@dataclass
class Passed:
    """What one step hands an input: `grad × local = value`."""

    to: str
    op: str
    formula: str
    local: object
    value: object  # array, or None
    leaf: bool


@dataclass
class Step:
    number: int
    node: str  # display name
    op: str
    line: int | None
    grad: object  # the gradient arriving (array)
    arrivals: int  # how many gradients were summed into it
    passes: list = field(default_factory=list)  # Passed
    retained: bool = False
    leaf: str | None = None  # AccumulateGrad: the input's name
    total: object = None  # AccumulateGrad: .grad after this step


@dataclass(repr=False)
class Explanation:
    output: str
    value: object  # array
    seed: object  # array the backward started from
    inputs: dict  # name -> InputExplanation
    steps: list  # Step
    source: str = ""
    warnings: list = field(default_factory=list)

    def __str__(self) -> str:
        return plain(self)

    __repr__ = __str__

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython
        printer.text(plain(self))

    def _repr_html_(self) -> str:  # Jupyter
        from .._html import text_html  # a notebook's only: the module is not loaded otherwise

        return text_html(plain(self))

    def to_dict(self, convert=None) -> dict:
        """As JSON-ready data; `convert` turns arrays into numbers and lists (default: nan as "nan")."""
        convert = _jsonable if convert is None else convert
        inputs = {}
        for name, item in self.inputs.items():
            inputs[name] = {
                "grad": convert(item.grad), "paths_count": item.paths_count,
                "paths": [{"nodes": p.nodes,
                           "edges": [{"op": e.op, "formula": e.formula, "local": convert(e.local)} for e in p.edges],
                           "product": convert(p.product)} for p in item.paths],
                "rest": convert(item.rest), "exhaustive": item.exhaustive, "why": item.why,
            }
        steps = []
        for s in self.steps:
            step = {"step": s.number, "node": s.node, "op": s.op, "line": s.line, "grad": convert(s.grad),
                    "arrivals": s.arrivals, "retained": s.retained}
            if s.leaf is not None:
                step["leaf"] = s.leaf
                step["total"] = convert(s.total)
            else:
                step["passes"] = [{"to": p.to, "op": p.op, "formula": p.formula, "local": convert(p.local),
                                   "value": convert(p.value), "leaf": p.leaf} for p in s.passes]
            steps.append(step)
        return {"output": self.output, "value": convert(self.value), "seed": convert(self.seed), "inputs": inputs,
                "steps": steps}


def _jsonable(value):
    if value is None:
        return None
    return codec.to_json(np.asarray(value) if not isinstance(value, (int, float)) else value)


# -- naming nodes ----------------------------------------------------------------------------------------


@dataclass
class NodeInfo:
    name: str | None  # the variable or input
    text: str | None  # the source text
    line: int | None


def default_namer(inputs: dict):
    leaves = {id(t): name for name, t in inputs.items()}

    def namer(node) -> NodeInfo:
        if type(node) is AccumulateGrad:
            return NodeInfo(leaves.get(id(node.variable), "leaf"), None, None)
        return NodeInfo(None, None, None)

    return namer


def number_text(value) -> str:
    """A number as people read it: 10 significant digits, integers without a point."""
    value = float(value)
    if not math.isfinite(value):
        return codec.word(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"


def values_text(value, limit: int = 9) -> str:
    """A value short: a number, or a tensor's first elements."""
    if value is None:
        return "None"
    array = np.asarray(value)
    if array.ndim == 0 or array.size == 1 and array.ndim == 0:
        return number_text(array)
    flat = array.reshape(-1)
    shown = ", ".join(number_text(v) for v in flat[:limit])
    if array.ndim == 1:
        return f"[{shown}{', …' if flat.size > limit else ''}]"
    # nested as the tensor is, the first and last rows and columns of a large one (as NumPy prints)
    text = np.array2string(array, separator=", ", threshold=limit, edgeitems=2, max_line_width=10**9,
                           formatter={"float_kind": number_text, "int": number_text, "bool": str})
    text = " ".join(text.split()).replace("...", "…")
    return f"{text} (shape {list(array.shape)})" if "…" in text else text


# -- the graph ---------------------------------------------------------------------------------------------


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
        return self._called.get(node) or node.name()

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
                text = f"{_called_as(op.name)}({', '.join(terms)})"
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

    def _body(self, node, position: int) -> str:
        """The local derivative's text: the op's own `defop` formula, traced (symbolic/formulas.py)
        and written in the node's operands."""
        from ..symbolic.formulas import node_formula  # the symbolic tracer loads when a formula is first written

        try:
            formula = node_formula(node, position)
        except Exception:  # noqa: BLE001 - explain still explains; a test traces every registry op
            formula = None
        if formula is None:  # an autograd.Function's backward
            return f"g ↦ {node.name()}(g)"
        symbols = formula.symbols
        operands = self._operands(node, position) if symbols else {}
        text = formula.text({name: _bare(operands[name]) for name in symbols})
        return text if len(text) <= FORMULA_LIMIT else text[:FORMULA_LIMIT - 1] + "…"

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


_CALLED = {"reshape_alias": "reshape", "unsafe_view": "view", "to_dtype": "to", "to_device": "to",
           "pow_tensor": "pow", "pow_scalar_base": "pow", "div_scalar": "div", "remainder_scalar": "remainder"}


def _called_as(op_name: str) -> str:
    """The function a user calls for a registry op: `squeeze` for squeeze_dim and squeeze_."""
    name = _CALLED.get(op_name, op_name).rstrip("_")
    for suffix in ("_dims", "_dim"):
        name = name.removesuffix(suffix)
    return name


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


# -- paths -------------------------------------------------------------------------------------------------


def _reaching(graph: _Graph, target) -> list:
    """The nodes from which `target` can be reached, in topological order."""
    reach = set()
    for node in reversed(graph.order):
        if node is target or any(c in reach for c, _ in node.next_functions if c is not None):
            reach.add(node)
    return [n for n in graph.order if n in reach]


def count_paths(graph: _Graph, target) -> int:
    """How many paths lead from the output to `target`: dynamic programming, an exact int."""
    counts: dict = {}
    for node in reversed(graph.order):
        counts[node] = 1 if node is target else sum(counts[c] for c, _ in node.next_functions if c is not None)
    return counts.get(graph.root, 0)


def _path_from(graph: _Graph, steps: list, product, scalar: bool) -> Path:
    """A Path from its steps (node, position) after the root."""
    nodes = [graph.name(graph.root)]
    edges = []
    for node, position in steps:
        child = node.next_functions[position][0]
        nodes.append(graph.name(child))
        local = graph.locals_of(node)[position] if scalar else graph.tensor_local(node, position)
        edges.append(Edge(node.name(), graph.formula(node, position), local))
    return Path(nodes, edges, product)


def _seed_edge(graph: _Graph, seed_value: float) -> Edge:
    return Edge("grad_output", f"∂{graph.term(graph.root)}/∂{graph.term(graph.root)} = the gradient given",
                seed_value)


def _number_paths(graph: _Graph, target, reach: list, limit: int) -> tuple:
    """The `limit` paths with the largest |product|, best-first on an exact bound."""
    inside = set(reach)
    best: dict = {}  # node -> the largest |product| from it to the target
    for node in reversed(reach):
        if node is target:
            best[node] = 1.0
            continue
        values = [abs(local) * best[c] for (c, _), local in zip(node.next_functions, graph.locals_of(node))
                  if c in inside and local is not None]
        best[node] = max((v if v == v else math.inf) for v in values) if values else 0.0
    seed = float(np.asarray(graph.seed).reshape(-1)[0])
    counter = itertools.count()
    heap = [(-_rounded(abs(seed) * best[graph.root]), 0, next(counter), graph.root, seed, None)]
    found, expanded = [], 0
    while heap and len(found) < limit and expanded < SEARCH_BUDGET:
        _, depth, _, node, product, link = heapq.heappop(heap)
        expanded += 1
        if node is target:
            steps = []
            while link is not None:
                steps.append(link[0])
                link = link[1]
            path = _path_from(graph, steps[::-1], product, True)
            if seed != 1:
                path.edges.insert(0, _seed_edge(graph, seed))
            found.append(path)
            continue
        for position, ((child, _), local) in enumerate(zip(node.next_functions, graph.locals_of(node))):
            if child in inside and local is not None:
                value = product * local
                bound = abs(value) * best[child]
                bound = math.inf if bound != bound else bound
                heapq.heappush(heap, (-_rounded(bound), -(depth + 1), next(counter), child, value,
                                      ((node, position), link)))
    return found, not heap or len(found) >= limit


def _rounded(value: float) -> float:
    """Equal products reached in a different order differ in the last bits: compare 12 digits."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, 11 - int(math.floor(math.log10(value))))


def _tensor_paths(graph: _Graph, target, reach: list, count: int, limit: int) -> tuple:
    """Tensor graphs: all paths when few (sorted by the size of their share), else best-first on it."""
    inside = set(reach)

    def size(g) -> float:
        norm = float(np.linalg.norm(np.asarray(g, dtype=float).reshape(-1)))
        return math.inf if norm != norm else norm

    def expand(node, nr, g):
        outputs = graph.vjp(node, nr, g)
        for position, ((child, child_nr), out) in enumerate(zip(node.next_functions, outputs)):
            if child in inside and out is not None:
                yield position, child, child_nr, out

    def finish(g, link):
        steps = []
        while link is not None:
            steps.append(link[0])
            link = link[1]
        return _path_from(graph, steps[::-1], g, False)

    seed = np.asarray(graph.seed)
    found = []
    if count <= ENUMERATE_LIMIT:
        stack = [(graph.root, 0, seed, None)]
        while stack:
            node, nr, g, link = stack.pop()
            if node is target:
                found.append((size(g), len(found), finish(g, link)))
                continue
            for position, child, child_nr, out in expand(node, nr, g):
                stack.append((child, child_nr, out, ((node, position), link)))
        found.sort(key=lambda item: (-item[0], item[1]))
        return [path for _, _, path in found[:limit]], True
    counter = itertools.count()
    heap = [(-size(seed), next(counter), graph.root, 0, seed, None)]
    expanded = 0
    while heap and len(found) < limit and expanded < SEARCH_BUDGET:
        _, _, node, nr, g, link = heapq.heappop(heap)
        expanded += 1
        if node is target:
            found.append(finish(g, link))
            continue
        for position, child, child_nr, out in expand(node, nr, g):
            heapq.heappush(heap, (-size(out), next(counter), child, child_nr, out, ((node, position), link)))
    return found, False


# -- steps ---------------------------------------------------------------------------------------------------


def _replay(graph: _Graph, leaf_names: dict, scalar: bool) -> tuple:
    """engine.run_backward's loop, in its order, run again with every gradient written down.

    Returns (steps, {leaf node: total gradient}, {node: gradient arriving})."""
    root = graph.root
    order, leaf_edges = _schedule([root])
    buffers = {root: np.asarray(graph.seed)}
    arrivals = {root: 1}
    steps, totals, arriving = [], {}, {}

    def run(node) -> list:
        """One node's step; returns the leaves it completed, in edge order (as the engine)."""
        grad = buffers.pop(node, None)
        arriving[node] = grad
        info = graph.infos[node]
        step = Step(len(steps) + 1, graph.name(node), node.name(), info.line, grad, arrivals.get(node, 0))
        steps.append(step)
        if type(node) is AccumulateGrad:
            step.leaf = leaf_names.get(node, graph.name(node))
            totals[node] = step.total = grad
            return []
        step.retained = any(node._retains(nr) for nr in range(node.n_outputs))
        outputs = node._apply([grad] + [None] * (node.n_outputs - 1), False) if grad is not None else \
            [None] * len(node._next)
        completed = []
        for position, ((child, nr), g) in enumerate(zip(node.next_functions, outputs)):
            if child is None:
                continue
            if g is not None:
                if nr or g.shape != child._shape or g.dtype is not child._dtype:
                    g = _conform(g, child, nr, node, outputs, False)
                ckey = child if nr == 0 else (child, nr)
                previous = buffers.get(ckey)
                buffers[ckey] = g if previous is None else previous + g
                arrivals[ckey] = arrivals.get(ckey, 0) + 1
                local = graph.locals_of(node)[position] if scalar else graph.tensor_local(node, position)
                step.passes.append(Passed(graph.name(child), node.name(), graph.formula(node, position), local, g,
                                          type(child) is AccumulateGrad))
            if type(child) is AccumulateGrad:
                leaf_edges[child] -= 1
                if leaf_edges[child] == 0:
                    completed.append(child)
        return completed

    for node in [root] if type(root) is AccumulateGrad else order:
        for leaf in run(node):
            run(leaf)
    return steps, totals, arriving


# -- why a gradient is zero ----------------------------------------------------------------------------------


# Why an op may pass on a zero gradient: the sentence `--why` uses, by node name.
ZERO_CAUSES: dict[str, str] = {
    "ReluBackward0": "relu at a value that is not positive",
    "AbsBackward0": "abs at 0",
    "MaximumBackward0": "the losing side of maximum",
    "MinimumBackward0": "the losing side of minimum",
    "MaxBackward0": "an element that is not the largest of max",
    "MaxBackward1": "an element that is not the largest of max",
    "MinBackward0": "an element that is not the smallest of min",
    "MinBackward1": "an element that is not the smallest of min",
    "ClampBackward1": "clamp outside its range",
    "SignBackward0": "sign, whose derivative is 0",
    "FloorBackward0": "floor, whose derivative is 0",
    "CeilBackward0": "ceil, whose derivative is 0",
    "WhereBackward0": "the branch of where not taken",
}


def zero_causes(graph: _Graph, target, arriving: dict) -> list:
    """The edges where a nonzero gradient arrives and a zero one is passed on towards `target`:
    (node, position, text)."""
    inside = set(_reaching(graph, target))
    causes = []
    for node in graph.order:
        g = arriving.get(node)
        if node not in inside or node is target or g is None or not np.any(np.asarray(g) != 0):
            continue
        outputs = graph.vjp(node, 0, g)
        for position, ((child, _), out) in enumerate(zip(node.next_functions, outputs)):
            if child in inside and (out is None or not np.any(np.asarray(out) != 0)):
                what = ZERO_CAUSES.get(node.name(), f"{node.name()}, whose local derivative is 0 there")
                causes.append((node, position, what))
    return causes


# -- the whole explanation -------------------------------------------------------------------------------------


def explain_graph(output: Tensor, targets: dict, *, seed=None, namer=None, limit: int = LIMIT,
                  output_name: str = "output") -> Explanation:
    """Explain the gradient of `output` (seeded with `seed`, an array; None: 1) with respect to
    the leaf tensors `targets` ({name: tensor}). The graph must still hold its saved values
    (before backward, or after backward with retain_graph=True)."""
    if seed is None:
        if output.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        seed = np.ones(tuple(output.shape), dtype=output._data.dtype)
    seed = seed.detach().numpy(force=True) if isinstance(seed, Tensor) else np.asarray(seed)
    namer = namer or default_namer(targets)
    value = output.detach().numpy(force=True)
    if not output.requires_grad:
        inputs = {name: InputExplanation(name, None, 0, [], None, True) for name in targets}
        return Explanation(output_name, value, seed, inputs, [])
    root = edge(output)[0]
    graph = _Graph(root, seed, namer, output_name)
    leaf_nodes = {}
    for name, tensor in targets.items():
        node = edge(tensor)[0] if tensor.requires_grad and tensor.is_leaf else None
        leaf_nodes[name] = node if node in graph.infos else None
    scalar = _is_number_graph(graph, graph.order)
    with no_grad(), np.errstate(all="ignore"):
        steps, totals, arriving = _replay(graph, {n: k for k, n in leaf_nodes.items() if n is not None}, scalar)
        inputs = {}
        for name, node in leaf_nodes.items():
            if node is None:
                inputs[name] = InputExplanation(name, None, 0, [], None, scalar)
                continue
            grad = totals.get(node)
            reach = _reaching(graph, node)
            count = count_paths(graph, node)
            number_graph = _is_number_graph(graph, reach)
            if number_graph:
                paths, exhaustive = _number_paths(graph, node, reach, limit)
                shown = math.fsum(p.product for p in paths)
                rest = float(np.asarray(grad).reshape(-1)[0]) - shown if grad is not None else None
            else:
                paths, exhaustive = _tensor_paths(graph, node, reach, count, limit)
                rest = None if grad is None else grad - sum((np.asarray(p.product) for p in paths),
                                                             np.zeros_like(grad))
            exhaustive = exhaustive or count <= len(paths)
            item = InputExplanation(name, grad, count, paths, rest, number_graph, exhaustive)
            if grad is not None and not np.any(np.asarray(grad) != 0):
                item.why = _zero_sentence(graph, zero_causes(graph, node, arriving), name)
            inputs[name] = item
    return Explanation(output_name, value, seed, inputs, steps)


def _zero_sentence(graph: _Graph, causes: list, name: str) -> str:
    if not causes:
        return f"the gradient of {name} is 0 because its paths' shares cancel out (they add up to 0)"
    parts = []
    for node, position, what in causes[:3]:
        info = graph.infos[node]
        where = f" on line {info.line}" if info.line is not None else ""
        parts.append(f"{what}: `{info.text or graph.name(node)}`{where}")
    more = f", and {len(causes) - 3} more" if len(causes) > 3 else ""
    return f"the gradient of {name} is 0: every path passes a zero local derivative — " + "; ".join(parts) + more


def edge_labels(output: Tensor, namer=None) -> dict:
    """{(node, input position): its local derivative as text, `∂u/∂a = b = 3`} for every edge of
    `output`'s graph (for graph pictures). The graph must still hold its saved values."""
    if output.grad_fn is None:
        return {}
    graph = _Graph(output.grad_fn, np.ones(tuple(output.shape)), namer or default_namer({}))
    labels = {}
    with no_grad(), np.errstate(all="ignore"):
        for node in graph.order:
            for position, (child, _) in enumerate(node.next_functions):
                if child is None:
                    continue
                text = graph.formula(node, position)
                scalar = int(np.prod(node._output_metadata(0)[0])) == 1 and int(np.prod(child._shape)) == 1
                try:
                    local = graph.locals_of(node)[position] if scalar else graph.tensor_local(node, position)
                except RuntimeError:  # saved values freed, or no derivative
                    local = None
                if local is not None and not text.endswith(f" = {values_text(local)}"):
                    text += f" = {values_text(local)}"
                labels[(node, position)] = text
    return labels


def explain(output: Tensor, inputs, gradient=None, *, limit: int = LIMIT) -> Explanation:
    """autodiff.explain(output, inputs): the gradient of `output` with respect to each of `inputs`
    (a tensor, a sequence, or {name: tensor}) as paths and as the engine's steps. Nothing is
    accumulated into `.grad`; the graph must still hold its saved values."""
    if isinstance(inputs, Tensor):
        inputs = {"input": inputs}
    elif not isinstance(inputs, dict):
        inputs = {f"input{i}": t for i, t in enumerate(inputs)}
    return explain_graph(output, dict(inputs), seed=gradient, limit=limit)


# -- plain text ------------------------------------------------------------------------------------------------


def product_text(path: Path, scalar: bool) -> str:
    """`∂e/∂(t * c) · ∂(t * c)/∂t · ∂t/∂d = 1 × 5 × 0.1 = 0.5`."""
    heads = " · ".join(e.formula.split(" = ")[0].split(":")[0] for e in path.edges) or f"∂{path.nodes[0]}/∂{path.nodes[0]}"
    if scalar:
        values = " × ".join(number_text(e.local) if e.local is not None else "?" for e in path.edges) or "1"
        if len(path.edges) <= 1:
            return f"{heads} = {number_text(path.product)}"
        return f"{heads} = {values} = {number_text(path.product)}"
    return f"{heads} → {values_text(path.product)}"


def seeded(explanation: Explanation) -> bool:
    """Whether backward started from a gradient other than the number 1."""
    seed = np.asarray(explanation.seed)
    return seed.size != 1 or float(seed.reshape(-1)[0]) != 1


def seed_text(explanation: Explanation) -> str:
    what = "vector–Jacobian products" if np.size(explanation.seed) != 1 or np.size(explanation.value) != 1 else \
        "gradients times g"
    return f"backward starts from the gradient g = {values_text(explanation.seed)}: what follows are {what}"


def grad_label(explanation: Explanation, name: str) -> str:
    """What an input's `.grad` holds: `∂y/∂x`, or for another starting gradient g its product with
    g: `g·∂y/∂x` for a number, the vector–Jacobian product `gᵀ·∂y/∂x` for a tensor."""
    label = f"∂{explanation.output}/∂{name}"
    if not seeded(explanation):
        return label
    return ("g·" if np.size(explanation.seed) == 1 and np.size(explanation.value) == 1 else "gᵀ·") + label


def plain(explanation: Explanation) -> str:
    lines = [f"{explanation.output} = {values_text(explanation.value)}"]
    if seeded(explanation):
        lines.append(seed_text(explanation))
    for name, item in explanation.inputs.items():
        lines.append("")
        head = f"{grad_label(explanation, name)} = {values_text(item.grad)}"
        lines.append(head)
        if item.why:
            lines.append(f"  why: {item.why}")
        if item.grad is None:
            continue
        count = f"{item.paths_count:,} path" + ("s" if item.paths_count != 1 else "")
        lines.append(f"  {count} from {explanation.output} to {name}" +
                     (f"; the {len(item.paths)} largest:" if len(item.paths) < item.paths_count else ":"))
        for k, path in enumerate(item.paths, 1):
            lines.append(f"  {k}. {product_text(path, item.scalar)}")
            for e in path.edges:
                shown = e.local is not None and not e.formula.endswith(f" = {values_text(e.local)}")
                local = f" = {values_text(e.local)}" if shown else ""
                lines.append(f"       {e.formula}{local}   [{e.op}]")
        if len(item.paths) < item.paths_count:
            note = "" if item.exhaustive else " (found by a heuristic search: not certainly the largest)"
            lines.append(f"  the other {item.paths_count - len(item.paths):,} paths add up to "
                         f"{values_text(item.rest)}{note}")
    if explanation.steps:
        lines.append("")
        lines.append("backward, step by step (the engine's order):")
        lines.extend(step_lines(explanation.steps))
    return "\n".join(lines) + "\n"


def passed_text(grad, passed: Passed) -> str:
    """What a step hands on, as true arithmetic: `g × local = value` where the local derivative
    is one factor per element (broadcast), else the map `g ↦ value` that the formula makes."""
    if passed.local is None:
        return f"{values_text(grad)} ↦ {values_text(passed.value)}"
    return f"{values_text(grad)} × {values_text(passed.local)} = {values_text(passed.value)}"


def step_lines(steps: list) -> list:
    lines = []
    for s in steps:
        where = f" (line {s.line})" if s.line is not None else ""
        if s.leaf is not None:
            lines.append(f"  {s.number}. {s.leaf}.grad += {values_text(s.grad)}"
                         f"{f' (the sum of {s.arrivals} gradients)' if s.arrivals > 1 else ''}   [AccumulateGrad]")
            continue
        retained = ", retained" if s.retained else ""
        lines.append(f"  {s.number}. {s.node}{where}   [{s.op}{retained}] receives {values_text(s.grad)}")
        for p in s.passes:
            lines.append(f"       to {p.to}: {passed_text(s.grad, p)}   ({p.formula})")
    return lines

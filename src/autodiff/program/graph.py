"""The recorded graph as data: nodes named as PyTorch names them, labelled from the source.

Built by walking `grad_fn.next_functions` from the output with an explicit stack. A node
reached again through another path is listed once (the graph is a DAG, shown as a tree with
references); very large graphs are cut at `limit` nodes and say how many were left out.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from .._record import record
from ..autograd.node import AccumulateGrad
from .values import host, to_python


@record
class GraphNode:
    """One node of the recorded graph, as the commands show it: its op, the variable and line it
    comes from."""

    id: int
    op: str  # PyTorch's node name: MulBackward0, AccumulateGrad...
    name: str | None  # the variable or input it computes
    source: str | None  # the expression it came from
    line: int | None
    shape: tuple
    value: object = None  # host array, where known
    grad: object = None  # host array, where computed
    retained: bool = False
    seq: int | None = None  # the node's creation number (Node._seq): what an explanation's paths and steps name


@record
class GraphModel:
    """The recorded graph as data: its nodes and edges from the output towards the leaves."""

    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)  # (parent id, child id, input position), towards the leaves
    root: int | None = None
    left_out: int = 0  # nodes beyond the limit
    edge_labels: dict = field(default_factory=dict)  # (parent id, child id, position) -> local derivative text

    def children(self, node_id: int) -> list:
        return [child for parent, child, _ in self.edges if parent == node_id]

    def _repr_svg_(self) -> str:  # Jupyter
        from .svg import graph_svg

        return graph_svg(self)


def build_graph(evaluation, output, limit: int = 500, labels: dict | None = None) -> GraphModel:
    """The graph of `output`; `labels` ({(node, position): text}, from explanation.edge_labels)
    are written on the edges."""
    model = GraphModel()
    root = output.grad_fn if output is not None else None
    if root is None:
        if output is not None and output.requires_grad:  # the output is an input itself
            from ..autograd.node import accumulator_of

            root = accumulator_of(output)
        else:
            return model
    # A leaf is named by its input, or by the variable it was assigned to (`x = rand(3, requires_grad=True)`).
    input_names = {id(t): name for name, t in evaluation.variables.items() if getattr(t, "is_leaf", False)}
    input_names.update({id(t): name for name, t in evaluation.inputs.items()})
    ids: dict = {}
    order = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node in ids:
            continue
        if len(ids) >= limit:
            model.left_out += 1
            continue
        ids[node] = len(ids)
        order.append(node)
        stack.extend(child for child, _ in reversed(node.next_functions) if child is not None and child not in ids)
    if model.left_out:  # count what was not reached, without walking forever
        model.left_out = _count_beyond(root, ids)
    for node in order:
        model.nodes.append(_describe(node, ids[node], evaluation, input_names))
        for position, (child, _) in enumerate(node.next_functions):
            if child is not None and child in ids:
                model.edges.append((ids[node], ids[child], position))
                if labels and (node, position) in labels:
                    model.edge_labels[(ids[node], ids[child], position)] = labels[(node, position)]
    model.root = 0
    return model


def _count_beyond(root, shown: dict) -> int:
    """How many nodes the graph has beyond those shown (walking through the shown ones)."""
    seen, stack, count = set(shown), list(shown), 0
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                count += 1
                stack.append(child)
    return count


def source_of(evaluation, node) -> tuple:
    """(the source text, its line) of the expression that recorded `node`, or (None, None)."""
    origin = evaluation.origins.get(node)
    if origin is None:
        return None, None
    source = evaluation.source
    return source.snippet(origin.start, origin.end), source.line_column(origin.start)[0]


def _describe(node, node_id: int, evaluation, input_names: dict) -> GraphNode:
    if type(node) is AccumulateGrad:
        variable = node.variable
        return GraphNode(node_id, "AccumulateGrad", input_names.get(id(variable)), None, None,
                         tuple(variable.shape), host(variable), host(variable._grad), seq=node._seq)
    text, line = source_of(evaluation, node)
    tensor = evaluation.tensors.get(node)
    name = evaluation.labels.get(node)
    if tensor is None and name is not None:
        candidate = evaluation.variables.get(name)
        tensor = candidate if getattr(candidate, "grad_fn", None) is node else None
    value = host(tensor) if tensor is not None else None
    retained = tensor is not None and tensor.retains_grad
    grad = host(tensor._grad) if retained else None
    return GraphNode(node_id, type(node).__name__, name, text, line, tuple(node._shape), value, grad, retained, node._seq)


# -- labels, as every picture of the graph writes them -------------------------------------------------------


def summary(value, limit: int = 4) -> str:
    """A short text for a value: the number, or the first few elements of a tensor."""
    if value is None:
        return "—"
    python = to_python(value)
    if not isinstance(python, list):
        if isinstance(python, bool):
            return "true" if python else "false"
        return _number(python) if isinstance(python, float) else str(python)
    flat = np.asarray(value).reshape(-1)
    shown = ", ".join(_number(float(v)) for v in flat[:limit])
    return f"[{shown}{', …' if flat.size > limit else ''}]"


def _number(value: float) -> str:
    return f"{value:.6g}"  # nan, inf and -inf as Python writes them


def label_lines(node: GraphNode) -> list:
    """What a node computes (`u = a * b`, or an input's name), its PyTorch name, then its numbers."""
    if node.op == "AccumulateGrad":
        head = node.name or "leaf"
    elif node.name:
        head = f"{node.name} = {node.source}" if node.source else node.name
    else:
        head = node.source or node.op
    detail = f"shape {list(node.shape)}"
    if node.value is not None:
        detail += f" · value {summary(node.value)}"
    lines = [head, node.op, detail]
    if node.grad is not None:
        lines.append(f"grad {summary(node.grad)}")
    if node.line is not None:
        lines.append(f"line {node.line}")
    return lines

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

The package is engine-level: it knows nodes and arrays, not source files. A `namer` gives a
node a name, a source text and a line (the program layer passes one built from the program);
without one, leaves are named by the inputs given and other nodes by their op.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.node import edge
from .graph import _Graph, _is_number_graph, default_namer
from .model import Edge, Explanation, InputExplanation, NodeInfo, Passed, Path, Step  # noqa: F401
from .paths import _number_paths, _reaching, _tensor_paths, count_paths
from .steps import _replay
from .text import (grad_label, number_text, passed_text, plain, product_text, seed_text, seeded,  # noqa: F401
                   step_lines, values_text)
from .why import _zero_sentence, zero_causes

LIMIT = 10  # paths shown per input


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

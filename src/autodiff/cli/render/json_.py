"""JSON output: one object, keys in a stable order, strict JSON (nan and infinities as strings)."""

from __future__ import annotations

import json

from ...program.values import for_json


def _dump(obj: dict) -> str:
    return json.dumps(obj, allow_nan=False, separators=(", ", ": ")) + "\n"


def _warnings(report) -> list:
    """The warnings also shown on standard error, as their one-line messages."""
    return [w.message for w in report.warnings]


def grad(report) -> str:
    output = report.output
    obj = {
        "output": output.name,
        "value": for_json(output.value),
        "shape": list(output.shape),
        "grads": {q.name: for_json(q.grad) for q in report.inputs if q.requires_grad},
        "dtype": output.dtype,
        "grad_fn": output.grad_fn,
        "inputs": {
            q.name: {"value": for_json(q.value), "shape": list(q.shape), "requires_grad": q.requires_grad,
                     "is_leaf": q.is_leaf}
            for q in report.inputs
        },
    }
    if report.jacobian:  # forward mode's answer for a non-scalar output: each "grads" entry is a Jacobian
        obj["jacobian"] = True
    retained = {q.name: for_json(q.grad) for q in report.retained}
    if retained:
        obj["retained"] = retained
    if report.hessian is not None:
        obj["hessian"] = {f"{a},{b}": for_json(block) for (a, b), block in report.hessian.items()}
    if report.check is not None:
        check = report.check
        obj["check"] = {
            "passed": check.passed, "max_abs_error": for_json(check.max_abs_error), "eps": for_json(check.eps),
            "atol": for_json(check.atol), "rtol": for_json(check.rtol),
            "inputs": {e.name: {"max_abs_error": for_json(e.max_abs_error), "checked": e.checked, "total": e.total,
                                "passed": e.passed, "step": for_json(e.step)} for e in check.entries},
        }
    if report.graph is not None:
        obj["graph"] = _graph(report.graph)
    obj["warnings"] = _warnings(report)
    return _dump(obj)


def evaluation(report) -> str:
    output = report.output
    return _dump({
        "output": output.name,
        "value": for_json(output.value),
        "shape": list(output.shape),
        "dtype": output.dtype,
        "inputs": {q.name: for_json(q.value) for q in report.inputs},
        "variables": {q.name: for_json(q.value) for q in report.variables},
        "warnings": _warnings(report),
    })


def _graph(model) -> dict:
    graph = {
        "nodes": [
            {"id": n.id, "op": n.op, "name": n.name, "source": n.source, "line": n.line, "shape": list(n.shape),
             "value": for_json(n.value), "grad": for_json(n.grad)}
            for n in model.nodes
        ],
        "edges": [[parent, child] for parent, child, _ in model.edges],
        "left_out": model.left_out,
    }
    if model.edge_labels:  # --edges local: each edge's local derivative, in the order of "edges"
        graph["edge_labels"] = [model.edge_labels.get(edge) for edge in model.edges]
    return graph


def graph(report) -> str:
    return _dump({"output": report.output.name, **_graph(report.graph), "warnings": _warnings(report)})

"""Programs run at a point: between the language and the commands that show or test results.

    from autodiff.program import differentiate
    run = differentiate("e = a * b + log(d)", at={"a": 2, "b": 3, "d": 10})
    run.output.value, run.grads          # host arrays: 6 + log 10, {"a": 3.0, "b": 2.0, "d": 0.1}
    run.evaluation, run.tensor           # the Evaluation and the output tensor, after backward

    run.py     differentiate (value, gradients, retained gradients, Hessian, graph), forward, record
    check.py   gradients against finite differences
    graph.py   the recorded graph as data
    values.py  results as plain Python numbers and lists
    errors.py  UsageProblem, GradientProblem

Layers: cli -> testing -> program -> language -> engine; this package knows nothing of the
command line, of the regression runner, nor of Rich or Typer.
"""

from __future__ import annotations

from .check import CheckReport, check
from .errors import GradientProblem, NotATensor, UsageProblem
from .run import Differentiation, Forward, Quantity, Recorded, differentiate, forward, record
from .values import for_json, host, to_python

# graph.py is loaded on first use: a plain run of `autodiff grad` draws no graph.
_LAZY = {"GraphModel": "graph", "GraphNode": "graph", "build_graph": "graph"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "CheckReport", "Differentiation", "Forward", "GradientProblem", "GraphModel", "GraphNode", "NotATensor",
    "Quantity", "Recorded", "UsageProblem", "build_graph", "check", "differentiate", "for_json", "forward", "host",
    "record", "to_python",
]

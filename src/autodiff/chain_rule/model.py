"""What an explanation is made of: the paths, their edges, the backward steps, and the whole
as data (`to_dict`: explain's JSON)."""

from __future__ import annotations

from dataclasses import field

import numpy as np

from .. import codec
from .._record import record


@record
class Edge:
    """One step of a path: the node's op, its local derivative as a formula, and its value
    (a number; a tensor's elementwise derivative when small; else None)."""

    op: str
    formula: str
    local: object = None
    latex: str = ""  # the formula's right side in LaTeX, by derive's printer (not part of the JSON)


@record
class Path:
    """One path from the output to an input: its nodes, its edges and their product."""

    nodes: list  # display names, from the output to the input
    edges: list  # Edge, one per step
    product: object  # a number for a graph of numbers, else this path's share (an array in the input's shape)
    # Where the path runs, for pictures that draw it: (the node's creation number `_seq`, the input
    # position it leaves by) for each step after the output, in order. Not part of the JSON.
    route: list = field(default_factory=list, repr=False, compare=False)


@record
class InputExplanation:
    """An input's gradient as the sum of its paths' products, the largest first."""

    name: str
    grad: object  # array, or None where no gradient reaches the input
    paths_count: int
    paths: list  # Path, largest share first
    rest: object  # grad less the shares shown (0 when all are shown)
    scalar: bool  # a graph of numbers: products are numbers
    exhaustive: bool = True  # the shown paths are certainly the largest
    why: str | None = None  # why the gradient is None or zero


@record
class Passed:
    """What one step hands an input: `grad × local = value`."""

    to: str
    op: str
    formula: str
    local: object
    value: object  # array, or None
    leaf: bool
    position: int = -1  # the input of the step's node it goes to (not part of the JSON)


@record
class Step:
    """One node of the backward pass as it runs: the gradient it receives and what it passes on."""

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
    key: int | None = field(default=None, repr=False, compare=False)  # the node's `_seq` (not part of the JSON)


@record(repr=False)
class Explanation:
    """A program's chain rule at one point: every input's paths and the backward pass, step by step."""

    output: str
    value: object  # array
    seed: object  # array the backward started from
    inputs: dict  # name -> InputExplanation
    steps: list  # Step
    source: str = ""
    warnings: list = field(default_factory=list)

    def __str__(self) -> str:
        from .text import plain

        return plain(self)

    __repr__ = __str__

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython
        from .text import plain

        printer.text(plain(self))

    def _repr_html_(self) -> str:  # Jupyter
        from .._html import text_html  # a notebook's only: the module is not loaded otherwise
        from .text import plain

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



@record
class NodeInfo:
    """How a graph node is shown: the variable it is, its source text and line."""

    name: str | None  # the variable or input
    text: str | None  # the source text
    line: int | None

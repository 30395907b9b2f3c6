"""`autodiff explain`: a program's gradients as the chain rule, named from its source.

The symbolic layer explains the graph (chain_rule/: paths, their count, the steps backward,
all from the nodes' own formulas); this adds what only the program knows: each node's variable
or source text and line, and, for `--why`, the sentence that says why an input's gradient is
None or zero, pointing at the line (not used; used only under no_grad; cut by detach; a
constant or not in --wrt; every path through a zero local derivative).
"""

from __future__ import annotations

import numpy as np

from ..chain_rule import LIMIT, Explanation, InputExplanation, NodeInfo, explain_graph
from ..autograd.node import AccumulateGrad
from ..language import ast
from ..language.analysis import input_advice
from ..language.builtins import suggestion
from ..language.option_names import option
from .errors import UsageProblem
from .graph import source_of
from .run import differentiate


def explain(source, at: dict | None = None, *, program=None, wrt=None, why: str | None = None,
            output: str | None = None, grad_output=None, options=None, limit: int = LIMIT) -> Explanation:
    """Run `source` at `at`, differentiate it, and explain each asked-for input's gradient
    (those of `wrt`, else every input that requires grad; `why` adds its own)."""
    run = differentiate(source, at, program=program, wrt=wrt, output=output, grad_output=grad_output,
                        options=options, keep_graph=True)
    return explain_run(run, wrt=wrt, why=why, limit=limit)


def explain_run(run, *, wrt=None, why: str | None = None, limit: int = LIMIT) -> Explanation:
    """`explain` of a run already made (`differentiate(..., keep_graph=True)`: its graph still
    holds the saved values), so that a caller can draw the same graph the explanation walks."""
    evaluation = run.evaluation
    names = [q.name for q in run.inputs if q.requires_grad] if wrt is None else list(wrt)
    known = set(evaluation.inputs) | set(evaluation.constants)
    if why is not None and why not in known:
        advice = input_advice(run.program, evaluation.source, why) or suggestion(why, sorted(known))
        raise UsageProblem(f"--why names {why!r}, which is not an input of the program{advice}")
    if why is not None and why not in names:
        names.append(why)
    targets = {n: evaluation.inputs[n] for n in names if n in evaluation.inputs}
    explanation = explain_graph(run.tensor, targets, seed=None if run.seed is None else run.seed,
                                namer=_namer(evaluation), limit=limit, output_name=run.output.name)
    explanation.source = run.source
    explanation.warnings = run.warnings
    grads = run.grads
    for name in names:
        item = explanation.inputs.get(name)
        if item is None:
            item = explanation.inputs[name] = InputExplanation(name, None, 0, [], None, True)
        if name in grads and grads[name] is not None:
            item.grad = grads[name]  # what `grad` prints (the steps reproduce it exactly)
        if item.why is None and (item.grad is None or name == why):
            item.why = why_sentence(name, run, item)
    return explanation


def _namer(evaluation):
    leaves = {id(t): name for name, t in {**evaluation.constants, **evaluation.inputs}.items()}
    for name, t in evaluation.variables.items():  # a leaf the program made: w = randn(3, requires_grad=True)
        if getattr(t, "grad_fn", 0) is None and getattr(t, "requires_grad", False):
            leaves.setdefault(id(t), name)
    uses: dict = {}
    for label in evaluation.labels.values():
        uses[label] = uses.get(label, 0) + 1
    subscripts = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

    def namer(node) -> NodeInfo:
        if type(node) is AccumulateGrad:
            return NodeInfo(leaves.get(id(node.variable)), None, None)
        text, line = source_of(evaluation, node)
        name = evaluation.labels.get(node)
        if name is not None and uses[name] > 1 and line is not None:  # x assigned again: x₃ is line 3's
            name += str(line).translate(subscripts)
        return NodeInfo(name, text, line)

    def operand_texts(node) -> list | None:
        """The source texts of the operands of the expression that recorded `node` (`(1 - c)` and
        `x` for `(1 - c) * x`), so a formula can name an operand that has no node of its own."""
        origin = evaluation.origins.get(node)
        if isinstance(origin, ast.BinOp):
            operands = [origin.left, origin.right]
        elif isinstance(origin, ast.Call) and not origin.keywords:
            operands = list(origin.args)
        else:
            return None
        return [evaluation.source.snippet(o.start, o.end) for o in operands]

    # constants a formula names: by tensor, and by the array a record saved of it
    namer.tensors = {**leaves, **{id(t._data): name for name, t in {**evaluation.constants, **evaluation.inputs}.items()
                                  if hasattr(t, "_data")}}
    namer.operand_texts = operand_texts
    return namer


# -- why ---------------------------------------------------------------------------------------------------


def _uses(program, source, name: str) -> list:
    """Each use of `name`: (line, the statement's text, the no_grad line or None, the detach line or None)."""
    uses = []
    stack = [(statement, None, None, statement) for statement in reversed(program.body)]
    while stack:
        node, no_grad_line, detach_line, statement = stack.pop()
        if isinstance(node, ast.Name) and node.id == name:
            line = source.line_column(node.start)[0]
            text = source.snippet(statement.start, statement.end)
            uses.append((line, text, no_grad_line, detach_line))
            continue
        if isinstance(node, ast.With) and isinstance(node.context, ast.Name) and node.context.id == "no_grad":
            no_grad_line = source.line_column(node.start)[0]
        if isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id == "detach")
                or (isinstance(node.func, ast.Attribute) and node.func.name == "detach")):
            detach_line = source.line_column(node.start)[0]
        statements, others = ast.children(node)
        for child in reversed(others):
            stack.append((child, no_grad_line, detach_line, statement))
        for child in reversed(statements):
            stack.append((child, no_grad_line, detach_line, child))
    return sorted(uses)


def why_sentence(name: str, run, item: InputExplanation) -> str:
    """Why `name`'s gradient is what it is, in a sentence that points at the line."""
    evaluation = run.evaluation
    output = run.output.name
    grad = item.grad
    if name in evaluation.constants:
        return f"{name} is a constant: it does not require grad, so it has no gradient"
    if not evaluation.inputs[name].requires_grad:
        return f"{name} is not in {option('wrt')}: it does not require grad, so it has no gradient"
    if grad is not None and np.any(np.asarray(grad) != 0):
        return f"{name} has a gradient: {item.paths_count:,} path(s) lead from {output} to it"
    if grad is not None:
        return item.why or f"the gradient of {name} is 0"
    if not run.differentiable:
        return f"{output} does not depend on any input that requires grad"
    uses = _uses(run.program, evaluation.source, name)
    if not uses:
        return f"{name} is not used by the program"
    for line, text, no_grad_line, _ in uses:
        if no_grad_line is not None:
            return (f"{name} is used only under no_grad (line {no_grad_line}): `{text}` on line {line} is not "
                    f"recorded, so no gradient flows back to {name}")
    for line, text, _, detach_line in uses:
        if detach_line is not None:
            return f"{name} is cut by detach (line {detach_line}): `{text}` passes its value but not its gradient"
    line, text, _, _ = uses[0]
    return (f"{output} does not use {name}: it is used on line {line} (`{text}`), which {output} does not "
            "depend on")

"""What the commands compute, as plain data for the renderers.

`grad`, `eval` and `graph` each build one report here: they parse and run the program
(language), run backward and any checks (engine), and copy what is to be shown to the host
as NumPy arrays. Nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import Tensor, autograd, no_grad
from ..language import Evaluation, InputProblem, Options, Source, Warning_, evaluate, parse, parse_value
from ..language.builtins import suggestion
from .check import CheckReport, check_gradients
from .exit_codes import GradientProblem, UsageProblem
from .graph import GraphModel, build_graph, host

MAX_HESSIAN_ELEMENTS = 1_000  # input elements for --order 2 (the Hessian has their square)


@dataclass
class Quantity:
    """One named value of a run, as it is shown."""

    name: str
    role: str  # output, input, constant, variable
    value: object  # host array, or a Python number for values that are not tensors
    shape: tuple
    dtype: str
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None
    grad: object = None  # host array
    note: str = ""  # why there is no gradient: "not retained", "does not reach the output"...


@dataclass
class GradReport:
    source: str
    output: Quantity
    inputs: list
    constants: list
    variables: list
    hessian: dict | None = None  # (name, name) -> host array
    check: CheckReport | None = None
    graph: GraphModel | None = None
    warnings: list = field(default_factory=list)  # language.Warning_, shown on standard error


@dataclass
class EvalReport:
    source: str
    output: Quantity
    inputs: list
    constants: list
    variables: list
    warnings: list = field(default_factory=list)  # language.Warning_, shown on standard error


@dataclass
class GraphReport:
    source: str
    output: Quantity
    graph: GraphModel
    backward: bool
    warnings: list = field(default_factory=list)  # language.Warning_, shown on standard error


def _the_output(name: str) -> str:
    """How messages name the output: "the output e", or "the output" when it has no name."""
    return "the output" if name == "output" else f"the output {name}"


def _quantity(name: str, role: str, value, note: str = "") -> Quantity:
    if isinstance(value, Tensor):
        grad = value._grad if value.is_leaf or value.retains_grad else None
        return Quantity(name, role, host(value), tuple(value.shape), value.dtype.name, value.requires_grad,
                        value.is_leaf, value.grad_fn.name() if value.grad_fn is not None else None, host(grad), note)
    shape = tuple(np.shape(value)) if isinstance(value, (int, float, bool)) else ()
    return Quantity(name, role, value, shape, type(value).__name__, False, True, None, None, note)


# -- grad --------------------------------------------------------------------------------------------------


def run_grad(source: Source, at: dict, *, wrt=None, retain=None, output=None, grad_output=None, tree=False,
             check=False, order=1, options: Options, atol: float = 1e-5, rtol: float = 1e-3) -> GradReport:
    if order not in (1, 2):
        raise UsageProblem(f"--order takes 1 or 2, not {order}")
    if tree:
        options.keep_tensors = True
    program = parse(source)  # once: --check runs it again, and looks for where it stops gradients
    evaluation = evaluate(program, source, at=at, wrt=wrt, output=output, options=options)
    result = evaluation.output
    warnings = list(evaluation.warnings)
    if isinstance(result, (bool, int, float)):  # a program of constants: a value with no gradients
        from .. import tensor

        result = evaluation.output = tensor(result)
    elif not isinstance(result, Tensor):
        raise GradientProblem(f"{_the_output(evaluation.output_name)} is {type(result).__name__}, not a tensor: "
                              "there is nothing to differentiate")
    retained = _retain(evaluation, retain)
    seed = _seed(result, grad_output, evaluation.output_name)
    differentiable = result.requires_grad
    if differentiable:
        try:
            result.backward(seed, create_graph=order == 2, retain_graph=order == 2)
        except RuntimeError as exc:
            raise GradientProblem(str(exc)) from None
    else:
        warnings.append(Warning_(f"{_the_output(evaluation.output_name)} does not depend on any input that "
                                 "requires grad: every gradient is null"))
    inputs = []
    for name, leaf in sorted(evaluation.inputs.items()):  # by name, in every format
        note = ""
        if not leaf.requires_grad:
            note = "not asked for (--wrt)"
        elif leaf._grad is None:
            note = "does not reach the output"
            if differentiable:
                warnings.append(Warning_(f"{_the_output(evaluation.output_name)} does not depend on input {name!r}"))
        quantity = _quantity(name, "input", leaf, note)
        inputs.append(quantity)
        if quantity.grad is not None and quantity.grad.dtype.kind == "f" and not np.all(np.isfinite(quantity.grad)):
            kind = "nan" if np.any(np.isnan(quantity.grad)) else "infinite"
            warnings.append(Warning_(f"the gradient with respect to {name!r} is {kind}"))
    variables = []
    for name, value in evaluation.variables.items():
        if name == evaluation.output_name:
            continue
        note = ""
        if isinstance(value, Tensor) and value.requires_grad and not value.is_leaf:
            note = "" if name in retained else "not retained"
        variables.append(_quantity(name, "variable", value, note))
    report = GradReport(
        source.name, _quantity(evaluation.output_name, "output", result), inputs,
        [_quantity(n, "constant", v) for n, v in evaluation.constants.items()], variables, warnings=warnings,
    )
    if order == 2 and differentiable:
        report.hessian = _hessian(result, evaluation)
    if check and differentiable:
        report.check = _check(program, source, evaluation, at, wrt, options, seed, atol, rtol)
        if not report.check.passed:
            report.warnings.extend(_gradient_cuts(program, source))
    if tree:
        report.graph = build_graph(evaluation, result)
    return report


def _retain(evaluation: Evaluation, retain) -> set:
    if retain is None:
        return set()
    names = [n for n, v in evaluation.variables.items() if isinstance(v, Tensor)]
    if retain == ["all"]:
        wanted = names
    else:
        wanted = retain
        for name in wanted:
            if name not in evaluation.variables:
                raise UsageProblem(f"--retain names {name!r}, which the program does not assign"
                                   f"{suggestion(name, names)}")
    kept = set()
    for name in wanted:
        value = evaluation.variables[name]
        if isinstance(value, Tensor) and value.requires_grad and not value.is_leaf:
            value.retain_grad()
            kept.add(name)
    return kept


def _seed(result: Tensor, grad_output, name: str):
    if grad_output is None:
        if result.numel() != 1 and result.requires_grad:
            raise GradientProblem(
                "grad can be implicitly created only for scalar outputs",
                hint=f"{_the_output(name)} has shape {list(result.shape)}: differentiate a number, as "
                     f"{'sum(' + name + ')' if name != 'output' else 'sum(...) of the last expression'}, "
                     "or give --grad-output ones",
            )
        return None
    if grad_output == "ones":
        from .. import ones_like

        return ones_like(result)
    value = parse_value(grad_output, "--grad-output")
    if not isinstance(value, Tensor):
        from .. import tensor

        value = tensor(float(value))
    value = value.to(result.dtype).to(result.device)
    if tuple(value.shape) != tuple(result.shape):
        raise UsageProblem(f"--grad-output has shape {list(value.shape)}, but {_the_output(name)} has shape "
                           f"{list(result.shape)}")
    return value


def _hessian(result: Tensor, evaluation: Evaluation) -> dict:
    names = [n for n, t in evaluation.inputs.items() if t.requires_grad]
    leaves = [evaluation.inputs[n] for n in names]
    if result.numel() != 1:
        raise UsageProblem("--order 2 needs a scalar output (its Hessian is a matrix per pair of inputs)")
    total = sum(t.numel() for t in leaves)
    if total > MAX_HESSIAN_ELEMENTS:
        raise UsageProblem(f"--order 2 is limited to {MAX_HESSIAN_ELEMENTS:,} input elements (these have {total:,})")
    firsts = autograd.grad(result, leaves, create_graph=True, allow_unused=True)
    blocks = {}
    for i, (name_i, first) in enumerate(zip(names, firsts)):
        rows = {name_j: np.zeros(leaves[i].shape + leaves[j].shape) for j, name_j in enumerate(names)}
        if first is not None and first.requires_grad:
            flat = first.reshape(-1)
            for k, index in enumerate(np.ndindex(tuple(leaves[i].shape))):
                seconds = autograd.grad(flat[k], leaves, retain_graph=True, allow_unused=True)
                for name_j, second in zip(names, seconds):
                    if second is not None:
                        rows[name_j][index] = host(second)
        for name_j, block in rows.items():
            blocks[(name_i, name_j)] = block
    return blocks


def _check(program, source: Source, evaluation: Evaluation, at: dict, wrt, options: Options, seed, atol,
           rtol) -> CheckReport:
    quiet = Options(**{**vars(options), "check_finite": False, "keep_tensors": False})
    values = {name: host(t) for name, t in sorted(evaluation.inputs.items())}
    analytical = {name: host(t._grad) for name, t in evaluation.inputs.items() if t.requires_grad}
    weights = 1.0 if seed is None else host(seed).astype(np.float64)
    output_name = evaluation.output_name if evaluation.output_name != "output" else None

    def run_at(point: dict):
        with no_grad():
            return host(evaluate(program, source, at={**at, **point}, wrt=wrt, output=output_name,
                                 options=quiet).output)

    low_precision = evaluation.output.dtype.name != "float64"
    eps = 1e-3 if low_precision else 1e-6
    if low_precision:
        atol, rtol = max(atol, 1e-3), max(rtol, 1e-2)
    return check_gradients(run_at, values, analytical, weights, eps=eps, atol=atol, rtol=rtol)


def _gradient_cuts(program, source: Source) -> list:
    """Where the program stops gradients on purpose (no_grad, detach): there autograd's gradient
    is not the derivative that finite differences measure, and --check cannot agree."""
    from ..language import ast

    found = []
    for node in ast.walk(program):
        if isinstance(node, ast.With):
            what = "a with block that turns off recording"
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "name", None)) == "detach":
            what = "detach"
        else:
            continue
        found.append(Warning_(f"--check: the program stops gradients here ({what}); finite differences see "
                              "through it, so they differ from autograd's gradient by design", source,
                              node.start, node.end if isinstance(node, ast.Call) else None))
    return found[:1] + ([Warning_(f"--check: and in {len(found) - 1} more place(s)")] if len(found) > 1 else [])


# -- eval and graph ---------------------------------------------------------------------------------------


def run_eval(source: Source, at: dict, *, output=None, options: Options) -> EvalReport:
    with no_grad():
        evaluation = evaluate(parse(source), source, at=at, output=output, options=options)
    variables = [_quantity(n, "variable", v) for n, v in evaluation.variables.items() if n != evaluation.output_name]
    return EvalReport(
        source.name, _quantity(evaluation.output_name, "output", evaluation.output),
        [_quantity(n, "input", t) for n, t in sorted(evaluation.inputs.items())],
        [_quantity(n, "constant", t) for n, t in evaluation.constants.items()],
        variables, list(evaluation.warnings),
    )


def run_graph(source: Source, at: dict, *, wrt=None, output=None, backward=False, grad_output=None,
              options: Options, limit: int = 500) -> GraphReport:
    options.keep_tensors = True
    evaluation = evaluate(parse(source), source, at=at, wrt=wrt, output=output, options=options)
    result = evaluation.output
    if not isinstance(result, Tensor):
        raise InputProblem(f"{_the_output(evaluation.output_name)} is not a tensor: it has no graph")
    if backward and result.requires_grad:
        for tensor in evaluation.tensors.values():
            if tensor.requires_grad:
                tensor.retain_grad()
        try:
            result.backward(_seed(result, grad_output, evaluation.output_name))
        except RuntimeError as exc:
            raise GradientProblem(str(exc)) from None
    return GraphReport(source.name, _quantity(evaluation.output_name, "output", result),
                       build_graph(evaluation, result, limit), backward, list(evaluation.warnings))

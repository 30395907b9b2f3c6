"""Run a program at a point: forward, backward, and what is to be shown, as plain data.

Every command that runs a program calls here — `grad`, `eval` and `graph`, `autodiff test`
and the pytest plugin — so "parse, run at a point, differentiate, collect the results" is
written once. A result keeps the Evaluation and the output tensor after backward, for callers
that look further (a graph, an explanation, finite differences); the rest is host arrays.
Nothing here prints.
"""

from __future__ import annotations

import math
import dataclasses
from dataclasses import field
from typing import TYPE_CHECKING

import numpy as np

from .._record import record
from .. import Tensor, autograd, no_grad, return_types
from ..language import Evaluation, InputProblem, Options, Program, Source, Warning_, evaluate, parse, parse_value
from ..language.option_names import given, option
from ..language.builtins import suggestion
from .errors import GradientProblem, NotATensor, UsageProblem
from .values import host

if TYPE_CHECKING:  # the graph is loaded where a run asks for one
    from .check import CheckReport
    from .graph import GraphModel

MAX_HESSIAN_ELEMENTS = 1_000  # input elements for order 2 (the Hessian has their square)


@record
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


@record
class Differentiation:
    """A program run forward and backward at one point."""

    source: str  # the program's name, as messages show it
    output: Quantity
    inputs: list  # Quantity, sorted by name
    constants: list
    variables: list  # the assigned names other than the output, each with its gradient where retained
    hessian: dict | None = None  # (name, name) -> host array, with order 2
    check: CheckReport | None = None  # set by program.check.check()
    graph: GraphModel | None = None  # with graph=True
    warnings: list = field(default_factory=list)  # language.Warning_
    # For callers that go further (check, explain, sweeps): the run itself, after backward.
    evaluation: Evaluation | None = None
    tensor: Tensor | None = None  # the output tensor, its graph kept with order 2
    seed: Tensor | None = None  # the gradient backward started from (None: 1 for a scalar output)
    program: Program | None = None
    at: dict = field(default_factory=dict)
    wrt: list | None = None
    options: Options | None = None
    retained_output: bool = False  # --retain named the output (or all): its gradient, 1 for a scalar, is shown
    jacobian: bool = False  # forward mode, a non-scalar output and no grad_output: each input's grad is its Jacobian

    @property
    def retained(self) -> list:
        """The quantities whose gradients were kept: the output when --retain names it, then the variables."""
        first = [self.output] if self.retained_output and self.output.grad is not None else []
        return first + [q for q in self.variables if q.grad is not None]

    @property
    def differentiable(self) -> bool:
        return self.tensor is not None and self.tensor.requires_grad

    @property
    def grads(self) -> dict:
        """{input name: gradient host array or None} for the inputs that require grad."""
        return {q.name: q.grad for q in self.inputs if q.requires_grad}

    def _repr_html_(self) -> str:  # Jupyter
        from .html import differentiation_html

        return differentiation_html(self)

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython, where HTML is not shown
        from .html import differentiation_text

        printer.text(differentiation_text(self))


@record
class Forward:
    """A program run forward only (nothing recorded)."""

    source: str
    output: Quantity
    inputs: list
    constants: list
    variables: list
    warnings: list = field(default_factory=list)
    evaluation: Evaluation | None = None


@record
class Recorded:
    """A program's recorded graph, run backward too when asked."""

    source: str
    output: Quantity
    graph: GraphModel
    backward: bool
    warnings: list = field(default_factory=list)
    evaluation: Evaluation | None = None

    def _repr_svg_(self) -> str:  # Jupyter
        from .svg import graph_svg

        return graph_svg(self.graph, title=f"autodiff graph of {self.source}")

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython, where the picture is not shown
        printer.text(f"<the recorded graph of {self.output.name}: {len(self.graph.nodes)} nodes, "
                     f"{len(self.graph.edges)} edges>")


def the_output(name: str) -> str:
    """How messages name the output: "the output e", or "the output" when it has no name."""
    return "the output" if name == "output" else f"the output {name}"


def _source_and_program(source, program) -> tuple:
    if isinstance(source, str):
        source = Source(source, "<expr>")
    return source, (parse(source) if program is None else program)


def _quantity(name: str, role: str, value, note: str = "") -> Quantity:
    if isinstance(value, Tensor):
        grad = value._grad if value.is_leaf or value.retains_grad else None
        fn = value.grad_fn
        return Quantity(name, role, host(value), tuple(value.shape), value.dtype.name, value.requires_grad,
                        value.is_leaf, type(fn).__name__ if fn is not None else None, host(grad), note)
    shape = tuple(np.shape(value)) if isinstance(value, (int, float, bool)) else ()
    if isinstance(value, (tuple, list)):  # x.max(0)'s (values, indices), split's pieces: each on the host
        value = [host(v) if isinstance(v, Tensor) else v for v in value]
    return Quantity(name, role, value, shape, type(value).__name__, False, True, None, None, note)


# -- forward and backward ------------------------------------------------------------------------------------


def differentiate(source: Source | str, at: dict | None = None, *, program: Program | None = None, wrt=None,
                  retain=None, output: str | None = None, grad_output=None, order: int = 1, graph: bool = False,
                  options: Options | None = None, keep_graph: bool = False, analysis=None,
                  named: bool = True, mode: str = "reverse") -> Differentiation:
    """Run `source` (its text or Source; `program` when already parsed) at the point `at`
    ({name: number, list or tensor}) and differentiate its output.

    wrt: the inputs that require grad (None: all). retain: names of variables whose gradients
    are kept, or ["all"]. grad_output: None (a scalar output), "ones", or a value's text.
    order 2 adds the Hessian of a scalar output. graph: build the grad_fn graph model.
    keep_graph: backward keeps the saved values (retain_graph), for callers that run the
    nodes' formulas again (explain). analysis: the program's language.analysis.analyze(), when
    the caller has it (with `program`), so that it is not worked out again. named=False leaves
    the constants and variables out (empty lists), for callers that keep only the output and the
    gradients (autodiff test). mode="forward" computes the gradients in forward mode, one pass per
    input element (_forward_gradients); it takes neither order 2 nor retain. There a non-scalar
    output with no grad_output needs no seed: each input's grad is the Jacobian of the output
    with respect to it, shaped output.shape + input.shape (autograd.functional.jacobian's layout),
    what forward mode gives for few input numbers and many output numbers.
    Raises ProgramError, UsageProblem, GradientProblem (the engine's RuntimeError included).
    """
    if order not in (1, 2):
        raise UsageProblem(f"{option('order')} takes 1 or 2, not {order}")
    if mode == "forward" and (order == 2 or retain):
        raise UsageProblem(f"{option('mode')} forward computes the inputs' gradients only: "
                           f"{option('order') + ' 2' if order == 2 else option('retain')} needs reverse mode")
    options = Options() if options is None else options
    if graph:
        options.keep_tensors = True
    source, program = _source_and_program(source, program)
    at = dict(at or {})
    evaluation = evaluate(program, source, at=at, wrt=wrt, output=output, options=options, analysis=analysis)
    result = evaluation.output
    warnings = list(evaluation.warnings)
    if isinstance(result, (bool, int, float)):  # a program of constants: a value with no gradients
        from .. import tensor

        result = evaluation.output = tensor(result)
    else:
        refuse_non_tensor(result, evaluation.output_name)
    retained = _retain(evaluation, retain)
    jacobian = mode == "forward" and grad_output is None and result.numel() != 1 and result.requires_grad
    seed = None if jacobian else _seed(result, grad_output, evaluation.output_name)
    differentiable = result.requires_grad
    if differentiable and mode == "forward":
        _forward_gradients(program, source, at, evaluation, seed, output, options, jacobian)
    elif differentiable:
        try:
            result.backward(seed, create_graph=order == 2, retain_graph=order == 2 or keep_graph)
        except RuntimeError as exc:
            raise GradientProblem(str(exc)) from None
    else:
        warnings.append(Warning_(f"{the_output(evaluation.output_name)} does not depend on any input that "
                                 "requires grad: every gradient is null"))
    inputs = []
    for name, leaf in sorted(evaluation.inputs.items()):  # by name, in every format
        note = ""
        if not leaf.requires_grad:
            note = f"not asked for ({option('wrt')})"
        elif leaf._grad is None:
            note = "does not reach the output"
            if differentiable:
                warnings.append(Warning_(f"{the_output(evaluation.output_name)} does not depend on input {name!r}"))
        quantity = _quantity(name, "input", leaf, note)
        inputs.append(quantity)
        if quantity.grad is not None and quantity.grad.dtype.kind == "f" and not _all_finite(quantity.grad):
            kind = "nan" if np.any(np.isnan(quantity.grad)) else "infinite"
            warnings.append(Warning_(f"the gradient with respect to {name!r} is {kind}"))
    variables = []
    for name, value in evaluation.variables.items() if named else ():
        if name == evaluation.output_name:
            continue
        note = ""
        if isinstance(value, Tensor) and value.requires_grad and not value.is_leaf:
            note = "" if name in retained else "not retained"
        variables.append(_quantity(name, "variable", value, note))
    run = Differentiation(
        source.name, _quantity(evaluation.output_name, "output", result), inputs,
        [_quantity(n, "constant", v) for n, v in evaluation.constants.items()] if named else [], variables,
        warnings=warnings,
        evaluation=evaluation, tensor=result, seed=seed, program=program, at=at, wrt=wrt, options=options,
        retained_output=evaluation.output_name in retained and retain != ["all"],  # all: the intermediates
        jacobian=jacobian,
    )
    if order == 2 and differentiable:
        run.hessian = _hessian(result, evaluation)
    if graph:
        from .graph import build_graph  # only where a graph is asked for: not part of every start

        run.graph = build_graph(evaluation, result)
    return run


class _Direction:
    """The evaluator's watcher (Options.trace) for one forward pass: input `name` becomes a dual
    tensor whose tangent is 1 at element `k` and 0 elsewhere."""

    located = None

    def __init__(self, name: str, k: int) -> None:
        self.name, self.k = name, k

    def input(self, name: str, leaf: Tensor) -> Tensor:
        if name != self.name:
            return leaf
        from ..autograd.forward_ad import make_dual

        direction = np.zeros(leaf.numel(), dtype=leaf._data.dtype)
        direction[self.k] = 1.0
        value = leaf.detach()
        return make_dual(value, value.new_tensor(direction.reshape(tuple(leaf.shape))))


def _forward_gradients(program, source, at, evaluation: Evaluation, seed, output, options: Options,
                       jacobian: bool = False) -> None:
    """Each input's gradient in forward mode: the program run again with one input element as
    a dual tensor, the output's tangent (J e_k) dotted with the seed, element by element, or with
    `jacobian` kept whole: the columns of the Jacobian. The results land in the inputs' `.grad`,
    where backward puts gradients (a Jacobian there has the output's dimensions first)."""
    from .. import tensor
    from ..autograd.forward_ad import dual_level, unpack_dual

    weights = None if seed is None else host(seed)
    out_shape = tuple(evaluation.output.shape)
    for name, leaf in evaluation.inputs.items():
        if not leaf.requires_grad:
            continue
        columns = np.zeros((leaf.numel(),) + (out_shape if jacobian else ()), dtype=leaf._data.dtype)
        reached = False  # an output with no tangent does not depend on the input: no gradient (None)
        for k in range(leaf.numel()):
            run_options = dataclasses.replace(options, trace=_Direction(name, k), check_finite=False)
            with no_grad(), dual_level():
                again = evaluate(program, source, at=at, output=output, options=run_options,
                                 analysis=evaluation.analysis)
                tangent = unpack_dual(again.output).tangent if isinstance(again.output, Tensor) else None
            if tangent is not None:
                reached = True
                pushed = host(tangent)
                if jacobian:
                    columns[k] = pushed
                else:
                    columns[k] = pushed.sum() if weights is None else (pushed * weights).sum()
        if reached:
            if jacobian:  # (input element, *output) to (*output, *input)
                grad = np.moveaxis(columns, 0, -1).reshape(out_shape + tuple(leaf.shape))
            else:
                grad = columns.reshape(tuple(leaf.shape))
            leaf._grad = tensor(grad, dtype=leaf.dtype)


def refuse_non_tensor(result, name: str) -> None:
    """NotATensor for an output that is neither a tensor nor a number: nothing to differentiate."""
    if isinstance(result, (Tensor, bool, int, float)):
        return
    kind = type(result).__name__
    if isinstance(result, return_types.PAIRS):  # x.max(0), sort(x), as PyTorch returns them
        raise NotATensor(f"{the_output(name)} is the (values, indices) pair of {kind}(), not a tensor: "
                         "take its .values", kind)
    raise NotATensor(f"{the_output(name)} is {kind}, not a tensor: there is nothing to differentiate", kind)


def _all_finite(array: np.ndarray) -> bool:
    if array.ndim == 0:
        return math.isfinite(array)  # a number: without NumPy's reduction
    return bool(np.isfinite(array).all())


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
                raise UsageProblem(f"{option('retain')} names {name!r}, which the program does not assign"
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
                hint=f"{the_output(name)} has shape {list(result.shape)}: differentiate a number, as "
                     f"{'sum(' + name + ')' if name != 'output' else 'sum(...) of the last expression'}, "
                     f"or give {given('grad_output', 'ones')}",
            )
        return None
    if grad_output == "ones":
        from .. import ones_like

        return ones_like(result)
    value = parse_value(grad_output, option("grad_output"))
    if not isinstance(value, Tensor):
        from .. import tensor

        value = tensor(float(value))
    value = value.to(result.dtype).to(result.device)
    if tuple(value.shape) != tuple(result.shape):
        raise UsageProblem(f"{option('grad_output')} has shape {list(value.shape)}, but {the_output(name)} has shape "
                           f"{list(result.shape)}")
    return value


def _hessian(result: Tensor, evaluation: Evaluation) -> dict:
    names = [n for n, t in evaluation.inputs.items() if t.requires_grad]
    leaves = [evaluation.inputs[n] for n in names]
    if result.numel() != 1:
        raise UsageProblem(f"{given('order', 2)} needs a scalar output (its Hessian is a matrix per pair of inputs)")
    total = sum(t.numel() for t in leaves)
    if total > MAX_HESSIAN_ELEMENTS:
        raise UsageProblem(f"{given('order', 2)} is limited to {MAX_HESSIAN_ELEMENTS:,} input elements (these have {total:,})")
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


# -- forward only, and the graph ------------------------------------------------------------------------------


def forward(source: Source | str, at: dict | None = None, *, program: Program | None = None,
            output: str | None = None, options: Options | None = None) -> Forward:
    """Run `source` at `at` without recording; its output and named values."""
    source, program = _source_and_program(source, program)
    with no_grad():
        evaluation = evaluate(program, source, at=dict(at or {}), output=output, options=options)
    variables = [_quantity(n, "variable", v) for n, v in evaluation.variables.items() if n != evaluation.output_name]
    return Forward(
        source.name, _quantity(evaluation.output_name, "output", evaluation.output),
        [_quantity(n, "input", t) for n, t in sorted(evaluation.inputs.items())],
        [_quantity(n, "constant", t) for n, t in evaluation.constants.items()],
        variables, list(evaluation.warnings), evaluation,
    )


def record(source: Source | str, at: dict | None = None, *, program: Program | None = None, wrt=None,
           output: str | None = None, backward: bool = False, grad_output=None, options: Options | None = None,
           limit: int = 500, edge_labels: bool = False) -> Recorded:
    """Run `source` at `at` and describe its recorded graph (at most `limit` nodes); with
    `backward`, run backward too, every recorded tensor keeping its gradient; with `edge_labels`,
    each edge carries its local derivative (the node's own formula at this point)."""
    options = Options() if options is None else options
    options.keep_tensors = True
    source, program = _source_and_program(source, program)
    evaluation = evaluate(program, source, at=dict(at or {}), wrt=wrt, output=output, options=options)
    result = evaluation.output
    if not isinstance(result, Tensor):
        raise InputProblem(f"{the_output(evaluation.output_name)} is not a tensor: it has no graph")
    labels = None
    if edge_labels:
        from ..chain_rule import edge_labels as local_derivatives
        from .explain import _namer

        labels = local_derivatives(result, _namer(evaluation))
    if backward and result.requires_grad:
        for tensor in evaluation.tensors.values():
            if tensor.requires_grad:
                tensor.retain_grad()
        try:
            result.backward(_seed(result, grad_output, evaluation.output_name))
        except RuntimeError as exc:
            raise GradientProblem(str(exc)) from None
    from .graph import build_graph

    return Recorded(source.name, _quantity(evaluation.output_name, "output", result),
                    build_graph(evaluation, result, limit, labels), backward, list(evaluation.warnings), evaluation)

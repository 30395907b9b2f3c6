"""A program at many points in one run: evaluated as vectors, not looped.

A chunk of points is one run of the program on batched inputs (ops/batching.py): every input
is a tensor holding all the points, each operation maps onto them by its batching rule, and
one backward pass gives every point its gradients. Where the points of a chunk take different
paths through the program (an `if` on a value, a loop bound, a size), the run stops at that
place and the points are grouped by the way they go, each group run batched again; points
whose run fails are run one by one, so that each failure is that point's own. Results are the
same, to rounding, as running each point alone; `Sweep.notes` says once how they were reached.

A vectorised run does not look for nan or inf as it goes (one point's nan is not every
point's): `first_not_finite` finds the first point that has one, and `alone` runs it as
`autodiff grad` runs one point, for the warnings that name the line where it appeared.
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from .._record import record
from .. import Tensor, as_tensor, no_grad, tensor
from ..autograd.engine import grad as autograd_grad
from ..language import ErrorKind, Options, ProgramError, Source, evaluate, parse
from ..ops.batching import Batched, DataDependent
from .errors import GradientProblem
from .run import the_output
from .values import host


@record
class Group:
    """Points run together, with their results as host arrays whose first dimension is the points."""

    indices: np.ndarray  # which of the points given to Sweep.run
    output: str | None
    values: np.ndarray
    grads: dict  # input name -> array, or None where the input does not reach the output


@record
class Results:
    """What Sweep.run found: the groups that ran, and each failed point's reason."""

    groups: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)  # point index -> message
    bad_values: set = field(default_factory=set)  # the failed points whose values the program refuses (a usage error)

    def point(self, index: int) -> dict:
        """One point's results, as {"output", "value", "grads"} (or {"error"})."""
        if index in self.errors:
            return {"error": self.errors[index]}
        for group in self.groups:
            where = np.nonzero(group.indices == index)[0]
            if len(where):
                k = where[0]
                return {"output": group.output, "value": group.values[k],
                        "grads": {n: None if g is None else g[k] for n, g in group.grads.items()}}
        raise IndexError(index)


@record
class Sweep:
    """A program prepared once, then run over chunks of points."""

    source: Source
    wrt: list | None = None
    output: str | None = None
    options: Options = field(default_factory=Options)
    gradients: bool = True  # eval runs forward only
    fixed: dict = field(default_factory=dict)  # input values that every point shares (--at)
    notes: list = field(default_factory=list)  # how points were grouped, said once each
    warnings: list = field(default_factory=list)  # the language's warnings (an unused --at value), once each

    def __post_init__(self) -> None:
        self.program = parse(self.source)

    def run(self, columns: dict, size: int) -> Results:
        """Results for `size` points, given as columns ({input name: array of the points' values,
        stacked along the first dimension})."""
        results = Results()
        self._run_group(np.arange(size), columns, results, whole=True)
        return results

    def first_not_finite(self, results: Results) -> int | None:
        """The first point whose value or a gradient holds nan or inf (None: there is none)."""
        first = None
        for group in results.groups:
            count = len(group.indices)
            bad = np.zeros(count, dtype=bool)
            for array in [group.values, *(g for g in group.grads.values() if g is not None)]:
                if array.dtype.kind in "fc":
                    bad |= ~np.isfinite(array.reshape(count, -1)).all(axis=1)
            if bad.any():
                index = int(group.indices[int(np.argmax(bad))])
                first = index if first is None else min(first, index)
        return first

    def alone(self, columns: dict, index: int) -> list:
        """The warnings of one point run alone, as `autodiff grad` (or eval) runs it, that the
        vectorised run has not said: where nan or inf first appears, and in which gradient."""
        from .run import differentiate, forward

        point = {name: as_tensor(values[index], dtype=self.options.dtype, device=self.options.device)
                 for name, values in columns.items()}
        point = {**self.fixed, **point}
        options = Options(**{**vars(self.options), "check_finite": True})
        wrt = [name for name in columns if self.wrt is None or name in self.wrt]  # as _batched: the points' own
        wrt += [name for name in self._defaulted(columns) if self.wrt is None or name in self.wrt]  # and defaults
        try:
            if self.gradients and wrt:
                run = differentiate(self.source, point, program=self.program, wrt=wrt, output=self.output,
                                    options=options, named=False)
            else:
                run = forward(self.source, point, program=self.program, output=self.output, options=options)
        except (ProgramError, GradientProblem, RuntimeError, ValueError, TypeError, IndexError, ArithmeticError):
            return []  # it ran batched: alone it fails only where the batched run could not tell
        said = {warning.render() for warning in self.warnings}
        return [warning for warning in run.warnings if warning.render() not in said]

    def _defaulted(self, columns: dict) -> list:
        """The inputs that neither the points nor the shared values give: left at their defaults."""
        from ..language.analysis import analyze

        declared = analyze(self.program, self.source).declared
        return [name for name, node in declared.items()
                if node.kind == "input" and node.value is not None and name not in columns and name not in self.fixed]

    def _warn(self, warnings: list) -> None:
        said = {warning.render() for warning in self.warnings}
        for warning in warnings:
            if warning.render() not in said:
                said.add(warning.render())
                self.warnings.append(warning)

    # -- one group of points -----------------------------------------------------------------------

    def _run_group(self, indices, columns: dict, results: Results, whole: bool = False) -> None:
        pending = [indices]
        while pending:  # an explicit stack: groups split into groups, never by recursion
            group = pending.pop()
            try:
                chosen = columns if whole and group is indices else {n: v[group] for n, v in columns.items()}
                outcome = self._batched(chosen, len(group))
                outcome.indices = group
            except DataDependent as split:
                pending.extend(self._split(group, split))
                continue
            except (ProgramError, GradientProblem, RuntimeError, ValueError, TypeError, IndexError,
                    ArithmeticError, MemoryError) as error:
                if len(group) == 1:
                    results.errors[int(group[0])] = _message(error)
                    if isinstance(error, ProgramError) and error.category is ErrorKind.INVALID_INPUT:
                        results.bad_values.add(int(group[0]))
                else:
                    self._note("one by one", f"the points together failed ({_message(error)}), so each point "
                                             "was run alone to find which")
                    pending.extend(group[i:i + 1] for i in reversed(range(len(group))))
                continue
            results.groups.append(outcome)

    def _split(self, group: list, split: DataDependent) -> list:
        by_value: dict = {}
        for i, value in zip(group, split.values):
            by_value.setdefault(repr(value), []).append(int(i))
        node = getattr(split, "node", None)
        where = f" at line {self.source.line_column(node.start)[0]}" if node is not None else ""
        self._note("grouped", f"the points take different paths{where}: they were grouped by path, each "
                              "group evaluated as vectors")
        return [np.array(g) for g in reversed(by_value.values())]

    def _note(self, kind: str, text: str) -> None:
        if not any(note.startswith(kind) for note in self.notes):
            self.notes.append(f"{kind}: {text}")

    def _batched(self, columns: dict, size: int) -> Group:
        at = {}
        leaves = {}
        for name, values in columns.items():
            physical = as_tensor(values, dtype=self.options.dtype, device=self.options.device)  # no copy
            if self.gradients and (self.wrt is None or name in self.wrt):
                physical.requires_grad_(True)
                leaves[name] = physical
            at[name] = Batched(physical)
        at = {**self.fixed, **at}
        options = Options(**{**vars(self.options), "check_finite": False, "points": size})
        if self.gradients:
            evaluation = evaluate(self.program, self.source, at=at, wrt=self.wrt, output=self.output, options=options)
        else:
            with no_grad():
                evaluation = evaluate(self.program, self.source, at=at, output=self.output, options=options)
        self._warn(evaluation.warnings)
        for name, value in evaluation.inputs.items():  # an input left at its default: the run made its leaf
            if name not in leaves and value.__class__ is Batched and value.physical.requires_grad:
                leaves[name] = value.physical
        output = evaluation.output
        name = evaluation.output_name
        physical = _physical_output(output, size, name)
        grads = {}
        if self.gradients:
            if tuple(physical.shape[1:]) != () and physical.requires_grad:
                raise GradientProblem(
                    "grad can be implicitly created only for scalar outputs",
                    hint=f"{the_output(name)} has shape {list(physical.shape[1:])} at each point: differentiate "
                         "a number, as sum(...)",
                )
            wanted = [n for n in leaves if n in evaluation.inputs]
            if physical.requires_grad and wanted:
                found = autograd_grad(physical, [leaves[n] for n in wanted], physical.new_ones(tuple(physical.shape)),
                                      allow_unused=True)
                grads = dict(zip(wanted, found))
        wanted = sorted(n for n in evaluation.inputs if n in leaves) if self.gradients else []
        return Group(None, name, host(physical.detach()),
                     {n: None if grads.get(n) is None else host(grads[n]) for n in wanted})


def _physical_output(output, size: int, name: str) -> Tensor:
    """The output for every point: batched, or the same value repeated."""
    if output.__class__ is Batched:
        return output.physical
    if isinstance(output, (bool, int, float)):
        output = tensor(float(output))
    if not isinstance(output, Tensor):
        raise GradientProblem(f"{the_output(name)} is {type(output).__name__}, not a tensor")
    return output.unsqueeze(0).expand((size,) + tuple(output.shape))


def _message(error: BaseException) -> str:
    text = getattr(error, "message", None) or str(error)
    return text.splitlines()[0] if text else type(error).__name__

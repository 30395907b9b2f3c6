"""Every gradient of a run against central finite differences of the program itself (`--check`).

The program is run again with each input element moved by +eps and -eps (without
recording); (f(x + eps) - f(x - eps)) / 2 eps, weighted by the output gradient, is the
numerical gradient (each output element's, for a Jacobian of forward mode). It passes where
|analytical - numerical| <= atol + rtol * |numerical|.

Where an element fails, its slopes from the right and from the left are measured too, at eps
and at eps / 10: a curve's two slopes come together as eps shrinks, rounding drives them apart,
a kink's stay the same step apart. Only then does the check say the program is not
differentiable there (`CheckEntry.sides`), and it names the operations of the run that sit at
their kink (relu or abs of 0, a tie of maximum).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import no_grad
from ..language import Options, Warning_, evaluate
from ..language.spelling import option
from .values import host

MAX_CHECKED_ELEMENTS = 2_000  # per input; beyond it a seeded sample of elements is checked
MAX_CHECK_INPUT_ELEMENTS = 100_000  # input elements in all: more is a usage error (as --order 2's limit)


@dataclass
class CheckEntry:
    name: str
    checked: int
    total: int
    max_abs_error: float
    max_rel_error: float
    worst: tuple  # the index of the element with the largest error
    analytical: float
    numerical: float
    passed: bool
    sides: tuple | None = None  # (slope from the right, from the left) where they show a kink or a jump
    jump: bool = False  # the sides' gap grows as eps shrinks: the output itself jumps there


@dataclass
class CheckReport:
    eps: float
    atol: float
    rtol: float
    entries: list = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(entry.passed for entry in self.entries)

    @property
    def max_abs_error(self) -> float:
        return max((e.max_abs_error for e in self.entries), default=0.0)


def check_gradients(run_at, inputs: dict, analytical: dict, weights, *, eps: float, atol: float, rtol: float,
                    jacobian: bool = False) -> CheckReport:
    """`run_at(values) -> output array` runs the program at the given input values. With
    `jacobian`, each analytical entry is a Jacobian (the output's dimensions first) and every
    output element is compared, not their sum weighted by `weights`."""
    base = {name: value.copy() for name, value in inputs.items()}
    report = CheckReport(eps, atol, rtol)
    rng = np.random.default_rng(0)
    for name, value in base.items():
        if name not in analytical:
            continue  # the input does not require grad
        grad = None if analytical[name] is None else np.asarray(analytical[name], dtype=np.float64)
        indices = list(np.ndindex(value.shape))
        if len(indices) > MAX_CHECKED_ELEMENTS:
            chosen = rng.choice(len(indices), MAX_CHECKED_ELEMENTS, replace=False)
            indices = [indices[i] for i in sorted(chosen)]
        worst = (0.0, 0.0, (), 0.0, 0.0, weights)
        passed = True
        for index in indices:
            shifted = []
            for sign in (1.0, -1.0):
                point = dict(base)
                moved = value.astype(np.float64, copy=True)
                moved[index] += sign * eps
                point[name] = moved.astype(value.dtype)
                shifted.append(np.asarray(run_at(point), dtype=np.float64))
            if jacobian:  # this element's column of the Jacobian, element by element: the worst speaks
                analytic, numerical, along = _worst_of_column(grad, index, (shifted[0] - shifted[1]) / (2 * eps),
                                                              atol, rtol)
            else:
                numerical = float(np.sum(weights * (shifted[0] - shifted[1])) / (2 * eps))
                analytic = 0.0 if grad is None else float(grad[index])
                along = weights
            error = abs(analytic - numerical)
            if np.isnan(analytic) != np.isnan(numerical) or error > atol + rtol * abs(numerical):
                passed = False
            if error > worst[0] or (np.isnan(error) and not np.isnan(worst[0])):
                relative = error / abs(numerical) if numerical else (0.0 if error == 0 else float("inf"))
                worst = (error, relative, index, analytic, numerical, along)
        sides, jump = (None, False) if passed else _kink(run_at, base, name, worst[2], worst[5], eps, atol, rtol)
        report.entries.append(CheckEntry(name, len(indices), value.size, worst[0], worst[1], worst[2], worst[3],
                                         worst[4], passed, sides, jump))
    return report


def _worst_of_column(jacobian, index: tuple, numerical, atol: float, rtol: float) -> tuple:
    """(analytical, numerical, one-hot weights of the output element) where the Jacobian's column
    for input element `index` is farthest from the difference quotients (nan counting as farthest)."""
    analytic = np.zeros(numerical.shape) if jacobian is None else jacobian[(Ellipsis,) + index]
    error = np.abs(analytic - numerical)
    error = np.where(np.isnan(analytic) != np.isnan(numerical), np.inf, np.nan_to_num(error, nan=0.0))
    error = error - (atol + rtol * np.abs(np.nan_to_num(numerical)))  # how far past its tolerance
    at = np.unravel_index(int(np.argmax(error)), numerical.shape) if numerical.ndim else ()
    along = np.zeros(numerical.shape)
    along[at] = 1.0
    return float(analytic[at]), float(numerical[at]), along


def _kink(run_at, base: dict, name: str, index: tuple, weights, eps: float, atol: float, rtol: float):
    """((slope from the right, slope from the left), jump) of the output along one input element,
    where they differ by a step that stays the same as eps shrinks (a kink), or grows as 1/eps
    does (a jump: the output is not continuous there); (None, False) where the gap shrinks (a
    curve), grows otherwise (rounding) or is within the tolerance or the rounding of the output."""
    def slopes(step: float) -> tuple:
        values, rounding = [], 0.0
        for sign in (1.0, 0.0, -1.0):
            point = dict(base)
            moved = base[name].astype(np.float64, copy=True)
            moved[index] += sign * step
            point[name] = moved.astype(base[name].dtype)
            output = np.asarray(run_at(point))
            values.append(float(np.sum(weights * output.astype(np.float64))))
            tiny = np.finfo(output.dtype).eps if output.dtype.kind == "f" else np.finfo(np.float64).eps
            rounding += tiny * float(np.sum(np.abs(weights * output.astype(np.float64))))
        right, left = (values[0] - values[1]) / step, (values[1] - values[2]) / step
        floor = max(atol + rtol * max(abs(right), abs(left)), 100 * rounding / step)
        return right, left, abs(right - left), floor

    right, left, gap, floor = slopes(eps)
    if not np.isfinite(gap) or gap <= floor:
        return None, False
    _, _, closer, closer_floor = slopes(eps / 10)
    if closer <= closer_floor:
        return None, False
    if 0.5 * gap <= closer <= 2 * gap:  # a kink's step does not depend on eps
        return (right, left), False
    if 5 * gap <= closer <= 20 * gap:  # a jump's difference quotient is its height / eps
        return (right, left), True
    return None, False


def check(run, *, atol: float = 1e-5, rtol: float = 1e-3) -> CheckReport:
    """Check the gradients of `run` (a program.run.Differentiation, after backward) against finite
    differences; sets `run.check` and, when it fails, warns where the program stops gradients."""
    evaluation, options = run.evaluation, run.options
    quiet = Options(**{**vars(options), "check_finite": False, "keep_tensors": False})
    values = {name: host(t) for name, t in sorted(evaluation.inputs.items())}
    analytical = {name: host(t._grad) for name, t in evaluation.inputs.items() if t.requires_grad}
    total = sum(int(np.size(values[name])) for name in analytical)
    if total > MAX_CHECK_INPUT_ELEMENTS:
        from .errors import UsageProblem

        raise UsageProblem(f"{option('check')} is limited to {MAX_CHECK_INPUT_ELEMENTS:,} input elements (these have {total:,})")
    weights = 1.0 if run.seed is None else host(run.seed).astype(np.float64)
    output_name = evaluation.output_name if evaluation.output_name != "output" else None

    def run_at(point: dict):
        with no_grad():
            return host(evaluate(run.program, evaluation.source, at={**run.at, **point}, wrt=run.wrt,
                                 output=output_name, options=quiet).output)

    low_precision = evaluation.output.dtype.name != "float64"
    eps = 1e-3 if low_precision else 1e-6
    if low_precision:
        atol, rtol = max(atol, 1e-3), max(rtol, 1e-2)
    run.check = check_gradients(run_at, values, analytical, weights, eps=eps, atol=atol, rtol=rtol,
                                jacobian=run.jacobian)
    if not run.check.passed:
        run.warnings.extend(gradient_cuts(run.program, evaluation.source))
        run.warnings.extend(kink_hints(run))
    return run.check


KINKS = {"ReluBackward0": "relu of 0", "AbsBackward0": "abs of 0", "MaximumBackward0": "a tie of maximum",
         "MinimumBackward0": "a tie of minimum"}


def kink_hints(run) -> list:
    """For each input whose check failed at a kink: its two slopes, and the operations of the run
    found at their kink, each by its place in the program."""
    entries = [e for e in run.check.entries if e.sides is not None]
    if not entries:
        return []
    hints = []
    for entry in entries:
        where = f"[{', '.join(map(str, entry.worst))}]" if entry.worst else ""
        right, left = entry.sides
        if entry.jump:
            hints.append(Warning_(
                f"{option('check')}: the output is not continuous in {entry.name}{where} at this point (a jump): its "
                f"difference quotients grow as eps shrinks ({right:.6g} from the right and {left:.6g} from the left "
                f"at eps {run.check.eps:g}), so finite differences measure no derivative there; autograd gives "
                f"{entry.analytical:.6g}"))
            continue
        hints.append(Warning_(
            f"{option('check')}: the output is not differentiable in {entry.name}{where} at this point (a kink): its slope "
            f"is {right:.6g} from the right and {left:.6g} from the left, finite differences take their mean, and "
            f"autograd gives {entry.analytical:.6g}{_which_side(entry, run.check)}"))
    kept = _kept(run)
    for fn, node in kept.origins.items():
        kink = KINKS.get(fn.name())
        if kink is not None and _at_kink(fn, _operands(fn, kept.tensors)):
            hints.append(Warning_(f"{option('check')}: {kink} here", kept.source, node.start, node.end))
    return hints


def _which_side(entry, report) -> str:
    """`, the slope from the left`, where autograd's gradient is one side's (as PyTorch's is at relu's 0)."""
    right, left = entry.sides
    for side, slope in (("right", right), ("left", left)):
        if abs(entry.analytical - slope) <= report.atol + report.rtol * abs(slope):
            return f", the slope from the {side} (as PyTorch chooses at a kink)"
    return ""


def _kept(run):
    """The run's evaluation with every recorded tensor kept (run again where it was not)."""
    evaluation = run.evaluation
    if evaluation.tensors or not evaluation.origins:
        return evaluation
    options = Options(**{**vars(run.options), "check_finite": False, "keep_tensors": True})
    output = evaluation.output_name if evaluation.output_name != "output" else None
    return evaluate(run.program, evaluation.source, at=run.at, wrt=run.wrt, output=output, options=options)


def _operands(fn, tensors: dict) -> list:
    """The values a recorded node was applied to, where they are known (None where not)."""
    found = []
    for parent, _ in fn.next_functions:
        tensor = getattr(parent, "variable", None) if parent is not None else None
        tensor = tensors.get(parent) if tensor is None and parent is not None else tensor
        found.append(None if tensor is None else host(tensor.detach()))
    return found


def _at_kink(fn, operands: list) -> bool:
    known = [value for value in operands if value is not None]
    if fn.name() in ("ReluBackward0", "AbsBackward0"):
        return bool(known) and bool(np.any(known[0] == 0))
    return len(known) == 2 and bool(np.any(np.equal(*np.broadcast_arrays(*known))))


def gradient_cuts(program, source) -> list:
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
        found.append(Warning_(f"{option('check')}: the program stops gradients here ({what}); finite differences see "
                              "through it, so they differ from autograd's gradient by design", source,
                              node.start, node.end if isinstance(node, ast.Call) else None))
    return found[:1] + ([Warning_(f"{option('check')}: and in {len(found) - 1} more place(s)")] if len(found) > 1 else [])

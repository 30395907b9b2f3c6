"""Every gradient of a run against central finite differences of the program itself (`--check`).

The program is run again with each input element x moved by +h and -h (without recording);
(f(x + h) - f(x - h)) / (the distance between the two points as the dtype holds them), weighted
by the output gradient, is the numerical gradient (each output element's, for a Jacobian of
forward mode). It passes where |analytical - numerical| <= atol + rtol * |numerical|.

The step h follows each element's magnitude (`steps`): eps * |x| where |x| < 1, so a value of
1e-9 moves by 1e-15 and Planck's law at a wavelength of 5e-7 is not stepped past zero; eps where
|x| >= 1, so sin at 1e8 is not stepped across its period; never less than what x's rounding
resolves (2**12 units in its last place: 1e12 moves by about 0.9, where 1e-6 would be lost);
and never so little that the output's rounding over the step is more than a sixteenth of the
tolerance (a value of 1e-12 in a sum of 30). Where the step is near the value's own scale
(raised to its rounding, or a large part of its magnitude) the check says so in a note.

Where an element fails, its slopes from the right and from the left are measured too, at h
and at h / 10: a curve's two slopes come together as the step shrinks, rounding drives them
apart, a kink's stay the same step apart. Only then does the check say the program is not
differentiable there (`CheckEntry.sides`), and it names the operations of the run that sit at
their kink (relu or abs of 0, a tie of maximum).
"""

from __future__ import annotations

from dataclasses import field

import numpy as np

from .._record import record
from .. import no_grad
from ..language import Options, Warning_, evaluate
from ..language.errors import Note
from ..language.option_names import option
from .values import host

MAX_CHECKED_ELEMENTS = 2_000  # per input; beyond it a seeded sample of elements is checked
MAX_CHECK_INPUT_ELEMENTS = 100_000  # input elements in all: more is a usage error (as --order 2's limit)
# The least step, in units in the last place of the value it moves, by the value's bits: 2**12 of
# float64's leave a difference quotient about 2**-12 of rounding, well within --check's rtol of
# 1e-3; float32's tolerance is 1e-2, and 2**8 of its units keep within it.
ROUNDING_UNITS = {8: 2.0 ** 12, 4: 2.0 ** 8, 2: 2.0 ** 4}
LARGE_PART = 1e-2  # a step this part of its value's magnitude or more is noted


@record
class CheckEntry:
    """One input's finite-difference check: how many elements were compared, the largest errors, and where."""

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
    jump: bool = False  # the sides' gap grows as the step shrinks: the output itself jumps there
    step: float = 0.0  # the step h at the worst element


@record
class CheckReport:
    """Every input's gradient against central finite differences, with the step and tolerances used."""

    eps: float  # the step relative to each element (see steps())
    atol: float
    rtol: float
    entries: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # where a step is near its value's scale

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
    output = np.asarray(run_at(base))
    tiny = np.finfo(output.dtype).eps if output.dtype.kind == "f" else np.finfo(np.float64).eps
    output = np.nan_to_num(output.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    # how much the quantity differenced weighs: its rounding over 2h is the quotient's
    scale = float(np.max(np.abs(output), initial=0.0)) if jacobian else float(np.sum(np.abs(weights * output)))
    for name, value in base.items():
        if name not in analytical:
            continue  # the input does not require grad
        grad = None if analytical[name] is None else np.asarray(analytical[name], dtype=np.float64)
        indices = list(np.ndindex(value.shape))
        if len(indices) > MAX_CHECKED_ELEMENTS:
            chosen = rng.choice(len(indices), MAX_CHECKED_ELEMENTS, replace=False)
            indices = [indices[i] for i in sorted(chosen)]
        slope = np.zeros(value.shape) if grad is None else np.abs(np.nan_to_num(grad, nan=0.0, posinf=0.0, neginf=0.0))
        if jacobian and grad is not None:  # each input element's largest entry of its Jacobian column
            slope = slope.reshape((-1,) + value.shape).max(axis=0, initial=0.0) if slope.size else slope
        step, floors = steps(value, eps, output_rounding=tiny * scale, slope=slope, atol=atol, rtol=rtol)
        worst = (0.0, 0.0, (), 0.0, 0.0, weights)
        passed = True
        for index in indices:
            shifted, ends = [], []
            for sign in (1.0, -1.0):
                point = dict(base)
                moved = value.astype(np.float64, copy=True)
                moved[index] += sign * step[index]
                point[name] = moved.astype(value.dtype)
                ends.append(float(point[name][index]))
                shifted.append(np.asarray(run_at(point), dtype=np.float64))
            width = ends[0] - ends[1]  # 2h, as the dtype holds the two points
            if jacobian:  # this element's column of the Jacobian, element by element: the worst speaks
                analytic, numerical, along = _worst_of_column(grad, index, (shifted[0] - shifted[1]) / width,
                                                              atol, rtol)
            else:
                numerical = float(np.sum(weights * (shifted[0] - shifted[1])) / width)
                analytic = 0.0 if grad is None else float(grad[index])
                along = weights
            error = abs(analytic - numerical)
            if np.isnan(analytic) != np.isnan(numerical) or error > atol + rtol * abs(numerical):
                passed = False
            if error > worst[0] or (np.isnan(error) and not np.isnan(worst[0])) or index is indices[0]:
                relative = error / abs(numerical) if numerical else (0.0 if error == 0 else float("inf"))
                worst = (error, relative, index, analytic, numerical, along)
        at = worst[2]
        sides, jump = (None, False) if passed else _kink(run_at, base, name, at, worst[5], float(step[at]), atol,
                                                         rtol)
        report.entries.append(CheckEntry(name, len(indices), value.size, worst[0], worst[1], at, worst[3],
                                         worst[4], passed, sides, jump, float(step[at])))
        report.notes.extend(_step_notes(name, value, step, floors, eps, indices, scale))
    return report


def steps(value, eps: float, *, output_rounding: float = 0.0, slope=0.0, atol: float = 1e-5, rtol: float = 1e-3):
    """(each element's step h, what raised it): float64 arrays in the shape of `value`.

    h is eps * |x| where 0 < |x| < 1, eps where |x| >= 1 or x is 0, raised to ROUNDING_UNITS
    units in the last place of x where eps is finer than that ("value": the value alone raises
    it), and to where the rounding of the output (`output_rounding`, its magnitude times its
    dtype's epsilon) over the step stays a sixteenth of the tolerance of a gradient of size
    `slope` ("output")."""
    magnitude = np.abs(np.asarray(value, dtype=np.float64))
    asked = eps * np.where((magnitude > 0) & (magnitude < 1), magnitude, 1.0)
    by_value = _least_for_rounding(value)
    with np.errstate(divide="ignore", invalid="ignore"):  # no tolerance at all: no floor of the output's
        by_output = 16 * output_rounding / (atol + rtol * np.broadcast_to(slope, magnitude.shape))
    by_output = np.where(np.isfinite(by_output), by_output, 0.0)
    step = np.maximum(asked, np.maximum(by_value, by_output))
    raised = np.where(by_value > asked, "value", np.where(by_output > asked, "output", ""))
    return np.where(step > 0, step, eps), raised  # the least positive numbers: eps, not a step of 0


def _least_for_rounding(value):
    """ROUNDING_UNITS units in the last place of each element (by its dtype), as float64."""
    magnitude = np.abs(np.asarray(value, dtype=np.float64))
    dtype = value.dtype if value.dtype.kind == "f" else np.dtype(np.float64)
    units = ROUNDING_UNITS.get(dtype.itemsize, ROUNDING_UNITS[8])
    return units * np.finfo(dtype).eps * np.where(np.isfinite(magnitude), magnitude, 0.0)


def _step_notes(name: str, value, step, raised, eps: float, indices: list, scale: float) -> list:
    """Where the step is near the value's scale: raised above eps to the value's rounding (a large
    value), raised to the output's rounding up to a large part of the value's magnitude (a value
    small beside the output), or a large part of its magnitude (a large eps); each said once per
    input, for the largest such element."""
    values = np.asarray(value, dtype=np.float64)
    magnitude = np.abs(values)
    least = _least_for_rounding(value)
    relative = np.where(magnitude > 0, step / np.where(magnitude > 0, magnitude, 1.0), np.inf)
    notes = []
    for kind, where in (("value", raised == "value"), ("output", (raised == "output") & (relative >= LARGE_PART)),
                        ("magnitude", (raised == "") & (relative >= LARGE_PART) & (magnitude > 0))):
        chosen = [index for index in indices if where[index]]
        if not chosen:
            continue
        index = max(chosen, key=lambda i: magnitude[i])
        place = f"{name}[{', '.join(map(str, index))}]" if index else name
        head = f"{option('check')}: {place} = {values[index]:.6g}" + \
            (f" (and {len(chosen) - 1:,} more)" if len(chosen) > 1 else "") + f" moves by {step[index]:.3g}"
        asked = eps * (magnitude[index] if 0 < magnitude[index] < 1 else 1.0)
        too = f" and the output's ({scale:.3g})" if step[index] > least[index] * (1 + 1e-9) else ""
        cannot = f"a function that turns within {step[index]:.3g} of it cannot be checked there by finite differences"
        if kind == "value":
            notes.append(f"{head}, not by {asked:.3g}, which is too fine for its rounding{too}: {cannot}")
        elif kind == "output":
            notes.append(f"{head}, not by {asked:.3g}, whose difference would drown in the rounding of the output "
                         f"({scale:.3g}): {cannot}")
        else:
            notes.append(f"{head}, {relative[index]:.0%} of its magnitude: finite differences measure a secant there, "
                         f"not the slope; a smaller {option('eps')} measures the slope")
    return notes


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
    where they differ by a step that stays the same as the step `eps` shrinks (a kink), or grows
    as 1/eps does (a jump: the output is not continuous there); (None, False) where the gap
    shrinks (a curve), grows otherwise (rounding) or is within the tolerance or the rounding of
    the output."""
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


def check(run, *, atol: float = 1e-5, rtol: float = 1e-3, eps: float | None = None) -> CheckReport:
    """Check the gradients of `run` (a program.run.Differentiation, after backward) against finite
    differences with steps relative to `eps` (steps(); None: 1e-6, 1e-3 below float64); sets
    `run.check`, adds its notes to the run's warnings and, when it fails, warns where the program
    stops gradients."""
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
    if eps is None:
        eps = 1e-3 if low_precision else 1e-6
    elif not 0 < eps < 1:
        from .errors import UsageProblem

        raise UsageProblem(f"{option('eps')} {eps:g}: the step relative to each value must be above 0 and below 1")
    if low_precision:
        atol, rtol = max(atol, 1e-3), max(rtol, 1e-2)
    run.check = check_gradients(run_at, values, analytical, weights, eps=eps, atol=atol, rtol=rtol,
                                jacobian=run.jacobian)
    run.warnings.extend(Note(note) for note in run.check.notes)
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
                f"difference quotients grow as the step shrinks ({right:.6g} from the right and {left:.6g} from the "
                f"left at a step of {entry.step:.3g}), so finite differences measure no derivative there; autograd gives "
                f"{entry.analytical:.6g}"))
            continue
        hints.append(Warning_(
            f"{option('check')}: the output is not differentiable in {entry.name}{where} at this point (a kink): its slope "
            f"is {right:.6g} from the right and {left:.6g} from the left, finite differences take their mean, and "
            f"autograd gives {entry.analytical:.6g}{_which_side(entry, run.check)}"))
    kept = _kept(run)
    for fn, node in kept.origins.items():
        kink = KINKS.get(type(fn).__name__)
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
    if type(fn).__name__ in ("ReluBackward0", "AbsBackward0"):
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

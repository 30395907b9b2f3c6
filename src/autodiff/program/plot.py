"""`autodiff plot`: a program's output and its derivative along one input, over a range.

    plot = sample("y = x ** 3", "x", -3, 3, points=201)
    plot.xs, plot.values, plot.grads        # host arrays: x, x³ and 3x² at 201 points

The other inputs stay at their given values (`at`). The range is one column of points run
through the program as one vectorised run (program.sweep.Sweep): one evaluation and one
backward pass for all the points, not a loop over them. A point where the program fails is
left out of the picture (nan) and named in `errors`; points where the output or its derivative
is nan or infinite are counted in `not_finite`, and the first of them run alone says where
(`not_finite_warnings`, as `autodiff grad` warns at one point).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..language import Source
from ..language.analysis import analyze
from ..language.builtins import suggestion
from ..language.option_names import given, input_values, option
from .errors import GradientProblem, UsageProblem
from .sweep import Sweep
from .values import for_json, host, to_python

MAX_POINTS = 100_000
# A curve gets axes of its own where the two curves' range together is more than this many
# times its own: on shared axes it would be drawn in a tenth of the height or less.
SEPARATE_SCALES = 10


def _span(series: np.ndarray) -> float:
    finite = series[np.isfinite(series)]
    return float(finite.max() - finite.min()) if finite.size else 0.0


@dataclass
class Plot:
    """The output and its derivative sampled along one input, the others held fixed."""

    source: str
    output: str
    wrt: str
    low: float
    high: float
    xs: np.ndarray
    values: np.ndarray
    grads: np.ndarray
    at: dict = field(default_factory=dict)  # the other inputs' values, host arrays
    errors: dict = field(default_factory=dict)  # point index -> message
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)  # the language's warnings (an unused --at value)
    not_finite: int = 0  # points (that ran) where the output or its derivative is nan or infinite
    first_not_finite: int | None = None  # the first of them
    not_finite_warnings: list = field(default_factory=list)  # what that point says, run alone

    def y_range(self, *series) -> tuple:
        """The range of `series` (default: the values and the derivatives), with a little room (a
        flat line gets some)."""
        finite = np.concatenate(series or [self.values, self.grads])
        finite = finite[np.isfinite(finite)]
        if finite.size == 0:
            return (-1.0, 1.0)
        low, high = float(finite.min()), float(finite.max())
        room = (high - low) * 0.05 or max(abs(low), 1.0) * 0.5
        return (low - room, high + room)

    def panels(self) -> list:
        """What to draw on which axes: [(which, y range)], `which` a tuple of "value" and "grad".
        One pair of axes for both curves; one each, the output's above, where their scales differ
        so much that one would be a flat line on the other's axes (Planck's law: 10¹³ and 10¹⁹),
        as matplotlib users draw them."""
        spans = [_span(self.values), _span(self.grads)]
        both = _span(np.concatenate([self.values, self.grads]))
        if min(spans) > 0 and both > SEPARATE_SCALES * min(spans):
            return [(("value",), self.y_range(self.values)), (("grad",), self.y_range(self.grads))]
        return [(("value", "grad"), self.y_range())]

    def at_text(self) -> dict:
        return {name: to_python(value) for name, value in self.at.items()}

    def to_dict(self) -> dict:
        return {
            "source": self.source, "output": self.output, "wrt": self.wrt, "range": [self.low, self.high],
            "at": for_json(self.at_text()) if self.at else {},
            "points": [{self.wrt: for_json(float(x)), "value": for_json(float(v)), "grad": for_json(float(g))}
                       for x, v, g in zip(self.xs, self.values, self.grads)],
            "errors": {str(k): v for k, v in sorted(self.errors.items())},
        }

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython, where the picture is not shown
        printer.text(f"<a plot of {self.output} and ∂{self.output}/∂{self.wrt} at {len(self.xs)} points, "
                     f"{self.wrt} from {self.low:g} to {self.high:g}>")

    def _repr_svg_(self) -> str:  # Jupyter
        from .svg import plot_svg

        return plot_svg(self)


def parse_range(text: str) -> tuple:
    """`-3:3` as (-3.0, 3.0)."""
    low, colon, high = text.partition(":")
    try:
        if not colon:
            raise ValueError
        low, high = float(low), float(high)
    except ValueError:
        raise UsageProblem(f"{option('range')} {text}: expected LOW:HIGH, e.g. -3:3") from None
    if not (np.isfinite(low) and np.isfinite(high)) or not low < high:
        raise UsageProblem(f"{option('range')} {text}: expected two finite numbers, the first below the second")
    return low, high


def sample(source: Source | str, wrt: str, low: float, high: float, *, points: int = 201, at: dict | None = None,
           output: str | None = None, options=None) -> Plot:
    """The output of `source` and its derivative with respect to `wrt` at `points` evenly spaced
    values of `wrt` from `low` to `high`, the other inputs at `at`."""
    if isinstance(source, str):
        source = Source(source, "<expr>")
    if not 2 <= points <= MAX_POINTS:
        raise UsageProblem(f"{given('points', points)}: expected 2 to {MAX_POINTS:,} points")
    at = dict(at or {})
    sweep_args = {} if options is None else {"options": options}
    sweep = Sweep(source, wrt=[wrt], output=output, fixed=at, **sweep_args)
    analysis = analyze(sweep.program, source)
    if wrt not in analysis.inputs:
        raise UsageProblem(f"{given('wrt', wrt)}: the program has no input {wrt!r}{suggestion(wrt, sorted(analysis.inputs))}")
    if wrt in at:
        raise UsageProblem(f"{given('wrt', wrt)} is the input the plot varies: give its range, not a value in {option('at')}")
    defaults = {n for n, node in analysis.declared.items() if node.value is not None}
    missing = [n for n in analysis.inputs if n != wrt and n not in at and n not in defaults]
    if missing:
        raise UsageProblem(f"give the other inputs' values: {input_values(missing)}")
    xs = np.linspace(low, high, points)
    results = sweep.run({wrt: xs}, points)
    values = np.full(points, np.nan)
    grads = np.full(points, np.nan)
    name = output
    notes = list(sweep.notes)
    for group in results.groups:
        name = group.output
        if group.values.ndim != 1:
            raise GradientProblem(f"the output {name} has shape {list(group.values.shape[1:])} at each point: "
                                  "a plot needs a number, as sum(...)")
        values[group.indices] = group.values
        grad = group.grads.get(wrt)
        if grad is None:
            grads[group.indices] = 0.0
            note = f"{name} does not depend on {wrt} through anything that records: its derivative is 0"
            if note not in notes:
                notes.append(note)
        else:
            grads[group.indices] = grad
    if not results.groups and results.errors:
        first = results.errors[min(results.errors)]
        if len(set(results.errors.values())) == 1:
            raise GradientProblem(first)
    ran = np.ones(points, dtype=bool)
    ran[list(results.errors)] = False
    first = sweep.first_not_finite(results)
    return Plot(source.name, name or "output", wrt, float(low), float(high), xs, values, grads,
                {n: host(v) if hasattr(v, "detach") else np.asarray(v) for n, v in at.items()}, dict(results.errors),
                notes, list(sweep.warnings), int(np.count_nonzero(ran & ~(np.isfinite(values) & np.isfinite(grads)))),
                first, [] if first is None else sweep.alone({wrt: xs}, first))

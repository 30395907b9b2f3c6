"""`derive --check`: the derived program run against the engine at the --at point (or at random
points), every derivative compared."""

from __future__ import annotations

import numpy as np

from .. import Tensor
from ..language import Options, Source, evaluate, parse
from .._record import record
from .derived import Derivation
from .derived_text import expr_program
from .run import _source_and_program


CHECK_RTOL, CHECK_ATOL = 1e-7, 1e-9
RANDOM_POINTS = 3


@record
class DeriveCheck:
    """derive's formulas run against the engine's gradients at a few points."""

    points: int
    mismatches: list  # (point number, derivative name, engine value, derived value)

    @property
    def passed(self) -> bool:
        return not self.mismatches

    def for_json(self) -> dict:
        from .values import for_json as plain

        return {"passed": self.passed, "points": self.points,
                "mismatches": [{"point": p, "name": n, "engine": plain(a), "derived": plain(b)}
                               for p, n, a, b in self.mismatches]}


def check(d: Derivation, source: Source | str, at: dict | None, *, output=None, options=None, seed: int = 0) -> DeriveCheck:
    """Run the derived program and the engine's backward at the --at point (or at random
    points in [0.5, 1.5] when none is given); every derivative must agree."""
    from .run import differentiate

    source, program = _source_and_program(source, None)
    points = [dict(at)] if at else []
    if not points:
        rng = np.random.default_rng(seed)
        for _ in range(RANDOM_POINTS):
            points.append({n: rng.uniform(0.5, 1.5, size=s).tolist() if s else float(rng.uniform(0.5, 1.5))
                           for n, s in d.inputs.items() if n not in d.declared})
    derived_program = parse(Source(expr_program(d), "<derived>"))
    wrt = sorted({w for x in d.derivatives for w in x.wrt})
    mismatches = []
    for number, point in enumerate(points, 1):
        run = differentiate(source, point, program=program, wrt=wrt, output=output, order=d.order,
                            options=Options() if options is None else options,
                            **({"mode": "forward"} if d.jacobian else {}))
        engine = {q.name: q.grad for q in run.inputs}
        used = {n: v for n, v in point.items() if n in d.inputs}
        values = evaluate(derived_program, Source(expr_program(d), "<derived>"), at=used).variables
        for x in d.derivatives:
            got = np.asarray(_host_value(values.get(x.name, None)), dtype=float)
            want = engine.get(x.wrt[0]) if len(x.wrt) == 1 else run.hessian.get(x.wrt) if run.hessian else None
            want = np.zeros(x.shape) if want is None else np.asarray(want, dtype=float)
            if got.shape != want.shape and got.size == want.size:
                got = got.reshape(want.shape)
            if got.shape != want.shape or not np.allclose(got, want, rtol=CHECK_RTOL, atol=CHECK_ATOL, equal_nan=True):
                mismatches.append((number, x.name, want, got))
    return DeriveCheck(len(points), mismatches)


def _host_value(value):
    if isinstance(value, Tensor):
        return value.detach().numpy(force=True)
    return value

"""One expression file at its points, compared with (or written to) its golden record.

The points of a file are the point of its own declared defaults (when every input has one),
the points its record lists, and, with --update, points given with --at. At each point the
file is run, its output differentiated, and the output's name and value and every gradient
kept; a point that fails keeps its error's class and message instead, so files that are
meant to fail (a non-scalar output, a shape error) pass when they fail that way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..language import InputProblem, LimitProblem, Options, ProgramError, Source, parse
from ..language.analysis import analyze
from ..language.files import read_file
from ..program import GradientProblem, NotATensor, differentiate, to_python
from .files import WriteProblem
from .compare import DEFAULT_ATOL, DEFAULT_RTOL, Mismatch, compare_point
from .records import (FORMAT, RECORD_SUFFIX, RecordProblem, as_floats, from_record, load, point_key, to_record,
                      write)

PASSED, FAILED, ERRORED, NEW, UPDATED = "passed", "failed", "errored", "new", "updated"


@dataclass
class Settings:
    """How files are run and compared; sent once to each worker process."""

    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    update: bool = False
    extra_points: list = field(default_factory=list)  # with update: {name: value} points from --at
    options: Options = field(default_factory=Options)  # how programs run: dtype, device, seed, limits


@dataclass
class FileResult:
    path: str
    status: str  # passed, failed, errored, new (no record yet), updated (record written)
    message: str = ""
    mismatches: list = field(default_factory=list)  # compare.Mismatch
    points: int = 0  # points evaluated
    seconds: float = 0.0


def run_file(path, settings: Settings) -> FileResult:
    """Evaluate one file at its points and compare (or record). Never raises for a bad file."""
    started = time.perf_counter()
    try:
        result = _run(Path(path), settings)
    except NotAResult as stopped:
        result = FileResult(str(path), ERRORED, str(stopped))
    except RecursionError:
        result = FileResult(str(path), ERRORED, "nested too deeply to run")
    except MemoryError:
        result = FileResult(str(path), ERRORED, "out of memory (--max-elements refuses large tensors before "
                                                "allocating them)")
    except Exception as error:  # a bug: it costs this file, never the run
        result = FileResult(str(path), ERRORED, f"internal error: {type(error).__name__}: {error}")
    result.seconds = time.perf_counter() - started
    return result


class NotAResult(Exception):
    """A point stopped by the run, not by the program's meaning (a limit, no memory): the file is
    errored, and such an outcome is never recorded as what the file is expected to do."""


def _run(path: Path, settings: Settings) -> FileResult:
    name = str(path)
    try:
        source = read_file(path)
    except InputProblem as problem:
        return FileResult(name, ERRORED, problem.message)
    try:
        record = load(path)
    except RecordProblem as exc:
        return FileResult(name, ERRORED, str(exc))
    program, inputs, needs_values = _prepare(source)
    points = []  # the input values of each point, in order, each once
    if not needs_values:
        points.append({})
    for point in (record or {}).get("points", []):
        points.append(point.get("at", {}))
    if settings.update:  # --at points, for the files whose inputs they name
        points.extend(at for at in settings.extra_points if set(at) <= set(inputs))
    unique: dict = {}
    for at in points:  # each point once, where it first appears
        unique.setdefault(point_key(at), at)
    points = list(unique.values())
    options = replace(settings.options, check_finite=False)  # records keep no warnings
    outcomes = [(at, evaluate_point(program, source, at, options)) for at in points]
    if settings.update:
        return _record(path, outcomes, needs_values)
    if record is None:
        return FileResult(name, NEW, "no golden record: run autodiff test --update to write one", points=len(points))
    if not points:
        return FileResult(name, ERRORED, f"nothing to test: the file needs values for {', '.join(needs_values)} "
                                         "and its record lists no points", points=0)
    recorded = {point_key(p.get("at", {})): p for p in record.get("points", [])}
    mismatches = []
    for at, got in outcomes:
        expected = recorded.get(point_key(at))
        if expected is None or not ({"value", "error"} & set(expected)):
            mismatches.append(Mismatch(at, "point", "(no recorded result)", _summary(got),
                                       "not recorded yet: run autodiff test --update"))
            continue
        mismatches.extend(compare_point(at, expected, got, settings.rtol, settings.atol))
    status = FAILED if mismatches else PASSED
    return FileResult(name, status, mismatches=mismatches, points=len(points))


def _prepare(source: Source):
    """The parsed program (or the error parsing it raised), its inputs, and those lacking a default."""
    try:
        program = parse(source)
        analysis = analyze(program, source)
    except ProgramError as problem:
        return problem, [], []  # every point fails the same way: record that once, at the defaults
    declared = analysis.declared
    needs = [n for n in analysis.inputs if not (n in declared and declared[n].value is not None)]
    return program, analysis.inputs, needs


def evaluate_point(program, source: Source, at: dict, options: Options) -> dict:
    """The results of the program at one point, as a record holds them."""
    if isinstance(program, LimitProblem):
        raise NotAResult(program.render().splitlines()[0])
    if isinstance(program, ProgramError):
        return _error(type(program).__name__, program.message)
    try:
        run = differentiate(source, {k: from_record(v) for k, v in at.items()}, program=program, options=options)
    except LimitProblem as problem:  # --max-elements, --max-iterations, out of memory: not the program's result
        raise NotAResult(f"at {_at_text(at)}: {problem.render().splitlines()[0]}") from None
    except MemoryError:
        raise NotAResult(f"at {_at_text(at)}: out of memory (--max-elements refuses large tensors before "
                         "allocating them)") from None
    except RecursionError:
        raise NotAResult(f"at {_at_text(at)}: nested too deeply to run") from None
    except ProgramError as problem:
        return _error(type(problem).__name__, problem.message)
    except NotATensor as problem:
        return _error("TypeError", f"the output is {problem.type_name}, not a tensor")
    except (GradientProblem, RuntimeError) as problem:  # the engine's own errors, with PyTorch's texts
        return _error("RuntimeError", str(problem).splitlines()[0] if str(problem) else "")
    grads = {q.name: None if q.grad is None else _plain(q.grad) for q in run.inputs if q.requires_grad}
    return {"output": run.output.name, "value": _plain(run.output.value), "grads": grads}


def _at_text(at: dict) -> str:
    from .reporting import point_text

    return point_text(at)


def _error(kind: str, message: str) -> dict:
    return {"error": {"class": kind, "message": message}}


def _plain(value):
    return to_record(to_python(value))


def _summary(outcome: dict) -> str:
    if "error" in outcome:
        return f"{outcome['error']['class']}: {outcome['error']['message']}"
    return f"{outcome.get('output')} = {outcome.get('value')}"


def _record(path: Path, outcomes: list, needs_values: list) -> FileResult:
    if not outcomes:
        return FileResult(str(path), ERRORED, f"no points to record: the file needs values for "
                                              f"{', '.join(needs_values)}; give them with --at, or list points in "
                                              f"its record ({path.name}{RECORD_SUFFIX})")
    record = {"format": FORMAT, "points": [{"at": to_record(as_floats(at)), **outcome} for at, outcome in outcomes]}
    try:
        written = write(path, record)
    except WriteProblem as problem:
        return FileResult(str(path), ERRORED, str(problem), points=len(outcomes))
    message = f"recorded {len(outcomes)} point(s)" if written else "record unchanged"
    return FileResult(str(path), UPDATED if written else PASSED, message, points=len(outcomes))

"""One expression file at its points, compared with (or written to) its golden record.

The points of a file are the point of its own declared defaults (when every input has one),
the points its record lists, and, with --update, points given with --at. At each point the
file is run, its output differentiated, and the output's name and value and every gradient
kept.

Errors are expected only explicitly. A file meant to fail says so in a comment:

    # expect-error: RuntimeError: grad can be implicitly created only for scalar outputs

(the error's class, as PyTorch names it for the same failure, then, optionally, a fragment of
its message). Every point of such a file
must fail that way; any other error, at any point, makes the file *errored*, with --update
too (nothing is recorded). A program that does not parse, names an unknown function or
variable, or calls one with the wrong arguments is never expected: it is an error in the
test, not a behaviour to keep.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import field, replace

from .._record import record
from .._text import short_words, shown
from ..language import ErrorKind, InputProblem, LimitProblem, Options, ProgramError, Source, parse
from ..language._gc import collector_paused
from ..language.analysis import analyze
from ..language.files import read_file
from ..program import GradientProblem, NotATensor, differentiate, to_python
from .files import WriteProblem, locked, path_text
from .compare import DEFAULT_ATOL, DEFAULT_RTOL, Mismatch, compare_point
from .records import (FORMAT, RECORD_SUFFIX, RecordProblem, as_floats, from_record, load, pending_path, point_key,
                      record_path, to_record, write)

PASSED, FAILED, ERRORED, NEW, UPDATED, PENDING = "passed", "failed", "errored", "new", "updated", "pending"

EXPECT_ERROR = re.compile(r"^[ \t]*#[ \t]*expect-error[ \t]*:[ \t]*(?P<cls>[A-Za-z_][\w.]*)[ \t]*(?::[ \t]*(?P<msg>.*?))?[ \t]*$",
                          re.MULTILINE)
RESULT_KEYS = ("output", "value", "grads", "error")  # what evaluating a point gives; the rest is hand-written


@record
class Settings:
    """How files are run and compared; sent once to each worker process."""

    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    update: bool = False
    extra_points: list = field(default_factory=list)  # with update: {name: value} points from --at
    options: Options = field(default_factory=Options)  # how programs run: dtype, device, seed, limits
    pending: bool = False  # with update: write NAME.golden.new beside the record instead of the record
    ci: bool = False  # in CI: a file without a record is never recorded
    explicit: dict = field(default_factory=dict)  # settings given on the command line: {"seed": 1}
    update_hint: str = "autodiff test --update"  # how the user asks for records (pytest: pytest --autodiff-update)
    _run_options: dict = field(default_factory=dict, repr=False, compare=False)  # run_options(), made once each

    def run_options(self, chosen: dict) -> Options:
        """The options files run with: these, with a record's dtype and seed (`chosen`), and
        without warnings (records keep none). One object per choice; nothing changes it."""
        key = tuple(sorted(chosen.items()))
        options = self._run_options.get(key)
        if options is None:
            options = self._run_options[key] = replace(self.options, check_finite=False, **chosen)
        return options


@record
class FileResult:
    """What running one file against its record came to: its status, the message, what differed."""

    path: str
    status: str  # passed, failed, errored, new (no record yet), updated (record written), pending
    message: str = ""
    mismatches: list = field(default_factory=list)  # compare.Mismatch
    points: int = 0  # points evaluated
    seconds: float = 0.0
    changes: list = field(default_factory=list)  # with --update: compare.Mismatch, old -> new
    added: list = field(default_factory=list)  # with --update: points new to the record
    dropped: list = field(default_factory=list)  # with --update: points the record loses
    unused: list = field(default_factory=list)  # (point, reason): recorded points that no longer apply
    excerpt: str = ""  # an error's line in the file, and a caret under the place (its message says file:line:col)
    created: bool = False  # with --update: the record was written and did not exist before

    def __post_init__(self) -> None:
        self.message = short_words(self.message)  # a name of a megabyte is cut in every message, once, here


def run_file(path, settings: Settings) -> FileResult:
    """Evaluate one file at its points and compare (or record). Never raises for a bad file."""
    started = time.perf_counter()
    try:
        with collector_paused():  # as parsing and running are: a file makes no cycles worth a collection
            result = _run(path_text(path), settings)
    except NotAResult as stopped:
        result = FileResult(str(path), ERRORED, str(stopped))
    except RecursionError:
        result = FileResult(str(path), ERRORED, "nested too deeply to run")
    except MemoryError:
        result = FileResult(str(path), ERRORED, "out of memory (--max-elements refuses large tensors before "
                                                "allocating them)")
    except Exception as error:  # a bug: it costs this file, never the run
        result = FileResult(str(path), ERRORED, f"internal error: {type(error).__name__}: {error}")
    if not settings.update and result.status in (FAILED, ERRORED, NEW):
        _mention_pending(result, path_text(path))
    result.seconds = time.perf_counter() - started
    return result


def _mention_pending(result: FileResult, path: str) -> None:
    """A file that does not pass while a new record of it waits for review says so: accepting
    that record may be the fix."""
    pending = pending_path(path)
    if os.path.isfile(pending):
        note = (f"a pending record waits for review: {os.path.basename(pending)} (autodiff test review, accept "
                "or reject)")
        result.message = f"{result.message}; {note}" if result.message else note


class NotAResult(Exception):
    """A point stopped by the run, not by the program's meaning (a limit, no memory): the file is
    errored, and such an outcome is never recorded as what the file is expected to do."""


def expected_errors(text: str) -> list:
    """The (class, message fragment) pairs a file's `# expect-error:` comments allow."""
    return [(m.group("cls"), m.group("msg") or "") for m in EXPECT_ERROR.finditer(text)]


def _is_expected(error: dict, expectations: list) -> bool:
    return any(error["class"] == cls and fragment in error["message"] for cls, fragment in expectations)


def _run(path: str, settings: Settings) -> FileResult:
    if not settings.update:
        return _run_file(path, settings)
    with locked(path):  # from reading the record to writing it: another run's points are never lost
        return _run_file(path, settings)


def _run_file(path: str, settings: Settings) -> FileResult:
    name = path
    try:
        source = read_file(path)
    except InputProblem as problem:
        return FileResult(name, ERRORED, problem.message)
    try:
        record = load(path)
    except RecordProblem as exc:
        return FileResult(name, ERRORED, str(exc))
    expectations = expected_errors(source.text)
    program, analysis, inputs, needs_values = _prepare(source)
    recorded_settings = dict((record or {}).get("settings", {}))
    chosen = {"dtype": settings.options.dtype, "seed": settings.options.seed}
    if settings.update:  # a value given on the command line applies, and is recorded
        chosen.update({k: v for k, v in recorded_settings.items() if k not in settings.explicit})
    else:  # the record's settings win
        chosen.update(recorded_settings)
    options = settings.run_options(chosen)

    points = []  # the input values of each point, in order, each once
    if not needs_values:
        points.append({})
    unused = []
    for point in (record or {}).get("points", []):
        at = point.get("at", {})
        strangers = sorted(set(at) - set(inputs))
        if strangers and not isinstance(program, ProgramError):
            unused.append((at, f"{', '.join(strangers)} {'is not an input' if len(strangers) == 1 else 'are not inputs'}"
                               " of the program"))
            continue
        points.append(at)
    if settings.update:  # --at points, for the files whose inputs they name
        points.extend(at for at in settings.extra_points if set(at) <= set(inputs))
    unique: dict = {}
    for at in points:  # each point once, where it first appears
        unique.setdefault(point_key(at), at)
    points = list(unique.values())
    outcomes = [(at, evaluate_point(program, source, at, options, analysis)) for at in points]

    problem = _unexpected(outcomes, expectations)
    if problem:
        status, message, mismatches, excerpt = problem
        return FileResult(name, status, message, mismatches, points=len(points), unused=unused, excerpt=excerpt)
    if settings.update:
        return _record(path, record, outcomes, needs_values, unused, chosen, settings)
    if record is None:
        return FileResult(name, NEW, _new_message(settings), points=len(points))
    if not points:
        return FileResult(name, ERRORED, f"nothing to test: the file needs values for {', '.join(needs_values)} "
                                         "and its record lists no points", points=0, unused=unused)
    recorded = {point_key(p.get("at", {})): p for p in record.get("points", [])}
    mismatches = []
    for at, got in outcomes:
        expected = recorded.get(point_key(at))
        if expected is None or not ({"value", "error"} & set(expected)):
            mismatches.append(Mismatch(at, "point", "(no recorded result)", _summary(got),
                                       f"not recorded yet: run {settings.update_hint}"))
            continue
        if "error" in got and "error" in expected and _same_class(expected["error"], got["error"]):
            continue  # the expect-error comment decides; the record keeps the message for people
        mismatches.extend(compare_point(at, expected, got, settings.rtol, settings.atol, record))
    status = FAILED if mismatches else PASSED
    return FileResult(name, status, mismatches=mismatches, points=len(points), unused=unused)


def _new_message(settings: Settings) -> str:
    if settings.ci:
        return (f"no golden record, and CI is set: records are not written in CI; run {settings.update_hint} "
                "where you work and commit the record")
    return f"no golden record: run {settings.update_hint} to write one"


def _unexpected(outcomes: list, expectations: list):
    """A FileResult's (status, message, mismatches, excerpt) when the outcomes cannot pass
    whatever the record says; None when they may."""
    for at, outcome in outcomes:
        error = outcome.get("error")
        where = "" if not at else f"at {_at_text(at)}: "
        if error is None:
            if expectations:
                cls, fragment = expectations[0]
                wanted = f"{cls}: {fragment}" if fragment else cls
                return (FAILED, "", [Mismatch(at, "error", wanted, "no error", "results instead of the error its "
                                              "expect-error comment expects")], "")
            continue
        text = f"{error['class']}: {error['message']}"
        headline, place, excerpt = _placed(outcome.get("problem"))
        if outcome.get("invalid"):  # said as `autodiff grad` says it: file:line:col: error: ...
            return (ERRORED, f"{where}{headline or text} (an invalid program never passes, even with an "
                             "expect-error comment)", [], excerpt)
        if not _is_expected(error, expectations):
            why = "not expected: a file meant to fail says so with a comment,"
            if any(cls == OLD_CLASS for cls, _ in expectations):
                why = f"not expected: expected errors are named by PyTorch's classes, not {OLD_CLASS}:"
            elif expectations:
                wanted = "; ".join(f"{cls}: {fragment}" if fragment else cls for cls, fragment in expectations)
                why = (f"not the error its expect-error comment expects ({shown(wanted)}): the class must be "
                       "the same and the message must contain the comment's text; to expect this one, write")
            return (ERRORED, f"{where}{place}{text} ({why} # expect-error: {text})", [], excerpt)
    return None


OLD_CLASS = "EvaluationProblem"  # how records and comments named every evaluation error before PyTorch's classes


def _same_class(recorded: dict, got: dict) -> bool:
    """Whether a recorded error is of the class of a new one; a record that still says
    EvaluationProblem holds the same error when the message is the same (--update renames it)."""
    return recorded["class"] == got["class"] or (recorded["class"] == OLD_CLASS and recorded["message"] == got["message"])


def _placed(problem) -> tuple:
    """Where a program error happened, as `autodiff grad` shows it: its first line
    (`file:line:col: error: message`), its `file:line:col: ` alone, and the line of the file
    with a caret under the place ('' for what it lacks)."""
    if problem is None:
        return "", "", ""
    headline, _, excerpt = problem.render().partition("\n")
    if problem.location is None:
        return headline, "", excerpt
    line, column = problem.location
    return headline, f"{shown(problem.source.name)}:{line}:{column}: ", excerpt


def _prepare(source: Source):
    """The parsed program (or the error parsing it raised), its analysis (done once, for every
    point), its inputs, and those lacking a default."""
    try:
        program = parse(source)
        analysis = analyze(program, source)
    except ProgramError as problem:
        return problem, None, [], []  # every point fails the same way: record that once, at the defaults
    declared = analysis.declared
    needs = [n for n in analysis.inputs if not (n in declared and declared[n].value is not None)]
    return program, analysis, analysis.inputs, needs


def evaluate_point(program, source: Source, at: dict, options: Options, analysis=None) -> dict:
    """The results of the program at one point, as a record holds them. An error that makes the
    program invalid (syntax, unknown names, wrong arguments, missing inputs) is marked
    "invalid": no comment can expect it. analysis: the program's, when already made."""
    if isinstance(program, LimitProblem):
        raise NotAResult(program.render().splitlines()[0])
    if isinstance(program, ProgramError):
        return _error(program)
    try:
        run = differentiate(source, {k: from_record(v) for k, v in at.items()}, program=program, options=options,
                            analysis=analysis, named=False)
    except LimitProblem as problem:  # --max-elements, --max-iterations, out of memory: not the program's result
        raise NotAResult(f"at {_at_text(at)}: {problem.render().splitlines()[0]}") from None
    except MemoryError:
        raise NotAResult(f"at {_at_text(at)}: out of memory (--max-elements refuses large tensors before "
                         "allocating them)") from None
    except RecursionError:
        raise NotAResult(f"at {_at_text(at)}: nested too deeply to run") from None
    except ProgramError as problem:
        return _error(problem)
    except NotATensor as problem:
        return _error_dict("TypeError", f"the output is {problem.type_name}, not a tensor")
    except (GradientProblem, RuntimeError) as problem:  # the engine's own errors, with PyTorch's texts
        return _error_dict("RuntimeError", str(problem).splitlines()[0] if str(problem) else "")
    grads = {q.name: None if q.grad is None else _plain(q.grad) for q in run.inputs if q.requires_grad}
    return {"output": run.output.name, "value": _plain(run.output.value), "grads": grads}


def _at_text(at: dict) -> str:
    from .reporting import point_text

    return point_text(at)


def _error(problem: ProgramError) -> dict:
    """An error as a record holds it: an evaluation error by the class PyTorch raises for it.
    The problem itself is kept too (not recorded): where it happened, for the report."""
    outcome = _error_dict(getattr(problem, "python_class", type(problem).__name__), short_words(problem.message))
    if problem.category in (ErrorKind.INVALID_PROGRAM, ErrorKind.INVALID_INPUT):
        outcome["invalid"] = True
    outcome["problem"] = problem
    return outcome


def _error_dict(kind: str, message: str) -> dict:
    return {"error": {"class": kind, "message": message}}


def _plain(value):
    return to_record(to_python(value))


def _summary(outcome: dict) -> str:
    if "error" in outcome:
        return f"{outcome['error']['class']}: {outcome['error']['message']}"
    return f"{outcome.get('output')} = {outcome.get('value')}"


def _record(path: str, record, outcomes: list, needs_values: list, unused: list, chosen: dict,
            settings: Settings) -> FileResult:
    name = path
    if not outcomes:
        return FileResult(name, ERRORED, f"no points to record: the file needs values for "
                                         f"{', '.join(needs_values)}; give them with --at, or list points in "
                                         f"its record ({os.path.basename(path)}{RECORD_SUFFIX})")
    if record is None and settings.ci:
        return FileResult(name, NEW, _new_message(settings), points=len(outcomes))
    old = record or {}
    old_points = {point_key(p.get("at", {})): p for p in old.get("points", [])}
    changes, added, points = [], [], []
    for at, outcome in outcomes:
        outcome = {k: v for k, v in outcome.items() if k in RESULT_KEYS}
        before = old_points.get(point_key(at))
        kept = {k: v for k, v in (before or {}).items() if k not in RESULT_KEYS and k != "at"}  # rtol, atol...
        if before is None or not ({"value", "error"} & set(before)):
            if record is not None:
                added.append(as_floats(at))
            points.append({"at": to_record(as_floats(at)), **kept, **outcome})
            continue
        moved = compare_point(at, before, outcome, settings.rtol, settings.atol, old)
        if not moved:  # equal within tolerances: the recorded numbers stay, so records do not churn
            points.append(before)
            continue
        changes.extend(moved)
        points.append({"at": to_record(as_floats(at)), **kept, **outcome})
    settings_before = old.get("settings", {})
    if record is not None:
        for key in sorted(chosen):
            if key in settings_before and settings_before[key] != chosen[key]:
                changes.append(Mismatch({}, f"setting {key}", settings_before[key], chosen[key], "set on the command line"))
    new = {k: v for k, v in old.items() if k not in ("points", "format", "settings")}
    new.update({"format": FORMAT, "settings": dict(sorted(chosen.items())), "points": points})
    dropped = [at for at, _ in unused]
    result = FileResult(name, PASSED, points=len(outcomes), changes=changes, added=added, dropped=dropped)
    target = pending_path(path) if settings.pending else record_path(path)
    from .records import dumps

    if record is not None and dumps(new) == dumps(record):
        if settings.pending:
            _remove(pending_path(path))  # nothing left to review
        result.message = "record unchanged"
        return result
    try:
        write(path, new, where=target)
    except WriteProblem as problem:
        return FileResult(name, ERRORED, str(problem), points=len(outcomes))
    result.created = record is None
    what = "new record" if record is None else _counted(changes, added, dropped)
    if what == "record rewritten" and "settings" not in old:
        what = "settings recorded: " + ", ".join(f"{k} {v}" for k, v in sorted(chosen.items()))
    if settings.pending:
        result.status, result.message = PENDING, f"{what}, pending review: {os.path.basename(target)}"
    else:
        result.status = UPDATED
        result.message = f"recorded {len(outcomes)} point(s)" if record is None else what
    return result


def _counted(changes, added, dropped) -> str:
    parts = []
    if changes:
        parts.append(f"{len(changes)} change(s)")
    if added:
        parts.append(f"{len(added)} point(s) added")
    if dropped:
        parts.append(f"{len(dropped)} point(s) dropped")
    return ", ".join(parts) or "record rewritten"


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def drop_points(path, at_points: list) -> bool:
    """Remove the given points from a file's record (--unused delete); True when written."""
    with locked(path):
        record = load(path)
        if record is None:
            return False
        keys = {point_key(at) for at in at_points}
        kept = [p for p in record.get("points", []) if point_key(p.get("at", {})) not in keys]
        if len(kept) == len(record.get("points", [])):
            return False
        return write(path, {**record, "points": kept})

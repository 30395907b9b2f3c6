"""--points on grad and eval: the points read a chunk at a time, run as vectors, written as
records; and what a bad point costs (--on-error stop, skip or null). Reading and writing
records is cli/point_records.py's."""

from __future__ import annotations

import sys
from typing import Optional

from ..._text import shown
from ..console import say, say_warnings
from ..exit_codes import ExitCode
from ..options import OnError, RecordFormat


def _records_format(chosen, out: Optional[RecordFormat]) -> Optional[RecordFormat]:
    """--points writes one record per point, in the format --out names: --format json asks for
    JSON Lines; a table (rich, plain) is no format for records, so it is refused, not ignored."""
    from ...program.errors import UsageProblem

    chosen = chosen.value
    if chosen == "json":
        if out not in (None, RecordFormat.jsonl):
            raise UsageProblem(f"--format json and --out {out.value} ask for two formats: give one (--out "
                               f"{out.value}, or --out jsonl for JSON Lines)")
        return RecordFormat.jsonl
    if chosen != "auto":
        raise UsageProblem(f"--points writes one record per point, not --format {chosen}: choose their "
                           "format with --out jsonl|csv|tsv")
    return out


def run_points(source, at, asked, chosen, *, wrt, output, gradients, options) -> ExitCode:
    """--points: read, evaluate as vectors and write, a chunk at a time (cli/point_records.py). `asked`
    is the PointsAsked of the command line, `chosen` its --format. Returns the exit status."""
    path, fmt_in, on_error = asked.points, asked.points_in, asked.on_error
    fmt_out = _records_format(chosen, asked.points_out)
    from ...language.analysis import analyze
    from ...program.errors import UsageProblem
    from ...program.sweep import Sweep
    from .. import point_records as io

    if source.name == "<stdin>" and path == "-":
        raise UsageProblem("the program and the points cannot both come from standard input: give the program "
                           "as a FILE or with -e")
    sweep = Sweep(source, wrt=wrt, output=output, options=options, gradients=gradients, fixed=at)
    analysis = analyze(sweep.program, source)
    defaults = [n for n, node in analysis.declared.items() if node.value is not None]
    needed = [n for n in analysis.inputs if n not in at and n not in defaults]
    optional = [n for n in analysis.inputs if n not in needed]
    fmt = io.detect_format(path, fmt_in.value if fmt_in else None)
    try:
        stream = io.open_points(path)
    except OSError as error:
        raise UsageProblem(f"--points {shown(path)}: {error.strerror or error}") from None
    warned = set()

    def warn(text):
        if text not in warned:
            warned.add(text)
            say(f"autodiff: warning: --points {shown(path)}: {text}")

    reader = io.PointReader(stream, fmt, needed, optional, warn, fixed=at, dtype=options.dtype)
    grads = [n for n in analysis.inputs if n not in at and (wrt is None or n in wrt)] if gradients else None
    grads = sorted(grads) if grads is not None else None
    out = fmt_out.value if fmt_out else ("jsonl" if fmt == "jsonl" else fmt)
    writer = io.PointWriter(sys.stdout, out, inputs=[], grads=grads, header=not asked.no_header, flatten=asked.flatten,
                            errors=on_error is OnError.null, source_format=fmt)
    failed = 0
    notes_said = 0
    warnings_said = 0
    not_finite_said = False
    try:
        for entries, columns in reader.chunks():
            if not writer.inputs and reader.header is not None:
                writer.inputs = list(reader.header)
            good = [e for e in entries if e.values is not None]
            positions = {e.line: k for k, e in enumerate(good)}
            results = sweep.run(columns, len(good)) if good else None
            failures = {e.line: e.error for e in entries if e.error is not None}
            bad_values = {e.line for e in entries if e.error is not None}
            if results is not None:
                failures.update({good[i].line: message for i, message in results.errors.items()})
                bad_values.update(good[i].line for i in results.bad_values)
                if results.groups and writer.output is None:
                    writer.output = results.groups[0].output
            for note in sweep.notes[notes_said:]:
                say(f"autodiff: note: --points: {note}")
            notes_said = len(sweep.notes)
            say_warnings(sweep.warnings[warnings_said:])  # as grad at one point says them (an unused --at)
            warnings_said = len(sweep.warnings)
            index = sweep.first_not_finite(results) if results is not None and not not_finite_said else None
            if index is not None:  # said once, for the first such point, with what it says run alone
                not_finite_said = True
                alone = sweep.alone(columns, index)
                say(f"autodiff: warning: {point_place(path, good[index].line)}: nan or inf in this point's "
                      f"results (the first such point){'; run alone, it says:' if alone else ''}")
                say_warnings(alone)
            kept = []
            for entry in entries:
                problem = failures.get(entry.line)
                if problem is not None:
                    failed += 1
                    where = point_place(path, entry.line)
                    if on_error is OnError.stop:
                        writer.write(kept, positions, results, {})
                        say(f"autodiff: error: {where}: {problem}")
                        return ExitCode.USAGE if entry.line in bad_values else ExitCode.EVALUATION
                    if on_error is OnError.skip:
                        say(f"autodiff: warning: {where}: skipped: {problem}")
                        continue
                kept.append(entry)
            writer.write(kept, positions, results, failures if on_error is OnError.null else {})
        if reader.header is not None or fmt == "jsonl":  # CSV with no header line says nothing of its columns
            if not writer.inputs and reader.header is not None:
                writer.inputs = list(reader.header)
            writer.finish()
    except io.PointsProblem as problem:
        raise UsageProblem(f"--points {shown(path)}: {problem}") from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if failed:
        return ExitCode.CHECK_FAILED
    return ExitCode.OK


def point_place(path: str, line: int) -> str:
    """`points.csv:3`: where a point was read."""
    return f"{shown(path) if path != '-' else '<stdin>'}:{line}"

"""`--points`: many points in one run, streamed in and out.

Points come as CSV (a header of input names, a row per point; a tensor as a JSON list in its
cell) or JSON Lines (an object per point: numbers, or nested lists for tensors; "nan", "inf"
and "-inf" as strings too). They are read in chunks — a chunk closes when it is full or when
the input pauses — so memory stays the same however many points come, and results appear
while the input is still coming. Each chunk is one vectorised run (program/sweep.py); its
results are written in input order as JSON Lines, CSV or TSV, nan and infinities spelled as
`--format json` spells them.
"""

from __future__ import annotations

import csv
import json
import os
import select
import sys

import numpy as np

from .._record import record
from .. import codec
from .._text import shown

CHUNK = 8192  # points per vectorised run at most
FORMATS_IN = ("csv", "tsv", "jsonl")
FORMATS_OUT = ("jsonl", "csv", "tsv")


class PointsProblem(Exception):
    """A point that cannot be run (its line number is in the message); exit status 2 when it stops the run."""


@record
class Entry:
    """One record of --points: its line, its values, or why it cannot be read."""

    line: int
    values: dict | None  # input name -> array, or None for a bad record
    text: str | None = None  # the line as given (CSV and TSV): the output's input columns echo it
    error: str | None = None


# -- reading -------------------------------------------------------------------------------------------


def _ready(fd: int) -> bool:
    """Whether more input can be read at once (a regular file always can)."""
    try:
        readable, _, _ = select.select([fd], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def line_batches(stream, limit: int = CHUNK):
    """Lists of lines as they arrive: a list closes at `limit` lines or when the input pauses."""
    fd = stream.fileno()
    buffer = b""
    number = 0
    end = False
    while not end:
        data = os.read(fd, 1 << 16)
        end = not data
        buffer += data
        while not end and buffer.count(b"\n") < limit and _ready(fd):
            data = os.read(fd, 1 << 16)
            end = not data
            buffer += data
        *complete, buffer = buffer.split(b"\n")
        if end and buffer:
            complete.append(buffer)
            buffer = b""
        lines = []
        for raw in complete:
            number += 1
            lines.append((number, raw))
        if lines:
            yield lines


class PointReader:
    """Chunks of points from a points file, checked against the program's inputs.

    A chunk is (entries, columns): every line's Entry in order (a bad one with its reason), and
    the good points' values as columns. Plain numbers take a vectorised path; anything else
    (tensors, "nan" strings, a bad cell) is read point by point."""

    def __init__(self, stream, fmt: str, needed: list, optional: list, warn, fixed=(), dtype: str = "float64") -> None:
        self.stream = stream
        self.fmt = fmt
        self.needed = needed  # inputs every point must give
        self.known = set(needed) | set(optional)
        self.fixed = set(fixed)  # inputs --at holds fixed: a point that gives one too is ambiguous
        self.warn = warn
        self.header: list | None = None
        self.shapes: dict = {}  # input -> the shape of its values at every point
        self.dtype = dtype  # the run's: a value beyond its range would be inf there
        self.largest = float(np.finfo(dtype).max) if dtype in ("float16", "float32", "float64") else np.inf

    def chunks(self):
        for lines in line_batches(self.stream):
            texts = []
            entries = []
            for number, raw in lines:
                try:
                    text = raw.decode("utf-8").rstrip("\r")
                except UnicodeDecodeError:
                    entries.append(Entry(number, None, error="the line is not UTF-8 text"))
                    continue
                if not text.strip():
                    continue
                if self.fmt != "jsonl" and self.header is None:
                    self._read_header(number, text)
                    continue
                texts.append((number, text))
                entries.append(Entry(number, None, text))
            if not entries:
                continue
            fast = self._vectorised(texts) if texts and len(texts) == len(entries) else None
            if fast is not None:
                yield fast
                continue
            by_line = {number: self._entry(number, text) for number, text in texts}
            entries = [by_line.get(e.line, e) for e in entries]
            yield entries, self._columns([e for e in entries if e.values is not None])

    def _read_header(self, number: int, text: str) -> None:
        cells = next(csv.reader([text], delimiter=self._delimiter))
        self.header = [c.strip() for c in cells]
        both = [c for c in self.header if c in self.fixed]
        if both:
            raise PointsProblem(f"line {number}: {_fixed_too(both)}")
        missing = [n for n in self.needed if n not in self.header]
        if missing:
            # A JSON object where a CSV header belongs: JSON Lines read as CSV
            hint = "; the lines look like JSON Lines: add --in jsonl" if text.lstrip().startswith("{") else ""
            raise PointsProblem(f"line {number}: the header names no column for input "
                                f"{', '.join(repr(m) for m in missing)} (header: {shown(text)}){hint}")
        extra = [c for c in self.header if c not in self.known]
        if extra:
            self.warn(f"columns {', '.join(repr(shown(c)) for c in extra)} are not inputs of the program: "
                      "they are not used")

    @property
    def _delimiter(self) -> str:
        return "\t" if self.fmt == "tsv" else ","

    def _vectorised(self, texts: list):
        """Every line plain numbers, of the right count: the whole chunk as one array (else None)."""
        try:
            if self.fmt == "jsonl":
                records = [codec.loads(t) for _, t in texts]
                if self.fixed and any(name in r for r in records for name in self.fixed):
                    return None  # each such point is told so (_jsonl)
                columns = {}
                for name in self.known:
                    if name in self.needed or all(name in r for r in records):
                        cells = [r[name] for r in records]
                        if any(type(cell) is not float and type(cell) is not int for cell in cells):
                            return None  # null, a bool, a word, a list: each point is read (and told) alone
                        columns[name] = np.array(cells, dtype=np.float64)
                rows = None
            else:
                joined = self._delimiter.join(t for _, t in texts)
                if '"' in joined:  # quoted cells: the csv module reads them, point by point
                    return None
                fields = joined.split(self._delimiter)
                width = len(self.header)
                if len(fields) != width * len(texts):
                    return None
                table = np.fromiter(map(float, fields), np.float64, len(fields)).reshape(len(texts), width)
                if not np.isfinite(table).all():  # "inf" is fine, "1e400" is not: each cell is read alone
                    return None
                columns = {name: table[:, j] for j, name in enumerate(self.header) if name in self.known}
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError, OverflowError):
            return None
        for name, column in columns.items():
            if column.ndim != 1 or self.shapes.setdefault(name, ()) != ():
                return None
            if self.largest < np.inf and np.any(np.isfinite(column) & (np.abs(column) > self.largest)):
                return None  # each point is read, and the one out of the dtype's range told so
        return [Entry(number, True, text) for number, text in texts], columns

    def _columns(self, good: list) -> dict:
        if not good:
            return {}
        return {name: np.stack([e.values[name] for e in good]) for name in good[0].values}

    def _entry(self, number: int, text: str) -> Entry:
        try:
            if self.fmt == "jsonl":
                return self._jsonl(number, text)
            return self._delimited(number, text)
        except (ValueError, TypeError, RecursionError) as error:
            return Entry(number, None, text, error=shown(str(error)))

    def _delimited(self, number: int, text: str) -> Entry:
        cells = next(csv.reader([text], delimiter=self._delimiter))
        if len(cells) != len(self.header):
            raise ValueError(f"{len(cells)} cells where the header has {len(self.header)}")
        values = {}
        for name, cell in zip(self.header, cells):
            if name in self.known:
                try:
                    values[name] = codec.parse(cell)
                except codec.OutOfRange as error:
                    raise ValueError(f"input {name!r}: {error}") from None
                except ValueError as error:
                    raise ValueError(f"input {name!r}: {shown(cell)!r} is not a number or a [list] ({error})") from None
        return self._checked(number, values, text)

    def _jsonl(self, number: int, text: str) -> Entry:
        record = codec.loads(text)
        if not isinstance(record, dict):
            raise ValueError("a line must hold one JSON object")
        values = {}
        for name in self.needed:
            if name not in record:
                raise ValueError(f"no value for input {name!r}")
        both = [name for name in record if name in self.fixed]
        if both:
            raise ValueError(_fixed_too(both))
        for name, value in record.items():
            if name in self.known:
                try:
                    values[name] = codec.parse_json(value)
                except ValueError as error:
                    raise ValueError(f"input {name!r}: {error}") from None
        return self._checked(number, values, None)

    def _checked(self, number: int, values: dict, text) -> Entry:
        arrays = {}
        for name, value in values.items():
            try:
                array = np.asarray(value, dtype=np.float64)
            except ValueError:
                raise ValueError(f"input {name!r} is not a rectangular list of numbers") from None
            beyond = np.isfinite(array) & (np.abs(array) > self.largest)
            if np.any(beyond):
                number = float(array[beyond].reshape(-1)[0])
                raise ValueError(f"input {name!r}: {number:g} is beyond the range of {self.dtype} (at most about "
                                 f"{self.largest:.2g}): it would be inf")
            shape = self.shapes.setdefault(name, array.shape)
            if array.shape != shape:
                raise ValueError(f"input {name!r} has shape {list(array.shape)} here, {list(shape)} at the points "
                                 "before")
            arrays[name] = array
        missing = [n for n in self.needed if n not in arrays]
        if missing:
            raise ValueError(f"no value for input {', '.join(repr(m) for m in missing)}")
        return Entry(number, arrays, text)


def detect_format(path: str | None, given: str | None, first: bytes = b"") -> str:
    if given:
        return given
    if path and path != "-":
        suffix = os.path.splitext(path)[1].lower()
        if suffix in (".jsonl", ".ndjson", ".json"):
            return "jsonl"
        if suffix == ".tsv":
            return "tsv"
        return "csv"
    return "csv"


# -- writing -------------------------------------------------------------------------------------------


class PointWriter:
    """Results in input order, in one of FORMATS_OUT; each column formatted as a whole."""

    def __init__(self, stream, fmt: str, *, inputs: list, grads: list | None, header: bool, flatten: bool,
                 errors: bool = False, source_format: str = "csv") -> None:
        self.stream = stream
        self.fmt = fmt
        self.source_format = source_format  # how the echoed input lines are delimited
        self.inputs = inputs  # the input columns echoed (CSV and TSV)
        self.grads = grads  # inputs whose gradients are written (None: eval)
        self.header_wanted = header
        self.header_done = False
        self.flatten = flatten
        self.errors = errors  # --on-error null: an error column (CSV, TSV)
        self.columns: list | None = None
        self.delimiter = "\t" if fmt == "tsv" else ","

    def write(self, entries: list, positions: dict, results, failures: dict) -> None:
        """`entries` in order; `positions` maps a good entry's line to its index among the points
        run; `failures` maps a failed entry's line to its reason (written when it is kept)."""
        cells = [None] * len(entries)
        slot = {e.line: k for k, e in enumerate(entries)}
        by_index = {i: line for line, i in positions.items()}
        for group in (results.groups if results is not None else ()):
            formatted = self._format(group)  # each point's part of its record, in the group's order
            for index, part in zip(group.indices.tolist(), formatted):
                where = slot.get(by_index[index])
                if where is not None:
                    cells[where] = part
        if self.fmt == "jsonl":
            text = "".join(self._json(entry, parts, failures.get(entry.line)) for entry, parts in zip(entries, cells))
        else:
            text = self._delimited(entries, cells, failures)
        self._put(text)

    def _delimited(self, entries, cells, failures) -> str:
        lines = []
        for entry, parts in zip(entries, cells):
            if parts is None and entry.line not in failures:
                continue
            row = [self._echo(entry.text)]
            if parts is None:
                width = len(self.columns) - len(self.inputs) - (1 if self.errors else 0) if self.columns else \
                    1 + len(self.grads or ())
                row.append(self.delimiter.join([""] * width))
            else:
                row.append(parts)
            if self.errors:
                row.append(self._quoted(failures.get(entry.line, "")))
            lines.append(self.delimiter.join(row))
        if lines and not self.header_done:
            if self.header_wanted:
                lines.insert(0, self.delimiter.join(map(self._quoted, self.columns or self._columns(None))))
            self.header_done = True
        return "".join(line + "\n" for line in lines)

    def finish(self) -> None:
        """At the end of the points: a table that got no row still gets its header (a header alone
        in, a header alone out), so that a script reads the columns it expects."""
        if self.fmt == "jsonl" or self.header_done or not self.header_wanted:
            return
        self.header_done = True
        self._put(self.delimiter.join(map(self._quoted, self.columns or self._columns(None))) + "\n")

    def _put(self, text: str) -> None:
        """Write whole records (lines): Ctrl-C while a write waits on a full pipe stops at the end
        of a record, as it does to a file, never in the middle of one; a second Ctrl-C stops at
        once."""
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO)
            fd = None
        if fd is None or not text:
            self.stream.write(text)
            self.stream.flush()
            return
        self.stream.flush()  # what was written through the stream before goes first
        raw = text.encode("utf-8")
        data = memoryview(raw)
        with _interrupt_after_the_record() as interrupted:
            done, end = 0, len(raw)
            while done < end:
                if interrupted() and end == len(raw):  # asked to stop: at the end of this record
                    end = done if done == 0 or raw[done - 1] == 10 else raw.index(b"\n", done) + 1
                    continue
                done += os.write(fd, data[done:end])

    def _echo(self, text: str | None) -> str:
        """The input line's cells, as this output delimits them."""
        if text is None:
            return self.delimiter.join([""] * len(self.inputs))
        if self.source_format == self.fmt or ('"' not in text and self.delimiter not in text):
            return text.replace("\t" if self.source_format == "tsv" else ",", self.delimiter) \
                if self.source_format != self.fmt else text
        cells = next(csv.reader([text], delimiter="\t" if self.source_format == "tsv" else ","))
        return self.delimiter.join(map(self._quoted, cells))

    def _quoted(self, cell: str) -> str:
        if self.delimiter in cell or '"' in cell or "\n" in cell:
            return '"' + cell.replace('"', '""') + '"'
        return cell

    # One list per quantity (value, then each gradient), each holding every point's cells.

    def _format(self, group) -> list:
        quantities = [("value", group.values)]
        if self.grads is not None:
            quantities += [(f"grad_{n}", group.grads.get(n)) for n in self.grads]
        if self.columns is None:
            self.columns = self._columns(quantities)
        size = len(group.indices)
        if self.fmt == "jsonl":
            return list(zip(*[_json_cells(values, size) for _, values in quantities]))
        columns = []  # one list of strings per output column
        for _, values in quantities:
            columns.extend(_delimited_columns(values, size, self.flatten, self._quoted))
        return list(map(self.delimiter.join, zip(*columns)))

    def _columns(self, quantities) -> list:
        columns = list(self.inputs)
        for name, values in quantities or [("value", None)] + [(f"grad_{n}", None) for n in (self.grads or ())]:
            if self.flatten and values is not None and values.ndim > 1:
                columns += [f"{name}[{','.join(map(str, index))}]" for index in np.ndindex(values.shape[1:])]
            else:
                columns.append(name)
        if self.errors:
            columns.append("error")
        return columns

    def _json(self, entry: Entry, parts, failure) -> str:
        if parts is None:
            grads = "" if self.grads is None else ', "grads": {' + ", ".join(
                f'{json.dumps(n)}: null' for n in self.grads) + "}"
            return (f'{{"line": {entry.line}, "error": {json.dumps(failure)}, "output": null, "value": null, '
                    f'"shape": null{grads}}}\n')
        (value, shape), *grads = parts
        text = f'{{"output": {json.dumps(self.output)}, "value": {value}, "shape": {shape}'
        if self.grads is not None:
            text += ', "grads": {' + ", ".join(f"{json.dumps(n)}: {g[0]}" for n, g in zip(self.grads, grads)) + "}"
        return text + f', "line": {entry.line}}}\n'

    output = None  # the output's name, set by the caller


def _json_cells(values, size: int) -> list:
    """Each point's value as JSON text (nan and infinities as strings), and its shape."""
    if values is None:
        return [("null", "null")] * size
    shape = json.dumps(list(values.shape[1:]))
    if values.ndim == 1:
        texts = list(map(repr, values.tolist()))
        if not np.isfinite(values).all():
            texts = [t if t not in codec.NOT_FINITE else f'"{t}"' for t in texts]
        return [(t, shape) for t in texts]
    return [(json.dumps(codec.to_json(v)), shape) for v in values]


def _delimited_columns(values, size: int, flatten: bool, quoted) -> list:
    """A quantity's output columns, each a list of every point's cell text (a tensor: a quoted
    JSON list, or a column per element)."""
    if values is None:
        return [[""] * size]
    if values.ndim == 1:
        return [list(map(repr, values.tolist()))]
    if flatten:
        return [list(map(repr, column)) for column in values.reshape(size, -1).T.tolist()]
    return [[quoted(json.dumps(codec.to_json(v))) for v in values]]


def open_points(path: str):
    """The stream of points: standard input for `-`, else the file (binary, read as it comes)."""
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")  # noqa: SIM115 - closed by the caller


def _fixed_too(names: list) -> str:
    """An input given by --at and by the points: held fixed, or varied? Refused, never guessed."""
    listed = ", ".join(repr(shown(n)) for n in names)
    return (f"{listed} given both by --at (held fixed) and by the points: give each input in one place "
            "(drop it from --at to vary it per point)")


class _interrupt_after_the_record:
    """A context in which a first SIGINT only sets a flag (read by calling what `with` gives);
    a second raises KeyboardInterrupt at once; leaving it, a SIGINT received raises
    KeyboardInterrupt there. Outside the main thread, or where SIGINT is not Python's
    KeyboardInterrupt, SIGINT is left as it is."""

    def __enter__(self):
        import signal
        import threading

        self.received = 0
        self.previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return lambda: self.received > 0

    def _handle(self, number, frame) -> None:
        self.received += 1
        if self.received > 1:
            raise KeyboardInterrupt

    def __exit__(self, kind, value, traceback) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        if self.received and kind is None:
            raise KeyboardInterrupt

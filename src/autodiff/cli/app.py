"""The commands. Each reads its input, asks the program layer for a result, and hands it to a renderer."""

from __future__ import annotations

import functools
import inspect
import sys
from enum import Enum
from typing import List, Optional

import typer

from .._version import __version__

app = typer.Typer(
    name="autodiff",
    help="See, check and test derivatives of expression files.",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Format(str, Enum):
    auto = "auto"
    rich = "rich"
    plain = "plain"
    json = "json"


class GraphFormat(str, Enum):
    auto = "auto"
    rich = "rich"
    plain = "plain"
    json = "json"
    dot = "dot"
    mermaid = "mermaid"
    svg = "svg"
    png = "png"
    pdf = "pdf"


class ExplainFormat(str, Enum):
    auto = "auto"
    rich = "rich"
    plain = "plain"
    json = "json"
    markdown = "markdown"
    latex = "latex"
    svg = "svg"


class EdgeLabels(str, Enum):
    none = "none"
    local = "local"


class DType(str, Enum):
    float64 = "float64"
    float32 = "float32"


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


# -- options shared by the commands ----------------------------------------------------------------------

FILE = typer.Argument(None, metavar="FILE", show_default=False,
                      help="The expression file; [bold]-[/] reads standard input.")
EXPR = typer.Option(None, "-e", "--expr", metavar="EXPR", help="The program itself, instead of a FILE.")
AT = typer.Option([], "--at", metavar="NAME=VALUE,...",
                  help="Input values: numbers or \\[lists], e.g. [bold]--at a=2,W=[[1,2],[3,4]][/]. May be repeated.")
OUTPUT = typer.Option(None, "--output", metavar="NAME", help="Use this variable as the output, not the last statement.")
FORMAT = typer.Option(Format.auto, "--format", "-f",
                      help="rich (a table), plain (tab-separated lines) or json; auto is rich on a terminal.")

# How a program runs, for every command that runs one: declared here once, and handed to the
# command as one language Options (see `_runs_programs`).
_RUN_OPTIONS = [
    inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation)
    for name, annotation, default in (
        ("dtype", DType, typer.Option(DType.float64, "--dtype", help="Floating-point type of the computation.")),
        ("seed", int, typer.Option(0, "--seed", metavar="N", min=0, help="Seed for rand() and randn().")),
        ("device", Device, typer.Option(Device.cpu, "--device",
                                        help="Where to compute: cpu, or cuda (needs CuPy and a GPU).")),
        ("max_elements", int, typer.Option(50_000_000, "--max-elements", metavar="N", min=1,
                                           help="Largest tensor a program may create.")),
        ("max_iterations", int, typer.Option(1_000_000, "--max-iterations", metavar="N", min=0,
                                             help="Most loop turns and function calls in one run.")),
        # Accepted (and shown in --help) here; main.py reads it from the command line, before any command runs.
        ("debug", bool, typer.Option(False, "--debug", help="Show Python's traceback on errors.")),
    )
]


def _runs_programs(command):
    """Give a command the options of _RUN_OPTIONS, where its `options` parameter stands; it is
    called with them as one `options` (a language Options, its device checked first)."""
    signature = inspect.signature(command, eval_str=True)
    parameters = []
    for parameter in signature.parameters.values():
        parameters.extend(_RUN_OPTIONS if parameter.name == "options" else [parameter])

    @functools.wraps(command)
    def run(**values):
        values.pop("debug")  # read by main.py
        shared = {p.name: values.pop(p.name) for p in _RUN_OPTIONS if p.name != "debug"}
        return command(**values, options=_options(**shared))

    run.__signature__ = signature.replace(parameters=parameters)
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run


def _require_device(device: Device) -> None:
    """Say clearly, before anything runs, why CUDA cannot be used (DeviceUnavailable, exit 2)."""
    if device is Device.cuda:
        from .. import backend

        backend.module_for("cuda")


def _options(dtype: DType, seed: int, device: Device, max_elements: int, max_iterations: int):
    from ..language import Options

    _require_device(device)
    return Options(dtype=dtype.value, device=device.value, seed=seed, max_elements=max_elements,
                   max_iterations=max_iterations)


class PointsIn(str, Enum):
    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"


class PointsOut(str, Enum):
    jsonl = "jsonl"
    csv = "csv"
    tsv = "tsv"


class OnError(str, Enum):
    stop = "stop"
    skip = "skip"
    null = "null"


# --points and its companions, on grad and eval (see cli/points.py).
POINTS = typer.Option(None, "--points", metavar="FILE|-",
                      help="Many points in one run: CSV with a header of input names, or JSON Lines; one result each.")
POINTS_IN = typer.Option(None, "--in", help="The points' format (default: from the file's extension; csv for -).")
POINTS_OUT = typer.Option(None, "--out", help="The results' format (default: the points' own: jsonl, csv or tsv).")
FLATTEN = typer.Option(False, "--flatten", help="With --out csv|tsv: a column per tensor element, grad_W[0,1].")
NO_HEADER = typer.Option(False, "--no-header", help="With --out csv|tsv: no header line.")
ON_ERROR = typer.Option(OnError.stop, "--on-error",
                        help="A bad point: stop (exit 2 or 4), skip it (said on standard error), or null (a record "
                             "with the error). With skip or null the exit status is 1 if any point failed.")


def _run_points(source, at, path, *, wrt, output, gradients, options, fmt_in, fmt_out, flatten, no_header,
                on_error) -> None:
    """--points: read, evaluate as vectors and write, a chunk at a time (cli/points.py)."""
    from .._text import shown
    from ..language.analysis import analyze
    from ..program.errors import UsageProblem
    from ..program.points import Sweep
    from . import points as io
    from .exit_codes import ExitCode

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
            print(f"autodiff: warning: --points {shown(path)}: {text}", file=sys.stderr)

    reader = io.PointReader(stream, fmt, needed, optional, warn)
    grads = [n for n in analysis.inputs if n not in at and (wrt is None or n in wrt)] if gradients else None
    grads = sorted(grads) if grads is not None else None
    out = fmt_out.value if fmt_out else ("jsonl" if fmt == "jsonl" else fmt)
    writer = io.PointWriter(sys.stdout, out, inputs=[], grads=grads, header=not no_header, flatten=flatten,
                            errors=on_error is OnError.null, source_format=fmt)
    failed = 0
    notes_said = 0
    try:
        for entries, columns in reader.chunks():
            if not writer.inputs and reader.header is not None:
                writer.inputs = list(reader.header)
            good = [e for e in entries if e.values is not None]
            positions = {e.line: k for k, e in enumerate(good)}
            results = sweep.run(columns, len(good)) if good else None
            failures = {e.line: e.error for e in entries if e.error is not None}
            if results is not None:
                failures.update({good[i].line: message for i, message in results.errors.items()})
                if results.groups and writer.output is None:
                    writer.output = results.groups[0].output
            for note in sweep.notes[notes_said:]:
                print(f"autodiff: note: --points: {note}", file=sys.stderr)
            notes_said = len(sweep.notes)
            kept = []
            for entry in entries:
                problem = failures.get(entry.line)
                if problem is not None:
                    failed += 1
                    where = f"{shown(path) if path != '-' else '<stdin>'}:{entry.line}"
                    if on_error is OnError.stop:
                        writer.write(kept, positions, results, {})
                        print(f"autodiff: error: {where}: {problem}", file=sys.stderr)
                        raise typer.Exit(ExitCode.USAGE if entry.error else ExitCode.EVALUATION)
                    if on_error is OnError.skip:
                        print(f"autodiff: warning: {where}: skipped: {problem}", file=sys.stderr)
                        continue
                kept.append(entry)
            writer.write(kept, positions, results, failures if on_error is OnError.null else {})
    except io.PointsProblem as problem:
        raise UsageProblem(f"--points {shown(path)}: {problem}") from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if failed:
        raise typer.Exit(ExitCode.CHECK_FAILED)


def _inputs(file, expr, at):
    from .program_input import parse_at, read_program

    source = read_program(file, expr)
    return source, parse_at(at)


def _emit(kind: str, report, chosen) -> None:
    """Render once, to standard output; warnings go to standard error."""
    from .messages import line_for

    for warning in report.warnings:
        print(line_for(warning), file=sys.stderr)

    def draw(console):
        from .render import rich_

        getattr(rich_, kind)(report, console)

    def text(fmt: str) -> str:
        if fmt == "plain":
            from .render import plain as module
        elif fmt == "json":
            from .render import json_ as module
        else:
            from .render import diagrams as module

            return getattr(module, fmt)(report)
        return getattr(module, kind)(report)

    _output(chosen, draw, text)


def _output(chosen, draw, text) -> None:
    """The one place a format is chosen: auto is rich on a terminal, plain otherwise. Rich
    output is drawn for this terminal, then written like any other text."""
    fmt = chosen.value
    if fmt == "auto":
        fmt = "rich" if sys.stdout.isatty() else "plain"
    if fmt != "rich":
        _write(text(fmt))
        return
    from rich.console import Console

    console = Console(file=sys.stdout)
    with console.capture() as captured:
        draw(console)
    _write(captured.get())


def _write(text: str, piece: int = 1 << 16) -> None:
    """Write in pieces the size of a pipe's buffer. One large write() to a pipe whose reader has
    gone (`| head -c1`) can come back as a short write with no error; a later piece reports it."""
    from .main import OutputFailed

    try:
        for start in range(0, len(text), piece):
            sys.stdout.write(text[start : start + piece])
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:  # a full disk or device (/dev/full), an I/O error
        raise OutputFailed(error.strerror or str(error)) from None


def _version(value: bool) -> None:
    if value:
        print(f"autodiff {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                      help="Show the version and exit.")) -> None:
    """See, check and test derivatives of expression files.

    An expression file is a small program (a subset of Python): its inputs are the names it
    uses but never assigns, its output is its last statement. [bold]autodiff grad[/] runs it forward
    and backward and shows every gradient.
    """


@app.command(epilog="""[bold]Examples[/]

  autodiff grad examples/tutorial.expr --at a=2,b=3,c=5,d=10

  autodiff grad examples/tutorial.expr --at a=2,b=3,c=5,d=10 --tree --retain all

  autodiff grad -e "sum(W @ x)" --at W=[[1,2],[3,4]] --at x=[1,1] --format json | jq .grads

  autodiff grad examples/matrix.expr --output L --grad-output ones

  autodiff grad examples/linear.expr --at x=1,y=2,z=5 --check

  autodiff grad -e "x**3 * y" --at x=2,y=3 --order 2""")
@_runs_programs
def grad(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    at: List[str] = AT,
    wrt: Optional[str] = typer.Option(None, "--wrt", metavar="a,b",
                                      help="Only these inputs require grad; the others are constants."),
    retain: Optional[str] = typer.Option(None, "--retain", metavar="NAMES|all",
                                         help="Keep the gradients of these intermediate variables (retain_grad)."),
    output: Optional[str] = OUTPUT,
    grad_output: Optional[str] = typer.Option(None, "--grad-output", metavar="ones|VALUE",
                                              help="The gradient to start backward from, for a non-scalar output."),
    tree: bool = typer.Option(False, "--tree", help="Show the grad_fn graph as a tree."),
    check: bool = typer.Option(False, "--check",
                               help="Compare every gradient with central finite differences (exit 1 if one differs)."),
    order: int = typer.Option(1, "--order", metavar="1|2", help="2 also computes the Hessian of a scalar output."),
    atol: float = typer.Option(1e-5, "--atol", min=0.0, metavar="TOL", help="Absolute tolerance of --check."),
    rtol: float = typer.Option(1e-3, "--rtol", min=0.0, metavar="TOL", help="Relative tolerance of --check."),
    format: Format = FORMAT,
    points: Optional[str] = POINTS,
    points_in: Optional[PointsIn] = POINTS_IN,
    points_out: Optional[PointsOut] = POINTS_OUT,
    flatten: bool = FLATTEN,
    no_header: bool = NO_HEADER,
    on_error: OnError = ON_ERROR,
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """Run a program forward and backward; show its output and the gradient of every input."""
    from ..program import check as check_gradients
    from ..program import differentiate
    from .program_input import parse_names

    if check:
        _check_tolerances(atol, rtol)
    source, values = _inputs(file, expr, at)
    if points is not None:
        return _run_points(source, values, points, wrt=parse_names(wrt, "--wrt"), output=output, gradients=True,
                           options=options, fmt_in=points_in, fmt_out=points_out, flatten=flatten,
                           no_header=no_header, on_error=on_error)
    result = differentiate(source, values, wrt=parse_names(wrt, "--wrt"), retain=parse_names(retain, "--retain"),
                           output=output, grad_output=grad_output, order=order, graph=tree, options=options)
    if check and result.differentiable:
        check_gradients(result, atol=atol, rtol=rtol)
    _emit("grad", result, format)
    if result.check is not None and not result.check.passed:
        from .exit_codes import ExitCode

        raise typer.Exit(ExitCode.CHECK_FAILED)


@app.command("eval", epilog="""[bold]Examples[/]

  autodiff eval examples/tutorial.expr --at a=2,b=3,c=5,d=10

  autodiff eval -e "softmax([1, 2, 3])" --format json""")
@_runs_programs
def evaluate(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    at: List[str] = AT,
    output: Optional[str] = OUTPUT,
    format: Format = FORMAT,
    points: Optional[str] = POINTS,
    points_in: Optional[PointsIn] = POINTS_IN,
    points_out: Optional[PointsOut] = POINTS_OUT,
    flatten: bool = FLATTEN,
    no_header: bool = NO_HEADER,
    on_error: OnError = ON_ERROR,
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """Run a program forward only (nothing recorded); show its output and named values."""
    from ..program import forward

    source, values = _inputs(file, expr, at)
    if points is not None:
        return _run_points(source, values, points, wrt=None, output=output, gradients=False, options=options,
                           fmt_in=points_in, fmt_out=points_out, flatten=flatten, no_header=no_header,
                           on_error=on_error)
    _emit("evaluation", forward(source, values, output=output, options=options), format)


@app.command(epilog="""[bold]Examples[/]

  autodiff graph examples/tutorial.expr --at a=2,b=3,c=5,d=10

  autodiff graph examples/tutorial.expr --at a=2,b=3,c=5,d=10 --backward --format dot | dot -Tsvg > graph.svg

  autodiff graph examples/mlp.expr --format mermaid

  autodiff graph examples/tutorial.expr --at a=2,b=3,c=5,d=10 --backward --edges local --format svg > graph.svg""")
@_runs_programs
def graph(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    at: List[str] = AT,
    wrt: Optional[str] = typer.Option(None, "--wrt", metavar="a,b", help="Only these inputs require grad."),
    output: Optional[str] = OUTPUT,
    backward: bool = typer.Option(False, "--backward", help="Run backward too, and label nodes with gradients."),
    grad_output: Optional[str] = typer.Option(None, "--grad-output", metavar="ones|VALUE",
                                              help="With --backward: the gradient of a non-scalar output."),
    limit: int = typer.Option(500, "--limit", metavar="N", min=1, help="Show at most N nodes."),
    edges: EdgeLabels = typer.Option(EdgeLabels.none, "--edges",
                                     help="local: write each edge's local derivative on it (dot, mermaid)."),
    format: GraphFormat = typer.Option(GraphFormat.auto, "--format", "-f",
                                       help="rich (a tree), dot (Graphviz), mermaid, json, plain, svg (drawn "
                                            "with nothing installed), png or pdf (need Graphviz's dot)."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """Show the recorded graph: PyTorch's node names, with the variables and lines they come from."""
    from ..program import record
    from .program_input import parse_names

    source, values = _inputs(file, expr, at)
    result = record(source, values, wrt=parse_names(wrt, "--wrt"), output=output, backward=backward,
                    grad_output=grad_output, options=options, limit=limit, edge_labels=edges is EdgeLabels.local)
    if format in (GraphFormat.png, GraphFormat.pdf):
        return _emit_binary(result, format.value)
    _emit("graph", result, format)


def _emit_binary(report, fmt: str) -> None:
    """A picture from Graphviz, written as bytes (PNG or PDF)."""
    from .main import OutputFailed
    from .messages import line_for
    from .render.diagrams import graphviz

    data = graphviz(report, fmt)
    for warning in report.warnings:
        print(line_for(warning), file=sys.stderr)
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputFailed(error.strerror or str(error)) from None


@app.command(epilog="""[bold]Examples[/]

  autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --wrt d

  autodiff explain examples/explain.expr --why b

  autodiff explain -e "x = a; x = x * a + x; x = x * a + x" --at a=2 --limit 3

  autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format json | jq .inputs.d.paths

  autodiff explain examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format svg > explained.svg""")
@_runs_programs
def explain(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    at: List[str] = AT,
    wrt: Optional[str] = typer.Option(None, "--wrt", metavar="a,b",
                                      help="Explain only these inputs (the others are constants)."),
    why: Optional[str] = typer.Option(None, "--why", metavar="NAME",
                                      help="Say why this input's gradient is what it is (None or zero)."),
    output: Optional[str] = OUTPUT,
    grad_output: Optional[str] = typer.Option(None, "--grad-output", metavar="ones|VALUE",
                                              help="The gradient to start backward from, for a non-scalar output."),
    limit: int = typer.Option(10, "--limit", metavar="N", min=1, help="Show the N largest paths per input."),
    format: ExplainFormat = typer.Option(ExplainFormat.auto, "--format", "-f",
                                         help="rich, plain, json, markdown, latex, or svg (the graph with each "
                                              "edge's local derivative, each node's value and gradient); auto is "
                                              "rich on a terminal."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """The chain rule, made visible: each gradient as a sum over paths, and backward step by step."""
    from ..program.explain import explain as explain_program
    from .messages import line_for
    from .program_input import parse_names
    from .render import explain as render

    source, values = _inputs(file, expr, at)
    if format is ExplainFormat.svg:
        return _explain_svg(source, values, wrt=parse_names(wrt, "--wrt"), output=output, grad_output=grad_output,
                            options=options)
    result = explain_program(source, values, wrt=parse_names(wrt, "--wrt"), why=why, output=output,
                             grad_output=grad_output, options=options, limit=limit)
    for warning in result.warnings:
        print(line_for(warning), file=sys.stderr)
    _output(format, lambda console: render.rich(result, console), lambda fmt: getattr(render, fmt)(result))


def _explain_svg(source, values, *, wrt, output, grad_output, options) -> None:
    """explain --format svg: the graph run backward, each edge labelled with its local derivative."""
    from ..program import record

    result = record(source, values, wrt=wrt, output=output, backward=True, grad_output=grad_output,
                    options=options, edge_labels=True)
    _emit("graph", result, GraphFormat.svg)


class PlotFormat(str, Enum):
    auto = "auto"
    rich = "rich"
    plain = "plain"
    json = "json"
    svg = "svg"


@app.command(epilog="""[bold]Examples[/]

  autodiff plot -e "y = x ** 3 - 3 * x" --wrt x --range -2:2

  autodiff plot examples/tutorial.expr --wrt d --range 1:10 --at a=2,b=3,c=5 -o tutorial-plot.svg

  autodiff plot -e "tanh(w * x)" --wrt x --range -3:3 --at w=2 -o tanh.png

  autodiff plot -e "sin(x) * x" --wrt x --range -6:6 --points 25 --format json | jq '.points[0]'""")
@_runs_programs
def plot(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    wrt: str = typer.Option(..., "--wrt", metavar="NAME", help="The input to vary along the x axis."),
    range_: str = typer.Option(..., "--range", metavar="LOW:HIGH", help="Its range, e.g. -3:3."),
    at: List[str] = typer.Option([], "--at", metavar="NAME=VALUE,...", help="The other inputs' values, held fixed."),
    output: Optional[str] = OUTPUT,
    points: int = typer.Option(201, "--points", metavar="N", help="How many evenly spaced points (2 to 100,000)."),
    to: Optional[str] = typer.Option(None, "-o", "--to", metavar="FILE.svg|FILE.png",
                                     help="Write a picture: SVG (needs nothing) or PNG (needs matplotlib)."),
    format: PlotFormat = typer.Option(PlotFormat.auto, "--format", "-f",
                                      help="rich (drawn in the terminal), plain (tab-separated samples), json or "
                                           "svg; auto is rich on a terminal."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """Plot the output and its derivative along one input: the picture that checks a derivative by eye.

    All the points run through the program at once, as one vectorised run (like --points)."""
    from ..program.errors import UsageProblem
    from ..program.plot import parse_range, sample
    from .render import plot as render

    low, high = parse_range(range_)
    suffix = to.rsplit(".", 1)[-1].lower() if to else None
    if to is not None and suffix not in ("svg", "png"):
        raise UsageProblem(f"-o {to}: write a .svg or a .png file")
    source, values = _inputs(file, expr, at)
    result = sample(source, wrt, low, high, points=points, at=values, output=output, options=options)
    for note in result.notes:
        print(f"autodiff: note: {note}", file=sys.stderr)
    if result.errors:
        index = min(result.errors)
        print(f"autodiff: warning: {len(result.errors)} point(s) failed and are left out; the first, at "
              f"{wrt}={result.xs[index]:g}: {result.errors[index]}", file=sys.stderr)
    if to is not None:
        if suffix == "png":
            try:
                render.png(result, to)
            except OSError as error:
                raise UsageProblem(f"-o {to}: {error.strerror or error}") from None
            return
        from ..program.svg import plot_svg

        try:
            with open(to, "w", encoding="utf-8") as file_:
                file_.write(plot_svg(result))
        except OSError as error:
            raise UsageProblem(f"-o {to}: {error.strerror or error}") from None
        return

    def text(fmt: str) -> str:
        if fmt == "svg":
            from ..program.svg import plot_svg

            return plot_svg(result)
        return render.json_(result) if fmt == "json" else render.plain(result)

    _output(format, lambda console: render.rich(result, console), text)


@app.command("test", epilog="""[bold]Examples[/]

  autodiff test examples

  autodiff test formulas/ --update

  autodiff test examples/tutorial.expr --update --at a=2,b=3,c=5,d=10

  autodiff test suite/ -j 4 --shard 2/3 --junit report.xml

  autodiff test suite/ --format json | jq .summary""")
@_runs_programs
def test(
    paths: Optional[List[str]] = typer.Argument(None, metavar="PATH...", show_default=False,
                                                help="Expression files and directories (searched below); default: ."),
    update: bool = typer.Option(False, "--update", help="Write or refresh the golden records instead of comparing."),
    at: List[str] = typer.Option([], "--at", metavar="NAME=VALUE,...",
                                 help="With --update: one more point to record, for the files that take these inputs."),
    glob: List[str] = typer.Option([], "--glob", metavar="PATTERN",
                                   help="File names to take in directories (repeatable); default: *.expr and *.txt."),
    rtol: float = typer.Option(1e-9, "--rtol", min=0.0, metavar="TOL", help="Relative tolerance of comparisons."),
    atol: float = typer.Option(1e-12, "--atol", min=0.0, metavar="TOL", help="Absolute tolerance of comparisons."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, max=256, metavar="N",
                                       help="Worker processes (at most 256); default: one per CPU core."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.0, metavar="SECONDS",
                                  help="Most seconds one file may run before it is stopped and errored; 0: no limit."),
    shard: Optional[str] = typer.Option(None, "--shard", metavar="I/N",
                                        help="Run only the I-th of N equal slices of the files (for CI machines)."),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE", help="Also write a JUnit XML report."),
    format: Format = FORMAT,
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """Compare expression files' values and gradients with their golden records (x.expr.golden.json)."""
    import time

    from ..testing import discover as finding
    from ..testing.one_file import Settings
    from ..testing.pool import default_jobs, run_files
    from ..testing.reporting import Progress, RunSummary
    from .program_input import parse_at

    if at and not update:
        raise typer.BadParameter("--at adds points to records, so it needs --update", param_hint="'--at'")
    extra_points = [{name: getattr(value, "tolist", lambda: value)() for name, value in parse_at([option]).items()}
                    for option in at]
    files = finding.discover(paths or ["."], tuple(glob) or finding.DEFAULT_GLOBS)
    if shard is not None:
        files = finding.shard(files, *finding.parse_shard(shard))
    _check_tolerances(atol, rtol)
    if timeout != timeout or timeout == float("inf"):
        timeout = 0.0 if timeout == float("inf") else _bad_number("--timeout", timeout)
    settings = Settings(rtol=rtol, atol=atol, update=update, extra_points=extra_points, options=options)
    progress = Progress(len(files), enabled=sys.stderr.isatty() and format is not Format.json)
    started = time.perf_counter()
    try:
        results = run_files(files, settings, jobs or default_jobs(), on_result=progress.advance, timeout=timeout)
    finally:
        progress.close()
    summary = RunSummary(results, time.perf_counter() - started, update)
    if junit:
        from ..testing.files import WriteProblem
        from ..testing.junit import write_junit

        try:
            write_junit(summary, junit)
        except WriteProblem:
            _emit_suite(summary, format)  # the report is still shown; then the usage error (exit 2)
            raise
    _emit_suite(summary, format)
    if not summary.succeeded:
        from .exit_codes import ExitCode

        raise typer.Exit(ExitCode.CHECK_FAILED)


def _check_tolerances(atol: float, rtol: float) -> None:
    """A NaN tolerance would pass every comparison (nan <= x is false, but numpy.isclose and
    the checks' own tests differ on it): refused, as a usage error."""
    for name, value in (("--atol", atol), ("--rtol", rtol)):
        if value != value:
            _bad_number(name, value)


def _bad_number(name: str, value) -> float:
    raise typer.BadParameter(f"{value} is not a number of the allowed range", param_hint=f"'{name}'")


def _emit_suite(summary, chosen) -> None:
    from ..testing import reporting

    _output(chosen, lambda console: reporting.rich(summary, console),
            lambda fmt: reporting.plain(summary) if fmt == "plain" else reporting.as_json(summary))

"""The commands. Each reads its input, asks the program layer for a result, and hands it to a renderer."""

from __future__ import annotations

import functools
import inspect
import sys
from enum import Enum
from typing import List, Optional

import typer

from .._version import __version__
from .common import Format
from .common import emit as _emit
from .common import output as _output
from .common import read_inputs as _inputs
from .common import show_gradients
from .common import write as _write

app = typer.Typer(
    name="autodiff",
    help="See, check and test derivatives of expression files.",
    add_completion=True,  # --install-completion, --show-completion: bash, zsh, fish (shellingham is loaded only to install)
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


class DType(str, Enum):
    float64 = "float64"
    float32 = "float32"


class Device(str, Enum):
    cpu = "cpu"
    cuda = "cuda"


# -- options shared by the commands ----------------------------------------------------------------------


def _words():
    """Text whose metavar says all (FILE, PATH...): the help shows no `<str>` beside it."""
    from typer._click.types import StringParamType

    class Words(StringParamType):
        def get_metavar(self, param, ctx=None) -> str:
            return ""

    return Words()


FILE = typer.Argument(None, metavar="FILE", show_default=False, click_type=_words(),
                      help="The expression file; [bold]-[/] reads standard input, as does no FILE when standard "
                           "input is a pipe ([bold]echo 'x**2' | autodiff grad --at x=3[/]).")
EXPR = typer.Option(None, "-e", "--expr", metavar="EXPR", help="The program itself, instead of a FILE.")
AT = typer.Option([], "--at", metavar="NAME=VALUE,...",
                  help="Input values: numbers or \\[lists], e.g. [bold]--at 'a=2,W=[[1,2],[3,4]]'[/] (quote brackets for the "
                       "shell; no space after a comma). May be repeated.")
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
        # Accepted (and shown in --help) here; main.py reads these two from the command line, before any command runs.
        ("color", Color, typer.Option(Color.auto, "--color",
                                      help="Colours: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces "
                                           "them), always or never. Errors are coloured too.")),
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
        values.pop("color")  # read by main.py
        shared = {p.name: values.pop(p.name) for p in _RUN_OPTIONS if p.name not in ("debug", "color")}
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


def _records_format(chosen: Format, out: Optional[PointsOut]) -> Optional[PointsOut]:
    """--points writes one record per point, in the format --out names: --format json asks for
    JSON Lines; a table (rich, plain) is no format for records, so it is refused, not ignored."""
    from ..program.errors import UsageProblem

    if chosen is Format.json:
        if out not in (None, PointsOut.jsonl):
            raise UsageProblem(f"--format json and --out {out.value} ask for two formats: give one (--out "
                               f"{out.value}, or --out jsonl for JSON Lines)")
        return PointsOut.jsonl
    if chosen is not Format.auto:
        raise UsageProblem(f"--points writes one record per point, not --format {chosen.value}: choose their "
                           "format with --out jsonl|csv|tsv")
    return out


def _run_points(source, at, path, *, wrt, output, gradients, options, fmt_in, fmt_out, flatten, no_header,
                on_error) -> None:
    """--points: read, evaluate as vectors and write, a chunk at a time (cli/points.py)."""
    from .._text import shown
    from ..language.analysis import analyze
    from ..program.errors import UsageProblem
    from ..program.points import Sweep
    from . import points as io
    from .exit_codes import ExitCode
    from .main import say
    from .messages import line_for

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

    reader = io.PointReader(stream, fmt, needed, optional, warn, fixed=at)
    grads = [n for n in analysis.inputs if n not in at and (wrt is None or n in wrt)] if gradients else None
    grads = sorted(grads) if grads is not None else None
    out = fmt_out.value if fmt_out else ("jsonl" if fmt == "jsonl" else fmt)
    writer = io.PointWriter(sys.stdout, out, inputs=[], grads=grads, header=not no_header, flatten=flatten,
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
            if results is not None:
                failures.update({good[i].line: message for i, message in results.errors.items()})
                if results.groups and writer.output is None:
                    writer.output = results.groups[0].output
            for note in sweep.notes[notes_said:]:
                print(f"autodiff: note: --points: {note}", file=sys.stderr)
            notes_said = len(sweep.notes)
            for warning in sweep.warnings[warnings_said:]:  # as grad at one point says them (an unused --at)
                say(line_for(warning))
            warnings_said = len(sweep.warnings)
            index = sweep.first_not_finite(results) if results is not None and not not_finite_said else None
            if index is not None:  # said once, for the first such point, with what it says run alone
                not_finite_said = True
                alone = sweep.alone(columns, index)
                print(f"autodiff: warning: {_point_place(path, good[index].line)}: nan or inf in this point's "
                      f"results (the first such point){'; run alone, it says:' if alone else ''}", file=sys.stderr)
                for warning in alone:
                    say(line_for(warning))
            kept = []
            for entry in entries:
                problem = failures.get(entry.line)
                if problem is not None:
                    failed += 1
                    where = _point_place(path, entry.line)
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


def _point_place(path: str, line: int) -> str:
    """`points.csv:3`: where a point was read."""
    from .._text import shown

    return f"{shown(path) if path != '-' else '<stdin>'}:{line}"


def _version(value: bool) -> None:
    if value:
        print(f"autodiff {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_version,
                                      help="Show the version and exit.")) -> None:
    """See, check and test derivatives of expression files.

    An expression file is a small program (a subset of Python): its inputs are the names it
    uses but never assigns, its output is its last statement. [bold]autodiff grad[/] runs it forward
    and backward and shows every gradient.
    """


@app.command(epilog="""[bold]Examples[/]

  autodiff grad examples/tutorial.expr --at a=2,b=3,c=5,d=10

  autodiff grad examples/tutorial.expr --at a=2,b=3,c=5,d=10 --tree --retain all

  autodiff grad -e "sum(W @ x)" --at 'W=[[1,2],[3,4]]' --at 'x=[1,1]' --format json | jq .grads

  echo 'x**2' | autodiff grad --at x=3

  autodiff grad examples/matrix.expr --output L --grad-output ones

  autodiff grad examples/linear.expr --at x=1,y=2,z=5 --check

  autodiff grad -e "x**3 * y" --at x=2,y=3 --order 2

  autodiff grad examples/tutorial.expr --points points.csv > gradients.csv""")
@_runs_programs
def grad(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    at: List[str] = AT,
    wrt: Optional[str] = typer.Option(None, "--wrt", metavar="a,b",
                                      help="Only these inputs require grad; the others are constants."),
    retain: Optional[str] = typer.Option(None, "--retain", metavar="NAMES|all",
                                         help="Keep the gradients of these variables (retain_grad); all: every intermediate. "
                                              "The output itself has gradient 1, as in PyTorch."),
    output: Optional[str] = OUTPUT,
    grad_output: Optional[str] = typer.Option(None, "--grad-output", metavar="ones|VALUE",
                                              help="The gradient to start backward from, for a non-scalar output."),
    tree: bool = typer.Option(False, "--tree", help="Show the grad_fn graph as a tree."),
    check: bool = typer.Option(False, "--check",
                               help="Compare every gradient with central finite differences (exit 1 if one differs)."),
    order: int = typer.Option(1, "--order", metavar="1|2", help="2 also computes the Hessian of a scalar output."),
    atol: float = typer.Option(1e-5, "--atol", min=0.0, metavar="TOL",
                               help="Absolute tolerance of --check. Finite differences are approximate, so the default "
                                    "is looser than autodiff test's (1e-12), which compares with exact records."),
    rtol: float = typer.Option(1e-3, "--rtol", min=0.0, metavar="TOL",
                               help="Relative tolerance of --check (autodiff test's: 1e-9, for the same reason)."),
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
    from .program_input import parse_names

    if check:
        _check_tolerances(atol, rtol)
    source, values = _inputs(file, expr, at)
    if points is not None:
        return _run_points(source, values, points, wrt=parse_names(wrt, "--wrt"), output=output, gradients=True,
                           options=options, fmt_in=points_in, fmt_out=_records_format(format, points_out),
                           flatten=flatten, no_header=no_header, on_error=on_error)
    result = show_gradients(source, values, wrt=wrt, retain=retain, output=output, grad_output=grad_output,
                            tree=tree, check=check, order=order, atol=atol, rtol=rtol, chosen=format, options=options)
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
                           fmt_in=points_in, fmt_out=_records_format(format, points_out), flatten=flatten,
                           no_header=no_header, on_error=on_error)
    _emit("evaluation", forward(source, values, output=output, options=options), format)


class DeriveFormat(str, Enum):
    auto = "auto"
    rich = "rich"
    plain = "plain"
    json = "json"
    latex = "latex"
    markdown = "markdown"
    expr = "expr"
    python = "python"


@app.command(epilog="""[bold]Examples[/]

  autodiff derive -e "sin(x) * x"

  autodiff derive -e "x**3 * y" --wrt x

  autodiff derive examples/tutorial.expr --format json

  autodiff derive -e "sum(W @ x)" --at 'W=[[1,2],[3,4]]' --at 'x=[1,1]'

  autodiff derive examples/mlp.expr --format python > mlp_grad.py

  autodiff derive -e "x**3 * y" --order 2 --check""")
@_runs_programs
def derive(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    at: List[str] = AT,
    wrt: Optional[str] = typer.Option(None, "--wrt", metavar="a,b", help="Derive with respect to these inputs only."),
    output: Optional[str] = OUTPUT,
    order: int = typer.Option(1, "--order", metavar="1|2", help="2 also derives the second derivatives."),
    check: bool = typer.Option(False, "--check", help="Run the derived program against the engine's gradients at the "
                                                      "--at point, or at random points (exit 1 if one differs)."),
    format: DeriveFormat = typer.Option(DeriveFormat.auto, "--format", "-f",
                                        help="rich, plain, json, latex, markdown, expr (a program autodiff eval runs) or "
                                             "python (a module that needs only NumPy); auto is rich on a terminal."),
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """Derive the output's derivatives as formulas: simplified, shared parts computed once."""
    from ..program import derive as derivation
    from .common import emit_with
    from .program_input import parse_names
    from .render import derive as render

    source, values = _inputs(file, expr, at)
    result = derivation.derive(source, values, wrt=parse_names(wrt, "--wrt"), output=output, order=order,
                               options=options)
    if check:
        result.check = derivation.check(result, source, values, output=output, options=options)
    emit_with(render, result, format)
    if result.check is not None and not result.check.passed:
        from .exit_codes import ExitCode

        raise typer.Exit(ExitCode.CHECK_FAILED)


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
    limit: int = typer.Option(500, "--limit", metavar="N", min=1,
                              help="Show at most N nodes (explain's --limit counts paths, 10 by default)."),
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
    limit: int = typer.Option(10, "--limit", metavar="N", min=1,
                              help="Show the N largest paths per input (graph's --limit counts nodes, 500 by default)."),
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
    from .main import say

    for warning in result.warnings:
        say(line_for(warning))
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

  autodiff plot -e "sin(x) * x" --wrt x --range -6:6 --samples 25 --format json | jq '.points[0]'""")
@_runs_programs
def plot(
    file: Optional[str] = FILE,
    expr: Optional[str] = EXPR,
    wrt: str = typer.Option(..., "--wrt", metavar="NAME", help="The input to vary along the x axis."),
    range_: str = typer.Option(..., "--range", metavar="LOW:HIGH", help="Its range, e.g. -3:3."),
    at: List[str] = typer.Option([], "--at", metavar="NAME=VALUE,...", help="The other inputs' values, held fixed."),
    output: Optional[str] = OUTPUT,
    samples: int = typer.Option(201, "--samples", metavar="N", help="How many evenly spaced points (2 to 100,000)."),
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
    result = sample(source, wrt, low, high, points=samples, at=values, output=output, options=options)
    _plot_warnings(result)
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


def _plot_warnings(result) -> None:
    """What plot says on standard error besides its failures: its notes, the language's warnings,
    and the points where the output or its derivative is nan or infinite (the first run alone)."""
    from .main import say
    from .messages import line_for

    for note in result.notes:
        print(f"autodiff: note: {note}", file=sys.stderr)
    for warning in result.warnings:
        say(line_for(warning))
    if result.not_finite:
        x = result.xs[result.first_not_finite]
        alone = result.not_finite_warnings
        say(f"autodiff: warning: {result.output} or d{result.output}/d{result.wrt} is nan or infinite at "
            f"{result.not_finite} of {len(result.xs)} point(s) (a picture leaves them out); the first, at "
            f"{result.wrt}={x:g}{', run alone, says:' if alone else ''}")
        for warning in alone:
            say(line_for(warning))


class Unused(str, Enum):
    warn = "warn"
    fail = "fail"
    delete = "delete"


_TEST_SUBCOMMANDS = ("review", "accept", "reject", "merge")


def _test_group_class():
    from typer._click import Context
    from typer.core import TyperCommand, TyperGroup

    class _Context(Context):
        @property
        def command_path(self) -> str:
            return super().command_path.rstrip()

    class RunCommand(TyperCommand):
        """`autodiff test PATH...`: the default of the group, shown as `autodiff test`."""

        context_class = _Context

    class TestGroup(TyperGroup):
        """`autodiff test PATH...` runs files; a first word review, accept, reject or merge is a
        sub-command (a directory of that name is reached as ./review)."""

        def parse_args(self, ctx, args):
            if not args or args[0] not in _TEST_SUBCOMMANDS:
                args = ["run", *args]
            return super().parse_args(ctx, args)

        def resolve_command(self, ctx, args):
            name, command, rest = super().resolve_command(ctx, args)
            return ("" if name == "run" else name), command, rest

    return TestGroup, RunCommand


_TestGroup, _RunCommand = _test_group_class()
test_app = typer.Typer(cls=_TestGroup, add_completion=False, rich_markup_mode="rich",
                       context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(test_app, name="test", help="Compare expression files' values and gradients with their golden records.")


@test_app.command("run", cls=_RunCommand, hidden=True, epilog="""[bold]Examples[/]

  autodiff test examples

  autodiff test formulas/ --update            [dim]# prints what changed in each record[/]

  autodiff test formulas/ --pending           [dim]# writes x.expr.golden.new files to review[/]

  autodiff test review | accept | reject [PATH...]

  autodiff test suite/ -k "matrix and not slow" -x -q

  autodiff test suite/ -j 4 --shard 2/3 --junit report.xml     [dim]# or --shard auto in GitLab, CircleCI[/]

  autodiff test merge shard-*.xml --expect suite/

  autodiff test suite/ --format json | jq .summary""")
@_runs_programs
def test(
    ctx: typer.Context,
    paths: Optional[List[str]] = typer.Argument(None, metavar="PATH...", show_default=False, click_type=_words(),
                                                help="Expression files and directories (searched below); default: ."),
    update: bool = typer.Option(False, "--update", help="Write or refresh the golden records, showing what changed."),
    pending: bool = typer.Option(False, "--pending", help="As --update, but write NAME.golden.new beside each record, "
                                                          "for autodiff test review / accept / reject."),
    at: List[str] = typer.Option([], "--at", metavar="NAME=VALUE,...",
                                 help="With --update: one more point to record, for the files that take these inputs."),
    glob: List[str] = typer.Option([], "--glob", metavar="PATTERN",
                                   help="File names to take in directories (repeatable); default: [tool.autodiff] "
                                        "patterns in pyproject.toml, else *.expr."),
    keyword: Optional[str] = typer.Option(None, "-k", metavar="EXPR",
                                          help="Only files whose path contains these words (not, and, or, as pytest)."),
    exitfirst: bool = typer.Option(False, "--exitfirst", "-x", help="Stop at the first file that does not pass."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="List only the files that do not pass."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="List every file, on a terminal too."),
    unused: Unused = typer.Option(Unused.warn, "--unused",
                                  help="Records without a file and points that no longer apply: warn, fail, or delete "
                                       "them (not with -k, --shard, or a failing run)."),
    rtol: Optional[float] = typer.Option(None, "--rtol", min=0.0, metavar="TOL",
                                         help="Relative tolerance of comparisons (default 1e-9; a record's own wins)."),
    atol: Optional[float] = typer.Option(None, "--atol", min=0.0, metavar="TOL",
                                         help="Absolute tolerance of comparisons (default 1e-12; a record's own wins)."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, max=256, metavar="N",
                                       help="Worker processes (at most 256); default: one per CPU core."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.0, metavar="SECONDS",
                                  help="Most seconds one file may run before it is stopped and errored; 0: no limit."),
    shard: Optional[str] = typer.Option(None, "--shard", metavar="I/N|auto",
                                        help="Run only the I-th of N shards (from 1); auto: from GitLab's or CircleCI's "
                                             "variables. Bazel's TEST_SHARD_INDEX is honoured without it."),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE", help="Also write a JUnit XML report."),
    format: Format = FORMAT,
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see _runs_programs)
) -> None:
    """Compare expression files' values and gradients with their golden records (x.expr.golden.json).

    Sub-commands: [bold]autodiff test review[/], [bold]accept[/], [bold]reject[/] settle pending records;
    [bold]autodiff test merge[/] checks that CI shards ran every file once.
    """
    import time

    from ..testing import discover as finding
    from ..testing.compare import DEFAULT_ATOL, DEFAULT_RTOL
    from ..testing.config import ci_refusal, find_config, in_ci
    from ..testing.discover import SuiteProblem
    from ..testing.one_file import Settings
    from ..testing.pool import default_jobs, run_files
    from ..testing.reporting import Progress, RunSummary
    from .program_input import parse_at

    writes = "--pending" if pending else "--update" if update else "--unused delete" if unused is Unused.delete else None
    if writes and in_ci():  # nothing is rewritten (or deleted) in CI: refused before anything runs
        raise SuiteProblem(ci_refusal(writes))
    update = update or pending
    if at and not update:
        raise typer.BadParameter("--at adds points to records, so it needs --update", param_hint="'--at'")
    extra_points = [{name: getattr(value, "tolist", lambda: value)() for name, value in parse_at([option]).items()}
                    for option in at]
    paths = paths or ["."]
    config = find_config(paths[0])
    globs = tuple(glob) or config.patterns
    rtol = rtol if rtol is not None else (config.rtol if config.rtol is not None else DEFAULT_RTOL)
    atol = atol if atol is not None else (config.atol if config.atol is not None else DEFAULT_ATOL)
    _check_tolerances(atol, rtol)
    chosen_shard = finding.shard_from_environment(shard)
    if unused is Unused.delete and (keyword or chosen_shard):
        raise typer.BadParameter(f"deleting unused records needs the whole suite: not with "
                                 f"{'-k' if keyword else 'a shard (' + chosen_shard[2] + ')'}", param_hint="'--unused'")
    all_files = finding.discover(paths, globs)
    files = finding.select(all_files, keyword, config.root) if keyword else all_files
    if chosen_shard is not None:
        finding.touch_shard_status_file()
        files = finding.shard(files, chosen_shard[0], chosen_shard[1], config.root)
    if timeout != timeout or timeout == float("inf"):
        timeout = 0.0 if timeout == float("inf") else _bad_number("--timeout", timeout)
    ci = in_ci()
    explicit = {name: True for name in ("seed", "dtype") if _from_command_line(ctx, name)}
    settings = Settings(rtol=rtol, atol=atol, update=update, extra_points=extra_points, options=options,
                        pending=pending, ci=ci, explicit=explicit)
    if not files:
        from .exit_codes import ExitCode

        if all_files and chosen_shard is not None and not keyword:
            print(f"autodiff: shard {chosen_shard[0]}/{chosen_shard[1]} has none of the {len(all_files)} file(s) "
                  "collected: nothing to run here", file=sys.stderr)
            _emit_suite(RunSummary([], 0.0, update, pending), format)
            return
        where = " ".join(paths)
        why = f"none of the {len(all_files)} file(s) matches -k {keyword}" if all_files else \
            f"no file under {where} matches {', '.join(globs)}"
        print(f"autodiff: no files collected: {why}", file=sys.stderr)
        raise typer.Exit(ExitCode.NO_TESTS)
    progress = Progress(len(files), enabled=sys.stderr.isatty() and format is not Format.json)
    started = time.perf_counter()
    stop = (lambda result: result.status not in ("passed", "updated")) if exitfirst else None
    try:
        results = run_files(files, settings, jobs or default_jobs(), on_result=progress.advance, timeout=timeout,
                            stop_when=stop)
    finally:
        progress.close()
    unused_records = [] if (keyword or chosen_shard or len(results) < len(files)) else \
        finding.unused_records(paths, globs, files)
    summary = RunSummary(results, time.perf_counter() - started, update, pending, unused_records,
                         unused_fails=unused is Unused.fail, quiet=quiet, verbose=verbose,
                         not_run=len(files) - len(results))
    if unused is Unused.delete and summary.unused_count:
        _delete_unused(summary)
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


def _from_command_line(ctx, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _delete_unused(summary) -> None:
    """--unused delete: records no file owns are removed, points that no longer apply dropped;
    refused (nothing deleted) when the run did not pass."""
    from ..testing.one_file import drop_points

    if not summary.succeeded:
        print("autodiff: unused records and points were not deleted: the run did not pass", file=sys.stderr)
        return
    for path, reason in summary.unused_records:
        try:
            os_remove(path)
            print(f"autodiff: deleted {path} ({reason})", file=sys.stderr)
        except OSError as exc:
            print(f"autodiff: cannot delete {path} ({exc.strerror or exc})", file=sys.stderr)
    for result in summary.results:
        if result.unused and drop_points(result.path, [at for at, _ in result.unused]):
            print(f"autodiff: dropped {len(result.unused)} unused point(s) from the record of {result.path}",
                  file=sys.stderr)
    summary.unused_records = []
    for result in summary.results:
        result.unused = []


def os_remove(path) -> None:
    import os

    os.remove(path)


PATHS = typer.Argument(None, metavar="PATH...", show_default=False, click_type=_words(),
                       help="Expression files, their records, pending records or directories; default: .")


def _pending(paths) -> list:
    from ..testing.discover import pending_records

    return pending_records(paths or ["."])


def _settle(pending, accept: bool) -> None:
    from ..testing.records import PENDING_SUFFIX, RECORD_SUFFIX

    import os

    if accept:
        os.replace(pending, str(pending)[: -len(PENDING_SUFFIX)] + RECORD_SUFFIX)
    else:
        os.remove(pending)


@test_app.command("accept")
def accept(paths: Optional[List[str]] = PATHS) -> None:
    """Accept pending records (x.expr.golden.new): each replaces its record."""
    _settle_all(paths, accept=True)


@test_app.command("reject")
def reject(paths: Optional[List[str]] = PATHS) -> None:
    """Reject pending records (x.expr.golden.new): each is deleted; the records stay as they are."""
    _settle_all(paths, accept=False)


def _settle_all(paths, *, accept: bool) -> None:
    from .._text import shown

    word = "accepted" if accept else "rejected"
    found = _pending(paths)
    for pending in found:
        _settle(pending, accept=accept)
        print(f"{word}\t{shown(str(pending))}")
    print(f"{word} {len(found)} pending record(s)" if found else "nothing pending", file=sys.stderr)


@test_app.command("review")
def review(paths: Optional[List[str]] = PATHS) -> None:
    """Review pending records one by one: what changed, then accept, reject or skip."""
    from .._text import shown
    from ..testing.review import describe

    if not sys.stdin.isatty():
        print("autodiff: error: autodiff test review asks at a terminal, and standard input is not one: use "
              "autodiff test accept or autodiff test reject", file=sys.stderr)
        raise typer.Exit(2)
    found = _pending(paths)
    if not found:
        print("nothing pending")
        return
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    for number, pending in enumerate(found, 1):
        print(f"[{number}/{len(found)}] {shown(str(pending))}")
        for line in describe(pending):
            print(f"  {line}")
        while True:
            answer = typer.prompt("accept, reject or skip? [a/r/s]", default="s", show_default=False).strip().lower()
            if answer in ("a", "accept", "r", "reject", "s", "skip"):
                break
        if answer.startswith("a"):
            _settle(pending, accept=True)
            counts["accepted"] += 1
        elif answer.startswith("r"):
            _settle(pending, accept=False)
            counts["rejected"] += 1
        else:
            counts["skipped"] += 1
    print(", ".join(f"{what} {count}" for what, count in counts.items()))


@test_app.command("merge")
def merge(
    reports: List[str] = typer.Argument(..., metavar="REPORT.xml...", click_type=_words(),
                                        help="The JUnit reports of the shards."),
    expect: List[str] = typer.Option(..., "--expect", metavar="PATH",
                                     help="The suite the shards split (repeatable): every file it collects must have "
                                          "run exactly once."),
    glob: List[str] = typer.Option([], "--glob", metavar="PATTERN", help="File names to take, as autodiff test."),
) -> None:
    """Check that the JUnit reports of CI shards together ran every file exactly once."""
    from collections import Counter

    from .._text import shown
    from ..testing import discover as finding
    from ..testing.config import find_config
    from ..testing.files import ReadProblem, read_regular
    from ..testing.junit import files_in_report
    from ..testing.discover import SuiteProblem

    def key(path: str) -> str:
        import os

        return finding.relative(path, os.getcwd())

    ran: Counter = Counter()
    for report in reports:
        try:
            data = read_regular(report, 256 * 1024 * 1024)
        except ReadProblem as exc:
            raise SuiteProblem(f"{report}: {exc}") from None
        if data is None:
            raise SuiteProblem(f"{report}: no such file")
        try:
            ran.update(key(path) for path in files_in_report(data, report))
        except ValueError as exc:
            raise SuiteProblem(str(exc)) from None
    globs = tuple(glob) or find_config(expect[0]).patterns
    expected = {key(str(path)) for path in finding.discover(expect, globs)}
    missing = sorted(expected - set(ran))
    duplicated = sorted(path for path, count in ran.items() if count > 1)
    unexpected = sorted(set(ran) - expected)
    for kind, paths in (("missing", missing), ("duplicated", duplicated), ("unexpected", unexpected)):
        for path in paths:
            extra = f"\tran {ran[path]} times" if kind == "duplicated" else ""
            print(f"{kind}\t{shown(path)}{extra}")
    if missing or duplicated:
        print(f"summary\tfiles {len(expected)}\tmissing {len(missing)}\tduplicated {len(duplicated)}")
        raise typer.Exit(1)
    print(f"summary\tfiles {len(expected)}\tran once each in {len(reports)} report(s)")


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

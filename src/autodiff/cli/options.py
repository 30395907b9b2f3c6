"""The options the commands share, declared once: the program and its inputs, how a program
runs (one language Options, see `runs_programs`), --points and its companions, and the small
choices (`--color`, `--dtype`...). Each command's `--format` choices come from the renderer
table (cli/render/__init__.py). Declared with cli/declare.py, not Typer: importing this costs
nothing of Typer's (cli/quick.py reads these declarations without it)."""

from __future__ import annotations

import functools
import inspect
from enum import Enum
from typing import List, Optional

from .._record import record
from .declare import Argument, Option
from .render import format_choices


def choices(name: str, *values: str) -> type:
    """A small set of words an option takes, as the Enum Typer wants."""
    return Enum(name, {value: value for value in values}, type=str)


Color = choices("Color", "auto", "always", "never")
DType = choices("DType", "float64", "float32")
Device = choices("Device", "cpu", "cuda")
EdgeLabels = choices("EdgeLabels", "none", "local")
RecordFormat = choices("RecordFormat", "jsonl", "csv", "tsv")  # --points' records, read (--in) or written (--out)
OnError = choices("OnError", "stop", "skip", "null")
Mode = choices("Mode", "reverse", "forward")
Unused = choices("Unused", "warn", "fail", "delete")


def words():
    """Text whose metavar says all (FILE, PATH...): the help shows no `<str>` beside it. Declared as
    `click_type=words`, called only when Typer is loaded (see declare.Declared.typer)."""
    from typer._click.types import StringParamType

    class Words(StringParamType):
        def get_metavar(self, param, ctx=None) -> str:
            return ""

    return Words()


FILE = Argument(None, metavar="FILE", show_default=False, click_type=words,
                help="The expression file; [bold]-[/] reads standard input, as does no FILE when standard "
                     "input is a pipe ([bold]echo 'x**2' | autodiff grad --at x=3[/]).")
EXPR = Option(None, "-e", "--expr", metavar="EXPR", help="The program itself, instead of a FILE.")
AT = Option([], "--at", metavar="NAME=VALUE,...",
            help="Input values: numbers or \\[lists], e.g. [bold]--at 'a=2,W=[[1,2],[3,4]]'[/] (quote brackets for the "
                 "shell; no space after a comma). May be repeated.")
OUTPUT = Option(None, "--output", metavar="NAME", help="Use this variable as the output, not the last statement.")


def table_format(kind: str, name: str) -> tuple:
    """(the Enum of `--format`'s choices for a kind of result, the option): the choices come from
    the renderer table, for the commands whose results are tables (grad, eval, test)."""
    choices = format_choices(kind, name)
    return choices, Option(choices.auto, "--format", "-f",
                           help="rich (a table), plain (tab-separated lines) or json; auto is rich on a "
                                "terminal.")


PATHS = Argument(None, metavar="PATH...", show_default=False, click_type=words,
                 help="Expression files, their records, pending records or directories; default: .")

def _parameter(name: str, annotation, default) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation)


# How a program runs, for every command that runs one: declared here once, and handed to the
# command as one language Options (see `runs_programs`).
RUN_OPTIONS = [
    _parameter(name, annotation, default)
    for name, annotation, default in (
        ("dtype", DType, Option(DType.float64, "--dtype", help="Floating-point type of the computation.")),
        ("seed", int, Option(0, "--seed", metavar="N", min=0, help="Seed for rand() and randn().")),
        ("device", Device, Option(Device.cpu, "--device",
                                  help="Where to compute: cpu, or cuda (needs CuPy and a GPU).")),
        ("max_elements", int, Option(50_000_000, "--max-elements", metavar="N", min=1,
                                     help="Largest tensor a program may create.")),
        ("max_iterations", int, Option(1_000_000, "--max-iterations", metavar="N", min=0,
                                       help="Most loop turns and function calls in one run.")),
        # Accepted (and shown in --help) here; main.py reads these two from the command line, before any command runs.
        ("color", Color, Option(Color.auto, "--color",
                                help="Colours: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces "
                                     "them), always or never. Errors are coloured too.")),
        ("debug", bool, Option(False, "--debug", help="Show Python's traceback on errors.")),
    )
]


def _expanded(command, name: str, parameters: list, gather):
    """`command` with its parameter `name` replaced by `parameters` (Typer's options); it is
    called with `gather(**their values)` in its place."""
    signature = inspect.signature(command, eval_str=True)
    own = []
    for parameter in signature.parameters.values():
        own.extend(parameters if parameter.name == name else [parameter])
    names = [p.name for p in parameters]

    @functools.wraps(command)
    def run(**values):
        taken = {n: values.pop(n) for n in names}
        return command(**values, **{name: gather(**taken)})

    run.__signature__ = signature.replace(parameters=own)
    run.__annotations__ = {p.name: p.annotation for p in own}
    return run


def runs_programs(command):
    """Give a command the options of RUN_OPTIONS, where its `options` parameter stands; it is
    called with them as one `options` (a language Options, its device checked first)."""
    def gather(color, debug, **shared):  # --color and --debug: read by main.py
        return run_options(**shared)

    return _expanded(command, "options", RUN_OPTIONS, gather)


def reads_program(command=None, *, at=None):
    """Give a command FILE, -e and --at where its `program` parameter stands; it is called with
    `program` = (the Source, the --at values). `at`: another declaration of --at (plot's)."""
    if command is None:
        return functools.partial(reads_program, at=at)
    parameters = [_parameter("file", Optional[str], FILE), _parameter("expr", Optional[str], EXPR),
                  _parameter("at", List[str], AT if at is None else at)]

    def gather(file, expr, at):
        from .program_input import read_inputs

        return read_inputs(file, expr, at)

    return _expanded(command, "program", parameters, gather)


@record
class PointsAsked:
    """--points and its companions (cli/commands/points_loop.py)."""

    points: Optional[str]
    points_in: Optional[RecordFormat]
    points_out: Optional[RecordFormat]
    flatten: bool
    no_header: bool
    on_error: OnError


def reads_points(command):
    """Give a command --points and its companions where its `points` parameter stands; it is
    called with them as one PointsAsked."""
    return _expanded(command, "points", POINT_OPTIONS, PointsAsked)


def run_options(dtype: DType, seed: int, device: Device, max_elements: int, max_iterations: int):
    """The language Options of a run; CUDA asked for and unusable is said before anything runs
    (DeviceUnavailable, exit 2)."""
    from ..language import Options

    if device is Device.cuda:
        from .. import backend

        backend.module_for("cuda")
    return Options(dtype=dtype.value, device=device.value, seed=seed, max_elements=max_elements,
                   max_iterations=max_iterations)


# --points and its companions, on grad and eval (see cli/commands/points_loop.py).
POINTS = Option(None, "--points", metavar="FILE|-",
                help="Many points in one run: CSV with a header of input names, or JSON Lines; one result each.")
POINTS_IN = Option(None, "--in", help="The points' format (default: from the file's extension; csv for -).")
POINTS_OUT = Option(None, "--out", help="The results' format (default: the points' own: jsonl, csv or tsv).")
FLATTEN = Option(False, "--flatten", help="With --out csv|tsv: a column per tensor element, grad_W[0,1].")
NO_HEADER = Option(False, "--no-header", help="With --out csv|tsv: no header line.")
ON_ERROR = Option(OnError.stop, "--on-error",
                  help="A bad point: stop (exit 2 or 4), skip it (said on standard error), or null (a record "
                       "with the error). With skip or null the exit status is 1 if any point failed.")


POINT_OPTIONS = [_parameter("points", Optional[str], POINTS), _parameter("points_in", Optional[RecordFormat], POINTS_IN),
                 _parameter("points_out", Optional[RecordFormat], POINTS_OUT), _parameter("flatten", bool, FLATTEN),
                 _parameter("no_header", bool, NO_HEADER), _parameter("on_error", OnError, ON_ERROR)]


def check_tolerances(atol: float, rtol: float) -> None:
    """A NaN tolerance would pass every comparison (nan <= x is false, but numpy.isclose and
    the checks' own tests differ on it): refused, as a usage error."""
    for name, value in (("--atol", atol), ("--rtol", rtol)):
        if value != value:
            bad_number(name, value)


def bad_number(name: str, value) -> float:
    raise bad_parameter(name, f"{value} is not a number of the allowed range")


def bad_parameter(name: str, message: str) -> Exception:
    """Typer's error for a value of option `name` the command refuses: its message, as for any
    other bad value of an option (main.py says it, on either path; Typer is loaded only to say it)."""
    import typer

    return typer.BadParameter(message, param_hint=f"'{name}'")

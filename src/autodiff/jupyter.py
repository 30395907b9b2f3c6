"""autodiff in Jupyter: `%load_ext autodiff`, then a cell of program text run by a cell magic.

    %%autodiff --at a=2,b=3,c=5,d=10
    u = a * b
    e = u + log(d) * c

shows the output and every gradient as a table (program.run.Differentiation); `--tree` adds
the recorded graph drawn as SVG, `--explain` the chain rule (autodiff explain), `--graph` the
graph run backward with each edge's local derivative. `--wrt`, `--output`, `--grad-output`,
`--retain`, `--order`, `--check` and `--eps` mean what they mean to `autodiff grad`. The cell's result is the object itself, so
`_` holds it for the next cell; its `grads` are every gradient its table shows (the inputs', then
each retained variable's).

This is the top of the layers, beside the command line: IPython is imported here only, and
this module only when a notebook loads the extension (autodiff.load_ipython_extension).

`--explain --html` (or `--graph --html`) shows instead the page of `autodiff explain --format
html`, inline: the graph, each input's paths and the backward pass step by step, to click through.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, fields

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class

from .program.run import Differentiation


class _Parser(argparse.ArgumentParser):
    """argparse that raises its complaint instead of printing a usage and exiting."""

    def error(self, message: str):
        raise argparse.ArgumentError(None, message)


def parser() -> argparse.ArgumentParser:
    options = _Parser(prog="%%autodiff", add_help=False, exit_on_error=False)
    options.add_argument("--at", action="append", default=[])
    options.add_argument("--wrt")
    options.add_argument("--output")
    options.add_argument("--grad-output")
    options.add_argument("--retain")
    options.add_argument("--order", type=int, choices=(1, 2), default=1)
    options.add_argument("--check", action="store_true")
    options.add_argument("--eps", type=float)
    shown = options.add_mutually_exclusive_group()
    shown.add_argument("--tree", action="store_true")
    shown.add_argument("--explain", action="store_true")
    shown.add_argument("--graph", action="store_true")
    options.add_argument("--html", action="store_true")
    return options


OPTIONS = "--at NAME=VALUE,... --wrt a,b --output NAME --grad-output ones|VALUE --retain NAMES --order 1|2 --check " \
          "--eps STEP and one of --tree, --explain, --graph"


def run_cell(line: str, cell: str, name: str = "<cell>"):
    """What `%%autodiff LINE` shows for `cell`: a Differentiation, an Explanation or a Recorded graph."""
    from .language import Source
    from .language.option_names import flags
    from .program.errors import UsageProblem

    try:
        args = parser().parse_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as error:  # ValueError: shlex, an unclosed quote
        raise UsageProblem(f"%%autodiff {line.strip()}: {error}; the options: {OPTIONS}") from None
    with flags():  # the magic's line is written with the command line's flags: messages name them
        return _run_cell(args, Source(cell, name))


def _run_cell(args, source):
    from .cli.program_input import parse_at, parse_names
    from .program import check, differentiate, record
    from .program.errors import UsageProblem
    from .program.explain import explain

    at = parse_at(args.at)
    wrt = parse_names(args.wrt, "--wrt")
    if args.html:  # explain --format html's page, shown in the notebook
        from .program.errors import UsageProblem
        from .program.page import build

        if not (args.explain or args.graph):
            raise UsageProblem("%%autodiff --html shows the page of --explain: add --explain")
        return build(source, at, wrt=wrt, output=args.output, grad_output=args.grad_output)
    if args.explain:
        return explain(source, at, wrt=wrt, output=args.output, grad_output=args.grad_output)
    if args.graph:
        return record(source, at, wrt=wrt, output=args.output, backward=True, grad_output=args.grad_output,
                      edge_labels=True)
    result = CellRun.of(differentiate(source, at, wrt=wrt, retain=parse_names(args.retain, "--retain"),
                                      output=args.output, grad_output=args.grad_output, graph=args.tree,
                                      order=args.order))
    if args.eps is not None and not args.check:
        raise UsageProblem("--eps is the step of --check: add --check")
    if args.check and result.differentiable:
        check(result, eps=args.eps)
    return result


@dataclass(repr=False)
class CellRun(Differentiation):
    """A cell's run: `_.grads` holds every gradient its table shows, the inputs' and then each
    retained variable's (`--retain`), by name. As text (where a front end shows no HTML, or
    print(_)), it is `autodiff grad`'s table, as a terminal without colour shows it."""

    TEXT_WIDTH = 100

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.table())

    def __str__(self) -> str:
        return self.table()

    def table(self) -> str:
        """`autodiff grad`'s table of this run (rich, without colour), as text."""
        import io

        from rich.console import Console

        from .cli.render import renderer

        out = io.StringIO()
        console = Console(file=out, width=self.TEXT_WIDTH, color_system=None, no_color=True, force_terminal=False,
                          highlight=False, emoji=False)
        renderer("grad", "rich")(self, console)
        return out.getvalue().rstrip("\n")

    @classmethod
    def of(cls, run: Differentiation) -> "CellRun":
        return cls(**{f.name: getattr(run, f.name) for f in fields(run)})

    @property
    def grads(self) -> dict:
        shown = dict(super().grads)
        shown.update((q.name, q.grad) for q in self.retained if q.name not in shown)
        return shown


@magics_class
class AutodiffMagics(Magics):
    @cell_magic
    def autodiff(self, line: str, cell: str):
        """%%autodiff [--at NAME=VALUE,...] [--wrt a,b] [--output NAME] [--grad-output ones|VALUE]
        [--retain NAMES] [--order 1|2] [--check [--eps STEP]] [--tree | --explain | --graph]: run the cell's program and show
        the result."""
        from .language import ProgramError
        from .program.errors import GradientProblem, UsageProblem

        try:
            return run_cell(line, cell)
        except (ProgramError, UsageProblem, GradientProblem) as error:
            # one readable message, as the command line gives it (its hint too), instead of a traceback
            render = getattr(error, "render", None)
            message = render() if callable(render) else str(error)
            if getattr(error, "hint", ""):
                message += f"\nhint: {error.hint}"
            raise UsageError(message) from None


def load_ipython_extension(ipython) -> None:
    ipython.register_magics(AutodiffMagics)

"""The commands, one module each: read the input, ask the program layer for a result, hand it to
a renderer (cli/render). Their options are declared in their signatures (cli/declare.py).

`COMMANDS` names them once (`TEST`, `autodiff test`): cli/app.py registers each with Typer, and
cli/quick.py finds them here to parse their usual command lines without Typer. The sub-commands
of `autodiff test` (suite_subcommands.py) are Typer's alone."""

from __future__ import annotations

# command -> (its module here, its function there, the module's examples for --help's epilog)
COMMANDS = {
    "grad": ("grad", "grad", "GRAD_EXAMPLES"),
    "eval": ("grad", "evaluate", "EVAL_EXAMPLES"),
    "derive": ("derive", "derive", "EXAMPLES"),
    "graph": ("graph", "graph", "EXAMPLES"),
    "explain": ("explain", "explain", "EXAMPLES"),
    "plot": ("plot", "plot", "EXAMPLES"),
}
# `autodiff test`, the same way: cli/app.py registers it as a group, with its sub-commands
TEST = ("suite", "test", "EXAMPLES")


def command(name: str):
    """The command `name` as it runs: its function, given the options of how a program runs
    (options.runs_programs); every option in its signature."""
    from importlib import import_module

    from ..options import runs_programs

    module, function, _ = TEST if name == "test" else COMMANDS[name]
    return runs_programs(getattr(import_module(f"{__name__}.{module}"), function))


def examples(name: str) -> str:
    """The examples `autodiff NAME --help` ends with."""
    from importlib import import_module

    module, _, examples = COMMANDS[name]
    return getattr(import_module(f"{__name__}.{module}"), examples)

"""The `autodiff` application: its commands registered with Typer. Each command lives in
cli/commands/ (named in COMMANDS there), its shared options in cli/options.py, its output in
cli/render/. Their options are declared without Typer (cli/declare.py) and made Typer's here."""

from __future__ import annotations

import typer

from .._version import __version__
from .commands import COMMANDS, command, examples, suite, suite_subcommands
from .declare import for_typer

app = typer.Typer(
    name="autodiff",
    help="See, check and test derivatives of expression files.",
    add_completion=True,  # --install-completion, --show-completion: bash, zsh, fish (shellingham is loaded only to install)
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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


for _name in COMMANDS:
    app.command(_name, epilog=examples(_name))(for_typer(command(_name)))

_TestGroup, _RunCommand = suite.group_classes()
test_app = typer.Typer(cls=_TestGroup, add_completion=False, rich_markup_mode="rich",
                       context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(test_app, name="test", help="Compare expression files' values and gradients with their golden records.")
test_app.command("run", cls=_RunCommand, hidden=True, epilog=suite.EXAMPLES)(for_typer(command("test")))
test_app.command("accept")(for_typer(suite_subcommands.accept))
test_app.command("reject")(for_typer(suite_subcommands.reject))
test_app.command("review")(for_typer(suite_subcommands.review))
test_app.command("merge")(for_typer(suite_subcommands.merge))

"""The commands' options and arguments, declared once and without importing Typer.

`Option(default, "--name", "-n", help=...)` and `Argument(default, ...)` take what `typer.Option`
and `typer.Argument` take and keep it; a command's signature holds them. Two readers read the
same signature:

- cli/app.py makes each declaration Typer's (`Declared.typer`) and registers the command, for
  `--help`, completion, and every command line that only Typer parses;
- cli/quick.py parses the usual command lines of every command by them (not test's sub-commands)
  without loading Typer, whose imports cost about half of `import numpy` (bench/cli.py).

A setting that changes how a value is read (`callback`, `envvar`, `parser`, `prompt`...) is one
the quick parser does not know: a command that declares one is left to Typer whole.
"""

from __future__ import annotations

import inspect


class Declared:
    """One option or argument of a command, as declared: Typer's call, not yet made."""

    __slots__ = ("kind", "default", "names", "settings")

    def __init__(self, kind: str, default, names: tuple, settings: dict) -> None:
        self.kind = kind  # "Option" or "Argument"
        self.default = default  # `...`: required
        self.names = names  # "--format", "-f"
        self.settings = settings

    def typer(self):
        """The typer.Option or typer.Argument declared. A `click_type` given as a function is
        called now: it makes the type, which imports Click."""
        import typer

        settings = dict(self.settings)
        if inspect.isfunction(settings.get("click_type")):
            settings["click_type"] = settings["click_type"]()
        return getattr(typer, self.kind)(self.default, *self.names, **settings)

    def __repr__(self) -> str:
        return f"{self.kind}({', '.join(map(repr, (self.default, *self.names)))})"


def Option(default, *names: str, **settings) -> Declared:  # noqa: N802  (typer.Option's name)
    return Declared("Option", default, names, settings)


def Argument(default, **settings) -> Declared:  # noqa: N802  (typer.Argument's name)
    return Declared("Argument", default, (), settings)


def for_typer(command):
    """`command` with the declarations in its signature made Typer's (see `Declared.typer`);
    parameters declared with Typer itself stay as they are."""
    import functools

    signature = inspect.signature(command, eval_str=True)
    parameters = [p.replace(default=p.default.typer()) if isinstance(p.default, Declared) else p
                  for p in signature.parameters.values()]

    @functools.wraps(command)
    def run(**values):
        return command(**values)

    run.__signature__ = signature.replace(parameters=parameters)
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run

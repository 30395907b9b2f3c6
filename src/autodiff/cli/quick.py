"""The usual command lines of every command (grad, eval, derive, graph, explain, plot, and test's
run; not test's sub-commands), parsed without loading Typer, Click or Rich: by the options the
commands declare (cli/declare.py), the same declarations that cli/app.py gives Typer. Importing
Typer costs about half of `import numpy`, and a script may run autodiff once per file or per
point (bench/cli.py times it). A command that must know whether an option was given or left to
its default (test's --seed and --dtype) asks `given_on_command_line`, which answers on both paths.

`parse` reads a command line the way Click does for what it meets: options long (`--at V`,
`--at=V`) or short (`-f V`, `-fV`), in any order, around the FILE; a value is the next word
whatever it looks like; an option given twice keeps the last value, a repeatable one every
value; `--` ends the options. Values are converted as Typer converts them (by the parameter's
annotation: text, int, float, a flag, a choice, a list), with the declared `min` and `max`.

Whatever it does not know it leaves to Typer, which parses the command line as always, says
what is wrong and exits as it does: `--help`, an unknown option or command, a missing value, a
value that does not convert or is out of range, a required option not given, an extra
argument, a setting of a declaration that changes how values are read (`callback`, `envvar`...),
and shell completion. tests/cli/test_quick.py holds the two readings of every option of these
commands to the same values, and the two paths to the same output, errors and statuses.
"""

from __future__ import annotations

import contextvars
import inspect
import typing
from enum import Enum

from .declare import Declared
from .exit_codes import ExitCode

QUICK = ("grad", "eval", "derive", "graph", "explain", "plot", "test")  # the commands parsed here

# Settings of a declaration that change only --help (or nothing the parser reads).
_SHOWN_ONLY = {"help", "metavar", "show_default", "hidden", "rich_help_panel", "click_type", "show_choices"}
_READ = {"min", "max", "case_sensitive"}  # and those the parser follows


def run(argv: list):
    """Run the command if the command line is one `parse` reads, and return its exit status;
    else None (Typer's to parse)."""
    if not argv or argv[0] not in QUICK:
        return None
    from .commands import command

    if argv[0] == "test":
        from .commands.suite import SUBCOMMANDS

        if argv[1:2] and argv[1] in SUBCOMMANDS:
            return None  # review, accept, reject, merge: Typer's (suite_subcommands.py)
    function = command(argv[0])
    given: set = set()
    values = parse(function, argv[1:], given)
    if values is None:
        return None
    token = _GIVEN.set(frozenset(given))
    try:
        status = function(**values)
    finally:
        _GIVEN.reset(token)
    return ExitCode.OK if status is None else status


# The parameters given on the command line of the command quick.py runs now (None: Typer runs it).
_GIVEN: contextvars.ContextVar = contextvars.ContextVar("autodiff_given", default=None)


def given_on_command_line(name: str) -> bool:
    """Whether the running command's parameter `name` was given on its command line, rather than
    left to its default (on either path: this parser's, or Click's context)."""
    given = _GIVEN.get()
    if given is not None:
        return name in given
    from typer._click.globals import get_current_context  # Typer's path: Typer is loaded

    context = get_current_context(silent=True)
    source = context.get_parameter_source(name) if context is not None else None
    return source is not None and source.name == "COMMANDLINE"


def parse(function, words: list, given_names: set | None = None):
    """The keyword arguments Typer would call `function` with for the command line `words`
    (after the command's name), or None where Typer is to parse it (see the module's docstring).
    `given_names` receives the names of the parameters the command line gives."""
    params = _params(function)
    if params is None:
        return None
    by_name, arguments = params
    given: dict = {}
    positional = []
    words = list(words)
    options_end = False
    while words:
        word = words.pop(0)
        if options_end or word == "-" or not word.startswith("-"):
            positional.append(word)
            continue
        if word == "--":
            options_end = True
            continue
        if word.startswith("--"):
            name, equals, attached = word.partition("=")
            attached = attached if equals else None
        elif word[:2] in by_name and len(word) > 2:  # -fplain: the rest of the word is the value
            name, attached = word[:2], word[2:]
        else:
            name, attached = word, None
        spec = by_name.get(name)
        if spec is None:
            return None
        if spec.flag:
            if attached is not None:
                return None
            value = True
        elif attached is not None:
            value = attached
        elif words:
            value = words.pop(0)
        else:
            return None
        if spec.flag:
            given[spec.name] = value
        else:
            converted = spec.convert(value)
            if converted is _WRONG:
                return None
            if spec.multiple:
                given.setdefault(spec.name, []).append(converted)
            else:
                given[spec.name] = converted
    if len(positional) > len(arguments) and not (arguments and arguments[-1].multiple):
        return None
    for k, spec in enumerate(arguments):
        words_here = positional[k:] if spec.multiple else positional[k:k + 1]
        if not words_here:
            break
        converted = [spec.convert(word) for word in words_here]
        if any(value is _WRONG for value in converted):
            return None
        given[spec.name] = converted if spec.multiple else converted[0]
    if given_names is not None:
        given_names.update(given)
    values = {}
    for spec in (*by_name.values(), *arguments):
        if spec.name in values:
            continue
        if spec.name in given:
            values[spec.name] = given[spec.name]
        elif spec.default is ...:  # required, and not given
            return None
        elif spec.multiple:  # Typer: a list not given is the default, None where that is None
            values[spec.name] = None if spec.default is None else list(spec.default)
        else:
            values[spec.name] = spec.default
    return values


_WRONG = object()  # a value that does not convert


class _Spec:
    """How one parameter reads its value: from its annotation and its declaration."""

    __slots__ = ("name", "default", "kind", "multiple", "flag", "low", "high", "case_sensitive")

    def __init__(self, name: str, annotation, declared: Declared) -> None:
        self.name = name
        self.default = declared.default
        kind = _unwrap_optional(annotation)
        self.multiple = typing.get_origin(kind) in (list, typing.List)
        if self.multiple:
            (kind,) = typing.get_args(kind)
        self.kind = kind
        self.flag = kind is bool
        self.low = declared.settings.get("min")
        self.high = declared.settings.get("max")
        self.case_sensitive = declared.settings.get("case_sensitive", True)

    def convert(self, word: str):
        kind = self.kind
        if kind is str:
            return word
        if isinstance(kind, type) and issubclass(kind, Enum):
            for member in kind:
                if word == member.value or (not self.case_sensitive and word.casefold() == member.value.casefold()):
                    return member
            return _WRONG
        try:
            value = kind(word)  # int or float, as Click converts them
        except ValueError:
            return _WRONG
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            return _WRONG
        return value


def _unwrap_optional(annotation):
    if typing.get_origin(annotation) is typing.Union:
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


_KINDS = (str, int, float, bool)


def _params(function):
    """({"--name": spec, "-n": spec}, [the arguments' specs, in order]), or None where a parameter
    is one this parser does not read (not declared, a type or a setting it does not know)."""
    by_name, arguments = {}, []
    for parameter in inspect.signature(function, eval_str=True).parameters.values():
        declared = parameter.default
        if not isinstance(declared, Declared) or set(declared.settings) - _SHOWN_ONLY - _READ:
            return None
        spec = _Spec(parameter.name, parameter.annotation, declared)
        known = spec.kind in _KINDS or (isinstance(spec.kind, type) and issubclass(spec.kind, Enum))
        if not known or (spec.flag and (spec.multiple or declared.kind == "Argument")):
            return None
        if declared.kind == "Argument":
            if arguments and arguments[-1].multiple:
                return None  # only the last argument may take many words (test's PATH...)
            arguments.append(spec)
        else:
            if not declared.names:
                return None
            for name in declared.names:
                if not name.startswith("-") or "/" in name:
                    return None
                by_name[name] = spec
    return by_name, arguments

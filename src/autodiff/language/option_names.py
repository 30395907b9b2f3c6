"""How a message names what its caller gave: the Python API's parameters by default, the
command line's flags while a command runs (cli/main.py, the notebook's %%autodiff magic).

An error raised below the command line then tells a Python user `give one with
at={'x': VALUE}` and a shell user `give one with --at x=VALUE`, each in the terms they typed.
"""

from __future__ import annotations

from contextlib import contextmanager

FLAGS = {"at": "--at", "wrt": "--wrt", "output": "--output", "order": "--order", "retain": "--retain",
         "grad_output": "--grad-output", "check": "--check", "max_iterations": "--max-iterations",
         "max_elements": "--max-elements", "range": "--range", "points": "--samples", "mode": "--mode", "shape": "--shape",
         "eps": "--eps", "steps": "--steps"}
PARAMETERS = {"at": "at", "wrt": "wrt", "output": "output", "order": "order", "retain": "retain",
              "grad_output": "grad_output", "check": "check", "max_iterations": "Options.max_iterations",
              "max_elements": "Options.max_elements", "range": "low and high", "points": "points", "mode": "mode",
              "shape": "shapes", "eps": "eps", "steps": "derive_steps"}


class _State:
    flags = False


STATE = _State()


@contextmanager
def flags():
    """Messages name the command line's flags while this lasts."""
    before, STATE.flags = STATE.flags, True
    try:
        yield
    finally:
        STATE.flags = before


def option(name: str) -> str:
    """How the caller names an option: `--at` on the command line, `at` in Python."""
    return FLAGS[name] if STATE.flags else PARAMETERS[name]


def given(name: str, value: str) -> str:
    """An option with its value, as the caller would write it: `--order 3`, `order=3`."""
    return f"{FLAGS[name]} {value}" if STATE.flags else f"{PARAMETERS[name]}={value}"


def input_values(names) -> str:
    """How to give inputs their values: `--at x=VALUE,y=VALUE`, `at={'x': VALUE, 'y': VALUE}`."""
    if STATE.flags:
        return "--at " + ",".join(f"{n}=VALUE" for n in names)
    return "at={" + ", ".join(f"{n!r}: VALUE" for n in names) + "}"

"""Problems of a run that are not the program's: a request that cannot be carried out as given,
and a backward that cannot run. The command line's exit-code table (cli/exit_codes.py) maps them."""

from __future__ import annotations


class UsageProblem(Exception):
    """A request that cannot be carried out as given (an option naming nothing, a bad --order...)."""


class GradientProblem(Exception):
    """Backward could not run (a non-scalar output without a gradient...), with a hint. Its
    message is the engine's RuntimeError text (PyTorch's) for the same situation."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class NotATensor(GradientProblem):  # the one whose message is not the engine's
    """The output is not a tensor nor a number (a function...): there is nothing to differentiate."""

    def __init__(self, message: str, type_name: str) -> None:
        super().__init__(message)
        self.type_name = type_name

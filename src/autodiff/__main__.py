"""`python -m autodiff`: the same as the `autodiff` command."""

from .cli.main import console

console()

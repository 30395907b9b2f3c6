"""The `autodiff` fixture: the installed console script, run in a subprocess."""

import pytest
from console import ROOT, Result, console_script, environment, run_autodiff  # noqa: F401


@pytest.fixture
def autodiff():
    return run_autodiff

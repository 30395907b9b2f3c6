"""The `autodiff` fixture: the installed console script, run in a subprocess."""

import pytest
from console import run_autodiff


@pytest.fixture
def autodiff():
    return run_autodiff

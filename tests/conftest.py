"""Shared test setup: deterministic random numbers, and PyTorch as an optional oracle."""

import importlib.util

import pytest
from hypothesis import settings

import autodiff

# Property tests draw the same examples on every run, in CI and on a desk alike: the suite never
# fails at random, and a failure is reproducible. To search afresh, run them with
# --hypothesis-profile=explore, and keep each case found as an @example of its test.
# No deadline: an example's time says how loaded the machine is, not whether the code is right.
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("explore", derandomize=False, print_blob=True, deadline=None)
settings.load_profile("ci")

HAVE_TORCH = importlib.util.find_spec("torch") is not None

pytest_plugins = ["pytester"]  # tests/suite runs pytest on expression files with the autodiff plugin


def pytest_configure(config):
    """Compile the package's modules once, before any test runs: the suite starts the `autodiff`
    script some thousand times, and where the environment forbids Python to write bytecode
    (PYTHONDONTWRITEBYTECODE, as some machines set) each start would compile every module
    again, three times slower. Once written, the bytecode is only read, as usual. So are the
    test modules' (pytest rewrites their asserts, then every process of every run compiled them
    again)."""
    import sys

    sys.dont_write_bytecode = False
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has compiled the package
        return
    import compileall
    import pathlib

    compileall.compile_dir(pathlib.Path(autodiff.__file__).parent, quiet=1)


def pytest_collection_modifyitems(config, items):
    if HAVE_TORCH:
        return
    skip = pytest.mark.skip(reason="PyTorch is not installed (pip install torch==2.13.0 to compare with it)")
    for item in items:
        if "torch" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def torch_in_float64():
    """PyTorch's default dtype set to autodiff's (float64) for the module's oracle comparisons."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@pytest.fixture(autouse=True)
def _isolated_engine_state():
    """Every test starts with the default dtype, seed and modes."""
    autodiff.manual_seed(0)
    yield
    autodiff.set_default_dtype(autodiff.float64)
    autodiff.set_grad_enabled(True)
    autodiff.autograd.set_detect_anomaly(False)

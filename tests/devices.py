"""The devices tests run on: the CPU; "cuda-sim", the device code paths on a NumPy stand-in for
CuPy (tests/fake_cupy.py), everywhere; and "cuda", a real GPU, where CuPy finds one."""

from __future__ import annotations

import contextlib
import sys

import pytest

import fake_cupy


def _real_cuda_problem() -> str:
    """Why a real GPU cannot be used here ('' when it can)."""
    if "cupy" in sys.modules and isinstance(sys.modules["cupy"], fake_cupy._Module):
        return "the CuPy stand-in is installed"
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install 'autodiff[cuda]')"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CuPy's CUDARuntimeError when there is no driver
        return f"CuPy cannot use a GPU here: {exc}"
    return "" if count else "CuPy found no GPU"


REAL_CUDA_PROBLEM = _real_cuda_problem()

# The real GPU's cases exist only where one is: some 3,000 of them, each skipped one by one, cost
# the suite seconds of bookkeeping; tests/engine/test_devices.py's
# test_the_gpu_cases_are_collected_where_a_gpu_is says, skipped, why they are absent.
DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda-sim", id="cuda-sim"),
] + ([pytest.param("cuda", id="cuda")] if not REAL_CUDA_PROBLEM else [])


DEVICE_NAMES = [d.values[0] for d in DEVICES]


@contextlib.contextmanager
def on_each_named(name: str):
    """running_on(name), a failure inside saying which device it was on (one test goes through
    the devices in turn: a case per device cost the suite more in bookkeeping than in checks)."""
    try:
        with running_on(name) as where:
            yield where
    except BaseException as exc:
        exc.add_note(f"(on the device {name!r})")
        raise


@contextlib.contextmanager
def running_on(name: str):
    """The device string to use while the block runs ("cuda-sim" installs the stand-in)."""
    if name == "cuda-sim":
        with fake_cupy.installed():
            yield "cuda"
    else:
        yield name

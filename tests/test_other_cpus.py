"""The recorded transcripts hold on a CPU other than the one that recorded them.

OpenBLAS chooses its kernel per CPU and NumPy its SIMD loops, so another machine prints other
last digits (the README's test command once failed on an AMD EPYC for that). Here this machine
computes as a CPU without AVX2 and with one BLAS thread would, and the tests that compare printed
output with records must still pass. `.ci/other-cpus` runs the whole suite so.
"""

import os
import subprocess
import sys

import pytest

from console import ROOT

ANOTHER_CPU = {
    "OPENBLAS_CORETYPE": "Sandybridge",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    "OPENBLAS_NUM_THREADS": "1",
}
PRINTED = ["tests/cli/test_examples_recorded.py", "tests/test_examples.py"]


def test_the_other_cpu_gives_other_last_digits():
    """Otherwise the test below would prove nothing: the settings do change a matmul's bits."""
    script = ("import numpy as np; a = np.random.default_rng(0).standard_normal((37, 53)); "
              "b = np.random.default_rng(1).standard_normal((53, 29)); print((a @ b).tobytes().hex())")
    here = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    there = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={**os.environ, **ANOTHER_CPU}).stdout
    if os.environ.get("OPENBLAS_CORETYPE") == "Sandybridge":
        pytest.skip("this run already computes as the other CPU")
    assert here != there


def test_recorded_transcripts_hold_on_another_cpu():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *PRINTED], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, **ANOTHER_CPU}, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]

"""PyTorch's autograd tutorial (examples/python/autograd_tutorial.py) prints what PyTorch
prints: run once as written (autodiff) and once with `import torch` instead.

Random numbers differ between the two libraries, so the part that shows w.grad and b.grad is
compared by shape and by what holds for any w and b: with x = ones(5) and y = zeros(3), every
row of w.grad is b.grad = sigmoid(z) / 3, in (0, 1/3). Everything else must match exactly
(node addresses aside)."""

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from test_examples import without_addresses  # tests/ is on sys.path (it has no __init__.py)

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "examples" / "python" / "autograd_tutorial.py"
IMPORT = "import autodiff as torch\n"


def run(source: str) -> str:
    result = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return without_addresses(result.stdout)


def split(output: str):
    """(the lines with the random gradients, as numbers; every other line)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("tensor([["))
    grads = lines[start : start + 6]
    numbers = [[float(v) for v in re.findall(r"-?\d+\.\d*(?:e[+-]?\d+)?", line)] for line in grads]
    return numbers, lines[:start] + lines[start + 6 :]


def test_the_script_imports_autodiff_as_torch_and_nothing_else():
    source = SCRIPT.read_text()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == [IMPORT.strip()]


@pytest.mark.torch
def test_the_tutorial_prints_what_pytorch_prints():
    pytest.importorskip("torch")
    source = SCRIPT.read_text()
    ours = run(source)
    theirs = run(source.replace(IMPORT, "import torch\ntorch.manual_seed(0)  # reproducible here; the values still differ\n"))
    for output in (ours, theirs):
        numbers, _ = split(output)
        w_grad, b_grad = np.array(numbers[:5]), np.array(numbers[5])
        assert w_grad.shape == (5, 3) and b_grad.shape == (3,)
        assert (w_grad == b_grad).all() and ((b_grad >= 0) & (b_grad <= 1 / 3 + 1e-4)).all()
    assert split(ours)[1] == split(theirs)[1]
    assert "Gradient function for loss = <BinaryCrossEntropyWithLogitsBackward0 object at 0x...>" in ours

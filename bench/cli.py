"""Command-line benchmarks: wall time of whole `autodiff` runs, as ratios against baselines
measured in the same run (interleaved, medians), because these machines are noisy.

    python bench/cli.py [--repeat 21] [--lines 10000]

- start-up: `autodiff grad examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format plain` against
  `python -c "import numpy, lark, rich, typer"` (the libraries it is built on). Target <= 1.1x.
  Also reported against `python -c "import numpy"` alone (the engine's one dependency), no target.
- the same computation as a PyTorch script, when PyTorch is installed. Target <= 0.2x.
- a 10,000-line file end to end (parse, forward, backward, output) against the same file run
  as a PyTorch script (the core syntax is Python). Target <= 1.0x.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from parse import AT, program  # noqa: E402  (the 10,000-statement file of bench/parse.py)

TUTORIAL_AT = "a=2,b=3,c=5,d=10"

TORCH_TUTORIAL = """
import torch
a, b, c, d = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (2.0, 3.0, 5.0, 10.0))
u = a * b
t = torch.log(d)
e = u + t * c
e.backward()
print(e.item(), a.grad.item(), b.grad.item(), c.grad.item(), d.grad.item())
"""

TORCH_PRELUDE = """
import torch
from torch import log, maximum, sum
torch.set_default_dtype(torch.float64)
_inputs = {at!r}
globals().update({{k: torch.tensor(v, requires_grad=True) for k, v in _inputs.items()}})
"""

TORCH_EPILOGUE = """
{output}.backward()
for _name in sorted(_inputs):
    print(_name, globals()[_name].grad.tolist())
"""


def autodiff_command() -> list:
    """The installed console script beside this Python, as users run it."""
    script = pathlib.Path(sys.executable).parent / "autodiff"
    if script.exists():
        return [str(script)]
    found = shutil.which("autodiff")
    return [found] if found else [sys.executable, "-m", "autodiff"]


def wall(command: list, cwd=ROOT) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def interleaved(commands: dict, repeat: int) -> dict:
    """Median wall time of each command, run in turn so that drift touches all of them alike."""
    times = {name: [] for name in commands}
    for command in commands.values():
        wall(command)  # warm the file cache (and autodiff's grammar cache) once
    for _ in range(repeat):
        for name, command in commands.items():
            times[name].append(wall(command))
    return {name: statistics.median(values) for name, values in times.items()}


def verdict(ratio: float, target: float) -> str:
    return f"target <= {target}: {'meets target' if ratio <= target else 'MISSES target'}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=21, help="runs of each short command")
    parser.add_argument("--torch-repeat", type=int, default=5, help="runs of each command that imports PyTorch")
    parser.add_argument("--lines", type=int, default=10_000)
    args = parser.parse_args(argv)
    autodiff = autodiff_command()
    try:
        import torch  # noqa: F401

        has_torch = True
    except ImportError:
        has_torch = False
    package = subprocess.run([sys.executable, "-c", "import autodiff; print(autodiff.__file__)"], cwd=ROOT,
                             capture_output=True, text=True).stdout.strip()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; medians of interleaved runs; "
          f"autodiff is {' '.join(autodiff)} ({package})")

    grad = autodiff + ["grad", "examples/tutorial.expr", "--at", TUTORIAL_AT, "--format", "plain"]
    baseline = [sys.executable, "-c", "import numpy, lark, rich, typer"]
    numpy_only = [sys.executable, "-c", "import numpy"]
    short = interleaved({"autodiff": grad, "imports": baseline, "numpy": numpy_only}, args.repeat)
    ratio = short["autodiff"] / short["imports"]
    print(f"start-up     autodiff grad tutorial {short['autodiff'] * 1e3:6.0f} ms   "
          f"import numpy, lark, rich, typer {short['imports'] * 1e3:6.0f} ms   ratio {ratio:.2f}  ({verdict(ratio, 1.1)})")
    ratio = short["autodiff"] / short["numpy"]
    print(f"             autodiff grad tutorial {short['autodiff'] * 1e3:6.0f} ms   "
          f"import numpy {short['numpy'] * 1e3:6.0f} ms   ratio {ratio:.2f}  (reported, no target)")

    if not has_torch:
        print("PyTorch is not installed: the comparisons with PyTorch scripts are skipped")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        (folder / "tutorial_torch.py").write_text(TORCH_TUTORIAL)
        text = program(args.lines)
        (folder / "big.expr").write_text(text)
        output = f"v{args.lines - 1}"
        (folder / "big_torch.py").write_text(
            TORCH_PRELUDE.format(at=AT) + text + TORCH_EPILOGUE.format(output=output))
        at = ",".join(f"{k}={v}".replace(" ", "") for k, v in AT.items())

        torch_times = interleaved({
            "autodiff": grad,
            "torch": [sys.executable, str(folder / "tutorial_torch.py")],
        }, args.torch_repeat)
        ratio = torch_times["autodiff"] / torch_times["torch"]
        print(f"vs PyTorch   autodiff grad tutorial {torch_times['autodiff'] * 1e3:6.0f} ms   "
              f"PyTorch script {torch_times['torch'] * 1e3:6.0f} ms   ratio {ratio:.2f}  ({verdict(ratio, 0.2)})")

        big = interleaved({
            "autodiff": autodiff + ["grad", str(folder / "big.expr"), "--at", at, "--format", "plain"],
            "torch": [sys.executable, str(folder / "big_torch.py")],
        }, args.torch_repeat)
        ratio = big["autodiff"] / big["torch"]
        print(f"{args.lines:,} lines autodiff grad {big['autodiff'] * 1e3:6.0f} ms   "
              f"same file as a PyTorch script {big['torch'] * 1e3:6.0f} ms   ratio {ratio:.2f}  ({verdict(ratio, 1.0)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

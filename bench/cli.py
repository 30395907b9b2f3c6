"""Command-line benchmarks: wall time of whole `autodiff` runs, as ratios against baselines
measured in the same run (interleaved, medians), because these machines are noisy.

    python bench/cli.py [--repeat 21] [--lines 10000] [--startup-only] [--instructions]

- start-up: each command below, a whole process, against `python -c "import numpy"` (the
  engine's one dependency) run beside it: every round runs the baseline and every command once,
  in a shuffled order, and a command's figure is the median over rounds of its time divided by
  that round's baseline (paired), with the median times beside it.
      grad plain   grad examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format plain   target <= 1.5x
      grad json    the same, --format json                                             target <= 1.5x
      eval plain   eval examples/tutorial.expr --at a=2,b=3,c=5,d=10 --format plain    target <= 1.5x
      eval json    the same, --format json                                             target <= 1.5x
      graph plain, graph json, explain plain, explain json: the same point, those commands;
      plot plain, plot json: plot examples/tutorial.expr --wrt a --range 0:4 at the same b, c, d;
      test plain, test json: test examples/tutorial.expr (one file against its record), which
      runs the file in a worker process (its time limit needs one); test in-proc: the same
      with -j 1 --timeout 0, in the process itself
                                                                                       target <= 1.5x
      derive       derive examples/tutorial.expr --format plain                        target <= 1.7x
      grad rich    grad ... --format rich (Rich draws the tables)                      target <= 2.0x
  With --instructions (and valgrind installed), the same figures also as instructions executed
  (callgrind; PYTHONHASHSEED=0, one BLAS thread; not test plain and json, whose worker is a
  fork): exact from run to run and untouched by other work on the machine, they track its
  quiet wall-time ratios within a few hundredths (a little below them), which a loaded
  machine's wall times do not (they come out lower).
- the same computation as a PyTorch script, when PyTorch is installed. Target <= 0.2x.
- a 10,000-line file end to end (parse, forward, backward, output) against the same file run
  as a PyTorch script (the core syntax is Python). Target <= 1.0x.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
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
TUTORIAL = ["examples/tutorial.expr", "--at", TUTORIAL_AT]

# (name, the command's words after `autodiff`, target as a ratio over `python -c "import numpy"`)
STARTUP = [
    ("grad plain", ["grad", *TUTORIAL, "--format", "plain"], 1.5),
    ("grad json", ["grad", *TUTORIAL, "--format", "json"], 1.5),
    ("eval plain", ["eval", *TUTORIAL, "--format", "plain"], 1.5),
    ("eval json", ["eval", *TUTORIAL, "--format", "json"], 1.5),
    ("graph plain", ["graph", *TUTORIAL, "--format", "plain"], 1.5),
    ("graph json", ["graph", *TUTORIAL, "--format", "json"], 1.5),
    ("explain plain", ["explain", *TUTORIAL, "--format", "plain"], 1.5),
    ("explain json", ["explain", *TUTORIAL, "--format", "json"], 1.5),
    ("plot plain", ["plot", "examples/tutorial.expr", "--wrt", "a", "--range", "0:4", "--at", "b=3,c=5,d=10",
                    "--format", "plain"], 1.5),
    ("plot json", ["plot", "examples/tutorial.expr", "--wrt", "a", "--range", "0:4", "--at", "b=3,c=5,d=10",
                   "--format", "json"], 1.5),
    ("test plain", ["test", "examples/tutorial.expr", "--format", "plain"], 1.5),
    ("test json", ["test", "examples/tutorial.expr", "--format", "json"], 1.5),
    ("test in-proc", ["test", "examples/tutorial.expr", "--format", "json", "-j", "1", "--timeout", "0"], 1.5),
    ("derive", ["derive", "examples/tutorial.expr", "--format", "plain"], 1.7),
    ("grad rich", ["grad", *TUTORIAL, "--format", "rich"], 2.0),
]

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


# As users run it: Python caches the bytecode of what it imports (pip compiles an install's
# modules; a clone's are cached by the first run, the warm-up below), so a start-up measured with
# PYTHONDONTWRITEBYTECODE set would time the compiler instead.
ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def wall(command: list, cwd=ROOT) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=ENVIRONMENT)
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


def paired(commands: dict, baseline: list, repeat: int) -> dict:
    """{name: (median of time / the same round's baseline time, median time)} and the baseline's
    median time under "baseline": each round runs the baseline and every command once, shuffled."""
    everything = {"baseline": baseline, **commands}
    for command in everything.values():
        wall(command)  # warm the file cache and the bytecode caches once
    times = {name: [] for name in everything}
    order = list(everything)
    for _ in range(repeat):
        random.shuffle(order)
        for name in order:
            times[name].append(wall(everything[name]))
    base = times["baseline"]
    result = {"baseline": (1.0, statistics.median(base))}
    for name in commands:
        ratios = [t / b for t, b in zip(times[name], base)]
        result[name] = (statistics.median(ratios), statistics.median(times[name]))
    return result


def startup(autodiff: list, repeat: int) -> None:
    """Every start-up figure of STARTUP, measured in one interleaved run."""
    figures = paired({name: autodiff + words for name, words, _ in STARTUP},
                     [sys.executable, "-c", "import numpy"], repeat)
    print(f"start-up, whole processes against python -c \"import numpy\" "
          f"({figures['baseline'][1] * 1e3:.0f} ms), paired, medians of {repeat} rounds:")
    for name, words, target in STARTUP:
        ratio, seconds = figures[name]
        print(f"  {name:<13} {seconds * 1e3:6.0f} ms   ratio {ratio:.2f}  ({verdict(ratio, target)})   "
              f"autodiff {' '.join(words)}")


FORKS = {"test plain", "test json"}  # these run their file in a forked worker


def instructions(autodiff: list) -> None:
    """STARTUP's figures as instructions executed (callgrind), against python -c "import numpy"."""
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed (apt-get install valgrind)")
        return
    import re

    environment = {**ENVIRONMENT, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
    # a script is run by the Python beside it (valgrind runs executables, not #! lines)
    command = autodiff if autodiff[0] == sys.executable else [sys.executable, *autodiff]

    def counted(words: list) -> int:
        subprocess.run(words, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *words], cwd=ROOT,
                              env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return int(re.search(r"Collected : (\d+)", done.stderr).group(1))

    baseline = counted([sys.executable, "-c", "import numpy"])
    print(f"start-up, instructions executed (callgrind) against python -c \"import numpy\" ({baseline / 1e6:.0f} M):")
    for name, words, target in STARTUP:
        if name in FORKS:
            # callgrind follows the fork, but its two counts do not add up to the work done: a child
            # that exits at once reads 30 M instructions below its parent's count at the fork
            print(f"  {name:<13} not counted: its worker is a fork (the wall figure above is the measure)")
            continue
        count = counted(command + words)
        print(f"  {name:<13} {count / 1e6:6.0f} M    ratio {count / baseline:.2f}  ({verdict(count / baseline, target)})")


def verdict(ratio: float, target: float) -> str:
    return f"target <= {target}: {'meets target' if ratio <= target else 'MISSES target'}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=21, help="runs of each short command")
    parser.add_argument("--torch-repeat", type=int, default=5, help="runs of each command that imports PyTorch")
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--startup-only", action="store_true", help="only the start-up figures")
    parser.add_argument("--instructions", action="store_true",
                        help="the start-up figures also as instructions executed (needs valgrind)")
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

    grad = autodiff + STARTUP[0][1]
    startup(autodiff, args.repeat)
    if args.instructions:
        instructions(autodiff)
    if args.startup_only:
        return 0

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

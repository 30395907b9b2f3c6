"""Batch regression benchmark: many small expression files through `autodiff test`.

    python bench/batch.py [--files 1000] [--repeat 5]

Generates small expression files (with declared defaults, so each runs on its own), records
them, then measures, in one run:
- `autodiff test DIR -j 1`: all files in one process, as files per second;
- the same files as separate `autodiff grad FILE` invocations, one after another: what a
  shell loop pays in start-up. Target: `autodiff test -j 1` at least 20x faster;
- the speed-up of `-j 2` over `-j 1` (worker processes; it can only show with 2+ cores).
Whole-command wall times, medians where repeated; these machines are noisy.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cli import autodiff_command  # noqa: E402

FORMULAS = [
    "x * y + sin(x)",
    "log(x * x + 1) * y",
    "sum([x, y, x * y]) / 3",
    "tanh(x) ** 2 + exp(-y)",
    "maximum(x, y) * sqrt(y + 3)",
    "sigmoid(x - y) * (x + 2 * y)",
    "mean(x * [1.0, 2.0, 3.0]) + y ^ 3",
    "relu(x) * abs(y) + cos(x * y)",
]


def generate(folder: pathlib.Path, count: int) -> None:
    rng = random.Random(0)
    for i in range(count):
        x, y = round(rng.uniform(0.2, 2.0), 3), round(rng.uniform(0.2, 2.0), 3)
        first, second = rng.sample(FORMULAS, 2)
        text = f"x: input = {x}\ny: input = {y}\nu = {first}\nv = {second}\nresult = u * v + u\n"
        (folder / f"f{i:04}.expr").write_text(text)


def wall(command: list) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with status {done.returncode}")
    return elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each `autodiff test` command")
    args = parser.parse_args(argv)
    autodiff = autodiff_command()
    with tempfile.TemporaryDirectory() as name:
        folder = pathlib.Path(name)
        generate(folder, args.files)
        wall(autodiff + ["test", str(folder), "--update"])  # write the records (and warm the caches)
        one, two = [], []
        for _ in range(args.repeat):  # interleaved, so that drift touches both
            one.append(wall(autodiff + ["test", str(folder), "-j", "1"]))
            two.append(wall(autodiff + ["test", str(folder), "-j", "2"]))
        files = sorted(folder.glob("*.expr"))
        started = time.perf_counter()
        for path in files:
            subprocess.run(autodiff + ["grad", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
        separate = time.perf_counter() - started
    j1, j2 = statistics.median(one), statistics.median(two)
    rate_test, rate_separate = args.files / j1, args.files / separate
    ratio = rate_test / rate_separate
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {args.files:,} files; "
          f"medians of {args.repeat} runs of each autodiff test")
    print(f"autodiff test -j 1      {j1:7.2f} s   {rate_test:8,.0f} files/s")
    print(f"autodiff grad x {args.files:,}  {separate:7.2f} s   {rate_separate:8,.1f} files/s   "
          f"autodiff test is {ratio:,.0f}x faster  (target >= 20x: {'meets target' if ratio >= 20 else 'MISSES target'})")
    print(f"autodiff test -j 2      {j2:7.2f} s   {args.files / j2:8,.0f} files/s   speed-up over -j 1: {j1 / j2:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

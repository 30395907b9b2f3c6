"""`autodiff derive --steps` against its targets, measured in this process.

    PYTHONPATH=src python bench/steps.py [--programs N] [--repeat R]

- truth: the steps of N random scalar programs (the generators of tests/differential, as in
  tests/program/test_steps.py), every step checked by SymPy's diff at three points and by the
  engine's gradient, and no step skipping a level (target: all true);
- time: derive --steps over plain derive on each scalar program of examples/ (the libraries'
  calls, medians of interleaved runs; target at most 2x).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests"))

from autodiff.program import derive as D  # noqa: E402
from autodiff.program import steps as S  # noqa: E402
from autodiff.program.errors import UsageProblem  # noqa: E402
from program.test_steps import _random_program, check_program  # noqa: E402


def truth(count: int) -> None:
    checked, refused, wrong = 0, 0, []
    start = time.perf_counter()
    for seed in range(count):
        text, at = _random_program(seed)
        problems = check_program(text, at, seed)
        if problems is None:
            refused += 1
        elif problems:
            wrong.append((seed, text, problems))
        else:
            checked += 1
    print(f"truth: {checked} of {count} random scalar programs, every step true and one level deep; "
          f"{refused} refused by derive; {len(wrong)} with a wrong step ({time.perf_counter() - start:.1f} s)")
    for seed, text, problems in wrong[:5]:
        print(f"  seed {seed}:\n{text}" + "\n".join("    " + p for p in problems[:5]))


def timing(repeat: int) -> None:
    folder = os.path.join(ROOT, "examples")
    ratios = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".expr"):
            continue
        text = open(os.path.join(folder, name), encoding="utf-8").read()
        try:
            S.derive_steps(text)
        except UsageProblem:  # a program of tensors: --steps refuses it
            continue
        plain, steps = [], []
        for _ in range(repeat):  # interleaved: the machine's noise falls on both sides
            start = time.perf_counter()
            D.derive(text)
            plain.append(time.perf_counter() - start)
            start = time.perf_counter()
            S.derive_steps(text)
            steps.append(time.perf_counter() - start)
        ratio = statistics.median(steps) / statistics.median(plain)
        ratios.append(ratio)
        print(f"time: examples/{name}: derive {statistics.median(plain) * 1e3:.2f} ms, --steps "
              f"{statistics.median(steps) * 1e3:.2f} ms: {ratio:.2f}x (target at most 2x)")
    if ratios:
        print(f"time: --steps over derive, the largest ratio {max(ratios):.2f}x over {len(ratios)} examples")
    commands = []
    for _ in range(max(3, repeat // 5)):  # whole commands, start-up included, interleaved
        for steps in (False, True):
            command = ["autodiff", "derive", os.path.join(folder, "tutorial.expr"), "--format", "plain"]
            start = time.perf_counter()
            subprocess.run(command + (["--steps"] if steps else []), check=True, capture_output=True)
            commands.append((steps, time.perf_counter() - start))
    plain = statistics.median(t for steps, t in commands if not steps)
    steps = statistics.median(t for steps, t in commands if steps)
    print(f"time: the whole command on examples/tutorial.expr: derive {plain * 1e3:.0f} ms, "
          f"--steps {steps * 1e3:.0f} ms: {steps / plain:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    truth(args.programs)
    timing(args.repeat)


if __name__ == "__main__":
    main()

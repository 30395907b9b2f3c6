"""Batch regression benchmark: many small expression files through `autodiff test`.

    python bench/batch.py [--files 1000] [--repeat 5] [--only runner,plugin,shell,jobs]

Generates small expression files (with declared defaults, so each runs on its own), records
them, then measures, in one run:
- runner: the runner's own cost. In this process, interleaved, medians: a bare loop over the
  files doing only what a test of each needs (read the file, parse it, evaluate it at its
  declared defaults, backward: `language.files.read_file`, `language.parse`,
  `language.evaluate` with the runner's options, `Tensor.backward`: the functions the runner
  calls, without records, comparison or reports) against the whole `autodiff test DIR -j 1`
  command called in this process (`cli.main.main`, standard output captured): discovery,
  records, comparison, the worker process it runs files in, the report. Both run here, after
  a first run of each has imported everything, so that neither pays Python's start-up; what
  is left is the runner's cost on top of the work itself. Target <= 1.3x.
- plugin: `python -m pytest DIR -q` (the pytest plugin, docs/python-api.md) against
  `autodiff test DIR -j 1`, whole commands, interleaved, medians. Target <= 1.5x.
- shell: `autodiff test -j 1` against the same files as separate `autodiff grad FILE`
  invocations, one after another: what a shell loop pays in start-up. Target: `autodiff test
  -j 1` at least 20x faster.
- jobs: the speed-up of `-j 2` over `-j 1` (worker processes; it can only show with 2+ cores).
Whole commands run with the checkout's `src` first on PYTHONPATH (so they measure the code
beside this script, as the in-process figure does), and with Python's bytecode cache on, in a
temporary PYTHONPYCACHEPREFIX, as a user's Python runs (where PYTHONDONTWRITEBYTECODE is set,
every start compiles every module again, and pytest rewrites the asserts of its plugins'
packages again: that measures the machine, not the commands; --no-bytecode-cache keeps the
environment as it is). These machines are noisy: every figure is a ratio measured in the run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))  # the in-process figure measures this checkout
from cli import autodiff_command  # noqa: E402

FIGURES = ("runner", "plugin", "shell", "jobs")
RUNNER_TARGET, PLUGIN_TARGET, SHELL_TARGET = 1.3, 1.5, 20.0

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


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def environment(bytecode_cache: bool, cache_dir: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    env.pop("CI", None)  # pytest and autodiff test alike: a local run
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache_dir
    return env


def wall(command: list, env: dict, cwd) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with status {done.returncode}")
    return elapsed


def bare_loop(files: list) -> None:
    """What testing each file needs, and nothing else: read, parse, evaluate at the declared
    defaults (with the options the runner uses), backward."""
    from autodiff.language import Options, evaluate, parse
    from autodiff.language.files import read_file

    options = Options(check_finite=False)  # the runner's: records keep no warnings
    for path in files:
        source = read_file(path)
        evaluate(parse(source), source, options=options).output.backward()


def runner_in_process(folder: pathlib.Path, count: int) -> None:
    """`autodiff test DIR -j 1`, the whole command, in this process."""
    from autodiff.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["test", str(folder), "-j", "1"])
    if status != 0 or f"passed {count}\t" not in out.getvalue():
        raise SystemExit(f"autodiff test in process: status {status}\n{out.getvalue()[-500:]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measured command")
    parser.add_argument("--only", default=",".join(FIGURES), help=f"figures to measure, of {', '.join(FIGURES)}")
    parser.add_argument("--no-bytecode-cache", dest="bytecode_cache", action="store_false",
                        help="run whole commands in the environment as it is")
    args = parser.parse_args(argv)
    wanted = [f.strip() for f in args.only.split(",") if f.strip()]
    unknown = sorted(set(wanted) - set(FIGURES))
    if unknown:
        parser.error(f"--only: unknown figure(s) {', '.join(unknown)}; choose among {', '.join(FIGURES)}")
    autodiff = autodiff_command()
    pytest = [sys.executable, "-m", "pytest"]
    lines = []
    with tempfile.TemporaryDirectory() as name, tempfile.TemporaryDirectory() as cache_dir:
        folder = pathlib.Path(name) / "suite"
        folder.mkdir()
        env = environment(args.bytecode_cache, cache_dir)
        generate(folder, args.files)
        files = sorted(folder.glob("*.expr"))
        wall(autodiff + ["test", str(folder), "--update"], env, folder)  # the records (and warm caches)
        if "runner" in wanted:
            bare_loop(files)  # imports, and the parser's tables
            runner_in_process(folder, args.files)
            bare, runner = [], []
            for _ in range(args.repeat):  # interleaved, so that drift touches both
                started = time.perf_counter()
                bare_loop(files)
                bare.append(time.perf_counter() - started)
                started = time.perf_counter()
                runner_in_process(folder, args.files)
                runner.append(time.perf_counter() - started)
            b, r = statistics.median(bare), statistics.median(runner)
            lines.append(f"bare loop (read, parse, evaluate, backward)  {b:7.3f} s   {args.files / b:8,.0f} files/s")
            lines.append(f"autodiff test -j 1, in process           {r:7.3f} s   {args.files / r:8,.0f} files/s   "
                         f"{r / b:.2f}x the bare loop  (target <= {RUNNER_TARGET}x: {verdict(r / b <= RUNNER_TARGET)})")
        one, two, plugin = [], [], []
        if {"plugin", "shell", "jobs"} & set(wanted):
            wall(pytest + [str(folder), "-q"], env, folder) if "plugin" in wanted else None  # warm its caches
            for _ in range(args.repeat):  # interleaved, so that drift touches all
                one.append(wall(autodiff + ["test", str(folder), "-j", "1"], env, folder))
                if "plugin" in wanted:
                    plugin.append(wall(pytest + [str(folder), "-q"], env, folder))
                if "jobs" in wanted:
                    two.append(wall(autodiff + ["test", str(folder), "-j", "2"], env, folder))
            j1 = statistics.median(one)
            lines.append(f"autodiff test -j 1      {j1:7.2f} s   {args.files / j1:8,.0f} files/s")
        if plugin:
            p = statistics.median(plugin)
            lines.append(f"python -m pytest (plugin) {p:5.2f} s   {args.files / p:8,.0f} files/s   "
                         f"{p / j1:.2f}x autodiff test -j 1  (target <= {PLUGIN_TARGET}x: "
                         f"{verdict(p / j1 <= PLUGIN_TARGET)})")
        if "shell" in wanted:
            started = time.perf_counter()
            for path in files:
                wall(autodiff + ["grad", str(path)], env, folder)
            separate = time.perf_counter() - started
            rate_test, rate_separate = args.files / j1, args.files / separate
            ratio = rate_test / rate_separate
            lines.append(f"autodiff grad x {args.files:,}  {separate:7.2f} s   {rate_separate:8,.1f} files/s   "
                         f"autodiff test is {ratio:,.0f}x faster  (target >= {SHELL_TARGET:g}x: "
                         f"{verdict(ratio >= SHELL_TARGET)})")
        if two:
            j2 = statistics.median(two)
            lines.append(f"autodiff test -j 2      {j2:7.2f} s   {args.files / j2:8,.0f} files/s   "
                         f"speed-up over -j 1: {j1 / j2:.2f}x")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {args.files:,} files; medians of "
          f"{args.repeat} runs; bytecode cache {'on' if args.bytecode_cache else 'as the environment says'}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

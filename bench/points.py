"""Many points in one run: ratios against baselines measured in the same run (medians).

    python bench/points.py [--points 100000] [--repeat 5]

- in process: the gradients of e = a*b + log(d)*c at N points through the batched path
  (autodiff.func.vmap(grad(f)), and the language's Sweep over the tutorial file) against the
  same computation written by hand in NumPy (target <= 2.5x), and against
  torch.func.vmap(torch.func.grad(f)) when PyTorch is installed (target <= 1.0x);
- whole process: `autodiff grad examples/tutorial.expr --points in.csv --out csv > out.csv`
  against a Python script that reads the same CSV with NumPy, computes the formula and its
  gradients by hand and writes them (target <= 2x); and per point against separate
  `autodiff grad` runs (target >= 10,000x faster);
- a program with an `if` on the point's value: points per second, grouped by path against
  one by one;
- memory: the peak of the whole process at 10x the points, against N (target <= 2x).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "examples" / "tutorial.expr"
BRANCHY = "if x > 0:\n    y = x * log(x + 1)\nelse:\n    y = -x * x\ny\n"
NUMPY_SCRIPT = """
import sys, numpy as np
data = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1, ndmin=2)
a, b, c, d = data.T
e = a * b + np.log(d) * c
out = np.column_stack([a, b, c, d, e, b, a, np.log(d), c / d])
with open(sys.argv[2], "w") as f:
    f.write("a,b,c,d,value,grad_a,grad_b,grad_c,grad_d\\n")
    np.savetxt(f, out, delimiter=",", fmt="%.17g")
"""


def median(samples) -> float:
    return statistics.median(samples)


def timed(run, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return median(samples)


def verdict(ratio: float, target: float, at_least: bool = False) -> str:
    ok = ratio >= target if at_least else ratio <= target
    return "meets target" if ok else "MISSES target"


def in_process(n: int, repeat: int) -> None:
    import autodiff
    from autodiff.language import Source
    from autodiff.program.sweep import Sweep

    rng = np.random.default_rng(0)
    a, b, c, d = rng.uniform(1, 5, size=(4, n))

    def by_hand():
        e = a * b + np.log(d) * c
        return e, b, a, np.log(d), c / d

    f = lambda a, b, c, d: a * b + autodiff.log(d) * c  # noqa: E731
    grads = autodiff.func.vmap(autodiff.func.grad(f, argnums=(0, 1, 2, 3)))
    tensors = [autodiff.tensor(v) for v in (a, b, c, d)]
    sweep = Sweep(Source(TUTORIAL.read_text(), str(TUTORIAL)))
    columns = dict(zip("abcd", (a, b, c, d)))
    sides = {"numpy": lambda: by_hand(), "vmap": lambda: grads(*tensors), "sweep": lambda: sweep.run(columns, n)}
    try:
        import torch

        torch.set_num_threads(1)
        tf = lambda a, b, c, d: a * b + torch.log(d) * c  # noqa: E731
        tgrads = torch.func.vmap(torch.func.grad(tf, argnums=(0, 1, 2, 3)))
        ttensors = [torch.tensor(v) for v in (a, b, c, d)]
        sides["torch"] = lambda: tgrads(*ttensors)
    except ImportError:
        pass
    times = {name: [] for name in sides}
    for _ in range(repeat):  # interleaved
        for name, run in sides.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    t = {name: median(samples) for name, samples in times.items()}
    for name in ("vmap", "sweep"):
        ratio = t[name] / t["numpy"]
        print(f"in process   {name:5} {n:,} points {t[name] * 1e3:8.1f} ms   NumPy by hand {t['numpy'] * 1e3:7.1f} ms"
              f"   ratio {ratio:5.2f}  (target <= 2.5: {verdict(ratio, 2.5)})")
    if "torch" in t:
        for name in ("vmap", "sweep"):
            ratio = t[name] / t["torch"]
            print(f"vs PyTorch   {name:5} {t[name] * 1e3:8.1f} ms   torch.func.vmap(grad) {t['torch'] * 1e3:7.1f} ms"
                  f"   ratio {ratio:5.2f}  (target <= 1.0: {verdict(ratio, 1.0)})")


def _csv(path: pathlib.Path, n: int) -> None:
    rng = np.random.default_rng(1)
    data = rng.uniform(1, 5, size=(n, 4))
    with open(path, "w") as f:
        f.write("a,b,c,d\n")
        np.savetxt(f, data, delimiter=",", fmt="%.17g")


# Started from a small process, so that the peak measured is the command's own, not this one's
# (a child's peak includes what it inherited from its parent before exec).
LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
with open(sys.argv[1], "w") as out:
    child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss, status, child.stderr.read().decode()[:300].replace(chr(10), " "))
"""


def _run(command: list, stdout_path) -> tuple:
    """(wall seconds, peak resident memory in MiB) of one process."""
    done = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, str(stdout_path), *command], capture_output=True,
                          text=True, check=True)
    wall, peak, status, error = done.stdout.split(" ", 3)
    if int(status):
        raise SystemExit(f"{' '.join(command)} failed: {error}")
    return float(wall), int(peak) / 1024


def whole_process(n: int, repeat: int, work: pathlib.Path) -> None:
    autodiff = str(pathlib.Path(sys.executable).with_name("autodiff"))
    points = work / "in.csv"
    _csv(points, n)
    script = work / "by_hand.py"
    script.write_text(NUMPY_SCRIPT)
    ours, theirs = [], []
    for _ in range(repeat):
        ours.append(_run([autodiff, "grad", str(TUTORIAL), "--points", str(points), "--out", "csv"], work / "o.csv")[0])
        theirs.append(_run([sys.executable, str(script), str(points), str(work / "n.csv")], os.devnull)[0])
    t_ours, t_theirs = median(ours), median(theirs)
    ratio = t_ours / t_theirs
    print(f"whole run    {n:,} points, CSV in and out: autodiff {t_ours * 1e3:.0f} ms   NumPy script "
          f"{t_theirs * 1e3:.0f} ms   ratio {ratio:.2f}  (target <= 2.0: {verdict(ratio, 2.0)})")
    single = [_run([autodiff, "grad", str(TUTORIAL), "--at", "a=2,b=3,c=5,d=10", "--format", "plain"], os.devnull)[0]
              for _ in range(repeat)]
    per_point = t_ours / n
    speedup = median(single) / per_point
    print(f"per point    {per_point * 1e6:.2f} us   a separate autodiff grad run {median(single) * 1e3:.0f} ms   "
          f"{speedup:,.0f}x faster  (target >= 10,000x: {verdict(speedup, 10_000, at_least=True)})")


def branches(n: int, repeat: int) -> None:
    from autodiff.language import Source
    from autodiff.program.sweep import Sweep

    rng = np.random.default_rng(2)
    x = rng.uniform(-3, 3, size=n)
    sweep = Sweep(Source(BRANCHY, "branchy.expr"))
    grouped = timed(lambda: sweep.run({"x": x}, n), repeat)
    alone_n = min(n, 2_000)
    alone = timed(lambda: [Sweep(Source(BRANCHY, "branchy.expr")).run({"x": x[i:i + 1]}, 1) for i in range(alone_n)], 1)
    print(f"branches     an if on the point's value: grouped by path {n / grouped:,.0f} points/s   one by one "
          f"{alone_n / alone:,.0f} points/s   ({alone_n / alone and (n / grouped) / (alone_n / alone):,.0f}x)")


def memory(n: int, work: pathlib.Path) -> None:
    autodiff = str(pathlib.Path(sys.executable).with_name("autodiff"))
    peaks = {}
    for count in (n, 10 * n):
        points = work / f"m{count}.csv"
        _csv(points, count)
        peaks[count] = _run([autodiff, "grad", str(TUTORIAL), "--points", str(points), "--out", "csv"],
                            os.devnull)[1]
        points.unlink()
    ratio = peaks[10 * n] / peaks[n]
    print(f"memory       peak {peaks[n]:.0f} MiB at {n:,} points, {peaks[10 * n]:.0f} MiB at {10 * n:,}   ratio "
          f"{ratio:.2f}  (target <= 2.0: {verdict(ratio, 2.0)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}; medians of {args.repeat} runs")
    in_process(args.points, args.repeat)
    with tempfile.TemporaryDirectory() as folder:
        work = pathlib.Path(folder)
        whole_process(args.points, args.repeat, work)
        branches(args.points, 3)
        memory(args.points, work)


if __name__ == "__main__":
    main()

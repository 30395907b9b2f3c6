"""Engine benchmarks: ratios against baselines measured in the same run.

    python bench/engine.py [--repeat 21] [--device cpu|cuda] [--mlp-size small|large]

- chain: 2,000 steps of x = tanh(x * w + b) on 0-d float64 tensors, forward and backward,
  against PyTorch eager on one thread (when PyTorch is installed). Target: at most 0.8x.
- mlp: sum(tanh(X @ W1 + b1) @ W2), forward and backward, against the same computation
  written by hand with the array module (NumPy, or CuPy on --device cuda). Target: at most 1.15x
  on the CPU (1.1x on a GPU).
- deep: a 100,000-step chain, forward and backward: time per node, peak memory per node,
  and the memory still held once the graph is dropped.

Runs alternate between the two sides and the medians are compared, because these machines
are noisy. Nothing here is asserted in the test suite.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc

import numpy as np

import autodiff


def median_ms(samples) -> float:
    return statistics.median(samples) * 1e3


def alternate(repeat: int, **sides) -> dict:
    """Time each side `repeat` times, interleaved; returns the per-side sample lists."""
    times = {name: [] for name in sides}
    for _ in range(repeat):
        for name, run in sides.items():
            gc.collect()
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


def verdict(ratio: float, target: float) -> str:
    return "meets target" if ratio <= target else "MISSES target"


# -- chain --------------------------------------------------------------------------------------------

CHAIN_STEPS = 2_000


def chain(lib, steps: int = CHAIN_STEPS, dtype=None):
    dtype = dtype or lib.float64
    x = lib.tensor(0.5, dtype=dtype, requires_grad=True)
    w = lib.tensor(0.9, dtype=dtype, requires_grad=True)
    b = lib.tensor(0.1, dtype=dtype, requires_grad=True)
    y = x
    for _ in range(steps):
        y = lib.tanh(y * w + b)
    y.backward()
    return w.grad


def bench_chain(repeat: int) -> None:
    try:
        import torch
    except ImportError:
        print("chain   PyTorch is not installed: no baseline (pip install torch==2.13.0)")
        times = alternate(repeat, autodiff=lambda: chain(autodiff))
        print(f"chain   autodiff {median_ms(times['autodiff']):.2f} ms")
        return
    torch.set_num_threads(1)
    ours, theirs = chain(autodiff).item(), chain(torch).item()
    assert abs(ours - theirs) <= 1e-9 * abs(theirs), (ours, theirs)
    times = alternate(repeat, autodiff=lambda: chain(autodiff), torch=lambda: chain(torch))
    a, t = median_ms(times["autodiff"]), median_ms(times["torch"])
    print(
        f"chain   {CHAIN_STEPS:,} x tanh(x*w+b), 0-d float64, forward+backward:  autodiff {a:.2f} ms   "
        f"PyTorch eager (1 thread) {t:.2f} ms   ratio {a / t:.3f}  (target <= 0.80: {verdict(a / t, 0.8)})"
    )


# -- mlp ---------------------------------------------------------------------------------------------

MLP_SIZES = {"small": (256, 512, 512, 64), "large": (4096, 4096, 4096, 4096)}


def mlp_engine(X, W1, b1, W2):
    loss = autodiff.sum(autodiff.tanh(X @ W1 + b1) @ W2)
    loss.backward()
    return loss, W1.grad, b1.grad, W2.grad


def mlp_by_hand(xp, X, W1, b1, W2):
    h = xp.tanh(X @ W1 + b1)
    out = h @ W2
    loss = out.sum()
    g_out = xp.ones_like(out)
    g_W2 = h.T @ g_out
    g_pre = (g_out @ W2.T) * (1 - h * h)
    g_b1 = g_pre.sum(0)
    g_W1 = X.T @ g_pre
    return loss, g_W1, g_b1, g_W2


def bench_mlp(repeat: int, device: str, size: str) -> None:
    n, d, hidden, out = MLP_SIZES[size]
    xp = autodiff.backend.module_for(device)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) / np.sqrt(s[0]) for s in ((n, d), (d, hidden), (hidden,), (hidden, out))]
    X_a, W1_a, b1_a, W2_a = (xp.asarray(a) for a in arrays)
    X = autodiff.tensor(arrays[0], device=device)

    def leaves():
        return [autodiff.tensor(a, device=device, requires_grad=True) for a in arrays[1:]]

    def engine():
        W1, b1, W2 = leaves_now
        W1.grad = b1.grad = W2.grad = None
        result = mlp_engine(X, W1, b1, W2)
        synchronize()
        return result

    def by_hand():
        result = mlp_by_hand(xp, X_a, W1_a, b1_a, W2_a)
        synchronize()
        return result

    def synchronize():
        if xp is not np:
            xp.cuda.get_current_stream().synchronize()

    leaves_now = leaves()
    for ours, theirs in zip(engine(), by_hand()):
        ours = ours.detach().cpu().numpy() if isinstance(ours, autodiff.Tensor) else ours
        theirs = theirs.get() if hasattr(theirs, "get") else theirs
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    times = alternate(repeat, autodiff=engine, by_hand=by_hand)
    a, h = median_ms(times["autodiff"]), median_ms(times["by_hand"])
    target = 1.15 if device == "cpu" else 1.1
    module = "NumPy" if xp is np else "CuPy"
    print(
        f"mlp     sum(tanh(X@W1+b1)@W2), X {n}x{d}, W1 {d}x{hidden}, W2 {hidden}x{out}, on {device}:  "
        f"autodiff {a:.2f} ms   {module} by hand {h:.2f} ms   ratio {a / h:.3f}  "
        f"(target <= {target}: {verdict(a / h, target)})"
    )
    if device != "cpu":  # the same workload on the CPU engine, for scale (a few runs: it is slow)
        X_cpu = autodiff.tensor(arrays[0])
        cpu_leaves = [autodiff.tensor(a, requires_grad=True) for a in arrays[1:]]

        def on_cpu():
            for leaf in cpu_leaves:
                leaf.grad = None
            return mlp_engine(X_cpu, *cpu_leaves)

        c = median_ms(alternate(max(3, repeat // 7), cpu=on_cpu)["cpu"])
        print(f"mlp     the same on the CPU engine: {c:.2f} ms   {device} engine {c / a:.1f}x faster")


# -- deep ---------------------------------------------------------------------------------------------

DEEP_STEPS = 100_000


def bench_deep(repeat: int) -> None:
    nodes = 3 * DEEP_STEPS
    runs = max(3, repeat // 5)
    t = statistics.median(alternate(runs, deep=lambda: chain(autodiff, DEEP_STEPS))["deep"])
    # Python's cyclic garbage collector scans the ~10^6 live objects of such a graph again
    # and again while it is built; paused, the same work shows the engine's own cost.
    gc.disable()
    try:
        paused = statistics.median(alternate(runs, deep=lambda: chain(autodiff, DEEP_STEPS))["deep"])
    finally:
        gc.enable()
    gc.collect()
    tracemalloc.start()
    x = autodiff.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(DEEP_STEPS):
        y = autodiff.tanh(y * 0.9 + 0.1)
    built, _ = tracemalloc.get_traced_memory()
    y.backward()
    _, peak = tracemalloc.get_traced_memory()
    del y
    gc.collect()  # also empties CPython's free lists, which keep up to 2,000 small tuples cached
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"deep    {DEEP_STEPS:,}-step chain ({nodes:,} nodes), forward+backward: {t:.2f} s = "
        f"{t / nodes * 1e6:.2f} us/node ({paused / nodes * 1e6:.2f} us/node with Python's cyclic GC paused); "
        f"graph {built / nodes:.0f} B/node, peak {peak / nodes:.0f} B/node, "
        f"held once the graph is dropped: {after:,} B"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per side (median reported)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (mlp only)")
    parser.add_argument("--mlp-size", choices=sorted(MLP_SIZES), default=None,
                        help="small (256x512) or large (4096x4096); default small on cpu, large on cuda")
    parser.add_argument("--only", choices=("chain", "mlp", "deep"), action="append", help="run only these")
    args = parser.parse_args(argv)
    only = set(args.only or ("chain", "mlp", "deep"))
    if args.device != "cpu":
        try:
            autodiff.backend.module_for(args.device)
        except autodiff.backend.DeviceUnavailable as exc:
            print(f"bench/engine.py: {exc}", file=sys.stderr)
            return 2
    print(f"autodiff {autodiff.__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}; "
          f"medians of {args.repeat} interleaved runs")
    if "chain" in only:
        bench_chain(args.repeat)
    if "mlp" in only:
        bench_mlp(args.repeat, args.device, args.mlp_size or ("small" if args.device == "cpu" else "large"))
    if "deep" in only:
        bench_deep(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

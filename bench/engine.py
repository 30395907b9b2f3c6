"""Engine benchmarks: ratios against baselines measured in the same run.

    python bench/engine.py [--repeat 21] [--device cpu|cuda] [--mlp-size small|medium|large|huge]
                           [--only chain|depth|memory|collect|mlp|deep]

- chain: 2,000 steps of x = tanh(x * w + b) on 0-d float64 tensors, forward and backward,
  through the public API, against PyTorch eager on one thread (when PyTorch is installed;
  target at most 0.3x) and against a micrograd-style scalar engine written below (target at
  most 0.8x).
- depth: the same chain at 20,000 and 100,000 steps, with Python's garbage collector left as it
  is: the cost per operation against the cost at 2,000 steps (targets at most 1.15x and 1.2x).
- memory: what a live graph of that chain holds, per recorded operation (tracemalloc; target at
  most 160 B per node).
- collect: one full `gc.collect()` while a 300,000-node graph is alive, less the same collection
  without it, per node (target at most 20 ns): what every collection of a program pays for
  keeping a graph (the objects made before are frozen while it is measured, so that their
  walk's noise does not drown the difference).
- mlp: sum(tanh(X @ W1 + b1) @ W2), forward and backward, against the same computation written
  by hand with the array module (NumPy, or CuPy on --device cuda), at three sizes on the CPU:
  64x128x128x16 (target at most 1.3x), 256x512x512x64 and 1024x2048x2048x256 (at most 1.05x).
- deep: a 100,000-step chain, forward and backward: time per node, peak memory per node,
  and the memory still held once the graph is dropped.

Runs alternate between the sides, in an order that turns each round, and the medians are
compared, because these machines are noisy. Nothing here is asserted in the test suite.
"""

from __future__ import annotations

import os

# One thread everywhere, PyTorch included (below): these machines are small and shared, and a
# BLAS pool spinning beside other work makes small products noisy.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import autodiff  # noqa: E402


def median_ms(samples) -> float:
    return statistics.median(samples) * 1e3


def alternate(repeat: int, **sides) -> dict:
    """Time each side `repeat` times, interleaved; returns the per-side sample lists. The order
    turns each round, so that no side always runs right after another one (a run just after
    PyTorch's starts with caches full of PyTorch, some 15% slower here)."""
    times = {name: [] for name in sides}
    names = list(sides)
    for turn in range(repeat):
        k = turn % len(names)
        for name in names[k:] + names[:k]:
            run = sides[name]
            gc.collect()
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return times


def verdict(ratio: float, target: float) -> str:
    return "meets target" if ratio <= target else "MISSES target"


# -- chain --------------------------------------------------------------------------------------------

CHAIN_STEPS = 2_000
CHAIN_TORCH_TARGET, CHAIN_MICROGRAD_TARGET = 0.3, 0.8


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


class Scalar:
    """The micrograd-style baseline: a scalar engine in plain Python floats, written here (one
    closure per operation, an iterative topological sort so that deep chains run)."""

    __slots__ = ("data", "grad", "_backward", "_parents")

    def __init__(self, data, parents=()):
        self.data, self.grad, self._backward, self._parents = data, 0.0, None, parents

    def __mul__(self, other):
        out = Scalar(self.data * other.data, (self, other))

        def backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = backward
        return out

    def __add__(self, other):
        out = Scalar(self.data + other.data, (self, other))

        def backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Scalar(t, (self,))

        def backward():
            self.grad += (1 - t * t) * out.grad

        out._backward = backward
        return out

    def backward(self):
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((parent, False) for parent in node._parents)
        self.grad = 1.0
        for node in reversed(order):
            if node._backward is not None:
                node._backward()


def scalar_chain(steps: int = CHAIN_STEPS) -> float:
    x, w, b = Scalar(0.5), Scalar(0.9), Scalar(0.1)
    y = x
    for _ in range(steps):
        y = (y * w + b).tanh()
    y.backward()
    return w.grad


def bench_chain(repeat: int) -> None:
    ours, baseline = chain(autodiff).item(), scalar_chain()
    assert abs(ours - baseline) <= 1e-9 * abs(baseline), (ours, baseline)
    sides = {"autodiff": lambda: chain(autodiff), "micrograd": scalar_chain}
    try:
        import torch
    except ImportError:
        torch = None
        print("chain   PyTorch is not installed: no PyTorch baseline (pip install torch==2.13.0)")
    else:
        torch.set_num_threads(1)
        theirs = chain(torch).item()
        assert abs(ours - theirs) <= 1e-9 * abs(theirs), (ours, theirs)
        sides["torch"] = lambda: chain(torch)
    times = alternate(repeat, **sides)
    a, m = median_ms(times["autodiff"]), median_ms(times["micrograd"])
    ops = 3 * CHAIN_STEPS
    print(f"chain   {CHAIN_STEPS:,} x tanh(x*w+b), 0-d float64, forward+backward:  autodiff {a:.2f} ms "
          f"({a / ops * 1e3:.2f} us/op)")
    if torch is not None:
        t = median_ms(times["torch"])
        print(f"chain   PyTorch eager (1 thread) {t:.2f} ms   ratio {a / t:.3f}  "
              f"(target <= {CHAIN_TORCH_TARGET}: {verdict(a / t, CHAIN_TORCH_TARGET)})")
    print(f"chain   micrograd-style scalar engine {m:.2f} ms   ratio {a / m:.3f}  "
          f"(target <= {CHAIN_MICROGRAD_TARGET}: {verdict(a / m, CHAIN_MICROGRAD_TARGET)})")


DEPTH_TARGETS = {20_000: 1.15, 100_000: 1.2}


def bench_depth(repeat: int) -> None:
    """Cost per operation as the chain grows, the garbage collector as the user has it."""
    runs = {CHAIN_STEPS: max(5, repeat // 2), 20_000: max(3, repeat // 4), 100_000: 3}
    per_op = {}
    for steps, count in runs.items():
        seconds = statistics.median(alternate(count, run=lambda: chain(autodiff, steps))["run"])
        per_op[steps] = seconds / (3 * steps)
    base = per_op[CHAIN_STEPS]
    for steps, target in DEPTH_TARGETS.items():
        ratio = per_op[steps] / base
        print(f"depth   {steps:,} steps: {per_op[steps] * 1e6:.2f} us/op against {base * 1e6:.2f} at "
              f"{CHAIN_STEPS:,}   ratio {ratio:.3f}  (target <= {target}: {verdict(ratio, target)})"
              f"{'' if gc.isenabled() else '  [the collector was off]'}")


# -- memory and collect -------------------------------------------------------------------------------

LIVE_STEPS = 100_000  # 300,000 recorded operations
MEMORY_TARGET, COLLECT_TARGET = 160, 20


def live_chain(steps: int = LIVE_STEPS):
    """The chain's graph, built and kept (no backward): the leaves and the output."""
    x = autodiff.tensor(0.5, requires_grad=True)
    w = autodiff.tensor(0.9, requires_grad=True)
    b = autodiff.tensor(0.1, requires_grad=True)
    y = x
    for _ in range(steps):
        y = autodiff.tanh(y * w + b)
    return x, w, b, y


def bench_memory() -> None:
    nodes = 3 * LIVE_STEPS
    gc.collect()
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    graph = live_chain()
    gc.collect()
    built, _ = tracemalloc.get_traced_memory()
    del graph
    gc.collect()
    tracemalloc.stop()
    per_node = (built - before) / nodes
    print(f"memory  a live {LIVE_STEPS:,}-step chain ({nodes:,} nodes): {per_node:.0f} B per node  "
          f"(target <= {MEMORY_TARGET}: {verdict(per_node, MEMORY_TARGET)})")


def _collect_times(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_collect(repeat: int) -> None:
    """One full collection with the graph alive, less one without it: the graph's share. What
    the process held before is frozen (gc.freeze) for the measurement, so that the difference is
    not lost in the noise of walking every module's objects (tens of ms with PyTorch loaded)."""
    nodes = 3 * LIVE_STEPS
    runs = max(5, repeat // 3)
    gc.collect()
    gc.freeze()
    try:
        without = _collect_times(runs)
        graph = live_chain()
        gc.collect()  # the first full collection after building: what it untracks stays untracked
        with_graph = _collect_times(runs)
        del graph
    finally:
        gc.unfreeze()
    gc.collect()
    per_node = (with_graph - without) / nodes * 1e9
    print(f"collect one full gc.collect() with a live {nodes:,}-node graph: {with_graph * 1e3:.2f} ms against "
          f"{without * 1e3:.2f} ms without it: {per_node:.1f} ns per node  "
          f"(target <= {COLLECT_TARGET}: {verdict(per_node, COLLECT_TARGET)})")


# -- mlp ---------------------------------------------------------------------------------------------

MLP_SIZES = {
    "small": (64, 128, 128, 16),
    "medium": (256, 512, 512, 64),
    "large": (1024, 2048, 2048, 256),
    "huge": (4096, 4096, 4096, 4096),  # for a GPU
}
MLP_TARGETS = {"small": 1.3, "medium": 1.05, "large": 1.05, "huge": 1.1}


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
    target = MLP_TARGETS[size]
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


SECTIONS = ("chain", "depth", "memory", "collect", "mlp", "deep")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per side (median reported)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (mlp only)")
    parser.add_argument("--mlp-size", choices=list(MLP_SIZES), action="append",
                        help="mlp sizes to run; default small, medium and large on cpu, huge on cuda")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="run only these")
    args = parser.parse_args(argv)
    only = set(args.only or SECTIONS)
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
    if "depth" in only:
        bench_depth(args.repeat)
    if "memory" in only:
        bench_memory()
    if "collect" in only:
        bench_collect(args.repeat)
    if "mlp" in only:
        sizes = args.mlp_size or (["small", "medium", "large"] if args.device == "cpu" else ["huge"])
        for size in sizes:
            # Big products take a while on a small machine: fewer runs for them.
            bench_mlp(args.repeat if size in ("small", "medium") else max(5, args.repeat // 3), args.device, size)
    if "deep" in only:
        bench_deep(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())

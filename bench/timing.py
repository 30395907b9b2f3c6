"""The benchmarks' shared timer: the median of repeated runs (machines are noisy)."""

from __future__ import annotations

import statistics
import time


def median_time(function, repeat: int) -> float:
    """The median wall time of `repeat` calls of `function()`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)

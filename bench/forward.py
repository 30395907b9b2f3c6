"""Forward mode against reverse mode, where each should pay: ratios measured in the same run (medians).

    python bench/forward.py [--outputs 400] [--repeat 7]

A Jacobian costs forward mode one pass per input element and reverse mode one pass per
output element, so forward mode pays for a tall Jacobian (few inputs, many outputs) and
reverse mode for a wide one. Measured both ways:

- `autodiff grad --mode forward` on a program of 2 numbers and an output of M elements (its
  Jacobian, in process through program.differentiate) against reverse mode's way to the same
  Jacobian: M runs, each from a one-hot --grad-output (target: forward >= 10x faster at M = 400);
- autodiff.func.jacfwd against autodiff.func.jacrev on the same tall function, and on the
  transposed (wide) shape, where jacrev should win; and torch.func.jacfwd / jacrev on the same
  functions when PyTorch is installed, for scale.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import autodiff  # noqa: E402
from autodiff import func  # noqa: E402
from autodiff.program import differentiate  # noqa: E402
from timing import median_time  # noqa: E402  (bench/, beside this script)


def bench_command(outputs: int, repeat: int) -> None:
    source = f"k = arange({outputs}) / {outputs}\ny = sin(s * k) * r + s * s * k\n"
    at = {"s": 0.7, "r": 1.3}
    forward = differentiate(source, at, mode="forward")
    jacobian = forward.grads

    def reverse_rows():
        rows = {"s": [], "r": []}
        for i in range(outputs):
            seed = np.zeros(outputs)
            seed[i] = 1.0
            run = differentiate(source, at, grad_output=str(seed.tolist()))
            for name in rows:
                rows[name].append(run.grads[name])
        return rows

    rows = reverse_rows()
    for name in rows:  # the two ways agree before either is timed
        np.testing.assert_allclose(np.array(rows[name]), jacobian[name], rtol=1e-12, atol=1e-15)
    f = median_time(lambda: differentiate(source, at, mode="forward"), repeat)
    r = median_time(reverse_rows, max(1, repeat // 3))
    verdict = "meets" if r / f >= 10 else "MISSES"
    print(f"command  Jacobian of {outputs} outputs in 2 inputs: --mode forward {f * 1e3:.1f} ms, reverse mode "
          f"({outputs} one-hot --grad-output runs) {r * 1e3:.1f} ms   forward {r / f:.1f}x faster "
          f"(target >= 10x: {verdict} target)")


def bench_library(outputs: int, repeat: int) -> None:
    k = autodiff.linspace(0.0, 1.0, outputs)

    def tall(x):  # 2 numbers in, `outputs` out
        return autodiff.sin(x[0] * k) * x[1] + x[0] * x[0] * k

    def wide(x):  # `outputs` numbers in, 2 out
        return autodiff.stack([(autodiff.sin(x) * k).sum(), (x * x).sum()])

    cases = [("tall", tall, autodiff.tensor([0.7, 1.3])), ("wide", wide, autodiff.linspace(-1.0, 1.0, outputs))]
    for label, f, x in cases:
        np.testing.assert_allclose(func.jacfwd(f)(x).numpy(), func.jacrev(f)(x).numpy(), rtol=1e-12, atol=1e-15)
        fwd = median_time(lambda: func.jacfwd(f)(x), repeat)
        rev = median_time(lambda: func.jacrev(f)(x), repeat)
        shape = "2 -> %d" % outputs if label == "tall" else "%d -> 2" % outputs
        line = (f"library  {label} ({shape}): jacfwd {fwd * 1e3:.2f} ms, jacrev {rev * 1e3:.2f} ms, "
                f"jacrev/jacfwd {rev / fwd:.3g}")
        torch = _torch()
        if torch is not None:
            tk = torch.linspace(0.0, 1.0, outputs, dtype=torch.float64)
            tf = {"tall": lambda x: torch.sin(x[0] * tk) * x[1] + x[0] * x[0] * tk,
                  "wide": lambda x: torch.stack([(torch.sin(x) * tk).sum(), (x * x).sum()])}[label]
            tx = torch.tensor(x.numpy())
            tfwd = median_time(lambda: torch.func.jacfwd(tf)(tx), repeat)
            trev = median_time(lambda: torch.func.jacrev(tf)(tx), repeat)
            line += f"   (PyTorch: jacfwd {tfwd * 1e3:.2f} ms, jacrev {trev * 1e3:.2f} ms; " \
                    f"autodiff/PyTorch jacfwd {fwd / tfwd:.1f}x)"
        print(line)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"autodiff {autodiff.__version__}, NumPy {np.__version__}, Python {sys.version.split()[0]}; "
          f"medians of {args.repeat} runs")
    bench_command(args.outputs, args.repeat)
    bench_library(args.outputs, args.repeat)


if __name__ == "__main__":
    main()

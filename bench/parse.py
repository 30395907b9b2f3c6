"""Language benchmarks: ratios against Python's own parser, measured in the same run.

    python bench/parse.py [--statements 10000] [--repeat 11]

- parse: a generated file of 10,000 statements in the core syntax (which is valid Python),
  parsed by autodiff and by `ast.parse`. Target: at most 1.5x.
- lark: the same file through Lark's own LALR parser and a Transformer building the same tree
  (language/lark_reference.py, the same tokenizer): what parser.py's driver must beat to stay.
- run: parse + lower + forward + backward of that file, reported, with its parts.

Runs alternate and medians are compared, because these machines are noisy. Every side is timed
with the garbage collector paused, as autodiff's parser pauses it.
"""

from __future__ import annotations

import argparse
import ast
import gc
import statistics
import sys
import time

from autodiff.language import Source, evaluate, parse

AT = {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0, "x": 1.0, "w": 2.0, "W": [[1.0, 2.0], [3.0, 4.0]], "q": [0.5, -0.5]}


def program(statements: int) -> str:
    """Tutorial-like statements, each using earlier ones, ending in one scalar."""
    lines = ["v0 = a * b"]
    for i in range(1, statements):
        previous = f"v{i - 1}"
        kind = i % 4
        if kind == 0:
            lines.append(f"v{i} = {previous} * 0.999 + a * b")
        elif kind == 1:
            lines.append(f"v{i} = log(d) * c + {previous} / 10")
        elif kind == 2:
            lines.append(f"v{i} = {previous} - (x + 1) / w ** 2 + 0.5")
        else:
            lines.append(f"v{i} = sum(W @ q, 0) * 0.001 + maximum({previous}, a)")
    return "\n".join(lines) + "\n"


def seconds(function) -> float:
    """One timed call, with the garbage collector paused (the state autodiff's parser runs in)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        function()
        return time.perf_counter() - start
    finally:
        if was_enabled:
            gc.enable()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--statements", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args(argv)
    text = program(args.statements)
    from autodiff.language.lark_reference import LarkReference

    reference = LarkReference()
    parse(text)  # load the grammar tables before timing
    ours, python, lark = [], [], []
    for _ in range(args.repeat):  # alternate, so that drift affects every side
        ours.append(seconds(lambda: parse(text)))
        python.append(seconds(lambda: ast.parse(text)))
        lark.append(seconds(lambda: reference.parse(text)))
    a, p, k = statistics.median(ours), statistics.median(python), statistics.median(lark)
    print(f"autodiff {__import__('autodiff').__version__}, Python {sys.version.split()[0]}; "
          f"medians of {args.repeat} interleaved runs; {args.statements:,} statements, {len(text):,} characters")
    print(f"parse   autodiff {a * 1e3:.0f} ms   ast.parse {p * 1e3:.0f} ms   ratio {a / p:.2f}  "
          f"(target <= 1.5: {'meets target' if a / p <= 1.5 else 'MISSES target'})")
    print(f"lark    Lark LALR + Transformer {k * 1e3:.0f} ms   ratio {k / p:.2f} to ast.parse, "
          f"{k / a:.2f}x autodiff's driver")

    def run_once():
        start = time.perf_counter()
        source = Source(text, "bench.expr")
        tree = parse(source)
        parsed = time.perf_counter()
        evaluation = evaluate(tree, source, at=AT)
        lowered = time.perf_counter()
        evaluation.output.backward()
        done = time.perf_counter()
        return parsed - start, lowered - parsed, done - lowered

    parts = [run_once() for _ in range(max(3, args.repeat // 3))]
    p_, l_, b_ = (statistics.median(x) for x in zip(*parts))
    print(f"run     parse + lower and forward + backward: {(p_ + l_ + b_) * 1e3:.0f} ms "
          f"(parse {p_ * 1e3:.0f}, lower and forward {l_ * 1e3:.0f}, backward {b_ * 1e3:.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

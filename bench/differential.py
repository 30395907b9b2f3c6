"""Differential figures: N random programs run by autodiff and by an oracle.

    PYTHONPATH=src python bench/differential.py [N] [--python] [--flags]

Prints programs tried, agreed and disagreed, by category, and the first disagreeing program
of each category (text and --at values). `--python` uses the scalar programs checked against
Python's interpreter instead of the tensor programs checked against PyTorch; `--flags` also
generates the constructs known to be wrong today (one category per known item).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import warnings
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tests.differential.programs import KNOWN, TENSOR_CATEGORIES, tensor_program  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=2000)
    parser.add_argument("--python", action="store_true", help="scalar programs against Python")
    parser.add_argument("--flags", action="store_true", help="also the known-broken constructs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")

    if args.python:
        from tests.differential.scalar import PYTHON_FLAGS, compare_python, scalar_program
        categories = [(c, frozenset()) for c in ("scalar",)]
        if args.flags:
            categories += [(f, frozenset({f})) for f in PYTHON_FLAGS]
        make = lambda rng, cat, flags: scalar_program(rng, flags)  # noqa: E731
        check = compare_python
    else:
        from tests.differential.oracle import compare, compare_multi_root
        categories = [(c, frozenset()) for c in TENSOR_CATEGORIES]
        if args.flags:
            categories += [(f, frozenset({f})) for f in ("view_after_copy", "mixed_index", "narrow_negative", "reshape_alias")]
            categories += [("multi_root_backward", frozenset({"multi_root_backward"}))]
        flag_category = {"view_after_copy": "shape", "mixed_index": "indexing", "narrow_negative": "shape",
                         "reshape_alias": "shape"}

        def make(rng, cat, flags):
            if cat in flag_category:
                return tensor_program(rng, flag_category[cat], flags, statements=1)
            if cat == "multi_root_backward":
                return tensor_program(rng, "elementwise")
            return tensor_program(rng, cat)

        def check(program, cat=None):
            return compare_multi_root(program) if cat == "multi_root_backward" else compare(program)

    tried, agreed, first = Counter(), Counter(), {}
    for i in range(args.n):
        rng = random.Random(args.seed * 1_000_003 + i)
        cat, flags = categories[i % len(categories)]
        program = make(rng, cat, flags)
        tried[cat] += 1
        try:
            problem = check(program, cat) if not args.python else check(program)
        except Exception as exc:  # noqa: BLE001 - the oracle itself refused: not counted against autodiff
            problem = f"(oracle error {type(exc).__name__}: {exc})"
        if problem is not None and cat == "max_two_args" and " is ambiguous: write " in problem:
            problem = None  # refused with both spellings, as docs/language.md says: the intended outcome
        if problem is None:
            agreed[cat] += 1
        elif cat not in first:
            first[cat] = (program, problem)
    total_tried, total_agreed = sum(tried.values()), sum(agreed.values())
    print(f"programs tried {total_tried}, agreed {total_agreed}, disagreed {total_tried - total_agreed}")
    print(f"{'category':<22}{'tried':>7}{'agreed':>8}{'disagreed':>11}")
    for cat, _ in categories:
        print(f"{cat:<22}{tried[cat]:>7}{agreed[cat]:>8}{tried[cat] - agreed[cat]:>11}"
              + ("   (a category once wrong)" if cat in KNOWN else ""))
    for cat, (program, problem) in first.items():
        print(f"\n--- first disagreement in {cat}: {problem}")
        print(program.text.rstrip())
        print(f"    {program.at_text()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

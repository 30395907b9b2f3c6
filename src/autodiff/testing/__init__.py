"""Regression tests over expression files: `autodiff test` and the pytest plugin.

Each expression file has a golden record beside it (`x.expr.golden.json`) holding the output
value and gradients at its points; a run evaluates the file again and compares.

    config.py     [tool.autodiff] in pyproject.toml: patterns and tolerances, shared with pytest
    discover.py   which files a run covers (paths, globs, -k, shards from CI), unused records
    records.py    the golden record: reading, and writing it stably
    one_file.py   one file at its points, compared with its record
    compare.py    values against recorded ones, with tolerances
    pool.py       files spread over worker processes (-j), surviving a crashed worker
    reporting.py  plain, JSON and Rich reports; junit.py: JUnit XML; review.py: pending records
    pytest_plugin.py   expression files as pytest items
"""

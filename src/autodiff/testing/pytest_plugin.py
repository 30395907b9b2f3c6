"""A pytest plugin (entry point `pytest11`): expression files are collected as test items.

Each `*.expr` file under pytest's paths is one item that passes when its values and
gradients match its golden record. Because they are ordinary items, pytest's selection
(-k), reports and parallel runners (pytest-xdist: `pytest -n 4`) work on them unchanged.

    [tool.pytest.ini_options]
    autodiff_patterns = ["*.expr"]   # file names to collect (empty: none)
    autodiff_rtol = "1e-9"
    autodiff_atol = "1e-12"

`pytest --autodiff-update` writes the records instead; `-p no:autodiff` turns the plugin off.
Nothing of autodiff is imported until an expression file is collected.
"""

from __future__ import annotations

import fnmatch

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("autodiff", "autodiff expression files")
    group.addoption("--autodiff-update", action="store_true", default=False,
                    help="write or refresh the golden records of collected expression files")
    parser.addini("autodiff_patterns", type="args", default=["*.expr"],
                  help="names of files collected as autodiff expression tests (default: *.expr)")
    parser.addini("autodiff_rtol", default="1e-9", help="relative tolerance of autodiff comparisons")
    parser.addini("autodiff_atol", default="1e-12", help="absolute tolerance of autodiff comparisons")


def pytest_collect_file(file_path, parent):
    if file_path.name.endswith(".golden.json"):
        return None
    if any(fnmatch.fnmatch(file_path.name, pattern) for pattern in parent.config.getini("autodiff_patterns")):
        return ExpressionFile.from_parent(parent, path=file_path)
    return None


class ExpressionFile(pytest.File):
    def collect(self):
        yield ExpressionItem.from_parent(self, name=self.path.name)


class ExpressionFailure(Exception):
    """An expression file that did not pass; carries its result for the report."""

    def __init__(self, result) -> None:
        super().__init__(result.status)
        self.result = result


class ExpressionItem(pytest.Item):
    def runtest(self) -> None:
        from .one_file import PASSED, UPDATED, Settings, run_file

        config = self.config
        settings = Settings(rtol=float(config.getini("autodiff_rtol")), atol=float(config.getini("autodiff_atol")),
                            update=config.getoption("autodiff_update"))
        result = run_file(self.path, settings)
        if result.status not in (PASSED, UPDATED):
            raise ExpressionFailure(result)

    def repr_failure(self, excinfo, style=None):
        if not isinstance(excinfo.value, ExpressionFailure):
            return super().repr_failure(excinfo, style)
        from .reporting import point_text, value_text

        result = excinfo.value.result
        lines = [f"{result.path}: {result.status}" + (f": {result.message}" if result.message else "")]
        for m in result.mismatches:
            lines.append(f"  {m.quantity} at {point_text(m.point)}")
            lines.append(f"    expected  {value_text(m.expected)}")
            lines.append(f"    got       {value_text(m.got)}")
            lines.append(f"    ({m.difference})")
        return "\n".join(lines)

    def reportinfo(self):
        return self.path, None, f"autodiff: {self.path.name}"

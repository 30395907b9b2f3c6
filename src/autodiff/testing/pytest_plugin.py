"""A pytest plugin (entry point `pytest11`): expression files are collected as test items.

Each expression file under pytest's paths is one item, named by its path alone, that passes
when its values and gradients match its golden record. It collects exactly the files
`autodiff test` collects, compares with the same tolerances and follows the same rule for
expected errors, because both read `[tool.autodiff]` in pyproject.toml (testing/config.py)
and run files the same way (testing/one_file.py):

    [tool.autodiff]
    patterns = ["*.expr"]   # file names to collect (default: *.expr)
    rtol = 1e-9
    atol = 1e-12

pytest's own ini options `autodiff_patterns`, `autodiff_rtol` and `autodiff_atol`, where
set, override the table for pytest alone. `pytest --autodiff-update` writes the records
instead, and counts them at the end (`1 record updated, 9 records unchanged`), as syrupy counts
snapshots; in CI it is refused, as a usage error; `-p no:autodiff` turns the plugin off. Pytest's -k, -x, reports and parallel
runners (pytest-xdist: `pytest -n 4`) work on the items unchanged. Nothing of autodiff is
imported until an expression file is collected.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("autodiff", "autodiff expression files")
    group.addoption("--autodiff-update", action="store_true", default=False,
                    help="write or refresh the golden records of collected expression files")
    parser.addini("autodiff_patterns", type="args", default=None,
                  help="names of files collected as autodiff expression tests (default: [tool.autodiff] "
                       "patterns, else *.expr)")
    parser.addini("autodiff_rtol", default=None, help="relative tolerance of autodiff comparisons")
    parser.addini("autodiff_atol", default=None, help="absolute tolerance of autodiff comparisons")


def pytest_configure(config) -> None:
    if config.getoption("autodiff_update", False):
        from .discover import SuiteProblem
        from .plan import refuse_writes_in_ci

        try:  # as `autodiff test --update` in CI: a usage error, before anything runs
            refuse_writes_in_ci("--autodiff-update")
        except SuiteProblem as refused:
            raise pytest.UsageError(str(refused)) from None
        config.pluginmanager.register(_RecordCounter(), "autodiff-record-counter")


def _suite_config(config):
    """[tool.autodiff] for this session (found from pytest's root), ini options over it."""
    cached = getattr(config, "_autodiff_suite", None)
    if cached is None:
        from .config import find_config
        from .plan import tolerances

        found = find_config(config.rootpath)
        patterns = tuple(config.getini("autodiff_patterns") or found.patterns)
        rtol, atol = tolerances(found, config.getini("autodiff_rtol") or None, config.getini("autodiff_atol") or None)
        cached = (patterns, rtol, atol)
        config._autodiff_suite = cached
    return cached


def pytest_collect_file(file_path, parent):
    if not file_path.name.endswith((".golden.json", ".golden.new")):
        from .discover import is_collected

        config = parent.config
        if is_collected(file_path.name, _suite_config(config)[0]) and not _in_skipped_directory(config, file_path.parent):
            return ExpressionFile.from_parent(parent, path=file_path)
    return None


def _in_skipped_directory(config, folder) -> bool:
    """Whether a folder below pytest's root is one `autodiff test` never searches (hidden,
    build, venv...): worked out once per folder of the session, not once per file."""
    verdicts = getattr(config, "_autodiff_skipped_folders", None)
    if verdicts is None:
        verdicts = config._autodiff_skipped_folders = {}
    verdict = verdicts.get(folder)
    if verdict is None:
        from .discover import skipped_directory

        root = config.rootpath
        folders = folder.relative_to(root).parts if folder.is_relative_to(root) else ()
        verdict = verdicts[folder] = any(skipped_directory(part) for part in folders)
    return verdict


def _settings(config):
    """How this session runs files (the same for every item): made once."""
    settings = getattr(config, "_autodiff_settings", None)
    if settings is None:
        from .one_file import Settings

        from .config import in_ci

        _, rtol, atol = _suite_config(config)
        ci = in_ci()
        settings = config._autodiff_settings = Settings(rtol=rtol, atol=atol, update=config.getoption("autodiff_update"),
                                                        ci=ci, update_hint="pytest --autodiff-update")
    return settings


class ExpressionFile(pytest.File):
    """The file itself is the item: its node id is its path, with nothing repeated after it."""

    def collect(self):
        item = ExpressionItem.from_parent(self, name=self.path.name, nodeid=self.nodeid)
        yield item


class ExpressionFailure(Exception):
    """An expression file that did not pass; carries its result for the report."""

    def __init__(self, result) -> None:
        super().__init__(result.status)
        self.result = result


class ExpressionItem(pytest.Item):
    record = ""  # with --autodiff-update: what became of its record (RECORD_OUTCOMES)

    def runtest(self) -> None:
        from .one_file import PASSED, UPDATED, run_file

        settings = _settings(self.config)
        result = run_file(self.path, settings)
        if settings.update and result.status in (PASSED, UPDATED):
            self.record = "unchanged" if result.status == PASSED else "created" if result.created else "updated"
        if result.status not in (PASSED, UPDATED):
            raise ExpressionFailure(result)

    def repr_failure(self, excinfo, style=None):
        if not isinstance(excinfo.value, ExpressionFailure):
            return super().repr_failure(excinfo, style)
        from .reporting import point_text, value_text

        result = excinfo.value.result
        lines = [f"{result.path}: {result.status}" + (f": {result.message}" if result.message else "")]
        if result.excerpt:  # the line of the file and a caret under the place
            lines.append(result.excerpt)
        for m in result.mismatches:
            lines.append(f"  {m.quantity} at {point_text(m.point)}")
            lines.append(f"    expected  {value_text(m.expected)}")
            lines.append(f"    got       {value_text(m.got)}")
            lines.append(f"    ({m.difference})")
        if result.mismatches:
            lines.append("pytest --autodiff-update records the new values (-k selects the files)")
        return "\n".join(lines)

    def reportinfo(self):
        return self.path, None, f"autodiff: {self.path.name}"


# -- what --autodiff-update did, counted as syrupy and insta count snapshots ------------------------------

RECORD_OUTCOMES = ("updated", "created", "unchanged")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "call" and isinstance(item, ExpressionItem) and item.record:
        # an attribute of the report travels with it from a pytest-xdist worker to the controller
        outcome.get_result().autodiff_record = item.record


class _RecordCounter:
    """Registered with --autodiff-update: counts the records reported (on the controller, under
    pytest-xdist) and says them at the end."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(RECORD_OUTCOMES, 0)

    def pytest_runtest_logreport(self, report) -> None:
        record = getattr(report, "autodiff_record", None)
        if record in self.counts:
            self.counts[record] += 1

    def pytest_terminal_summary(self, terminalreporter) -> None:
        words = [f"{count} record{'' if count == 1 else 's'} {what}" for what, count in self.counts.items() if count]
        terminalreporter.write_sep("-", "autodiff golden records")
        terminalreporter.write_line(", ".join(words) if words else "no record written")

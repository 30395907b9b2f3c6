"""`autodiff test`: a suite run against its golden records (its plan is testing/plan.py's, shared
with the pytest plugin). Its sub-commands, which settle pending records (review, accept, reject)
and check CI shards (merge), are suite_subcommands.py's; the group that routes between them is
made here (`group_classes`), for cli/app.py."""

from __future__ import annotations

import os
import sys
from typing import List, Optional

from ..console import say
from ..declare import Argument, Option
from ..exit_codes import ExitCode
from ..options import Unused, bad_number, bad_parameter, check_tolerances, table_format, words
from ..quick import given_on_command_line
from ..render import emit
from ..render import suite as words_

SuiteFormat, SUITE_FORMAT = table_format("suite", "SuiteFormat")

EXAMPLES = """[bold]Examples[/]

  autodiff test examples

  autodiff test formulas/ --update            [dim]# prints what changed in each record[/]

  autodiff test formulas/ --pending           [dim]# writes x.expr.golden.new files to review[/]

  autodiff test review | accept | reject [PATH...]

  autodiff test suite/ -k "matrix and not slow" -x -q

  autodiff test suite/ -j 4 --shard 2/3 --junit report.xml     [dim]# or --shard auto in GitLab, CircleCI[/]

  autodiff test merge shard-*.xml --expect suite/

  autodiff test suite/ --format json | jq .summary"""


SUBCOMMANDS = ("review", "accept", "reject", "merge")


def group_classes():
    from typer._click import Context
    from typer.core import TyperCommand, TyperGroup

    class _Context(Context):
        @property
        def command_path(self) -> str:
            return super().command_path.rstrip()

    class RunCommand(TyperCommand):
        """`autodiff test PATH...`: the default of the group, shown as `autodiff test`."""

        context_class = _Context

    class TestGroup(TyperGroup):
        """`autodiff test PATH...` runs files; a first word review, accept, reject or merge is a
        sub-command (a directory of that name is reached as ./review)."""

        def parse_args(self, ctx, args):
            if not args or args[0] not in SUBCOMMANDS:
                args = ["run", *args]
            return super().parse_args(ctx, args)

        def resolve_command(self, ctx, args):
            name, command, rest = super().resolve_command(ctx, args)
            return ("" if name == "run" else name), command, rest

    return TestGroup, RunCommand




def test(
    paths: Optional[List[str]] = Argument(None, metavar="PATH...", show_default=False, click_type=words,
                                          help="Expression files and directories (searched below); default: ."),
    update: bool = Option(False, "--update", help="Write or refresh the golden records, showing what changed."),
    pending: bool = Option(False, "--pending", help="As --update, but write NAME.golden.new beside each record, "
                                                    "for autodiff test review / accept / reject."),
    at: List[str] = Option([], "--at", metavar="NAME=VALUE,...",
                           help="With --update: a point to record, for the files that take these inputs. "
                                "Repeated, it adds to the same point, as in grad; an --at that names an input "
                                "again starts the next point (--at x=1 --at x=2: two points)."),
    glob: List[str] = Option([], "--glob", metavar="PATTERN",
                             help="File names to take in directories (repeatable); default: [tool.autodiff] "
                                  "patterns in pyproject.toml, else *.expr."),
    keyword: Optional[str] = Option(None, "-k", metavar="EXPR",
                                    help="Only files whose path contains these words (not, and, or, as pytest)."),
    exitfirst: bool = Option(False, "--exitfirst", "-x", help="Stop at the first file that does not pass."),
    quiet: bool = Option(False, "--quiet", "-q", help="List only the files that do not pass."),
    verbose: bool = Option(False, "--verbose", "-v", help="List every file, on a terminal too."),
    unused: Unused = Option(Unused.warn, "--unused",
                            help="Records without a file and points that no longer apply: warn, fail, or delete "
                                 "them (not with -k, --shard, or a failing run)."),
    rtol: Optional[float] = Option(None, "--rtol", min=0.0, metavar="TOL",
                                   help="Relative tolerance of comparisons (default 1e-9; a record's own wins)."),
    atol: Optional[float] = Option(None, "--atol", min=0.0, metavar="TOL",
                                   help="Absolute tolerance of comparisons (default 1e-12; a record's own wins)."),
    jobs: Optional[int] = Option(None, "--jobs", "-j", min=1, max=256, metavar="N",
                                 help="Worker processes (at most 256); default: one per CPU core."),
    timeout: float = Option(60.0, "--timeout", min=0.0, metavar="SECONDS",
                            help="Most seconds one file may run before it is stopped and errored; 0: no limit."),
    shard: Optional[str] = Option(None, "--shard", metavar="I/N|auto",
                                  help="Run only the I-th of N shards (from 1); auto: from GitLab's or CircleCI's "
                                       "variables. Bazel's TEST_SHARD_INDEX is honoured without it."),
    junit: Optional[str] = Option(None, "--junit", metavar="FILE", help="Also write a JUnit XML report."),
    format: SuiteFormat = SUITE_FORMAT,
    options=None,  # --dtype, --seed, --device, --max-elements, --max-iterations (see options.runs_programs)
) -> int | None:
    """Compare expression files' values and gradients with their golden records (x.expr.golden.json).

    Sub-commands: [bold]autodiff test review[/], [bold]accept[/], [bold]reject[/] settle pending records;
    [bold]autodiff test merge[/] checks that CI shards ran every file once.
    """
    import time

    from ...testing.discover import unused_records
    from ...testing.one_file import Settings
    from ...testing.plan import plan as suite_plan
    from ...testing.plan import refuse_writes_in_ci
    from ...testing.pool import default_jobs, run_files
    from ...testing.reporting import RunSummary
    from ..program_input import parse_at
    from ..render.suite import Progress

    refuse_writes_in_ci("--pending" if pending else "--update" if update else
                        "--unused delete" if unused is Unused.delete else None)
    update = update or pending
    if at and not update:
        raise bad_parameter("--at", "--at adds points to records, so it needs --update")
    extra_points = _points_of(at, parse_at)
    paths = paths or ["."]
    run = suite_plan(paths, globs=glob, keyword=keyword, shard=shard, rtol=rtol, atol=atol)
    check_tolerances(run.atol, run.rtol)
    if unused is Unused.delete and not run.whole:
        raise bad_parameter("--unused", f"deleting unused records needs the whole suite: not with "
                                        f"{'-k' if keyword else 'a shard (' + run.shard[2] + ')'}")
    files = run.files
    if timeout != timeout or timeout == float("inf"):
        timeout = 0.0 if timeout == float("inf") else bad_number("--timeout", timeout)
    explicit = {name: True for name in ("seed", "dtype") if given_on_command_line(name)}
    settings = Settings(rtol=run.rtol, atol=run.atol, update=update, extra_points=extra_points, options=options,
                        pending=pending, ci=run.ci, explicit=explicit)
    if not files:
        if run.collected and run.shard is not None and not keyword:
            say(words_.nothing_in_shard(run.shard, len(run.collected)))
            emit("suite", RunSummary([], 0.0, update, pending), format)
            return
        say(words_.no_files(paths, run.globs, keyword, len(run.collected)))
        return ExitCode.NO_TESTS
    progress = Progress(len(files), enabled=sys.stderr.isatty() and format.value != "json")
    started = time.perf_counter()
    stop = (lambda result: result.status not in ("passed", "updated")) if exitfirst else None
    try:
        results = run_files(files, settings, jobs or default_jobs(), on_result=progress.advance, timeout=timeout,
                            stop_when=stop)
    finally:
        progress.close()
    leftover = [] if (not run.whole or len(results) < len(files)) else unused_records(paths, run.globs, files)
    summary = RunSummary(results, time.perf_counter() - started, update, pending, leftover,
                         unused_fails=unused is Unused.fail, quiet=quiet, verbose=verbose,
                         not_run=len(files) - len(results))
    if unused is Unused.delete and summary.unused_count:
        _delete_unused(summary)
    if junit:
        from ...testing.files import WriteProblem
        from ...testing.junit import write_junit

        try:
            write_junit(summary, junit)
        except WriteProblem:
            emit("suite", summary, format)  # the report is still shown; then the usage error (exit 2)
            raise
    emit("suite", summary, format)
    if not summary.succeeded:
        return ExitCode.CHECK_FAILED
    return None


def _delete_unused(summary) -> None:
    """--unused delete: records no file owns are removed, points that no longer apply dropped;
    refused (nothing deleted) when the run did not pass."""
    from ...testing.one_file import drop_points

    if not summary.succeeded:
        say(words_.UNUSED_KEPT)
        return
    for path, reason in summary.unused_records:
        try:
            os.remove(path)
            say(words_.deleted(path, reason))
        except OSError as exc:
            say(words_.not_deleted(path, exc.strerror or str(exc)))
    for result in summary.results:
        if result.unused and drop_points(result.path, [at for at, _ in result.unused]):
            say(words_.dropped(len(result.unused), result.path))
    summary.unused_records = []
    for result in summary.results:
        result.unused = []


def _points_of(options: list, parse_at) -> list:
    """The points of repeated --at options: as grad reads them, each option adds its values to the
    point (`--at 'X=[[1,2],[3,4]]' --at w=[1,1]` is one point), and an option that names an input
    the point already has starts the next one."""
    points: list = []
    for option in options:
        values = {name: getattr(value, "tolist", lambda: value)() for name, value in parse_at([option]).items()}
        if points and not set(values) & set(points[-1]):
            points[-1].update(values)
        else:
            points.append(values)
    return points

"""A suite run's plan, made the same way for `autodiff test` and for the pytest plugin: which
files run, compared with which tolerances, and whether records may be written (never in CI).

Precedence, in both: an option given on the command line (or pytest's ini option), then the
nearest pyproject.toml's [tool.autodiff] table, then the built-in defaults."""

from __future__ import annotations

from .._record import record
from . import discover
from .compare import DEFAULT_ATOL, DEFAULT_RTOL
from .config import SuiteConfig, ci_refusal, find_config, in_ci
from .discover import SuiteProblem


def refuse_writes_in_ci(option: str | None) -> None:
    """`option` (--update, --pending, --unused delete, --autodiff-update) writes or deletes
    records: refused in CI, before anything runs (SuiteProblem, a usage error)."""
    if option and in_ci():
        raise SuiteProblem(ci_refusal(option))


def tolerances(config: SuiteConfig, rtol=None, atol=None) -> tuple:
    """(rtol, atol): each given one, else the configuration's, else the default."""
    rtol = rtol if rtol is not None else (config.rtol if config.rtol is not None else DEFAULT_RTOL)
    atol = atol if atol is not None else (config.atol if config.atol is not None else DEFAULT_ATOL)
    return float(rtol), float(atol)


@record
class Plan:
    """Which files a run takes, and with which tolerances: the same for the command and the pytest plugin."""

    collected: list  # every file the paths hold
    files: list  # those this run takes (-k, its shard)
    globs: tuple
    config: SuiteConfig
    rtol: float
    atol: float
    keyword: str | None
    shard: tuple | None  # (index from 1, count, where it came from)
    ci: bool

    @property
    def whole(self) -> bool:
        """Whether the run takes the whole suite (no -k, no shard): only then can records be unused."""
        return not self.keyword and self.shard is None


def plan(paths: list, *, globs=(), keyword: str | None = None, shard: str | None = None, rtol=None,
         atol=None) -> Plan:
    """The plan of a run of `paths` (default "."): globs given, else the configuration's patterns."""
    paths = paths or ["."]
    config = find_config(paths[0])
    globs = tuple(globs) or config.patterns
    rtol, atol = tolerances(config, rtol, atol)
    chosen = discover.shard_from_environment(shard)
    collected = discover.discover(paths, globs)
    files = discover.select(collected, keyword, config.root) if keyword else collected
    if chosen is not None:
        discover.touch_shard_status_file()
        files = discover.shard(files, chosen[0], chosen[1], config.root)
    return Plan(collected, files, globs, config, rtol, atol, keyword, chosen, in_ci())

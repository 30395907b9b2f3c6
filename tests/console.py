"""Running the installed `autodiff` console script as a user's shell would (for tests/cli and
tests/suite: pytest puts this directory on sys.path for their packages)."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def console_script() -> list:
    """The `autodiff` script installed beside this Python (pip install -e .)."""
    script = pathlib.Path(sys.executable).parent / "autodiff"
    if script.exists():
        return [str(script)]
    found = shutil.which("autodiff")
    if found is None:
        pytest.fail("the autodiff console script is not installed: run pip install -e '.[test]'")
    return [found]


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


# Set by CI systems, read by `autodiff test` (CI: never record; the rest: shards): a test sets them itself.
CI_VARIABLES = ("CI", "TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "TEST_SHARD_STATUS_FILE", "CI_NODE_INDEX", "CI_NODE_TOTAL",
                "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL")


def environment(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTODIFF_", "FORCE_COLOR", "CLICOLOR"))
           and k not in CI_VARIABLES}
    env.update(NO_COLOR="1", COLUMNS="100", LINES="50", TERM="dumb", PYTHONIOENCODING="utf-8")
    env.update(extra)
    return env


def run_autodiff(*args: str, stdin: str | bytes | None = None, cwd=ROOT, timeout: float = 120, **env) -> Result:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run(console_script() + list(args), input=data, capture_output=True, cwd=cwd,
                          env=environment(**env), timeout=timeout, stdin=None if data is not None else subprocess.DEVNULL)
    result = Result(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))
    assert "Traceback" not in result.stderr, result.stderr
    if result.code not in (0, 1):
        assert result.stdout == "", f"stdout is not empty on error: {result.stdout!r}"
    return result


def run_in_terminal(command: str, cwd: pathlib.Path, **env) -> tuple:
    """Run a shell command with a pseudo-terminal as its standard output and error, as a person
    at a terminal would; (status, everything the terminal showed)."""
    import pty

    main, follower = pty.openpty()
    env = environment(COLUMNS="90", PATH=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                      **env)
    process = subprocess.Popen(["bash", "-c", command], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower,
                               cwd=cwd, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the terminal closes when the command ends
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    code = process.wait(timeout=120)
    return code, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")

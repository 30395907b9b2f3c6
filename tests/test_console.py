"""The harness that runs the console script (tests/console.py): a run forked from the zygote
prints, fails and exits exactly as the script started afresh does."""

from __future__ import annotations

import subprocess

import pytest

from console import _ZYGOTE, ROOT, console_script, environment, run_in_terminal, run_script

RUNS = [  # (args, standard input)
    (("grad", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "--format", "plain"), None),
    (("grad", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "--format", "rich", "--color", "always"), None),
    (("grad", "-e", "x +", "--at", "x=1"), None),  # a syntax error: exit 3
    (("grad", "--at", "x=3", "--format", "json"), b"x ** 2\n"),  # the program on standard input
    (("eval", "-e", "a * b", "--points", "-"), b"a,b\n2,3\n1,\n"),  # results, then an error: exit 2
    (("test", "--help"), None),
    (("explain", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "--format", "json"), None),
    ((), None),  # no command: the usage on standard error, exit 2
]


@pytest.mark.skipif(not _ZYGOTE.usable(environment()), reason="runs start afresh here (no fork, or asked so)")
@pytest.mark.parametrize("args,data", RUNS, ids=[" ".join(r[0][:2]) or "nothing" for r in RUNS])
def test_a_forked_run_is_the_script_started_afresh(args, data):
    env = environment(COLUMNS="70")
    forked = run_script(args, data=data, env=env)
    done = subprocess.run(console_script() + list(args), input=data, capture_output=True, cwd=ROOT, env=env,
                          stdin=None if data is not None else subprocess.DEVNULL, timeout=120)
    assert forked == (done.returncode, done.stdout, done.stderr)


@pytest.mark.skipif(not _ZYGOTE.usable(environment()), reason="runs start afresh here (no fork, or asked so)")
def test_a_run_leaves_nothing_behind_for_the_next():
    """--color always sets FORCE_COLOR in the run's own environment: the next run does not see it."""
    env = environment(TERM="xterm-256color")
    first = run_script(["grad", "-e", "x", "--at", "x=1", "--format", "rich", "--color", "always"], env=env)
    assert b"\x1b[" in first[1]
    second = run_script(["grad", "-e", "x", "--at", "x=1", "--format", "rich"], env=env)
    assert second[0] == 0 and b"\x1b[" not in second[1]


def test_a_shell_session_runs_the_same_through_its_path(tmp_path):
    command = "autodiff grad -e 'x ** 2' --at x=3 --format plain | cat; echo status ${PIPESTATUS[0]}"
    code, shown = run_in_terminal(command, tmp_path)
    assert (code, shown) == (0, "output\t9.0\nx\t6.0\nstatus 0\n")
    code, shown = run_in_terminal("autodiff grad -e 'x +' --at x=1", tmp_path)
    assert code == 3 and shown.startswith("<expr>:1:3: error: expected an expression after '+'")


def test_the_suite_runs_on_every_core_and_says_when_nothing_ran():
    """pyproject's addopts spread the tests over the cores (pytest-xdist); a selection that
    leaves nothing is still pytest's exit status 5, not a pass."""
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_layers.py", "-k", "no_test_is_called_so",
                           "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=environment())
    assert done.returncode == 5, done.stdout + done.stderr
    assert "created: " in done.stdout, done.stdout  # xdist's workers were started


def test_a_run_whose_environment_libraries_read_as_they_start_starts_afresh():
    """OpenBLAS reads OPENBLAS_* as NumPy loads: such a run cannot be forked from the zygote."""
    from console import _read_at_run_time

    base = environment()
    assert _read_at_run_time(base, environment(COLUMNS="60", FORCE_COLOR="1", CI="true", TERM="xterm",
                                               TORCHINDUCTOR_CACHE_DIR="/tmp/x"))
    assert not _read_at_run_time(base, environment(OPENBLAS_CORETYPE="Sandybridge"))
    assert not _read_at_run_time(base, environment(NPY_DISABLE_CPU_FEATURES="AVX512F", LC_ALL="C"))
    assert not _read_at_run_time(base, environment(PYTHONIOENCODING="ascii"))
    assert not _read_at_run_time(base, {k: v for k, v in base.items() if k != "PYTHONIOENCODING"})


@pytest.mark.skipif(not _ZYGOTE.usable(environment()), reason="runs start afresh here (no fork, or asked so)")
def test_a_shell_sessions_autodiff_is_forked_not_started_afresh(tmp_path):
    """What a shell adds to its environment (PWD, SHLVL, PS1...) is read at run time: the `autodiff`
    a session finds hands its streams to the zygote rather than starting the script."""
    from console import _read_at_run_time

    code, shown = run_in_terminal("env", tmp_path)
    session = dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)
    assert code == 0 and _read_at_run_time(_ZYGOTE.env, session), \
        {k for k in set(session) | set(_ZYGOTE.env) if session.get(k) != _ZYGOTE.env.get(k)}

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
    """The console script run with `args` in a process of its own, standard input `stdin` (nothing:
    /dev/null), in the tests' environment plus `env`."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    code, out, err = run_script(args, data=data, cwd=cwd, env=environment(**env), timeout=timeout)
    result = Result(code, out.decode("utf-8"), err.decode("utf-8"))
    assert "Traceback" not in result.stderr, result.stderr
    if result.code not in (0, 1):
        assert result.stdout == "", f"stdout is not empty on error: {result.stdout!r}"
    return result


def run_script(args, *, data: bytes | None = None, cwd=ROOT, env: dict, timeout: float = 120) -> tuple:
    """(status, standard output, standard error) of the console script run with `args`, its
    standard input `data` (None: /dev/null): forked from the zygote below where it can be."""
    args = [str(a) for a in args]
    started = _ZYGOTE.run([*console_script(), *args], data, cwd, env, timeout)
    if started is not None:
        return started
    done = subprocess.run(console_script() + args, input=data, capture_output=True, cwd=cwd, env=env,
                          timeout=timeout, stdin=None if data is not None else subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


def run_in_terminal(command: str, cwd: pathlib.Path, **env) -> tuple:
    """Run a shell command with a pseudo-terminal as its standard output and error, as a person
    at a terminal would; (status, everything the terminal showed)."""
    import pty

    main, follower = pty.openpty()
    env = environment(COLUMNS="90", PATH=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                      **env)
    shims = _ZYGOTE.shim_directory(env)
    if shims is not None:
        env["PATH"] = f"{shims}{os.pathsep}{env['PATH']}"
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


# -- processes forked from one that has imported autodiff ----------------------------------------------
# The suite runs the command some thousand times, and most of each run is Python starting and
# importing NumPy, Rich and Typer. A zygote, one per test process, imports them once; each run
# is a child forked from it: a process of its own, with the standard streams it was given
# (passed over a Unix socket), its own working directory, environment, argv and exit status,
# running the console script's own `main()` and ending as the script ends (sys.exit, the
# interpreter's shutdown). Shell sessions (run_in_terminal) find an `autodiff` on their PATH
# that hands its streams to the zygote the same way. A run whose environment differs from the
# zygote's in what Python, NumPy or OpenBLAS read as they load (READ_AS_LIBRARIES_LOAD) starts
# the script afresh; so do runs on platforms without fork, and every run where
# AUTODIFF_TEST_FRESH_PROCESSES=1.

_ZYGOTE_CODE = r"""
import json, os, signal, socket, sys, time
import autodiff.cli.main, autodiff.cli.app, autodiff.program, autodiff.testing.plan  # imported once, here

def warm_up():
    # What the commands import as they run (Rich's tables, Typer's help, multiprocessing...), found
    # by running a few in a child whose output goes nowhere, then imported here once, for all runs.
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reading)
        before = set(sys.modules)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.environ.update(NO_COLOR="1", COLUMNS="100")
        from autodiff.cli.main import main
        for argv in (["--version"], ["grad", "--help"], ["grad", "-e", "x * 2", "--at", "x=1", "--format", "rich"],
                     ["grad", "-e", "x +"], ["explain", "-e", "x * 2", "--at", "x=1", "--format", "rich"],
                     ["graph", "-e", "x * 2", "--at", "x=1", "--format", "rich"], ["derive", "-e", "x * 2"],
                     ["plot", "-e", "x * 2", "--wrt", "x", "--range", "0:1", "--format", "rich"],
                     ["test", "--help"], ["eval", "-e", "x * 2", "--at", "x=1", "--format", "json"]):
            try:
                main(argv)
            except BaseException:
                pass
        names = sorted(m for m in set(sys.modules) - before if not m.startswith("__"))
        os.write(writing, json.dumps(names).encode())
        os._exit(0)
    os.close(writing)
    data = b""
    while True:
        chunk = os.read(reading, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(reading)
    os.waitpid(pid, 0)
    import importlib
    for name in json.loads(data or b"[]"):
        try:
            importlib.import_module(name)
        except BaseException:
            pass

warm_up()

def receive(connection):
    data, fds = b"", []
    while not data.endswith(b"\n"):
        chunk, more, _, _ = socket.recv_fds(connection, 1 << 20, 8)
        if not chunk:
            os._exit(0)
        data += chunk
        fds += more
    return json.loads(data), fds

def reap():
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass

def account(*_):
    # the CPU its runs took, where asked (AUTODIFF_TEST_CPU_LOG: what the suite costs in all)
    reap()
    if len(sys.argv) > 2:
        import resource
        used = sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                   for field in ("ru_utime", "ru_stime"))
        with open(sys.argv[2], "a") as log:
            log.write(f"{used:.3f}\n")
    os._exit(0)

def serve(listener):
    signal.signal(signal.SIGTERM, account)
    while True:
        connection, _ = listener.accept()
        reap()  # the handlers that have ended
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            return connection
        connection.close()

def handle(connection):
    request, fds = receive(connection)  # a probe that only connects ends here (no request)
    pid = os.fork()
    if pid == 0:
        connection.close()
        return request, fds
    for fd in fds:
        os.close(fd)
    deadline, status = time.monotonic() + request["timeout"], "done"
    while True:
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(wait_status)
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            code, status = None, "timeout"
            break
        time.sleep(0.001)
    connection.sendall((json.dumps({"code": code, "status": status}) + "\n").encode())
    os._exit(0)

try:  # Linux: end with the test process that started it, however that one ends
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(64)
request, fds = handle(serve(listener))
for target, fd in zip((0, 1, 2), fds):
    os.dup2(fd, target)
    os.close(fd)
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
sys.argv = request["argv"]
if os.isatty(1):  # as Python sets up a terminal's standard output when it starts
    sys.stdout.reconfigure(line_buffering=True)
from autodiff.cli.main import main
try:
    code = main()
except SystemExit as stop:
    code = stop.code
except BaseException:
    import traceback
    traceback.print_exc()
    code = 1
if code is None:
    code = 0
elif not isinstance(code, int):
    print(code, file=sys.stderr)
    code = 1
# As the interpreter ends: its exit functions, then its standard streams flushed (a failure there is
# status 120). The rest of its shutdown, collecting every module the zygote imported, is skipped.
import atexit
atexit._run_exitfuncs()
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except Exception as error:
        if stream is sys.stdout:
            os.write(2, f"Exception ignored in: {stream!r}\n{type(error).__name__}: {error}\n".encode())
            code = 120
os._exit(code)
"""

# A command a shell session finds on its PATH: it hands its streams to the zygote and ends with
# the run's status (or, where the run must start afresh, becomes the console script itself).
_SHIM = r"""#!{python} -SE
import json, os, socket, sys
SOCKET, SCRIPT, BASE, AT_LOAD = {socket!r}, {script!r}, {base!r}, {at_load!r}
changed = {{k for k in set(BASE) | set(os.environ) if BASE.get(k) != os.environ.get(k)}}
if any(k.startswith(AT_LOAD) for k in changed):
    os.execv(SCRIPT, [SCRIPT] + sys.argv[1:])
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    client.connect(SOCKET)
except OSError:
    os.execv(SCRIPT, [SCRIPT] + sys.argv[1:])
request = {{"argv": [SCRIPT] + sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ), "timeout": 120}}
socket.send_fds(client, [(json.dumps(request) + "\n").encode()], [0, 1, 2])
reply = b""
while not reply.endswith(b"\n"):
    chunk = client.recv(4096)
    if not chunk:
        sys.exit(1)
    reply += chunk
reply = json.loads(reply)
sys.exit(reply["code"] if reply["status"] == "done" else 124)
"""

# What Python, NumPy, OpenBLAS and the other libraries the command loads read as they start: a run
# whose environment differs from the zygote's in one of these starts the script afresh. The rest
# (the terminal, colours, CI's variables, autodiff's own, what a shell or PyTorch in the test
# process adds) is read as the command runs.
READ_AS_LIBRARIES_LOAD = ("PYTHON", "LC_", "LANG", "OPENBLAS", "GOTO", "OMP_", "MKL_", "NPY_", "NUMPY", "CUPY",
                          "CUDA", "NVIDIA", "LD_", "MALLOC")


def _read_at_run_time(base: dict, env: dict) -> bool:
    """Whether `env` differs from `base` only in variables the command reads as it runs."""
    changed = {k for k in set(base) | set(env) if base.get(k) != env.get(k)}
    return not any(k.startswith(READ_AS_LIBRARIES_LOAD) for k in changed)


class _Zygote:
    def __init__(self) -> None:
        self.process = None
        self.env = None
        self.directory = None

    def usable(self, env: dict) -> bool:
        if os.environ.get("AUTODIFF_TEST_FRESH_PROCESSES") or not hasattr(os, "fork") or \
                not hasattr(__import__("socket"), "send_fds"):
            return False
        if self.process is None or self.process.poll() is not None:
            self._start()
        return _read_at_run_time(self.env, env)

    def run(self, argv: list, data, cwd, env: dict, timeout: float):
        """(status, standard output, standard error) of a child forked from the zygote, or None
        where the run must start afresh."""
        if not self.usable(env):
            return None
        import json
        import socket
        import tempfile

        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            if data is not None:
                stdin.write(data)
                stdin.seek(0)
            source = stdin.fileno() if data is not None else os.open(os.devnull, os.O_RDONLY)
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                    client.connect(self.socket)
                    request = {"argv": argv, "cwd": os.path.abspath(cwd), "env": env, "timeout": timeout}
                    socket.send_fds(client, [(json.dumps(request) + "\n").encode()],
                                    [source, out.fileno(), err.fileno()])
                    reply = b""
                    while not reply.endswith(b"\n"):
                        chunk = client.recv(4096)
                        if not chunk:
                            raise RuntimeError("the test zygote ended")
                        reply += chunk
            finally:
                if data is None:
                    os.close(source)
            reply = json.loads(reply)
            if reply["status"] == "timeout":
                raise subprocess.TimeoutExpired(argv, timeout)
            out.seek(0)
            err.seek(0)
            return reply["code"], out.read(), err.read()

    def shim_directory(self, env: dict):
        """A directory holding an `autodiff` that runs through the zygote, for a shell's PATH (None:
        the shell must find the real script)."""
        return self.directory if self.usable(env) else None

    def _start(self) -> None:
        import atexit
        import shutil
        import tempfile
        import time

        self.directory = tempfile.mkdtemp(prefix="autodiff-zygote-")
        atexit.register(shutil.rmtree, self.directory, True)
        self.socket = os.path.join(self.directory, "socket")
        self.env = environment()
        cpu_log = [os.environ["AUTODIFF_TEST_CPU_LOG"]] if os.environ.get("AUTODIFF_TEST_CPU_LOG") else []
        self.process = subprocess.Popen([sys.executable, "-c", _ZYGOTE_CODE, self.socket, *cpu_log], cwd=ROOT,
                                        env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        atexit.register(self._stop)
        shim = os.path.join(self.directory, "autodiff")
        with open(shim, "w") as stream:
            stream.write(_SHIM.format(python=sys.executable, socket=self.socket, script=console_script()[0],
                                      base=self.env, at_load=READ_AS_LIBRARIES_LOAD))
        os.chmod(shim, 0o755)
        deadline = time.monotonic() + 60
        while not self._listening():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the test zygote did not start")
            time.sleep(0.01)

    def _stop(self) -> None:
        self.process.terminate()  # it reaps its runs and, where asked, writes the CPU they took
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def _listening(self) -> bool:
        import socket

        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(self.socket)
            except OSError:
                return False
        return True


_ZYGOTE = _Zygote()


def as_in_the_foreground() -> None:
    """Ctrl-C as a terminal's foreground job has it (for a child's preexec_fn): a suite started in
    the background (`pytest &` in a script) hands its children SIGINT ignored, and Python keeps a
    signal ignored that it starts with."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def interrupted(args: list, after: float) -> tuple:
    """The console script run with `args` and sent Ctrl-C (SIGINT) `after` seconds: (its exit
    status, standard output, standard error, seconds from the signal to its end)."""
    import signal
    import time

    process = subprocess.Popen(console_script() + list(args), cwd=ROOT, env=environment(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=as_in_the_foreground)
    time.sleep(after)
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout, stderr, time.monotonic() - sent

"""Reading and writing the files a test run owns (records, JUnit reports), safely.

Reading never blocks and never reads without end: a FIFO, a device or a symlink to one is
refused before a byte is read, and at most `limit` bytes are taken. Writing goes through a
temporary file created exclusively (a random name, O_EXCL, O_NOFOLLOW: a planted symlink is
never followed) in the target's own directory, then renamed over the target in one step; an
existing file keeps its permission bits, a new one follows the umask. A target that is a
symlink is updated where it points; a character device (/dev/null, /dev/stdout) is written
to directly, never replaced.

A change that reads a record and writes it back (`--update`, `accept`, dropping unused points)
holds `locked(expression file)` from the read to the write, so that runs at once (CI shards on
one checkout) each keep what the others wrote: nothing a run reports written is lost.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat


def path_text(path) -> str:
    """A path as `str(pathlib.Path(path))` writes it (repeated and trailing separators and `.`
    parts dropped, `..` kept), without importing pathlib: with urllib.parse and ipaddress, which
    it loads, some 3 ms of every `autodiff test` start."""
    text = os.fspath(path)
    if os.sep != "/" or isinstance(text, bytes):  # Windows' rules (drives, both separators): pathlib's
        from pathlib import Path

        return str(Path(text))
    lead = "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    body = "/".join(part for part in text.split("/") if part and part != ".")
    return lead + body if lead or body else "."


class WriteProblem(Exception):
    """A report or record that cannot be written where asked (exit 2 for a report)."""


class ReadProblem(Exception):
    """A file that cannot be read as a regular file of at most `limit` bytes."""


def read_regular(path, limit: int) -> bytes | None:
    """The bytes of a regular file (None when it does not exist); ReadProblem otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ReadProblem(f"cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReadProblem(f"not a regular file (a {_kind(info.st_mode)})")
        if info.st_size > limit:
            raise ReadProblem(f"larger than {limit:,} bytes, the largest record autodiff reads")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ReadProblem(f"larger than {limit:,} bytes, the largest record autodiff reads")
        return b"".join(chunks)
    except OSError as exc:
        raise ReadProblem(f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_replacing(destination, data: bytes, what: str = "file") -> None:
    """Write `data` to `destination` whole, replacing it in one step (see the module's notes).
    WriteProblem, naming `destination`, when it cannot be written there."""
    shown = str(destination)
    target = os.path.realpath(destination)  # a symlink is updated where it points
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise WriteProblem(f"{what} {shown}: cannot be written ({exc.strerror or exc})") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise WriteProblem(f"{what} {shown}: is a directory")
    if info is not None and stat.S_ISCHR(info.st_mode):
        _write_directly(target, data, shown, what)
        return
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise WriteProblem(f"{what} {shown}: not a regular file (a {_kind(info.st_mode)})")
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        raise WriteProblem(f"{what} {shown}: the folder {os.path.dirname(shown) or '.'} does not exist")
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    temporary = None
    import secrets  # only where a record is written (its import loads hashlib)

    try:
        for _ in range(100):
            candidate = os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(6)}.tmp")
            try:
                fd = os.open(candidate, flags, 0o600)
            except FileExistsError:
                continue
            temporary = candidate
            break
        else:
            raise OSError(errno.EEXIST, "no free temporary name")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        raise WriteProblem(f"{what} {shown}: cannot be written ({exc.strerror or exc})") from None
    finally:
        if temporary is not None:
            try:
                os.unlink(temporary)
            except OSError:
                pass


def _write_directly(target: str, data: bytes, shown: str, what: str) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    except OSError as exc:
        raise WriteProblem(f"{what} {shown}: cannot be written ({exc.strerror or exc})") from None


@contextlib.contextmanager
def locked(path):
    """Hold an exclusive lock on the regular file `path` (an expression file, whose record is about
    to be read and written) until the block ends; another run's `locked` of the same file waits.
    Where the file cannot be opened or locked (gone, not a regular file, a system without flock),
    the block runs unlocked: the lock orders writers, it is never a reason to fail."""
    fd = None
    try:
        import fcntl
    except ImportError:  # Windows: no flock
        fcntl = None
    if fcntl is not None:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                         | getattr(os, "O_CLOEXEC", 0))
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                fd = None
            else:
                fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            if fd is not None:
                os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the file releases the lock

"""An exclusive, process-lifetime lock on a run directory.

`RunLock.acquire(run_dir)` takes an `fcntl.flock` on `run_dir/lock` (created if missing) and
writes the holder's PID into it. The kernel drops the lock when the holder exits, however it
exits (kill -9 included), so a stale lock file never blocks a resume. A second process gets
`RunLockedError` naming the holder's PID. Linux and macOS (POSIX `flock`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import pathlib

__all__ = ["LOCK_NAME", "RunLock", "RunLockedError"]

LOCK_NAME = "lock"


class RunLockedError(RuntimeError):
    """Another live process holds the run directory."""


class RunLock:
    """A held lock; `release()` (or leaving the `with` block, or exiting) frees it."""

    def __init__(self, path: pathlib.Path, fd: int) -> None:
        self.path, self._fd = path, fd

    @classmethod
    def acquire(cls, run_dir: str | os.PathLike[str]) -> RunLock:
        """Locks `run_dir` (which must exist) for this process or raises RunLockedError."""
        path = pathlib.Path(run_dir) / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _read_pid(fd)
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EACCES, errno.EAGAIN):
                raise
            who = f"process {holder}" if holder else "another process"
            raise RunLockedError(
                f"run directory {pathlib.Path(run_dir)} is in use by {who} (a search or "
                "resume is running there); wait for it to finish or stop it first"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # Closing the descriptor drops the flock.
            self._fd = -1

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None

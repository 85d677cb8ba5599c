"""Read-only access to the run and benchmark databases (and comparison directories) under the
served root.

Every connection is read-only and writes no file: while a search writes the database (its
`-wal` file exists) a SQLite `mode=ro` URI connection reads the WAL (each query sees the last
committed state; the writer's -wal/-shm files already exist, so none is created); a database
no process has open (no `-wal`) is opened `immutable=1`, which creates no -wal/-shm file
(SQLite's `mode=ro` alone would). Paths come from URLs and are resolved against the root:
anything that resolves outside it (a symlinked `run.db` included) is refused (`OutsideRoot`),
a path component over 255 bytes is `BadRequest`, anything without a database is `NotFound`.
"""

from __future__ import annotations

import os
import pathlib
import sqlite3
import time
from typing import Any, Iterator, Mapping, Sequence

from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.compare.runner import PLAN_FILE
from spark_jax.search.queries import RunQueries
from spark_jax.search.schema import RunDBError

__all__ = [
    "BENCHMARK_DB",
    "RUN_DB",
    "STALE_AFTER_S",
    "BadRequest",
    "NotFound",
    "OutsideRoot",
    "RunReader",
    "Root",
    "run_status",
]

RUN_DB = "run.db"
BENCHMARK_DB = "benchmark.db"
LOCK_NAME = "lock"
# Without a lock file, a run with no finish mark and no write for this long is not running.
STALE_AFTER_S = 900.0
_MAX_DEPTH = 5  # a comparison kept inside a results folder: results/x/data/method/seed-0


class OutsideRoot(ValueError):
    """A requested path that resolves outside the served root."""


class BadRequest(ValueError):
    """A request that cannot name anything (a path component too long, a number out of range)."""


_NAME_MAX = 255  # bytes per path component (Linux NAME_MAX)


class NotFound(LookupError):
    """A requested run, benchmark or record that does not exist."""


class RunReader(RunQueries):
    """The read queries of a run database over one read-only connection, all in one read
    transaction: every query of a reader sees the same committed state (a WAL snapshot,
    which never blocks the writer). Open one per request."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        uri = f"{path.resolve().as_uri()}?" + ro_uri_mode(path)
        try:
            self._conn = sqlite3.connect(
                uri, uri=True, timeout=30.0, check_same_thread=False, isolation_level=None
            )
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("BEGIN")
            self._conn.execute("SELECT version FROM schema_version").fetchall()
        except sqlite3.DatabaseError as exc:
            raise RunDBError(f"run database {path} is unreadable: {exc}") from None

    def flat_meta(self) -> dict[str, Any]:
        """The run's metadata flattened to dotted keys ({'config.operator.mode': ...})."""
        return _flat(self.meta_items())

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self._conn.execute(sql, tuple(params)).fetchall()

    def close(self) -> None:
        self._conn.close()  # ends the read transaction

    def __enter__(self) -> RunReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ro_uri_mode(path: pathlib.Path) -> str:
    """The URI query that opens `path` read-only without creating any file: `mode=ro`
    while a writer's `-wal` exists, else `immutable=1` (nothing has the database open)."""
    live = path.with_name(path.name + "-wal").exists()
    return "mode=ro" if live else "mode=ro&immutable=1"


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _started_at(pid: int) -> float | None:
    """When process `pid` started (Linux /proc; None where unknown)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(
            float(line.split()[1])
            for line in pathlib.Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + int(stat[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _holder_alive(lock: pathlib.Path) -> bool:
    """The lock file's PID is alive and is the process that wrote it (not a reused PID:
    it started before the file was last written)."""
    try:
        pid = int(lock.read_text(encoding="utf-8").split()[0])
        written = lock.stat().st_mtime
    except (OSError, ValueError, IndexError):
        return False
    if not _pid_alive(pid):
        return False
    started = _started_at(pid)
    return started is None or started <= written + 2.0


def run_status(run_dir: pathlib.Path, reader: RunReader, now: float | None = None) -> str:
    """'finished' when the run recorded its end (run_meta `finished_at`); else 'running' when
    the run directory's lock file names a live process (the one that wrote it), or, with no
    lock file, when the
    database was written within STALE_AFTER_S; else 'crashed-resumable' (resume it with
    `spark-jax search --resume RUN_DIR`)."""
    if reader.get_meta("finished_at") is not None:
        return "finished"
    lock = run_dir / LOCK_NAME
    if lock.is_file():
        return "running" if _holder_alive(lock) else "crashed-resumable"
    last = reader.last_write_at() or reader.created_at() or 0.0
    now = time.time() if now is None else now
    return "running" if now - last < STALE_AFTER_S else "crashed-resumable"


class Root:
    """The served directory: a run directory, a benchmark directory, or a folder of them."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = pathlib.Path(path).resolve()
        if not self.path.is_dir():
            raise NotFound(f"{path}: not a directory")

    def resolve(self, rel: str) -> pathlib.Path:
        """The directory `rel` names under the root; OutsideRoot when it leaves the root."""
        if "\x00" in rel or rel.startswith(("/", "\\")):
            raise OutsideRoot(rel)
        if any(len(part.encode("utf-8", "surrogateescape")) > _NAME_MAX for part in rel.split("/")):
            raise BadRequest(f"a path component is longer than {_NAME_MAX} bytes")
        try:
            target = (self.path / rel).resolve()
        except (OSError, RuntimeError) as e:  # a symlink loop, an unusable name
            raise BadRequest(f"path not usable: {getattr(e, 'strerror', None) or e}") from None
        if not self.inside(target):
            raise OutsideRoot(rel)
        return target

    def inside(self, path: pathlib.Path) -> bool:
        """Whether `path`, symlinks resolved, lies under the root."""
        target = path.resolve()
        return target == self.path or self.path in target.parents

    def db_file(self, directory: pathlib.Path, name: str) -> pathlib.Path | None:
        """`directory/name` when it is a file under the root (symlinks resolved), else None."""
        path = directory / name
        return path if path.is_file() and self.inside(path) else None

    def rel(self, path: pathlib.Path) -> str:
        rel = path.resolve().relative_to(self.path).as_posix()
        return "" if rel == "." else rel

    def _walk(self, name: str) -> Iterator[pathlib.Path]:
        def walk(d: pathlib.Path, depth: int) -> Iterator[pathlib.Path]:
            if self.db_file(d, name) is not None:
                yield d
            if depth >= _MAX_DEPTH:
                return
            try:
                children = sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError:
                return
            for child in children:
                if not child.name.startswith("."):
                    yield from walk(child, depth + 1)

        yield from walk(self.path, 0)

    def run_dirs(self) -> list[pathlib.Path]:
        return list(self._walk(RUN_DB))

    def benchmark_dirs(self) -> list[pathlib.Path]:
        return list(self._walk(BENCHMARK_DB))

    def compare_dirs(self) -> list[pathlib.Path]:
        """Directories written by `spark-jax compare` (holding its plan file)."""
        return list(self._walk(PLAN_FILE))

    def open_run(self, rel: str) -> tuple[pathlib.Path, RunReader]:
        run_dir = self.resolve(rel)
        if not (run_dir / RUN_DB).is_file():
            raise NotFound(f"no run at {rel!r}")
        if self.db_file(run_dir, RUN_DB) is None:
            raise OutsideRoot(rel)  # a run.db symlink that leads out of the root
        return run_dir, RunReader(run_dir / RUN_DB)

    def open_benchmark(self, rel: str) -> BenchmarkDB:
        bench_dir = self.resolve(rel)
        if not (bench_dir / BENCHMARK_DB).is_file():
            raise NotFound(f"no benchmark at {rel!r}")
        if self.db_file(bench_dir, BENCHMARK_DB) is None:
            raise OutsideRoot(rel)
        return BenchmarkDB.open_readonly(bench_dir / BENCHMARK_DB)

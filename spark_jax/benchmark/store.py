"""The benchmark database: one SQLite file (WAL) holding the plan and every result as it lands.

A result row is written in its own transaction the moment its job finishes, so a benchmark
killed at any point keeps everything that finished; `--resume` re-plans from the stored spec
and runs only the jobs without a row. A landed result is final (a failed job is a result too:
its error type and message are kept and shown).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import pathlib
import sqlite3
from typing import Any, Iterator, Mapping, Sequence

from spark_jax.benchmark.plan import BenchmarkJob, BenchmarkProgram
from spark_jax.families import Evaluation
from spark_jax.jobs.executors import EvalResult

__all__ = ["SCHEMA_VERSION", "BenchmarkDB", "BenchmarkDBError", "StoredResult"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS programs (
  key TEXT PRIMARY KEY, label TEXT NOT NULL UNIQUE, program_name TEXT NOT NULL,
  origin TEXT NOT NULL, source TEXT NOT NULL, position INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS results (
  job_id TEXT PRIMARY KEY, program_key TEXT NOT NULL REFERENCES programs(key),
  task TEXT NOT NULL, seed INTEGER NOT NULL, ok INTEGER NOT NULL, evaluation TEXT,
  error_type TEXT, error TEXT NOT NULL, worker TEXT NOT NULL, wall_seconds REAL NOT NULL,
  finished_at TEXT NOT NULL);
"""


class BenchmarkDBError(RuntimeError):
    """A benchmark database that cannot be used (missing, corrupt, another version)."""


class StoredResult:
    """One landed (program, task, seed) result, read back (`wall_seconds`: the job's wall time
    on its worker)."""

    __slots__ = (
        "program_key",
        "task",
        "seed",
        "ok",
        "evaluation",
        "error_type",
        "error",
        "wall_seconds",
    )

    def __init__(self, program_key, task, seed, ok, evaluation, error_type, error, wall_seconds):
        self.program_key, self.task, self.seed = program_key, task, int(seed)
        self.ok, self.error_type, self.error = bool(ok), error_type, error
        self.evaluation = None if evaluation is None else Evaluation.from_dict(evaluation)
        self.wall_seconds = float(wall_seconds)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class BenchmarkDB:
    """The database of one benchmark directory (`benchmark.db`)."""

    def __init__(self, path: str | pathlib.Path, *, create: bool = False) -> None:
        self.path = pathlib.Path(path)
        if not create and not self.path.is_file():
            raise BenchmarkDBError(f"no benchmark database at {self.path}")
        try:
            self._conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as e:
            raise BenchmarkDBError(f"{self.path}: not a usable benchmark database ({e})") from None
        version = self.meta().get("schema_version")
        if version is None and create:
            self._set_meta({"schema_version": SCHEMA_VERSION})
        elif version != SCHEMA_VERSION:
            raise BenchmarkDBError(
                f"{self.path}: schema version {version!r}, this version reads {SCHEMA_VERSION}"
            )

    @classmethod
    def open_readonly(cls, path: str | pathlib.Path) -> "BenchmarkDB":
        """A reader that never writes (a `mode=ro` connection); safe while a benchmark runs."""
        self = cls.__new__(cls)
        self.path = pathlib.Path(path)
        if not self.path.is_file():
            raise BenchmarkDBError(f"no benchmark database at {self.path}")
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        try:
            self._conn = sqlite3.connect(uri, uri=True, timeout=30.0, check_same_thread=False)
            version = self.meta().get("schema_version")
        except sqlite3.DatabaseError as e:
            raise BenchmarkDBError(f"{self.path}: not a usable benchmark database ({e})") from None
        if version != SCHEMA_VERSION:
            self._conn.close()
            raise BenchmarkDBError(
                f"{self.path}: schema version {version!r}, this version reads {SCHEMA_VERSION}"
            )
        return self

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "BenchmarkDB":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- the plan -------------------------------------------------------------------------
    def _set_meta(self, values: Mapping[str, Any]) -> None:
        with self._transaction() as c:
            c.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in values.items()],
            )

    def meta(self) -> dict[str, Any]:
        rows = self._conn.execute("SELECT key, value FROM meta").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def store_plan(self, spec: Mapping[str, Any], programs: list[BenchmarkProgram]) -> None:
        """Writes the benchmark's spec and programs once (a fresh database only); the search
        seeds of searched programs go under the meta key 'search_seeds' (by program key)."""
        if self.meta().get("spec") is not None:
            raise BenchmarkDBError(f"{self.path}: already holds a benchmark (use --resume)")
        searched = {p.key: list(p.search_seeds) for p in programs if p.search_seeds}
        with self._transaction() as c:
            c.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?), (?, ?), (?, ?)",
                (
                    "spec",
                    json.dumps(dict(spec)),
                    "created_at",
                    json.dumps(_now()),
                    "search_seeds",
                    json.dumps(searched),
                ),
            )
            c.executemany(
                "INSERT INTO programs (key, label, program_name, origin, source, position) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (p.key, p.label, p.program_name, p.origin, p.source, i)
                    for i, p in enumerate(programs)
                ],
            )

    def spec(self) -> dict[str, Any]:
        spec = self.meta().get("spec")
        if spec is None:
            raise BenchmarkDBError(f"{self.path}: holds no benchmark plan")
        return spec

    def replace_spec(self, spec: Mapping[str, Any]) -> None:
        """Stores a changed spec (a fixed-seed benchmark continued in sequential mode: more
        seeds planned, the design beside them); the programs and results stay as they are."""
        self.spec()  # refuses a database without a plan
        self._set_meta({"spec": dict(spec)})

    def identity(self) -> dict[str, dict[str, Any]]:
        """Identity checks done so far: 'PROGRAM_KEY|TASK' -> {identical, reason} (each
        against the baseline; none in older benchmarks)."""
        return self.meta().get("identity") or {}

    def store_identity(self, found: Mapping[str, Mapping[str, Any]]) -> None:
        """Adds identity checks (merged into those stored)."""
        self._set_meta({"identity": {**self.identity(), **found}})

    def programs(self) -> list[BenchmarkProgram]:
        """The programs in plan order, with their searches' seeds (none in older benchmarks)."""
        searched = self.meta().get("search_seeds") or {}
        rows = self._conn.execute(
            "SELECT label, key, source, program_name, origin FROM programs ORDER BY position"
        ).fetchall()
        return [BenchmarkProgram(*row, tuple(searched.get(row[1], ()))) for row in rows]

    # -- results --------------------------------------------------------------------------
    def record(self, job: BenchmarkJob, result: EvalResult) -> None:
        """Stores one landed result (its own transaction); a second one for a job is refused."""
        self.record_all([(job, result)])

    def record_all(self, landed: Sequence[tuple[BenchmarkJob, EvalResult]]) -> None:
        """Stores the results of one submitted job (the seeds of a K-seed job) in one
        transaction: a kill leaves all of them stored or none; they share one finish time."""
        rows, now = [], _now()
        for job, result in landed:
            evaluation = None if result.evaluation is None else result.evaluation.to_dict()
            rows.append(
                (
                    job.job_id,
                    job.program.key,
                    job.task,
                    job.seed,
                    int(result.ok),
                    None if evaluation is None else json.dumps(evaluation),
                    result.error_type,
                    result.error,
                    result.worker,
                    result.wall_seconds,
                    now,
                )
            )
        with self._transaction() as c:
            c.executemany(
                "INSERT INTO results (job_id, program_key, task, seed, ok, evaluation, "
                "error_type, error, worker, wall_seconds, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def done_job_ids(self) -> set[str]:
        return {r[0] for r in self._conn.execute("SELECT job_id FROM results")}

    def results(self) -> list[StoredResult]:
        rows = self._conn.execute(
            "SELECT program_key, task, seed, ok, evaluation, error_type, error, wall_seconds "
            "FROM results ORDER BY rowid"
        ).fetchall()
        return [
            StoredResult(k, t, s, ok, None if ev is None else json.loads(ev), et, err, wall)
            for k, t, s, ok, ev, et, err, wall in rows
        ]

    def wall_seconds(self) -> float:
        """Sum of the jobs' wall times (device time spent; not the benchmark's elapsed time)."""
        (total,) = self._conn.execute(
            "SELECT COALESCE(SUM(wall_seconds), 0) FROM results"
        ).fetchone()
        return float(total)

    def running_seconds(self) -> float:
        """The benchmark's wall time while jobs ran: the length of the union of the jobs'
        intervals [finished - wall, finished] (pauses between a kill and `--resume` are left
        out; finish times are stored to the second). The seeds of one K-seed job are one
        interval: their rows (one program, task, worker and finish time) hold 1/K shares."""
        rows = self._conn.execute(
            "SELECT finished_at, SUM(wall_seconds) FROM results "
            "GROUP BY program_key, task, worker, finished_at"
        ).fetchall()
        spans = []
        for finished, wall in rows:
            end = datetime.datetime.fromisoformat(finished).timestamp()
            spans.append((end - float(wall), end))
        total, covered_to = 0.0, float("-inf")
        for start, end in sorted(spans):
            if end > covered_to:
                total += end - max(start, covered_to)
                covered_to = end
        return total

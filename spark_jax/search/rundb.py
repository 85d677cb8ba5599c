"""The run database: one SQLite file per search run.

Tables: `programs` (sources by normalized sha256), `proposals` (one row per attempt, every
proposal, feasible or not), `evaluations` (one row per evaluated program; the seed's has no
attempt), `llm_calls` (every role call of an attempt, prompt and answer included),
`archive_snapshots` (`IslandArchive.to_state()` JSON), `run_meta` (config snapshot, seed,
versions, command) and `schema_version`.

The records are stored as they are, with no mirror types: a `Proposal` (with its
`FeasibilityReport` and `CallRecord`s) goes in through `record_proposal` and comes back out
of `proposals()` equal to what went in (plus `created_at`); an evaluation goes in as the
`EvalJob` that was run and its `EvalResult` (a typed `Evaluation` when it succeeded).

Crash safety: WAL journal, `synchronous=FULL` and foreign keys on. A logical step commits as
one transaction: `record_proposal` and `record_evaluation(..., archive_state)` each do; group
more with `with db.transaction(): ...` (nested: savepoints). After a kill -9 either all of a
step's rows exist or none. `pending_evaluations()` lists feasible proposals without an
evaluation: the work a resumed run redoes. Writes refuse to duplicate: a second proposal for
an attempt, or a second evaluation for an attempt (or for the same baseline
program/task/preset/seed), raises `DuplicateAttemptError`. Program ids are the first 16 hex
digits of the normalized source's sha256, so they are deterministic.

Nothing here takes API keys, and `set_meta` rejects mappings holding a key named like one
(`api_key`, `authorization`, `password`, `secret`, `token`): store the environment
variable's name instead.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import pathlib
import sqlite3
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

from spark_jax.jobs.executors import EvalJob, EvalResult
from spark_jax.operator.editors import CallRecord
from spark_jax.operator.step import Proposal
from spark_jax.search.queries import CALL_FIELDS, PROPOSAL_COLUMNS, RunQueries
from spark_jax.search.schema import (
    PROPOSAL_STATUSES,
    SCHEMA,
    SCHEMA_VERSION,
    DuplicateAttemptError,
    RunDBError,
    check_no_secrets,
    connect,
    dumps,
    plain,
    program_sha256,
)

__all__ = ["SCHEMA_VERSION", "RunDBError", "DuplicateAttemptError", "RunDB", "program_sha256"]


_SIDE_FILES = ("-wal", "-shm", "-journal")


class RunDB(RunQueries):
    """A run's SQLite database; use `RunDB.create` / `RunDB.open`, ideally as a context
    manager. Thread-safe (one lock); other processes may read concurrently (WAL)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        conn: sqlite3.Connection,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = pathlib.Path(path)
        self._conn = conn
        self._clock = clock
        self._lock = threading.RLock()
        self._depth = 0
        self._savepoints = itertools.count()

    # ------------------------------------------------------------ open / close

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        meta: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> RunDB:
        """Creates a new database at `path` (which must not exist) with `meta` stored.

        The database is built under a temporary name and renamed into place once its schema
        and `meta` are committed, so a process killed meanwhile never leaves a half-made
        `path` behind (a stale temporary file is removed by the next create).
        """
        path = pathlib.Path(path)
        if path.exists():
            raise RunDBError(f"run database {path} already exists (use RunDB.open)")
        path.parent.mkdir(parents=True, exist_ok=True)
        building = path.with_name(path.name + ".creating")
        for stale in (building, *(building.with_name(building.name + s) for s in _SIDE_FILES)):
            stale.unlink(missing_ok=True)
        db = cls(building, connect(building), clock)
        try:
            with db.transaction():
                for statement in SCHEMA.split(";"):
                    if statement.strip():
                        db._conn.execute(statement)
                db._conn.execute(
                    "INSERT INTO schema_version VALUES (?, ?)", (SCHEMA_VERSION, clock())
                )
                for key, value in (meta or {}).items():
                    db.set_meta(key, value)
        finally:
            db.close()  # the last connection: its WAL is checkpointed into the file
        os.replace(building, path)
        return cls(path, connect(path), clock)

    @classmethod
    def open(cls, path: str | os.PathLike[str], clock: Callable[[], float] = time.time) -> RunDB:
        """Opens an existing run database; RunDBError names the file if it is unusable."""
        path = pathlib.Path(path)
        if not path.is_file():
            raise RunDBError(f"run database {path} does not exist")
        if path.stat().st_size == 0:
            raise RunDBError(f"run database {path} is empty (0 bytes): not a run database")
        db = cls(path, connect(path), clock)
        try:
            row = db._conn.execute("SELECT version FROM schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            db.close()
            raise RunDBError(f"run database {path} is unreadable or corrupt: {exc}") from exc
        if row is None or row[0] != SCHEMA_VERSION:
            db.close()
            raise RunDBError(
                f"run database {path}: schema version {row and row[0]!r}, expected {SCHEMA_VERSION}"
            )
        return db

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> RunDB:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[RunDB]:
        """All writes inside commit together or not at all (nested: savepoints)."""
        with self._lock:
            outer = self._depth == 0
            name = f"sp{next(self._savepoints)}"
            self._conn.execute("BEGIN IMMEDIATE" if outer else f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    self._rollback()
                elif self._conn.in_transaction:
                    self._conn.execute(f"ROLLBACK TO {name}")
                    self._conn.execute(f"RELEASE {name}")
                raise
            self._depth -= 1
            if not outer:
                self._conn.execute(f"RELEASE {name}")
                return
            try:
                self._conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:  # e.g. a deferred foreign key, a full disk
                self._rollback()
                raise RunDBError(f"{self.path}: commit failed, rolled back: {exc}") from exc

    def _rollback(self) -> None:
        """Rolls back the open transaction, if SQLite has not already; never masks the
        error being handled (a failed COMMIT may have rolled back on its own)."""
        if not self._conn.in_transaction:
            return
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    # ------------------------------------------------------------ writes

    def insert_program(self, source: str, parent_id: str | None = None) -> str:
        """Stores a program; returns its id (sha256 prefix). Idempotent by normalized sha."""
        sha = program_sha256(source)
        with self.transaction():
            row = self._conn.execute("SELECT id FROM programs WHERE sha256 = ?", (sha,)).fetchone()
            if row is not None:
                return row[0]
            pid = sha[:16]
            if self._conn.execute("SELECT 1 FROM programs WHERE id = ?", (pid,)).fetchone():
                pid = sha  # prefix collision
            self._execute(
                "INSERT INTO programs VALUES (?, ?, ?, ?, ?)",
                (pid, sha, source, parent_id, self._clock()),
            )
            return pid

    def program_id(self, source: str) -> str | None:
        """The id of a stored program with this (normalized) source, or None."""
        rows = self._query("SELECT id FROM programs WHERE sha256 = ?", (program_sha256(source),))
        return rows[0][0] if rows else None

    def record_proposal(self, proposal: Proposal) -> str | None:
        """Stores a proposal, its LLM calls and (when feasible) its child program, atomically;
        returns the child's program id (None unless feasible)."""
        p = proposal
        if p.status not in PROPOSAL_STATUSES:
            raise RunDBError(f"proposal status {p.status!r} not in {PROPOSAL_STATUSES}")
        if p.status == "feasible" and p.child_source is None:
            raise RunDBError(f"{self.path}: feasible attempt {p.attempt} has no child program")
        with self.transaction():
            if self._conn.execute(
                "SELECT 1 FROM proposals WHERE attempt = ?", (p.attempt,)
            ).fetchone():
                raise DuplicateAttemptError(f"{self.path}: attempt {p.attempt} is already recorded")
            child_id = (
                self.insert_program(p.child_source, p.parent_id) if p.status == "feasible" else None
            )
            feasibility = None if p.feasibility is None else p.feasibility.to_dict()
            values = [getattr(p, k) for k in PROPOSAL_COLUMNS]
            values[PROPOSAL_COLUMNS.index("is_llm")] = int(p.is_llm)
            self._execute(
                f"INSERT INTO proposals ({', '.join(PROPOSAL_COLUMNS)}, child_program_id, "
                "child_source, entanglement, diff, feasibility_json, created_at) VALUES "
                f"({', '.join('?' * (len(PROPOSAL_COLUMNS) + 6))})",
                values
                + [
                    child_id,
                    p.child_source,
                    p.entanglement,
                    p.diff,
                    dumps(feasibility),
                    self._now(p.created_at),
                ],
            )
            self.record_llm_calls(p.attempt, p.calls)
            return child_id

    def record_llm_calls(self, attempt: int | None, calls: Sequence[CallRecord]) -> None:
        """Stores role calls (prompt and answer included) under `attempt`."""
        with self.transaction():
            for c in calls:
                self._execute(
                    f"INSERT INTO llm_calls (attempt, {', '.join(CALL_FIELDS)}, created_at) "
                    f"VALUES (?, {', '.join('?' * len(CALL_FIELDS))}, ?)",
                    [attempt] + [getattr(c, k) for k in CALL_FIELDS] + [self._clock()],
                )

    def _check_evaluable(self, program_id: str, attempt: int | None, task, preset, seed) -> None:
        """Inside the caller's transaction: RunDBError unless `attempt` is a recorded feasible
        proposal (or None), DuplicateAttemptError if it (or the baseline program on this
        task, preset and seed) already has an evaluation."""
        if attempt is not None:
            row = self._conn.execute(
                "SELECT status FROM proposals WHERE attempt = ?", (attempt,)
            ).fetchone()
            if row is None or row[0] != "feasible":
                raise RunDBError(
                    f"{self.path}: attempt {attempt} is not a recorded feasible proposal"
                )
        if self._conn.execute(
            "SELECT 1 FROM evaluations WHERE proposal_attempt IS ? AND ("
            "proposal_attempt IS NOT NULL OR (program_id = ? AND task IS ? AND "
            "preset IS ? AND seed IS ?))",
            (attempt, program_id, task, preset, seed),
        ).fetchone():
            what = f"attempt {attempt}" if attempt is not None else f"baseline program {program_id}"
            raise DuplicateAttemptError(f"{self.path}: {what} already has an evaluation")

    def record_evaluation(
        self,
        program_id: str,
        attempt: int | None,
        job: EvalJob,
        result: EvalResult,
        archive_state: Mapping[str, Any] | None = None,
    ) -> int:
        """Stores the evaluation of `program_id` (attempt None: the seed or a baseline) as
        the job that ran and its result, and, atomically, an archive snapshot; returns the
        row id."""
        preset = job.protocol.get("name")
        ev = result.evaluation
        with self.transaction():
            self._check_evaluable(program_id, attempt, job.task, preset, job.seed)
            scores = (
                [None] * 6
                if ev is None
                else [
                    ev.score,
                    ev.val_score,
                    ev.params,
                    ev.macs,
                    ev.train_seconds,
                    ev.compile_seconds,
                ]
            )
            cursor = self._execute(
                "INSERT INTO evaluations (proposal_attempt, program_id, job_id, task, preset, "
                "seed, status, error_type, error, worker, wall_seconds, ood_score, val_score, "
                "params, macs, train_seconds, compile_seconds, evaluation_json, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    attempt,
                    program_id,
                    result.job_id,
                    job.task,
                    preset,
                    job.seed,
                    "ok" if result.ok else "error",
                    result.error_type,
                    None if result.ok else result.error,
                    result.worker,
                    result.wall_seconds,
                ]
                + scores
                + [None if ev is None else dumps(ev.to_dict()), self._clock()],
            )
            if archive_state is not None:
                self.save_archive_snapshot(-1 if attempt is None else attempt, archive_state)
            return int(cursor.lastrowid)

    def save_archive_snapshot(self, after_attempt: int, state: Mapping[str, Any]) -> None:
        """Stores an archive state (JSON) taken after `after_attempt` (-1: the seed)."""
        with self.transaction():
            self._execute(
                "INSERT INTO archive_snapshots (after_attempt, state_json, "
                "created_at) VALUES (?, ?, ?)",
                (after_attempt, dumps(state), self._clock()),
            )

    def set_meta(self, key: str, value: Any) -> None:
        check_no_secrets({key: value}, "run_meta")
        with self.transaction():
            self._execute(
                "INSERT INTO run_meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
                "SET value = excluded.value",
                (key, json.dumps(value, default=plain)),
            )

    # ------------------------------------------------------------ helpers

    def _now(self, value: float | None) -> float:
        return self._clock() if value is None else value

    def _execute(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, [plain(v) for v in params])
        except sqlite3.IntegrityError as exc:
            raise RunDBError(f"{self.path}: {exc} in {sql.split('(')[0].strip()}") from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise RunDBError(f"run database {self.path}: {exc}") from exc

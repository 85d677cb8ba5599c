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
import dataclasses
import itertools
import json
import os
import pathlib
import sqlite3
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

from spark_jax.evaluation.executors import EvalJob, EvalResult
from spark_jax.feasibility.checker import FeasibilityReport
from spark_jax.operator.editors import CallRecord
from spark_jax.operator.step import Proposal
from spark_jax.search.schema import (PROPOSAL_STATUSES, SCHEMA, SCHEMA_VERSION,
                                     DuplicateAttemptError, RunDBError, check_no_secrets,
                                     connect, dumps, plain, program_sha256)

__all__ = ['SCHEMA_VERSION', 'RunDBError', 'DuplicateAttemptError', 'RunDB', 'program_sha256']

_CALL_FIELDS = tuple(f.name for f in dataclasses.fields(CallRecord))
_PROPOSAL_COLUMNS = ('attempt', 'island', 'parent_id', 'mode', 'factor', 'factor_source',
                     'directive', 'status', 'failure_stage', 'failure_type', 'reason',
                     'editor', 'is_llm')


class RunDB:
    """A run's SQLite database; use `RunDB.create` / `RunDB.open`, ideally as a context
    manager. Thread-safe (one lock); other processes may read concurrently (WAL)."""

    def __init__(self, path: str | os.PathLike[str], conn: sqlite3.Connection,
                 clock: Callable[[], float] = time.time) -> None:
        self.path = pathlib.Path(path)
        self._conn = conn
        self._clock = clock
        self._lock = threading.RLock()
        self._depth = 0
        self._savepoints = itertools.count()

    # ------------------------------------------------------------ open / close

    @classmethod
    def create(cls, path: str | os.PathLike[str], meta: Mapping[str, Any] | None = None,
               clock: Callable[[], float] = time.time) -> RunDB:
        """Creates a new database at `path` (which must not exist) with `meta` stored."""
        path = pathlib.Path(path)
        if path.exists():
            raise RunDBError(f'run database {path} already exists (use RunDB.open)')
        path.parent.mkdir(parents=True, exist_ok=True)
        db = cls(path, connect(path), clock)
        try:
            with db.transaction():
                for statement in SCHEMA.split(';'):
                    if statement.strip():
                        db._conn.execute(statement)
                db._conn.execute('INSERT INTO schema_version VALUES (?, ?)',
                                 (SCHEMA_VERSION, clock()))
                for key, value in (meta or {}).items():
                    db.set_meta(key, value)
        except BaseException:
            db.close()
            raise
        return db

    @classmethod
    def open(cls, path: str | os.PathLike[str],
             clock: Callable[[], float] = time.time) -> RunDB:
        """Opens an existing run database; RunDBError names the file if it is unusable."""
        path = pathlib.Path(path)
        if not path.is_file():
            raise RunDBError(f'run database {path} does not exist')
        db = cls(path, connect(path), clock)
        try:
            row = db._conn.execute('SELECT version FROM schema_version').fetchone()
        except sqlite3.DatabaseError as exc:
            db.close()
            raise RunDBError(f'run database {path} is unreadable or corrupt: {exc}') from exc
        if row is None or row[0] != SCHEMA_VERSION:
            db.close()
            raise RunDBError(f'run database {path}: schema version {row and row[0]!r}, '
                             f'expected {SCHEMA_VERSION}')
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
            name = f'sp{next(self._savepoints)}'
            self._conn.execute('BEGIN IMMEDIATE' if outer else f'SAVEPOINT {name}')
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    self._conn.execute('ROLLBACK')
                else:
                    self._conn.execute(f'ROLLBACK TO {name}')
                    self._conn.execute(f'RELEASE {name}')
                raise
            self._depth -= 1
            if not outer:
                self._conn.execute(f'RELEASE {name}')
                return
            try:
                self._conn.execute('COMMIT')
            except sqlite3.DatabaseError as exc:  # e.g. a deferred foreign key
                self._conn.execute('ROLLBACK')
                raise RunDBError(f'{self.path}: commit failed, rolled back: {exc}') from exc

    # ------------------------------------------------------------ writes

    def insert_program(self, source: str, parent_id: str | None = None) -> str:
        """Stores a program; returns its id (sha256 prefix). Idempotent by normalized sha."""
        sha = program_sha256(source)
        with self.transaction():
            row = self._conn.execute('SELECT id FROM programs WHERE sha256 = ?',
                                     (sha,)).fetchone()
            if row is not None:
                return row[0]
            pid = sha[:16]
            if self._conn.execute('SELECT 1 FROM programs WHERE id = ?', (pid,)).fetchone():
                pid = sha  # prefix collision
            self._execute('INSERT INTO programs VALUES (?, ?, ?, ?, ?)',
                          (pid, sha, source, parent_id, self._clock()))
            return pid

    def program_id(self, source: str) -> str | None:
        """The id of a stored program with this (normalized) source, or None."""
        rows = self._query('SELECT id FROM programs WHERE sha256 = ?', (program_sha256(source),))
        return rows[0][0] if rows else None

    def record_proposal(self, proposal: Proposal) -> str | None:
        """Stores a proposal, its LLM calls and (when feasible) its child program, atomically;
        returns the child's program id (None unless feasible)."""
        p = proposal
        if p.status not in PROPOSAL_STATUSES:
            raise RunDBError(f'proposal status {p.status!r} not in {PROPOSAL_STATUSES}')
        if p.status == 'feasible' and p.child_source is None:
            raise RunDBError(f'{self.path}: feasible attempt {p.attempt} has no child program')
        with self.transaction():
            if self._conn.execute('SELECT 1 FROM proposals WHERE attempt = ?',
                                  (p.attempt,)).fetchone():
                raise DuplicateAttemptError(
                    f'{self.path}: attempt {p.attempt} is already recorded')
            child_id = (self.insert_program(p.child_source, p.parent_id)
                        if p.status == 'feasible' else None)
            feasibility = None if p.feasibility is None else p.feasibility.to_dict()
            values = [getattr(p, k) for k in _PROPOSAL_COLUMNS]
            values[_PROPOSAL_COLUMNS.index('is_llm')] = int(p.is_llm)
            self._execute(
                f'INSERT INTO proposals ({", ".join(_PROPOSAL_COLUMNS)}, child_program_id, '
                'child_source, entanglement, diff, feasibility_json, created_at) VALUES '
                f'({", ".join("?" * (len(_PROPOSAL_COLUMNS) + 6))})',
                values + [child_id, p.child_source, p.entanglement, p.diff,
                          dumps(feasibility), self._now(p.created_at)])
            self.record_llm_calls(p.attempt, p.calls)
            return child_id

    def record_llm_calls(self, attempt: int | None, calls: Sequence[CallRecord]) -> None:
        """Stores role calls (prompt and answer included) under `attempt`."""
        with self.transaction():
            for c in calls:
                self._execute(
                    f'INSERT INTO llm_calls (attempt, {", ".join(_CALL_FIELDS)}, created_at) '
                    f'VALUES (?, {", ".join("?" * len(_CALL_FIELDS))}, ?)',
                    [attempt] + [getattr(c, k) for k in _CALL_FIELDS] + [self._clock()])

    def record_evaluation(self, program_id: str, attempt: int | None, job: EvalJob,
                          result: EvalResult,
                          archive_state: Mapping[str, Any] | None = None) -> int:
        """Stores the evaluation of `program_id` (attempt None: the seed or a baseline) as
        the job that ran and its result, and, atomically, an archive snapshot; returns the
        row id."""
        preset = job.protocol.get('name')
        ev = result.evaluation
        with self.transaction():
            if attempt is not None:
                row = self._conn.execute('SELECT status FROM proposals WHERE attempt = ?',
                                         (attempt,)).fetchone()
                if row is None or row[0] != 'feasible':
                    raise RunDBError(f'{self.path}: attempt {attempt} is not a recorded '
                                     'feasible proposal')
            if self._conn.execute(
                    'SELECT 1 FROM evaluations WHERE proposal_attempt IS ? AND ('
                    'proposal_attempt IS NOT NULL OR (program_id = ? AND task IS ? AND '
                    'preset IS ? AND seed IS ?))',
                    (attempt, program_id, job.task, preset, job.seed)).fetchone():
                what = (f'attempt {attempt}' if attempt is not None
                        else f'baseline program {program_id}')
                raise DuplicateAttemptError(f'{self.path}: {what} already has an evaluation')
            scores = [None] * 6 if ev is None else [
                ev.ood_score, ev.val_score, ev.params, ev.macs, ev.train_seconds,
                ev.compile_seconds]
            cursor = self._execute(
                'INSERT INTO evaluations (proposal_attempt, program_id, job_id, task, preset, '
                'seed, status, error_type, error, worker, wall_seconds, ood_score, val_score, '
                'params, macs, train_seconds, compile_seconds, evaluation_json, created_at) '
                'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                [attempt, program_id, result.job_id, job.task, preset, job.seed,
                 'ok' if result.ok else 'error', result.error_type,
                 None if result.ok else result.error, result.worker, result.wall_seconds]
                + scores + [None if ev is None else dumps(ev.to_dict()), self._clock()])
            if archive_state is not None:
                self.save_archive_snapshot(-1 if attempt is None else attempt, archive_state)
            return int(cursor.lastrowid)

    def save_archive_snapshot(self, after_attempt: int, state: Mapping[str, Any]) -> None:
        """Stores an archive state (JSON) taken after `after_attempt` (-1: the seed)."""
        with self.transaction():
            self._execute('INSERT INTO archive_snapshots (after_attempt, state_json, '
                          'created_at) VALUES (?, ?, ?)',
                          (after_attempt, dumps(state), self._clock()))

    def set_meta(self, key: str, value: Any) -> None:
        check_no_secrets({key: value}, 'run_meta')
        with self.transaction():
            self._execute('INSERT INTO run_meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE '
                          'SET value = excluded.value',
                          (key, json.dumps(value, default=plain)))

    # ------------------------------------------------------------ reads

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._query('SELECT value FROM run_meta WHERE key = ?', (key,))
        return default if not row else json.loads(row[0]['value'])

    def program_source(self, program_id: str) -> str:
        """The source of a stored program; RunDBError if there is none."""
        rows = self._query('SELECT source FROM programs WHERE id = ?', (program_id,))
        if not rows:
            raise RunDBError(f'{self.path}: no program {program_id!r}')
        return rows[0][0]

    def get_program(self, program_id: str) -> dict[str, Any] | None:
        rows = self._query('SELECT * FROM programs WHERE id = ?', (program_id,))
        return dict(rows[0]) if rows else None

    def latest_archive_snapshot(self) -> tuple[int, dict[str, Any]] | None:
        """(after_attempt, state) of the newest snapshot, or None."""
        rows = self._query('SELECT after_attempt, state_json FROM archive_snapshots '
                           'ORDER BY id DESC LIMIT 1')
        return (rows[0][0], json.loads(rows[0][1])) if rows else None

    def next_attempt_index(self) -> int:
        return self._query('SELECT COALESCE(MAX(attempt) + 1, 0) FROM proposals')[0][0]

    def missing_attempts(self) -> list[int]:
        """Attempt indices below the highest recorded one that have no proposal row."""
        have = {r[0] for r in self._query('SELECT attempt FROM proposals')}
        return [a for a in range(self.next_attempt_index()) if a not in have]

    def attempt_count(self) -> int:
        return self._query('SELECT COUNT(*) FROM proposals')[0][0]

    def evaluated_count(self, include_baseline: bool = True) -> int:
        """Evaluations with status 'ok' (the budget's evaluated candidates)."""
        sql = "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'"
        if not include_baseline:
            sql += ' AND proposal_attempt IS NOT NULL'
        return self._query(sql)[0][0]

    def pending_evaluations(self) -> list[Proposal]:
        """Feasible proposals without an evaluation (to redo on resume), by attempt."""
        rows = self._query(
            "SELECT p.* FROM proposals p LEFT JOIN evaluations e "
            "ON e.proposal_attempt = p.attempt WHERE p.status = 'feasible' AND e.id IS NULL "
            'ORDER BY p.attempt')
        return [self._proposal(r) for r in rows]

    def proposals(self) -> list[Proposal]:
        """Every stored proposal, by attempt, as it was recorded."""
        return [self._proposal(r) for r in self._query('SELECT * FROM proposals '
                                                       'ORDER BY attempt')]

    def proposal_statuses(self) -> list[str]:
        """The status of every attempt, by attempt (cheap: no records built)."""
        return [r[0] for r in self._query('SELECT status FROM proposals ORDER BY attempt')]

    def evaluation_results(self) -> list[tuple[int | None, str, EvalResult]]:
        """(attempt, program id, result) of every stored evaluation, in storage order."""
        rows = self._query('SELECT * FROM evaluations ORDER BY id')
        out = []
        for r in rows:
            data = json.loads(r['evaluation_json']) if r['evaluation_json'] else None
            out.append((r['proposal_attempt'], r['program_id'], EvalResult(
                job_id=r['job_id'], ok=r['status'] == 'ok', evaluation=data,
                error_type=r['error_type'], error=r['error'] or '', worker=r['worker'],
                wall_seconds=r['wall_seconds'])))
        return out

    def evaluations(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._query('SELECT * FROM evaluations ORDER BY id')]

    def llm_calls(self, attempt: int | None = None) -> list[dict[str, Any]]:
        if attempt is None:
            return [dict(r) for r in self._query('SELECT * FROM llm_calls ORDER BY id')]
        return [dict(r) for r in self._query(
            'SELECT * FROM llm_calls WHERE attempt = ? ORDER BY id', (attempt,))]

    def history(self) -> list[dict[str, Any]]:
        """One row per attempt, its evaluation's metrics joined (None if not evaluated)."""
        rows = self._query(
            'SELECT p.attempt, p.island, p.parent_id, p.factor, p.factor_source, p.directive, '
            'p.status, p.failure_stage, p.failure_type, p.entanglement, p.editor, p.is_llm, '
            'p.child_program_id, p.created_at, e.status AS eval_status, e.ood_score, '
            'e.val_score, e.params, e.macs, e.train_seconds, e.compile_seconds, '
            '(SELECT COUNT(*) FROM llm_calls c WHERE c.attempt = p.attempt) AS llm_calls, '
            '(SELECT SUM(c.latency_s) FROM llm_calls c WHERE c.attempt = p.attempt) '
            'AS llm_latency_s FROM proposals p '
            'LEFT JOIN evaluations e ON e.proposal_attempt = p.attempt ORDER BY p.attempt')
        return [dict(r) for r in rows]

    def integrity_check(self) -> list[str]:
        """SQLite's integrity and foreign-key checks; an empty list when all is well."""
        problems = [r[0] for r in self._query('PRAGMA integrity_check') if r[0] != 'ok']
        problems += [f'foreign key: {tuple(r)}' for r in self._query('PRAGMA foreign_key_check')]
        return problems

    # ------------------------------------------------------------ helpers

    def _now(self, value: float | None) -> float:
        return self._clock() if value is None else value

    def _execute(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        try:
            return self._conn.execute(sql, [plain(v) for v in params])
        except sqlite3.IntegrityError as exc:
            raise RunDBError(f'{self.path}: {exc} in {sql.split("(")[0].strip()}') from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise RunDBError(f'run database {self.path}: {exc}') from exc

    def _proposal(self, row: sqlite3.Row) -> Proposal:
        calls = tuple(CallRecord(**{k: c[k] for k in _CALL_FIELDS}) for c in self._query(
            f'SELECT {", ".join(_CALL_FIELDS)} FROM llm_calls WHERE attempt = ? ORDER BY id',
            (row['attempt'],)))
        calls = tuple(dataclasses.replace(c, is_llm=bool(c.is_llm), ok=bool(c.ok))
                      for c in calls)
        feasibility = row['feasibility_json']
        values = {k: row[k] for k in _PROPOSAL_COLUMNS}
        values['is_llm'] = bool(values['is_llm'])
        return Proposal(
            **values, child_source=row['child_source'], calls=calls,
            feasibility=(None if feasibility is None
                         else FeasibilityReport.from_dict(json.loads(feasibility))),
            created_at=row['created_at'])

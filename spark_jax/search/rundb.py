"""The run database: one SQLite file per search run (DESIGN §6, issue 5 item 3).

Tables: `programs` (sources by normalized sha256), `proposals` (one row per attempt, every
proposal, feasible or not), `evaluations` (one row per evaluated program; the seed's has no
attempt), `llm_calls`, `archive_snapshots` (`IslandArchive.to_state()` JSON), `run_meta`
(config snapshot, seed, versions, command) and `schema_version`.

Crash safety: WAL journal, `synchronous=FULL` (a commit is on disk when `commit` returns, also
across power loss; kill -9 alone would be safe with NORMAL, but commits here are one per
attempt, so FULL costs nothing that matters) and foreign keys on. A logical step commits as
one transaction: `record_proposal(proposal, llm_calls)` and `record_evaluation(evaluation,
archive_state)` each do; group more with `with db.transaction(): ...` (nested: savepoints).
After a kill -9 either all of a step's rows exist or none. `pending_evaluations()` lists feasible
proposals without an evaluation: the work a resumed run redoes. Writes refuse to duplicate:
a second proposal for an attempt, or a second evaluation for an attempt (or for the same
baseline program/task/preset/seed), raises `DuplicateAttemptError`. Program ids are the
first 16 hex digits of the normalized source's sha256, so they are deterministic.

Nothing here takes API keys, and `set_meta` rejects mappings holding a key named like one
(`api_key`, `authorization`, `password`, `secret`, `token`): store the environment
variable's name instead.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import pathlib
import sqlite3
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

from spark_jax.program import regions

__all__ = ['SCHEMA_VERSION', 'RunDBError', 'DuplicateAttemptError', 'ProposalRecord',
           'EvaluationRecord', 'LLMCallRecord', 'RunDB', 'program_sha256']

SCHEMA_VERSION = 1
PROPOSAL_STATUSES = ('feasible', 'infeasible', 'failed')
EVALUATION_STATUSES = ('ok', 'error')
_SECRET_KEYS = {'apikey', 'authorization', 'password', 'secret', 'token', 'bearertoken'}

_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL, created_at REAL NOT NULL);
CREATE TABLE run_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE programs (
  id TEXT PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
  parent_id TEXT REFERENCES programs(id), created_at REAL NOT NULL);
CREATE TABLE proposals (
  attempt INTEGER PRIMARY KEY CHECK (attempt >= 0), island INTEGER,
  parent_id TEXT REFERENCES programs(id), factor TEXT, factor_source TEXT, directive TEXT,
  child_program_id TEXT REFERENCES programs(id), diff TEXT,
  status TEXT NOT NULL CHECK (status IN ('feasible', 'infeasible', 'failed')),
  failure_stage TEXT, failure_type TEXT, reason TEXT, entanglement TEXT, editor TEXT,
  is_llm INTEGER NOT NULL DEFAULT 0, feasibility_json TEXT, created_at REAL NOT NULL,
  CHECK (status != 'feasible' OR child_program_id IS NOT NULL));
CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY,
  proposal_attempt INTEGER UNIQUE REFERENCES proposals(attempt),
  program_id TEXT NOT NULL REFERENCES programs(id), task TEXT, preset TEXT, seed INTEGER,
  ood_score REAL, val_score REAL, params INTEGER, macs INTEGER, train_seconds REAL,
  compile_seconds REAL, metrics_json TEXT,
  status TEXT NOT NULL CHECK (status IN ('ok', 'error')), error TEXT,
  created_at REAL NOT NULL);
CREATE UNIQUE INDEX evaluations_baseline ON evaluations(program_id, task, preset, seed)
  WHERE proposal_attempt IS NULL;
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY,
  attempt INTEGER REFERENCES proposals(attempt) DEFERRABLE INITIALLY DEFERRED,
  role TEXT, backend TEXT, model TEXT, prompt_sha256 TEXT, prompt_tokens INTEGER,
  completion_tokens INTEGER, latency_s REAL, attempts INTEGER, is_llm INTEGER, ok INTEGER,
  error TEXT, created_at REAL NOT NULL);
CREATE INDEX llm_calls_attempt ON llm_calls(attempt);
CREATE TABLE archive_snapshots (
  id INTEGER PRIMARY KEY, after_attempt INTEGER, state_json TEXT NOT NULL,
  created_at REAL NOT NULL);
"""


class RunDBError(RuntimeError):
    """An unusable run database (missing, corrupt, wrong schema) or an invalid write."""


class DuplicateAttemptError(RunDBError):
    """A proposal or evaluation for an attempt that already has one."""


@dataclasses.dataclass(frozen=True)
class ProposalRecord:
    """One proposal attempt (every LLM/offline edit, feasible or not).

    `status`: 'feasible' (passed feasibility; `child_program_id` set), 'infeasible' (a
    program that failed a stage: `failure_stage`/`failure_type`/`reason`) or 'failed' (no
    usable program: editor/LLM error). `feasibility` is the JSON-able report.
    """

    attempt: int
    status: str
    island: int | None = None
    parent_id: str | None = None
    factor: str | None = None
    factor_source: str | None = None
    directive: str | None = None
    child_program_id: str | None = None
    diff: str | None = None
    failure_stage: str | None = None
    failure_type: str | None = None
    reason: str | None = None
    entanglement: str | None = None
    editor: str | None = None
    is_llm: bool = False
    feasibility: Mapping[str, Any] | None = None
    created_at: float | None = None


@dataclasses.dataclass(frozen=True)
class EvaluationRecord:
    """One trained-and-scored program; `proposal_attempt` None for the seed/baseline."""

    program_id: str
    status: str
    proposal_attempt: int | None = None
    task: str | None = None
    preset: str | None = None
    seed: int | None = None
    ood_score: float | None = None
    val_score: float | None = None
    params: int | None = None
    macs: int | None = None
    train_seconds: float | None = None
    compile_seconds: float | None = None
    metrics: Mapping[str, Any] | None = None
    error: str | None = None
    created_at: float | None = None


@dataclasses.dataclass(frozen=True)
class LLMCallRecord:
    """One call to an editor backend (`role`: e.g. 'asr', 'rc', 'sar')."""

    attempt: int | None
    role: str
    backend: str | None = None
    model: str | None = None
    prompt_sha256: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    attempts: int = 1
    is_llm: bool = True
    ok: bool = True
    error: str | None = None
    created_at: float | None = None


def program_sha256(source: str) -> str:
    """sha256 of the normalized source (the same as `program.Program.sha256`)."""
    return hashlib.sha256(regions.normalize(source).encode()).hexdigest()


def _plain(value: Any) -> Any:
    """numpy scalars/arrays -> Python values (for sqlite3 and json)."""
    return value.tolist() if hasattr(value, 'tolist') and not isinstance(value, str) else value


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, default=_plain)


def _check_no_secrets(value: Any, where: str) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            norm = str(key).lower().replace('_', '').replace('-', '')
            if norm in _SECRET_KEYS and item:
                raise RunDBError(f'refusing to store {where}.{key}: looks like a credential '
                                 '(store the environment variable name instead)')
            _check_no_secrets(item, f'{where}.{key}')
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_no_secrets(item, where)


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
        db = cls(path, cls._connect(path), clock)
        try:
            with db.transaction():
                for statement in _SCHEMA.split(';'):
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
        db = cls(path, cls._connect(path), clock)
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

    @staticmethod
    def _connect(path: pathlib.Path) -> sqlite3.Connection:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                               timeout=30.0)
        try:
            conn.row_factory = sqlite3.Row
            mode = conn.execute('PRAGMA journal_mode=WAL').fetchone()[0]
            if mode.lower() != 'wal':
                raise sqlite3.DatabaseError(f'cannot enable WAL (journal_mode={mode})')
            conn.execute('PRAGMA synchronous=FULL')
            conn.execute('PRAGMA foreign_keys=ON')
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise RunDBError(f'run database {path} is unreadable or corrupt: {exc}') from exc
        return conn

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

    def record_proposal(self, proposal: ProposalRecord,
                        llm_calls: Sequence[LLMCallRecord] = ()) -> None:
        """Stores a proposal (and its LLM calls) atomically."""
        if proposal.status not in PROPOSAL_STATUSES:
            raise RunDBError(f'proposal status {proposal.status!r} not in {PROPOSAL_STATUSES}')
        with self.transaction():
            if self._conn.execute('SELECT 1 FROM proposals WHERE attempt = ?',
                                  (proposal.attempt,)).fetchone():
                raise DuplicateAttemptError(
                    f'{self.path}: attempt {proposal.attempt} is already recorded')
            p = proposal
            self._execute(
                'INSERT INTO proposals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                (p.attempt, p.island, p.parent_id, p.factor, p.factor_source, p.directive,
                 p.child_program_id, p.diff, p.status, p.failure_stage, p.failure_type,
                 p.reason, p.entanglement, p.editor, int(p.is_llm), _dumps(p.feasibility),
                 self._now(p.created_at)))
            self.record_llm_calls(llm_calls)

    def record_llm_calls(self, calls: Sequence[LLMCallRecord]) -> None:
        with self.transaction():
            for c in calls:
                self._execute(
                    'INSERT INTO llm_calls (attempt, role, backend, model, prompt_sha256, '
                    'prompt_tokens, completion_tokens, latency_s, attempts, is_llm, ok, '
                    'error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                    (c.attempt, c.role, c.backend, c.model, c.prompt_sha256, c.prompt_tokens,
                     c.completion_tokens, c.latency_s, c.attempts, int(c.is_llm), int(c.ok),
                     c.error, self._now(c.created_at)))

    def record_evaluation(self, evaluation: EvaluationRecord,
                          archive_state: Mapping[str, Any] | None = None) -> int:
        """Stores an evaluation (and, atomically, an archive snapshot); returns its id."""
        e = evaluation
        if e.status not in EVALUATION_STATUSES:
            raise RunDBError(f'evaluation status {e.status!r} not in {EVALUATION_STATUSES}')
        with self.transaction():
            if e.proposal_attempt is not None:
                row = self._conn.execute('SELECT status FROM proposals WHERE attempt = ?',
                                         (e.proposal_attempt,)).fetchone()
                if row is None or row[0] != 'feasible':
                    raise RunDBError(f'{self.path}: attempt {e.proposal_attempt} is not a '
                                     'recorded feasible proposal')
            if self._conn.execute(
                    'SELECT 1 FROM evaluations WHERE proposal_attempt IS ? AND ('
                    'proposal_attempt IS NOT NULL OR (program_id = ? AND task IS ? AND '
                    'preset IS ? AND seed IS ?))',
                    (e.proposal_attempt, e.program_id, e.task, e.preset, e.seed)).fetchone():
                what = (f'attempt {e.proposal_attempt}' if e.proposal_attempt is not None
                        else f'baseline program {e.program_id}')
                raise DuplicateAttemptError(f'{self.path}: {what} already has an evaluation')
            cursor = self._execute(
                'INSERT INTO evaluations (proposal_attempt, program_id, task, preset, seed, '
                'ood_score, val_score, params, macs, train_seconds, compile_seconds, '
                'metrics_json, status, error, created_at) '
                'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                (e.proposal_attempt, e.program_id, e.task, e.preset, e.seed, e.ood_score,
                 e.val_score, e.params, e.macs, e.train_seconds, e.compile_seconds,
                 _dumps(e.metrics), e.status, e.error, self._now(e.created_at)))
            if archive_state is not None:
                after = -1 if e.proposal_attempt is None else e.proposal_attempt
                self.save_archive_snapshot(after, archive_state)
            return int(cursor.lastrowid)

    def save_archive_snapshot(self, after_attempt: int, state: Mapping[str, Any]) -> None:
        """Stores an archive state (JSON) taken after `after_attempt` (-1: the seed)."""
        with self.transaction():
            self._execute('INSERT INTO archive_snapshots (after_attempt, state_json, '
                          'created_at) VALUES (?, ?, ?)',
                          (after_attempt, _dumps(state), self._clock()))

    def set_meta(self, key: str, value: Any) -> None:
        _check_no_secrets({key: value}, 'run_meta')
        with self.transaction():
            self._execute('INSERT INTO run_meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE '
                          'SET value = excluded.value',
                          (key, json.dumps(value, default=_plain)))

    # ------------------------------------------------------------ reads

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._query('SELECT value FROM run_meta WHERE key = ?', (key,))
        return default if not row else json.loads(row[0]['value'])

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

    def pending_evaluations(self) -> list[ProposalRecord]:
        """Feasible proposals without an evaluation (to redo on resume), by attempt."""
        rows = self._query(
            "SELECT p.* FROM proposals p LEFT JOIN evaluations e "
            "ON e.proposal_attempt = p.attempt WHERE p.status = 'feasible' AND e.id IS NULL "
            'ORDER BY p.attempt')
        return [self._proposal(r) for r in rows]

    def proposals(self) -> list[ProposalRecord]:
        return [self._proposal(r) for r in self._query('SELECT * FROM proposals '
                                                       'ORDER BY attempt')]

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
            return self._conn.execute(sql, [_plain(v) for v in params])
        except sqlite3.IntegrityError as exc:
            raise RunDBError(f'{self.path}: {exc} in {sql.split("(")[0].strip()}') from exc

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise RunDBError(f'run database {self.path}: {exc}') from exc

    @staticmethod
    def _proposal(row: sqlite3.Row) -> ProposalRecord:
        data = dict(row)
        feasibility = data.pop('feasibility_json')
        data['is_llm'] = bool(data['is_llm'])
        data['feasibility'] = None if feasibility is None else json.loads(feasibility)
        return ProposalRecord(**data)

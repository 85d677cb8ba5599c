"""The run database's schema, its errors and the value encoding shared by its writers.

Also what the database refuses to store: values under keys named like credentials.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import sqlite3
from typing import Any, Mapping

from spark_jax.program import regions

__all__ = [
    "SCHEMA_VERSION",
    "SCHEMA",
    "PROPOSAL_STATUSES",
    "RunDBError",
    "DuplicateAttemptError",
    "program_sha256",
    "plain",
    "dumps",
    "check_no_secrets",
    "connect",
]

SCHEMA_VERSION = 2
PROPOSAL_STATUSES = ("feasible", "infeasible", "failed")
_SECRET_KEYS = {"apikey", "authorization", "password", "secret", "token", "bearertoken"}

SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL, created_at REAL NOT NULL);
CREATE TABLE run_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE programs (
  id TEXT PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
  parent_id TEXT REFERENCES programs(id), created_at REAL NOT NULL);
CREATE TABLE proposals (
  attempt INTEGER PRIMARY KEY CHECK (attempt >= 0), island INTEGER,
  parent_id TEXT REFERENCES programs(id), mode TEXT, factor TEXT, factor_source TEXT,
  directive TEXT, status TEXT NOT NULL CHECK (status IN ('feasible', 'infeasible', 'failed')),
  failure_stage TEXT, failure_type TEXT, reason TEXT, editor TEXT,
  is_llm INTEGER NOT NULL DEFAULT 0, child_program_id TEXT REFERENCES programs(id),
  child_source TEXT, entanglement TEXT, diff TEXT, feasibility_json TEXT,
  created_at REAL NOT NULL,
  CHECK (status != 'feasible' OR child_program_id IS NOT NULL));
CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY,
  proposal_attempt INTEGER UNIQUE REFERENCES proposals(attempt),
  program_id TEXT NOT NULL REFERENCES programs(id), job_id TEXT, task TEXT, preset TEXT,
  seed INTEGER, status TEXT NOT NULL CHECK (status IN ('ok', 'error')), error_type TEXT,
  error TEXT, worker TEXT, wall_seconds REAL, ood_score REAL, val_score REAL,
  params INTEGER, macs INTEGER, train_seconds REAL, compile_seconds REAL,
  evaluation_json TEXT, created_at REAL NOT NULL);
CREATE UNIQUE INDEX evaluations_baseline ON evaluations(program_id, task, preset, seed)
  WHERE proposal_attempt IS NULL;
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY,
  attempt INTEGER REFERENCES proposals(attempt) DEFERRABLE INITIALLY DEFERRED,
  role TEXT, prompt TEXT, prompt_sha256 TEXT, response TEXT, reasoning TEXT,
  parse_outcome TEXT, backend TEXT, model TEXT, is_llm INTEGER, ok INTEGER, error TEXT,
  prompt_tokens INTEGER, completion_tokens INTEGER, latency_s REAL, attempts INTEGER,
  created_at REAL NOT NULL);
CREATE INDEX llm_calls_attempt ON llm_calls(attempt);
CREATE TABLE archive_snapshots (
  id INTEGER PRIMARY KEY, after_attempt INTEGER, state_json TEXT NOT NULL,
  created_at REAL NOT NULL);
"""


class RunDBError(RuntimeError):
    """An unusable run database (missing, corrupt, wrong schema) or an invalid write."""


class DuplicateAttemptError(RunDBError):
    """A proposal or evaluation for an attempt that already has one."""


def program_sha256(source: str) -> str:
    """sha256 of the normalized source (the same as `program.Program.sha256`)."""
    return hashlib.sha256(regions.normalize(source).encode()).hexdigest()


def plain(value: Any) -> Any:
    """numpy scalars/arrays -> Python values (for sqlite3 and json)."""
    return value.tolist() if hasattr(value, "tolist") and not isinstance(value, str) else value


def dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, default=plain)


def check_no_secrets(value: Any, where: str) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            norm = str(key).lower().replace("_", "").replace("-", "")
            if norm in _SECRET_KEYS and item:
                raise RunDBError(
                    f"refusing to store {where}.{key}: looks like a credential "
                    "(store the environment variable name instead)"
                )
            check_no_secrets(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_no_secrets(item, where)


def connect(path: pathlib.Path) -> sqlite3.Connection:
    """A WAL, synchronous=FULL, foreign-keys connection; RunDBError if the file is unusable."""
    try:
        conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, timeout=30.0
        )
    except sqlite3.Error as exc:
        raise RunDBError(f"run database {path}: cannot open: {exc}") from exc
    try:
        conn.row_factory = sqlite3.Row
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise sqlite3.DatabaseError(f"cannot enable WAL (journal_mode={mode})")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise RunDBError(f"run database {path} is unreadable or corrupt: {exc}") from exc
    return conn

"""The run database's read side: counts, records back as they were stored, and the
row views reports use. `RunDB` inherits it; `_query` is the one primitive it needs."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from typing import Any

from spark_jax.feasibility.checker import FeasibilityReport
from spark_jax.jobs.executors import EvalResult
from spark_jax.operator.editors import CallRecord
from spark_jax.operator.step import Proposal
from spark_jax.search import budget, intensify
from spark_jax.search.schema import RunDBError, program_sha256

__all__ = ["CALL_FIELDS", "PROPOSAL_COLUMNS", "RunQueries"]

CALL_FIELDS = tuple(f.name for f in dataclasses.fields(CallRecord))
PROPOSAL_COLUMNS = (
    "attempt",
    "island",
    "parent_id",
    "mode",
    "factor",
    "factor_source",
    "directive",
    "status",
    "failure_stage",
    "failure_type",
    "reason",
    "editor",
    "is_llm",
)


class RunQueries:
    """Read methods of `RunDB` (needs `_query(sql, params) -> rows` and `path`)."""

    def _query(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        raise NotImplementedError

    # ------------------------------------------------------------ reads

    def get_meta(self, key: str, default: Any = None) -> Any:
        row = self._query("SELECT value FROM run_meta WHERE key = ?", (key,))
        return default if not row else json.loads(row[0]["value"])

    def program_source(self, program_id: str) -> str:
        """The source of a stored program; RunDBError if there is none."""
        rows = self._query("SELECT source FROM programs WHERE id = ?", (program_id,))
        if not rows:
            raise RunDBError(f"{self.path}: no program {program_id!r}")
        return rows[0][0]

    def get_program(self, program_id: str) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM programs WHERE id = ?", (program_id,))
        return dict(rows[0]) if rows else None

    def latest_archive_snapshot(self) -> tuple[int, dict[str, Any]] | None:
        """(after_attempt, state) of the newest snapshot, or None."""
        rows = self._query(
            "SELECT after_attempt, state_json FROM archive_snapshots ORDER BY id DESC LIMIT 1"
        )
        return (rows[0][0], json.loads(rows[0][1])) if rows else None

    def next_attempt_index(self) -> int:
        return self._query("SELECT COALESCE(MAX(attempt) + 1, 0) FROM proposals")[0][0]

    def missing_attempts(self) -> list[int]:
        """Attempt indices below the highest recorded one that have no proposal row."""
        have = {r[0] for r in self._query("SELECT attempt FROM proposals")}
        return [a for a in range(self.next_attempt_index()) if a not in have]

    def attempt_count(self) -> int:
        return self._query("SELECT COUNT(*) FROM proposals")[0][0]

    def evaluated_count(self, include_baseline: bool = True) -> int:
        """Evaluated candidates as the budget counts them (the paper's rule): every stored
        evaluation, whatever training gave (an error or a NaN counts as much as a score); a
        feasible proposal enters training, so its evaluation counts once stored.
        `include_baseline`: count the seed's (and any baseline's) evaluation too."""
        sql = "SELECT COUNT(*) FROM evaluations"
        if not include_baseline:
            sql += " WHERE proposal_attempt IS NOT NULL"
        return self._query(sql)[0][0]

    def scored_count(self, include_baseline: bool = True) -> int:
        """Evaluations that finished with a score (status 'ok'): a subset of the evaluated."""
        sql = "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'"
        if not include_baseline:
            sql += " AND proposal_attempt IS NOT NULL"
        return self._query(sql)[0][0]

    def entered_training(self, source: str) -> str | None:
        """The id of the stored program with this normalized source when it has entered
        training (the seed, or a feasible proposal's child, evaluated or in flight), else
        None: a proposal of it is a duplicate, not retrained."""
        rows = self._query(
            "SELECT g.id FROM programs g WHERE g.sha256 = ? AND (EXISTS (SELECT 1 FROM "
            "evaluations e WHERE e.program_id = g.id) OR EXISTS (SELECT 1 FROM proposals p "
            "WHERE p.child_program_id = g.id AND p.status = 'feasible'))",
            (program_sha256(source),),
        )
        return rows[0][0] if rows else None

    def seed_evaluation(self) -> dict[str, Any] | None:
        """The run's first evaluation that no proposal made (its seed program's), scored or
        not; None before the seed was evaluated."""
        rows = self._query(
            "SELECT * FROM evaluations WHERE proposal_attempt IS NULL ORDER BY id LIMIT 1"
        )
        return dict(rows[0]) if rows else None

    def best_candidate(self, within: int | None = None) -> dict[str, Any] | None:
        """Best at budget: the best scored evaluation among the first `within` evaluated
        candidates (all when None), in the order they were stored; the seed is never one
        (it is its own row). Higher OOD wins, then fewer MACs; None when none scored."""
        if within is not None and within < 0:
            raise ValueError(f"within must be at least 0 (got {within})")
        incumbent = None if within is not None else self._incumbent()
        if incumbent is not None:
            return incumbent
        rows = self._query(
            "SELECT * FROM evaluations WHERE proposal_attempt IS NOT NULL ORDER BY id"
            + ("" if within is None else " LIMIT ?"),
            () if within is None else (within,),
        )
        best = None
        for r in map(dict, rows):
            score = r["ood_score"]
            if r["status"] != "ok" or score is None or math.isnan(score):
                continue
            if budget.better_evaluation(r, best):
                best = r
        return best

    def _incumbent(self) -> dict[str, Any] | None:
        """The intensified incumbent's evaluation (`search.intensify`), its `ood_score` the
        confirmed mean over all its seeds and `selection_ood` its first score; None when the
        run does not intensify or has no incumbent yet."""
        found = intensify.confirmed_incumbent(self.get_meta(intensify.META_KEY))
        if found is None:
            return None
        rows = self._query(
            "SELECT * FROM evaluations WHERE program_id = ? AND proposal_attempt IS NOT NULL "
            "ORDER BY id LIMIT 1",
            (found[0],),
        )
        if not rows:
            return None
        row = dict(rows[0])
        return dict(row, selection_ood=row["ood_score"], ood_score=found[1])

    def pending_evaluations(self) -> list[Proposal]:
        """Feasible proposals without an evaluation (to redo on resume), by attempt."""
        rows = self._query(
            "SELECT p.* FROM proposals p LEFT JOIN evaluations e "
            "ON e.proposal_attempt = p.attempt WHERE p.status = 'feasible' AND e.id IS NULL "
            "ORDER BY p.attempt"
        )
        return [self._proposal(r) for r in rows]

    def proposals(self) -> list[Proposal]:
        """Every stored proposal, by attempt, as it was recorded."""
        return [self._proposal(r) for r in self._query("SELECT * FROM proposals ORDER BY attempt")]

    def proposal_statuses(self) -> list[str]:
        """The status of every attempt, by attempt (cheap: no records built)."""
        return [r[0] for r in self._query("SELECT status FROM proposals ORDER BY attempt")]

    def evaluation_results(self) -> list[tuple[int | None, str, EvalResult]]:
        """(attempt, program id, result) of every stored evaluation, in storage order."""
        rows = self._query("SELECT * FROM evaluations ORDER BY id")
        out = []
        for r in rows:
            data = json.loads(r["evaluation_json"]) if r["evaluation_json"] else None
            out.append(
                (
                    r["proposal_attempt"],
                    r["program_id"],
                    EvalResult(
                        job_id=r["job_id"],
                        ok=r["status"] == "ok",
                        evaluation=data,
                        error_type=r["error_type"],
                        error=r["error"] or "",
                        worker=r["worker"],
                        wall_seconds=r["wall_seconds"],
                    ),
                )
            )
        return out

    def evaluations(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._query("SELECT * FROM evaluations ORDER BY id")]

    def llm_calls(self, attempt: int | None = None) -> list[dict[str, Any]]:
        if attempt is None:
            return [dict(r) for r in self._query("SELECT * FROM llm_calls ORDER BY id")]
        return [
            dict(r)
            for r in self._query(
                "SELECT * FROM llm_calls WHERE attempt = ? ORDER BY id", (attempt,)
            )
        ]

    def history(self) -> list[dict[str, Any]]:
        """One row per attempt, its evaluation's metrics joined (None if not evaluated)."""
        rows = self._query(
            "SELECT p.attempt, p.island, p.parent_id, p.factor, p.factor_source, p.directive, "
            "p.status, p.failure_stage, p.failure_type, p.entanglement, p.editor, p.is_llm, "
            "p.child_program_id, p.created_at, e.status AS eval_status, e.ood_score, "
            "e.val_score, e.params, e.macs, e.train_seconds, e.compile_seconds, "
            "(SELECT COUNT(*) FROM llm_calls c WHERE c.attempt = p.attempt) AS llm_calls, "
            "(SELECT SUM(c.latency_s) FROM llm_calls c WHERE c.attempt = p.attempt) "
            "AS llm_latency_s FROM proposals p "
            "LEFT JOIN evaluations e ON e.proposal_attempt = p.attempt ORDER BY p.attempt"
        )
        return [dict(r) for r in rows]

    def meta_items(self) -> dict[str, Any]:
        """Every run_meta key, decoded."""
        rows = self._query("SELECT key, value FROM run_meta ORDER BY key")
        return {r["key"]: json.loads(r["value"]) for r in rows}

    def created_at(self) -> float | None:
        """When the database was created (None if unknown)."""
        return self._query("SELECT MIN(created_at) FROM schema_version")[0][0]

    def last_write_at(self) -> float | None:
        """The newest row's timestamp over proposals, evaluations and LLM calls (None: none)."""
        return self._query(
            "SELECT MAX(t) FROM (SELECT MAX(created_at) AS t FROM proposals "
            "UNION ALL SELECT MAX(created_at) FROM evaluations "
            "UNION ALL SELECT MAX(created_at) FROM llm_calls)"
        )[0][0]

    def proposal_row(self, attempt: int) -> dict[str, Any] | None:
        """One attempt's stored row as it is (diff, entanglement and feasibility JSON too)."""
        rows = self._query("SELECT * FROM proposals WHERE attempt = ?", (attempt,))
        return dict(rows[0]) if rows else None

    def evaluation_of(self, attempt: int) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM evaluations WHERE proposal_attempt = ?", (attempt,))
        return dict(rows[0]) if rows else None

    def program_attempts(self) -> dict[str, int]:
        """Child program id -> the first attempt that proposed it."""
        rows = self._query(
            "SELECT child_program_id, MIN(attempt) FROM proposals "
            "WHERE child_program_id IS NOT NULL GROUP BY child_program_id"
        )
        return {r[0]: r[1] for r in rows}

    def integrity_check(self) -> list[str]:
        """SQLite's integrity and foreign-key checks; an empty list when all is well."""
        problems = [r[0] for r in self._query("PRAGMA integrity_check") if r[0] != "ok"]
        problems += [f"foreign key: {tuple(r)}" for r in self._query("PRAGMA foreign_key_check")]
        return problems

    def _proposal(self, row: sqlite3.Row) -> Proposal:
        calls = tuple(
            CallRecord(**{k: c[k] for k in CALL_FIELDS})
            for c in self._query(
                f"SELECT {', '.join(CALL_FIELDS)} FROM llm_calls WHERE attempt = ? ORDER BY id",
                (row["attempt"],),
            )
        )
        calls = tuple(dataclasses.replace(c, is_llm=bool(c.is_llm), ok=bool(c.ok)) for c in calls)
        feasibility = row["feasibility_json"]
        values = {k: row[k] for k in PROPOSAL_COLUMNS}
        values["is_llm"] = bool(values["is_llm"])
        return Proposal(
            **values,
            child_source=row["child_source"],
            calls=calls,
            feasibility=(
                None
                if feasibility is None
                else FeasibilityReport.from_dict(json.loads(feasibility))
            ),
            created_at=row["created_at"],
        )

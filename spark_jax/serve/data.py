"""The JSON the pages poll: the runs list, one run, one proposal (benchmarks: `benchmarks.py`,
comparisons: `comparison.py`).

Every number a report also shows comes from `report.accounting.summarize` (best-so-far,
valid rate, entanglement rate) and the run's verdict from the report's own code
(`verdicts.run_blocks`), so the browser and the Markdown report agree. Values are data, never markup: the pages put them
into the document as text.
"""

from __future__ import annotations

import collections
import json
import math
import pathlib
import threading
from typing import Any, Mapping

from spark_jax.families import DEFAULT_FAMILY
from spark_jax.report import spread
from spark_jax.report.accounting import ENTANGLED_KINDS, find_meta, is_scored, summarize
from spark_jax.search.final_test import META_KEY as FINAL_TEST_KEY
from spark_jax.serve import verdicts
from spark_jax.serve.reader import NotFound, Root, RunReader, run_status

__all__ = ["clean", "listing", "metric_of", "proposal_detail", "run_detail", "runs_list"]

# LLM call fields shown on a proposal page (a whitelist: nothing else of a record is shown).
CALL_FIELDS = (
    "role",
    "backend",
    "model",
    "ok",
    "is_llm",
    "parse_outcome",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "attempts",
    "prompt",
    "reasoning",
    "response",
)
_RECENT = 50


def metric_of(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The run's score as the pages name it: the name, the factor from the stored score (a
    fraction) to the shown value, the unit and digits, from `report.spread.metric_for` (the
    run report's own names; CLRS when the run names no family)."""
    fam = find_meta(meta, "family") or DEFAULT_FAMILY
    m = spread.metric_for(str(fam))
    return {"family": fam, "name": m.name, "scale": m.scale, "unit": m.unit, "digits": m.digits}


def clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None, tuples lists, mappings dicts."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, Mapping):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def _header(rel: str, run_dir, reader: RunReader) -> dict[str, Any]:
    meta = reader.meta_items()
    cfg = meta.get("config") or {}
    op = cfg.get("operator") or {}
    scores = [e["ood_score"] for e in reader.evaluations() if is_scored(e)]
    return {
        "path": rel,
        "metric": metric_of(reader.flat_meta()),
        "selection_set": meta.get("fitness_source") or "ood_test",
        "task": meta.get("task", cfg.get("task")),
        "preset": meta.get("preset", cfg.get("preset")),
        "method": "/".join(str(op[k]) for k in ("mode", "factor_choice") if op.get(k)) or None,
        "editor": meta.get("editor") or (cfg.get("editor") or {}).get("kind"),
        "budget": meta.get("budget", cfg.get("budget")),
        "max_attempts": meta.get("max_attempts", cfg.get("max_attempts")),
        "evaluated": reader.evaluated_count(include_baseline=False),
        "budget_used": reader.evaluated_count(),  # the search's budget counts the seed
        "attempts": reader.attempt_count(),
        "best_ood": max(scores) if scores else None,
        "status": run_status(run_dir, reader),
        "started_at": meta.get("started_at"),
        "finished_at": meta.get("finished_at"),
    }


def runs_list(root: Root) -> list[dict[str, Any]]:
    """One header per run directory under the root (unreadable ones say why)."""
    out = []
    for run_dir in root.run_dirs():
        rel = root.rel(run_dir)
        try:
            with RunReader(run_dir / "run.db") as reader:
                out.append(clean(_header(rel, run_dir, reader)))
        except Exception as exc:  # a run being created, or a foreign file: listed, not fatal
            out.append({"path": rel, "status": "unreadable", "error": str(exc)})
    return out


def _archive(snapshot: tuple[int, dict[str, Any]] | None, attempts: Mapping[str, int]):
    if snapshot is None:
        return None
    after, state = snapshot
    state = state.get("archive", state)  # the search loop's snapshot wraps the archive's
    cfg = state.get("config", {})
    records = {r["id"]: r for r in state.get("records", [])}
    members = state.get("islands", [])
    islands = []
    for i, grid in enumerate(state.get("grids", [])):
        per_cell = collections.Counter(
            tuple(m[2]) for m in (members[i] if i < len(members) else ())
        )
        cells = []
        for cell, cid in grid:
            r = records.get(cid, {})
            cells.append(
                {
                    "cell": cell,
                    "id": cid,
                    "ood": r.get("ood_acc"),
                    "macs": r.get("macs"),
                    "attempt": attempts.get(cid),
                    "members": per_cell.get(tuple(cell), 1),
                }
            )
        islands.append(
            {
                "island": i,
                "cells": cells,
                "members": len(members[i]) if i < len(members) else len(cells),
            }
        )
    return {
        "after_attempt": after,
        "dimensions": cfg.get("feature_dimensions", ["ood_acc", "macs"]),
        "bins": cfg.get("feature_bins"),
        "best_id": state.get("best_id"),
        "islands": islands,
    }


def _lineage(reader: RunReader, program_id: str | None, attempts, scores) -> list[dict]:
    out, seen = [], set()
    while program_id and program_id not in seen:
        seen.add(program_id)
        prog = reader.get_program(program_id)
        if prog is None:
            break
        out.append(
            {"id": program_id, "attempt": attempts.get(program_id), "ood": scores.get(program_id)}
        )
        program_id = prog["parent_id"]
    return out


def _stamp(db_path: pathlib.Path) -> tuple:
    """Changes whenever the database does: (mtime, size) of the file and of its WAL."""
    out = []
    for p in (db_path, db_path.with_name(db_path.name + "-wal")):
        try:
            st = p.stat()
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


_CACHE: collections.OrderedDict[tuple, dict[str, Any]] = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 16


def run_detail(root: Root, rel: str) -> dict[str, Any]:
    """Everything the run page draws; NotFound / OutsideRoot for a bad path. The run's
    numbers are recomputed only when its database changed since the last poll."""
    db_path = root.resolve(rel) / "run.db"
    key = (str(db_path), _stamp(db_path))  # before the read snapshot starts: never too new
    run_dir, reader = root.open_run(rel)
    with reader:
        header = clean(_header(root.rel(run_dir), run_dir, reader))
        with _CACHE_LOCK:
            body = _CACHE.get(key)
        if body is None:
            body = _run_body(reader, run_dir)
            with _CACHE_LOCK:
                _CACHE[key] = body
                while len(_CACHE) > _CACHE_SIZE:
                    _CACHE.popitem(last=False)
    return {"run": header, **body}


def _factor_counts(hist) -> dict[str, list[int]]:
    """Per factor, its cumulative count after each attempt."""
    factors = sorted({h["factor"] or "none" for h in hist})
    counts: dict[str, list[int]] = {f: [] for f in factors}
    running: collections.Counter[str] = collections.Counter()
    for h in hist:
        running[h["factor"] or "none"] += 1
        for f in factors:
            counts[f].append(running[f])
    return counts


def _failures(hist, evals) -> list[dict[str, Any]]:
    """Failures by (stage, type): infeasible proposals, then failed evaluations."""
    failures = collections.Counter(
        (h["failure_stage"] or "?", h["failure_type"] or "?")
        for h in hist
        if h["status"] != "feasible"
    )
    failures.update(
        ("evaluation", e["error_type"] or "error")
        for e in evals
        if e["proposal_attempt"] is not None and e["status"] != "ok"
    )
    return [{"stage": s, "type": t, "count": n} for (s, t), n in failures.most_common()]


def _curves(acc, hist) -> dict[str, Any]:
    return {
        # the stored 0-based attempt index; the seed's point (before any attempt) at -1
        "attempt_x": list(range(-1, len(acc.curves["best"]) - 1)),
        "best": acc.curves["best"],
        "cand_ood": acc.curves["cand_ood"],
        "eval_x": list(range(len(acc.curves["best_eval"]))),
        "best_eval": acc.curves["best_eval"],
        "rate_x": list(range(len(acc.curves["valid"]))),
        "valid": acc.curves["valid"],
        "entangled": acc.curves["entangled"],
        "factor_counts": _factor_counts(hist),
    }


def _run_body(reader: RunReader, run_dir: pathlib.Path) -> dict[str, Any]:
    meta = reader.flat_meta()
    acc = summarize(reader, meta=meta, created_at=reader.created_at())
    calls = reader.llm_calls()
    n_llm = sum(bool(c["is_llm"]) for c in calls)
    hist, evals = reader.history(), reader.evaluations()
    attempts = reader.program_attempts()
    scores = {e["program_id"]: e["ood_score"] for e in evals if is_scored(e)}
    incumbent = acc.incumbent["program_id"] if acc.incumbent else None
    best = acc.best_candidate
    recent = [
        {k: h[k] for k in ("attempt", "island", "factor", "status", "failure_stage", "ood_score")}
        | {"failure_type": h["failure_type"], "entangled": h["entanglement"] in ENTANGLED_KINDS}
        for h in hist[-_RECENT:]
    ]
    payload = {
        "seed_ood": acc.seed["ood_score"] if acc.seed else None,
        # report.md's best: the best evaluated candidate, the seed apart (best/ holds it)
        "best_candidate_ood": best["ood_score"] if best else None,
        "best_candidate_attempt": best["proposal_attempt"] if best else None,
        "valid_rate": acc.valid_rate,
        "entanglement_rate": acc.entanglement_rate,
        # report.md's final outcome (verdict on the test set, seed spread), by its own code
        "outcome": verdicts.run_blocks(run_dir, meta, acc, reader.get_meta(FINAL_TEST_KEY)),
        "editor_calls": {"total": len(calls), "llm": n_llm, "offline_rules": len(calls) - n_llm},
        "wall_hours": acc.wall_hours,
        "device_hours": acc.device_hours,
        "best_attempt_index": acc.best_attempt_index,
        "curves": _curves(acc, hist),
        "failures": _failures(hist, evals),
        "archive": _archive(reader.latest_archive_snapshot(), attempts),
        "lineage": _lineage(reader, incumbent, attempts, scores),
        "attempts": recent,
        "attempts_shown_from": hist[-_RECENT]["attempt"] if len(hist) > _RECENT else 0,
    }
    return clean(payload)


def proposal_detail(root: Root, rel: str, attempt: int) -> dict[str, Any]:
    """One attempt: its proposal row, LLM calls (whitelisted fields), diff, feasibility,
    evaluation."""
    run_dir, reader = root.open_run(rel)
    with reader:
        row = reader.proposal_row(attempt)
        if row is None:
            raise NotFound(f"no attempt {attempt} in {rel!r}")
        feas = json.loads(row["feasibility_json"]) if row["feasibility_json"] else None
        ev = reader.evaluation_of(attempt)
        if ev is not None:
            ev["evaluation"] = json.loads(ev.pop("evaluation_json") or "null")
        calls = [{k: c.get(k) for k in CALL_FIELDS} for c in reader.llm_calls(attempt)]
        keep = ("attempt", "island", "parent_id", "mode", "factor", "factor_source", "status")
        keep += ("failure_stage", "failure_type", "reason", "editor", "is_llm", "entanglement")
        payload = {
            "run": root.rel(run_dir),
            "metric": metric_of(reader.flat_meta()),
            "proposal": {k: row[k] for k in keep + ("child_program_id", "directive")},
            "diff": row["diff"],
            "child_source": row["child_source"],
            "feasibility": feas,
            "calls": calls,
            "evaluation": ev,
            "last_attempt": reader.next_attempt_index() - 1,
            "parent_attempt": reader.program_attempts().get(row["parent_id"]),
        }
    return clean(payload)


def listing(root: Root, dirs: list[pathlib.Path], describe) -> list[dict[str, Any]]:
    """`describe(rel)` of each directory; one that cannot be read is listed with its error."""
    out = []
    for d in dirs:
        rel = root.rel(d)
        try:
            out.append(describe(rel))
        except Exception as exc:  # being created, or a foreign file: listed, not fatal
            out.append({"path": rel, "error": str(exc)})
    return out

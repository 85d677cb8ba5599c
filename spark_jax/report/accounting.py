"""A run's numbers, computed from its database: `summarize(db)` -> `RunAccounting`.

Counting follows the paper's metric definitions: an *attempt* is every proposal; an
*evaluated candidate* is a proposal whose evaluation finished with status 'ok' (the seed's
baseline evaluation is not a candidate); the budget's count (`evaluated_budget`, the
paper's "evaluated": feasible and entered training, whatever training gave) adds the
evaluation errors; a *duplicate* repeats a program that entered training before and is
neither trained nor a failure (`search.budget`); *best at budget* is the best evaluated
candidate, the seed excluded (it is its own row); the valid rate is feasible proposals / attempts; the
entanglement rate is proposals whose entanglement is 'entangled' or 'scaffold' / attempts (a
child whose tag lines are broken is 'scaffold': tags are scaffolding). Training failures of
feasible proposals are evaluation errors, counted apart from feasibility failures. Routing:
an attempt is routed when the router's answer named a factor, retried when it took more than
one router call, and fell back when every call failed to parse (ACTION then).
Curves are attributed to the attempt that proposed a program, whatever order evaluations
finished in.
"""

from __future__ import annotations

import collections
import dataclasses
import sqlite3
from typing import Any, Mapping

from spark_jax.operator.step import Proposal
from spark_jax.search.budget import DUPLICATE
from spark_jax.search.budget import better_evaluation as _better
from spark_jax.search.rundb import RunDB

__all__ = [
    "ENTANGLED_KINDS",
    "RunAccounting",
    "best_within",
    "find_meta",
    "is_scored",
    "meta_group",
    "read_meta",
    "summarize",
]

ENTANGLED_KINDS = ("entangled", "scaffold")


@dataclasses.dataclass(frozen=True)
class RunAccounting:
    """A run's numbers. Rates are None with zero attempts; `*_attempt` fields are 1-based
    positions among attempts (`best_attempt_index` is the stored 0-based index), None when
    the seed holds the best-so-far; `verdict` is 'beats'/'equals'/'below' (best evaluated
    candidate vs seed on OOD) or None when either is missing.

    `failed` counts editor failures only; `duplicates` the proposals that repeated a trained
    program (attempts = feasible + infeasible + failed + duplicates). `evaluated_budget`:
    candidates counted toward the budget B (feasible and entered training, errors and NaN
    included; = evaluated + eval_errors). `best_at_budget`: the best evaluated candidate's
    OOD, the seed excluded (None when none scored). Curve `best_at_evaluated`: its value
    after each of the budget's evaluated candidates, in storage order (NaN until one
    scored); `best_within(acc, B)` reads it at B."""

    attempts: int
    feasible: int
    infeasible: int
    failed: int
    evaluated: int
    eval_errors: int
    not_evaluated: int
    valid_rate: float | None
    entangled: int
    entanglement_rate: float | None
    seed: Mapping[str, Any] | None
    best_candidate: Mapping[str, Any] | None
    incumbent: Mapping[str, Any] | None
    best_ood: float | None
    best_attempt: int | None
    best_attempt_index: int | None
    best_evaluated: int | None
    verdict: str | None
    wall_hours: float | None
    device_hours: float
    mean_train_seconds: float | None
    mean_compile_seconds: float | None
    curves: Mapping[str, tuple[float, ...]]
    routed: int = 0
    route_retried: int = 0
    route_fallback: int = 0
    truncated_calls: int = 0
    truncated: int = 0
    tag_breaks: int = 0
    duplicates: int = 0
    evaluated_budget: int = 0
    best_at_budget: float | None = None


def is_scored(e: Mapping[str, Any]) -> bool:
    """An evaluation that finished ('ok') with an OOD score."""
    return e["status"] == "ok" and e["ood_score"] is not None


def _budget_curve(evals: list[Mapping[str, Any]]) -> tuple[float, ...]:
    """Best at budget after each evaluated candidate (budget sense: every evaluation of a
    proposal, in storage order), the seed excluded; NaN until a candidate scored."""
    best, curve = None, []
    for e in evals:
        if e["proposal_attempt"] is None:
            continue
        if is_scored(e) and e["ood_score"] == e["ood_score"] and _better(e, best):  # not NaN
            best = e
        curve.append(best["ood_score"] if best else float("nan"))
    return tuple(curve)


def best_within(acc: RunAccounting, budget: int) -> float | None:
    """Best at budget B: the best of the run's first `budget` evaluated candidates (all of
    them when it evaluated fewer), the seed excluded; None when none of them scored."""
    return _at(acc.curves.get("best_at_evaluated", ()), budget)


def _at(curve: tuple[float, ...], budget: int) -> float | None:
    if budget < 1 or not curve:
        return None
    value = curve[min(budget, len(curve)) - 1]
    return None if value != value else value  # NaN: nothing scored yet


def _raw_meta(db: RunDB) -> tuple[dict[str, Any], float | None]:
    """All run_meta keys (decoded by RunDB.get_meta) and the database creation time."""
    try:
        conn = sqlite3.connect(str(db.path))
        try:
            keys = [r[0] for r in conn.execute("SELECT key FROM run_meta ORDER BY key")]
            created = conn.execute("SELECT MIN(created_at) FROM schema_version").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return {}, None
    return {k: db.get_meta(k) for k in keys}, created


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """{'a': {'b': 1}} -> {'a.b': 1}; an empty mapping stays a value (none at top level)."""
    if isinstance(value, Mapping) and (value or not prefix):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def find_meta(meta: Mapping[str, Any], name: str) -> Any:
    """The first flattened key equal to `name` or ending in `.name`; None when absent."""
    for key, value in meta.items():
        if key == name or key.endswith("." + name):
            return value
    return None


def meta_group(meta: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The flattened keys under `prefix` (dotted, e.g. 'versions.'), the prefix cut off:
    {'jax': '0.10.2', ...}; {} when none."""
    return {k[len(prefix) :]: v for k, v in meta.items() if k.startswith(prefix)}


def read_meta(db: RunDB) -> tuple[dict[str, Any], float | None]:
    """The run's metadata flattened to dotted keys ({'budget.evaluated': 6, ...}) and the
    database creation time (None when unreadable)."""
    raw, created = _raw_meta(db)
    return _flatten(raw), created


def _seed_evaluation(evals: list[dict], meta: Mapping[str, Any]) -> dict | None:
    """The seed program's scored evaluation (the run's task and preset first), or None."""
    baselines = [e for e in evals if e["proposal_attempt"] is None and is_scored(e)]
    task, preset = find_meta(meta, "task"), find_meta(meta, "preset")
    matching = [
        e
        for e in baselines
        if (task is None or e["task"] in (None, task))
        and (preset is None or e["preset"] in (None, preset))
    ]
    return (matching or baselines or [None])[0]


def _attempt_curves(props: list[Proposal], by_attempt: dict, seed: dict | None):
    """Per attempt (x = 0 is the seed, before any attempt): the incumbent and the curves of
    best OOD, its MACs, each candidate's OOD, and the running valid and entangled rates."""
    nan = float("nan")
    incumbent = seed
    best_curve = [seed["ood_score"] if seed else nan]
    macs_curve = [seed["macs"] if seed and seed["macs"] is not None else nan]
    cand_ood, valid, entangled = [nan], [], []
    n_feasible = n_entangled = 0
    for k, p in enumerate(props, 1):
        e = by_attempt.get(p.attempt)
        if e is not None and is_scored(e) and _better(e, incumbent):
            incumbent = e
        best_curve.append(incumbent["ood_score"] if incumbent else nan)
        macs_curve.append(
            nan if incumbent is None or incumbent["macs"] is None else float(incumbent["macs"])
        )
        cand_ood.append(e["ood_score"] if e is not None and is_scored(e) else nan)
        n_feasible += p.status == "feasible"
        n_entangled += p.entanglement in ENTANGLED_KINDS
        valid.append(n_feasible / k)
        entangled.append(n_entangled / k)
    curves = dict(
        best=tuple(best_curve),
        macs=tuple(macs_curve),
        cand_ood=tuple(cand_ood),
        valid=tuple(valid),
        entangled=tuple(entangled),
    )
    return incumbent, curves, n_feasible, n_entangled


def _evaluated_curve(cands: list[dict], seed: dict | None):
    """Per evaluated candidate, in the order evaluations were recorded: the best OOD so far,
    and the best scored candidate (the seed apart)."""
    eval_curve, running, best_candidate = [seed["ood_score"] if seed else float("nan")], seed, None
    for e in cands:
        if is_scored(e):
            running = e if _better(e, running) else running
            best_candidate = e if _better(e, best_candidate) else best_candidate
        eval_curve.append(running["ood_score"] if running else float("nan"))
    return tuple(eval_curve), best_candidate


def _best_position(best_curve, props, by_attempt, cands, seed, best_ood):
    """(attempt number, proposal attempt index, evaluated index) where the best first appeared;
    all None when the best is the seed or nothing scored."""
    if best_ood is None or (seed and seed["ood_score"] == best_ood):
        return None, None, None
    best_attempt = next(k for k, v in enumerate(best_curve) if v == best_ood)
    best_index = props[best_attempt - 1].attempt
    first = by_attempt[best_index]
    best_eval = next(i for i, e in enumerate(cands, 1) if e["id"] == first["id"])
    return best_attempt, best_index, best_eval


def _costs(db: RunDB, props, evals, cands, created_at) -> dict[str, Any]:
    """Wall and device hours, mean train and compile seconds of the evaluated candidates."""
    stamps = [p.created_at for p in props] + [e["created_at"] for e in evals]
    stamps += [c["created_at"] for c in db.llm_calls()] + [created_at]
    stamps = [s for s in stamps if s is not None]
    train = [e["train_seconds"] for e in cands if e["train_seconds"] is not None]
    comp = [e["compile_seconds"] for e in cands if e["compile_seconds"] is not None]
    # A scored evaluation costs its compile + train time; a failed one its wall time.
    device_s = sum(
        (e["train_seconds"] or 0.0) + (e["compile_seconds"] or 0.0)
        if e["status"] == "ok"
        else (e["wall_seconds"] or 0.0)
        for e in evals
    )
    return dict(
        wall_hours=(max(stamps) - min(stamps)) / 3600 if len(stamps) > 1 else None,
        device_hours=device_s / 3600,
        mean_train_seconds=sum(train) / len(train) if train else None,
        mean_compile_seconds=sum(comp) / len(comp) if comp else None,
    )


def summarize(
    db: RunDB, meta: Mapping[str, Any] | None = None, created_at: float | None = None
) -> RunAccounting:
    """Computes every number and curve of the report from an open run database."""
    if meta is None:
        meta, created_at = read_meta(db)
    props: list[Proposal] = db.proposals()
    evals = db.evaluations()
    by_attempt = {e["proposal_attempt"]: e for e in evals if e["proposal_attempt"] is not None}
    seed = _seed_evaluation(evals, meta)
    cands = [e for e in evals if e["proposal_attempt"] is not None and e["status"] == "ok"]
    incumbent, curves, n_feasible, n_entangled = _attempt_curves(props, by_attempt, seed)
    eval_curve, best_candidate = _evaluated_curve(cands, seed)
    best_ood = incumbent["ood_score"] if incumbent else None
    best_attempt, best_index, best_eval = _best_position(
        curves["best"], props, by_attempt, cands, seed, best_ood
    )
    verdict = None
    if seed is not None and best_candidate is not None:
        diff = best_candidate["ood_score"] - seed["ood_score"]
        verdict = "beats" if diff > 0 else "equals" if diff == 0 else "below"
    n = len(props)
    budget_curve = _budget_curve(evals)
    n_duplicates = sum(p.failure_type == DUPLICATE for p in props)
    route_calls = collections.Counter(
        p.attempt for p in props for c in p.calls if c.role == "route"
    )
    return RunAccounting(
        attempts=n,
        feasible=n_feasible,
        infeasible=sum(p.status == "infeasible" for p in props),
        failed=sum(p.status == "failed" for p in props) - n_duplicates,
        evaluated=len(cands),
        eval_errors=sum(e["status"] != "ok" for e in by_attempt.values()),
        not_evaluated=sum(p.status == "feasible" and p.attempt not in by_attempt for p in props),
        valid_rate=n_feasible / n if n else None,
        entangled=n_entangled,
        entanglement_rate=n_entangled / n if n else None,
        seed=seed,
        best_candidate=best_candidate,
        incumbent=incumbent,
        best_ood=best_ood,
        best_attempt=best_attempt,
        best_attempt_index=best_index,
        best_evaluated=best_eval,
        verdict=verdict,
        **_costs(db, props, evals, cands, created_at),
        curves={**curves, "best_eval": eval_curve, "best_at_evaluated": budget_curve},
        routed=sum(p.factor_source == "asr" for p in props),
        route_retried=sum(route_calls[p.attempt] > 1 for p in props),
        route_fallback=sum(p.factor_source == "fallback" for p in props),
        truncated_calls=sum(c.parse_outcome == "truncated" for p in props for c in p.calls),
        truncated=sum(p.failure_type == "truncated" for p in props),
        tag_breaks=sum(
            p.failure_stage == "template" and p.entanglement == "scaffold" for p in props
        ),
        duplicates=n_duplicates,
        evaluated_budget=len(budget_curve),
        best_at_budget=_at(budget_curve, len(budget_curve)),
    )

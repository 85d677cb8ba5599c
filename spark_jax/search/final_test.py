"""The test set under `fitness.source: ood_val`: scored for the final programs only.

The search selected on a separate OOD-size validation set (another task family: on its
validation split, and its test split is scored here). At its end the final programs
(the seed, the best evaluated candidate, and the archive's best if it is neither) are
trained again under the official protocol on the K training seeds after the search's own
(`train_seeds`: the search trained with `seed` .. `seed + K - 1`, the final test with
`seed + K` .. `seed + 2K - 1`), so the winner is never reported on a seed it was selected
with, and scored on the official OOD test set, once each; the seed program trains on the
same seeds, so the two stay paired. `run_meta['final_test']` keeps every result by program
id, so a resumed or re-run finish scores only what is missing. Results scored under another
rule (runs before `train_seeds`: the search's own seeds, the same parameters) are scored
again on a resume and kept under `superseded`, never dropped.
"""

from __future__ import annotations

import asyncio
from typing import Any, Mapping

from spark_jax.config.search import SearchConfig
from spark_jax.jobs.executors import EvalJob
from spark_jax.search import family_setup
from spark_jax.search.archive import Candidate
from spark_jax.search.rundb import RunDB

__all__ = [
    "META_KEY",
    "final_programs",
    "predates_fresh_seeds",
    "recorded_train_seeds",
    "score_final_programs",
    "train_seeds",
]

META_KEY = "final_test"


def train_seeds(cfg: SearchConfig) -> tuple[int, ...]:
    """The final test's training seeds: the K after the search's own K (`fitness.seeds`)."""
    k = cfg.fitness.seeds
    return tuple(range(cfg.seed + k, cfg.seed + 2 * k))


def recorded_train_seeds(stored: Mapping[str, Any] | None) -> tuple[int, ...] | None:
    """The training seeds `stored` (a run's `final_test` meta) records; None for a record
    written before `train_seeds` (or none at all)."""
    seeds = (stored or {}).get("train_seeds")
    return None if seeds is None else tuple(int(s) for s in seeds)


def predates_fresh_seeds(stored: Mapping[str, Any] | None) -> bool:
    """Whether `stored` (a run's `final_test` meta) holds programs scored before
    `train_seeds` (on the search's own seeds, the parameters it selected)."""
    return bool((stored or {}).get("programs")) and recorded_train_seeds(stored) is None


def final_programs(db: RunDB, archive_best: Candidate | None) -> dict[str, list[str]]:
    """Program id -> its roles ('seed', 'best' evaluated candidate, 'search_best')."""
    scored = [e for e in db.evaluations() if e["status"] == "ok" and e["ood_score"] is not None]
    seed = next((e for e in scored if e["proposal_attempt"] is None), None)
    best = db.best_candidate()  # the intensified incumbent when the run intensifies
    roles: dict[str, list[str]] = {}
    for e, role in ((seed, "seed"), (best, "best")):
        if e is not None:
            roles.setdefault(e["program_id"], []).append(role)
    if archive_best is not None and archive_best.id not in roles:
        roles[archive_best.id] = ["search_best"]
    return roles


async def score_final_programs(
    cfg: SearchConfig, db: RunDB, executor, archive_best: Candidate | None
) -> dict[str, Any]:
    """Scores each final program not yet scored on the official test set; returns the
    stored `{program id: {roles, ok, evaluation, error_type, error}}`."""
    stored = db.get_meta(META_KEY) or {}
    superseded = list(stored.get("superseded") or ())
    if predates_fresh_seeds(stored):  # scored under the earlier rule: kept, then scored again
        superseded.append({k: v for k, v in stored.items() if k != "superseded"})
        stored = {}
    programs: dict[str, Any] = dict(stored.get("programs") or {})
    kept = {"superseded": superseded} if superseded else {}
    seeds = train_seeds(cfg)
    header = dict(
        protocol=cfg.protocol.name,
        test_seed=cfg.protocol.test_seed,
        seeds=cfg.fitness.seeds,
        train_seeds=list(seeds),
        selection_source=cfg.fitness.source,
        ood_val_seed=cfg.fitness.ood_val_seed,
        family=cfg.family,
    )
    for program_id, roles in final_programs(db, archive_best).items():
        if program_id in programs:  # scored before a resume: never again
            programs[program_id]["roles"] = roles
            continue
        job = EvalJob(
            job_id=f"final-test-{program_id}",
            source=db.program_source(program_id),
            program_name=f"final-test-{roles[0]}",
            task=cfg.target,
            protocol=cfg.protocol.to_dict(),  # the official OOD test set
            seed=seeds[0],  # never a seed the search trained (and selected) with
            timeout_s=cfg.executor.timeout_s,
            memory_mb=cfg.executor.memory_mb,
            seeds=cfg.fitness.seeds,
            **family_setup.job_fields(cfg, split="test"),  # another family: its test split
        )
        # One at a time, each stored as it lands: a resume redoes only what never landed.
        result = await asyncio.wrap_future(executor.submit(job))
        programs[program_id] = dict(
            roles=roles,
            ok=result.ok,
            evaluation=None if result.evaluation is None else result.evaluation.to_dict(),
            error_type=result.error_type,
            error=result.error[:500],
        )
        db.set_meta(META_KEY, dict(header, programs=programs, **kept))
    db.set_meta(META_KEY, dict(header, programs=programs, **kept))
    return programs

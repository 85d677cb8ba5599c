"""Intensifying the incumbent (`fitness.intensify: N`, off at 0): a candidate becomes the
run's best only after it is trained on N more seeds and still beats the incumbent.

The racing idea of SMAC's intensification and irace, in the search's terms. A candidate whose
selection score (its mean over `fitness.seeds`) beats the incumbent's confirmed score (or any
candidate, while there is none) is a challenger: it is trained again on the N intensification
seeds (`search seed + 10000 ...`, the same for every program of the run, never a final-test or
benchmark seed), and its confirmed score is the mean over all its seeds. It becomes the
incumbent when that beats the incumbent's confirmed score, which was measured on the same
seeds. The re-evaluations are device time, not candidates: they never count toward the
budget B, and the report shows both. Every method runs the same loop, so every method gets
the rule.

The state lives in the run database (`run_meta['intensification']`: the seeds, each
intensified program's scores and device seconds, the incumbent, the challengers still to
train, and every decision), written as each re-evaluation lands; a resumed run trains the
challengers whose re-evaluation never landed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Any, Callable

from spark_jax.config.search import SearchConfig
from spark_jax.jobs.executors import EvalJob

__all__ = ["META_KEY", "SEED_OFFSET", "Intensifier", "confirmed_incumbent"]

META_KEY = "intensification"
SEED_OFFSET = 10_000


def confirmed_incumbent(stored: dict[str, Any] | None) -> tuple[str, float] | None:
    """(program id, confirmed score) of a run's incumbent, from its stored state."""
    if not stored or stored.get("incumbent") is None:
        return None
    pid = stored["incumbent"]
    return pid, stored["programs"][pid]["confirmed"]


class Intensifier:
    """The run's intensification (no-op when `fitness.intensify` is 0)."""

    def __init__(self, cfg: SearchConfig, db, executor, job: Callable[..., EvalJob]) -> None:
        self.n, self.k = cfg.fitness.intensify, cfg.fitness.seeds
        self.db, self.executor, self._job = db, executor, job
        first = cfg.seed + SEED_OFFSET
        self.state: dict[str, Any] = db.get_meta(META_KEY) or dict(
            seeds=list(range(first, first + self.n)),
            programs={},
            incumbent=None,
            pending=[],
            decisions=[],
        )

    @property
    def enabled(self) -> bool:
        return self.n > 0

    def _confirmed(self) -> float:
        found = confirmed_incumbent(self.state)
        return -math.inf if found is None else found[1]

    def consider(self, program_id: str, score: float) -> None:
        """A landed candidate's selection score: a challenger is queued for its seeds."""
        if not self.enabled or math.isnan(score) or score <= self._confirmed():
            return
        if program_id in self.state["programs"] or program_id in self.state["pending"]:
            return
        self.state["pending"].append([program_id, score])
        self.db.set_meta(META_KEY, self.state)

    async def drain(self) -> None:
        """Trains every queued challenger on the intensification seeds, one at a time, and
        decides each as it lands."""
        while self.enabled and self.state["pending"]:
            program_id, base = self.state["pending"][0]
            job = dataclasses.replace(
                self._job(
                    f"intensify-{program_id}", self.db.program_source(program_id), "intensify"
                ),
                seed=self.state["seeds"][0],
                seeds=self.n,
                cascade=None,
            )
            result = await asyncio.wrap_future(self.executor.submit(job))
            self._decide(program_id, base, result)

    def _decide(self, program_id: str, base: float, result) -> None:
        ev = result.evaluation if result.ok else None
        extra = None if ev is None else ev.score_mean
        confirmed = None if extra is None else (self.k * base + self.n * extra) / (self.k + self.n)
        before = confirmed_incumbent(self.state)
        wins = confirmed is not None and confirmed > self._confirmed()
        self.state["programs"][program_id] = dict(
            selection=base,
            intensified=extra,
            confirmed=confirmed,
            wall_seconds=result.wall_seconds,
            error_type=result.error_type,
        )
        if wins:
            self.state["incumbent"] = program_id
        self.state["decisions"].append(
            dict(
                program=program_id,
                confirmed=confirmed,
                incumbent_before=None if before is None else before[0],
                became_incumbent=wins,
            )
        )
        self.state["pending"] = self.state["pending"][1:]
        self.db.set_meta(META_KEY, self.state)

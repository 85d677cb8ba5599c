"""What intensifying the incumbent buys: two comparisons of one method over
the same search seeds, one without intensification and one with (`fitness.intensify`), read
side by side. Per search seed: the reported best's selection score (its confirmed score when
the run intensified), its test score on a seed the search never used (the final test), the
drop from the one to the other (the winner's curse), and the device time the search spent
(candidates and re-evaluations). The drops are compared per search seed with the project's
paired test (`stats.significance`), `cannot tell` when it cannot.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Sequence

from spark_jax.compare.methods import resolve_methods
from spark_jax.compare.runner import PLAN_FILE, ComparePlan, run_dir_of
from spark_jax.search import best_program, intensify
from spark_jax.search.rundb import RunDB
from spark_jax.stats import significance

__all__ = ["ArmRun", "DropComparison", "arm_runs", "compare_drops"]


@dataclasses.dataclass(frozen=True)
class ArmRun:
    """One finished search of an arm (scores in %, time in hours)."""

    seed: int
    selection: float
    test: float
    device_hours: float
    evaluated: int
    reevaluations: int
    preset: str = ""  # what the run recorded (run_meta): for the README's label check
    task: str = ""
    editor: str = ""
    machine: str = ""

    @property
    def drop(self) -> float:
        return self.selection - self.test

    @property
    def trainings(self) -> int:
        """Its device work in trainings: candidates and re-evaluations."""
        return self.evaluated + self.reevaluations


def _run(run_dir: pathlib.Path, seed: int) -> ArmRun | None:
    with RunDB.open(run_dir / "run.db") as db:
        if db.get_meta("finished_at") is None:
            return None
        best = best_program.best_program(db)
        final = (db.get_meta("final_test") or {}).get("programs") or {}
        state = db.get_meta(intensify.META_KEY) or {}
        seconds = sum(e["wall_seconds"] or 0.0 for e in db.evaluations())
        evaluated = db.evaluated_count(include_baseline=False)
        setting = [str(db.get_meta(key) or "") for key in ("preset", "task", "editor", "machine")]
    extra = sum(float(p.get("wall_seconds") or 0.0) for p in (state.get("programs") or {}).values())
    entry = final.get(best.program_id) if best is not None else None
    test = ((entry or {}).get("evaluation") or {}).get("ood_score")
    if best is None or best.is_seed or best.ood_score is None or test is None:
        return None
    reevaluations = len(state.get("programs") or {})
    hours = (seconds + extra) / 3600.0
    scores = (100 * best.ood_score, 100 * test, hours, evaluated, reevaluations)
    return ArmRun(seed, *scores, *setting)


def arm_runs(out: pathlib.Path) -> tuple[ArmRun, ...]:
    """The finished searches of the comparison in `out` (its first method), by seed."""
    plan = ComparePlan.from_dict(json.loads((out / PLAN_FILE).read_text(encoding="utf-8")))
    method = resolve_methods([plan.methods[0]])[0]
    found = (_run(run_dir_of(out, method, s), s) for s in plan.seeds)
    return tuple(r for r in found if r is not None)


@dataclasses.dataclass(frozen=True)
class DropComparison:
    """The drops of the two arms over the search seeds both finished."""

    seeds: tuple[int, ...]
    without: tuple[ArmRun, ...]
    with_: tuple[ArmRun, ...]
    test: significance.TaskTest
    verdict: str

    def mean(self, arm: Sequence[ArmRun], field: str) -> float:
        values = [getattr(r, field) for r in arm]
        return sum(values) / len(values) if values else float("nan")


def compare_drops(without: Sequence[ArmRun], with_: Sequence[ArmRun]) -> DropComparison:
    """Paired over common seeds: the test of drop(without) - drop(with) (positive: the
    intensified runs' reported best held up better on test)."""
    a = {r.seed: r for r in without}
    b = {r.seed: r for r in with_}
    seeds = tuple(sorted(set(a) & set(b)))
    test = significance.task_test(
        [a[s].drop for s in seeds], [b[s].drop for s in seeds], paired=True
    )
    (verdict,) = significance.verdicts([test])
    return DropComparison(
        seeds, tuple(a[s] for s in seeds), tuple(b[s] for s in seeds), test, verdict
    )

"""A budget guide: before spending, how many seeds a sequential decision at +-delta needs per
task, and what that costs on the machine the spread and the cost were measured on.

From a stored benchmark (a short pilot, e.g. `--seeds 3`, or any earlier run of the same two
programs): per task, the spread of the paired per-seed differences and the device seconds one
seed of both programs took. For each task the sequential design (`stats.sequential`) is
simulated at a true difference (the one given, else the pilot's own mean difference) with seed
noise of that task's spread, normal in shape (the pilot's few seeds tell a spread, not a shape;
`tests/test_sequential.py` checks the design under the project's residual shape too): the
chance of a decision and its kind, and the mean seeds and device hours it spends.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Sequence

import numpy as np

from spark_jax.benchmark import rounds
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.stats import sequential
from spark_jax.util import markdown

__all__ = ["GuideRow", "guide", "guide_from", "guide_lines"]

SIMS = 4000


@dataclasses.dataclass(frozen=True)
class GuideRow:
    """One task's forecast.

    Attributes:
      task, pilot_seeds: the task and the paired seeds its spread comes from.
      spread: sample standard deviation of the per-seed differences (pp; nan under 2 seeds).
      effect: the true difference simulated (pp).
      decided, win_loss, equivalent: chance of any decision / a right-signed win or loss /
        'equivalent' by the cap.
      mean_seeds: seeds the design spends on average (both programs train each).
      seed_hours: device hours of one seed of both programs (the pilot's mean).
      mean_hours: mean_seeds * seed_hours.
    """

    task: str
    pilot_seeds: int
    spread: float
    effect: float
    decided: float
    win_loss: float
    equivalent: float
    mean_seeds: float
    seed_hours: float

    @property
    def mean_hours(self) -> float:
        return self.mean_seeds * self.seed_hours


def _pilot(path: pathlib.Path):
    db_path = path / "benchmark.db" if path.is_dir() else path
    with BenchmarkDB.open_readonly(db_path) as db:
        return db.spec(), db.programs(), db.results(), db.identity()


def _task_row(task, diffs, walls, effect, design, rng) -> GuideRow:
    n = len(diffs)
    spread = float(np.std(diffs, ddof=1)) if n > 1 else math.nan
    truth = float(np.mean(diffs)) if effect is None and n else float(effect or 0.0)
    seed_hours = float(np.mean(walls)) * 2 / 3600.0 if walls else math.nan
    if not spread > 0:
        return GuideRow(task, n, spread, truth, math.nan, math.nan, math.nan, math.nan, seed_hours)
    noise = rng.standard_normal((1, 20000)) * spread  # [1, pool]
    out = sequential.simulate(np.array([truth]), noise, design, rng, SIMS)
    v = out["verdict"][:, 0]
    right = (v == (1 if truth > 0 else -1)) if truth else np.zeros_like(v, dtype=bool)
    return GuideRow(
        task, n, spread, truth, float((v != 0).mean()), float(right.mean()),
        float((v == 2).mean()), float(out["seeds"].mean()), seed_hours,
    )  # fmt: skip


def guide(
    path: str | pathlib.Path, design: sequential.Design, effect: float | None = None, seed: int = 0
) -> tuple[GuideRow, ...]:
    """Per task of the stored benchmark at `path` (a directory or its benchmark.db), the
    forecast for `design` (its `comparisons` set to the tasks compared); `effect` None: each
    task's own mean difference in the pilot."""
    spec, programs, results, identity = _pilot(pathlib.Path(path))
    try:
        return guide_from(spec, programs, results, identity, design, effect, seed=seed)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def guide_from(
    spec, programs, results, identity, design, effect=None, first_seeds=None, seed: int = 0
) -> tuple[GuideRow, ...]:
    """`guide` from a benchmark's stored parts; `first_seeds`: use only each task's first that
    many paired seeds as the pilot (a sequential run's first round)."""
    if spec.get("baseline") is None or len(programs) != 2:
        raise ValueError("the guide needs a benchmark of two programs with a baseline")
    same = {t for _, t in rounds.identical(identity, programs)}
    base = next(p for p in programs if p.label == spec["baseline"])
    other = next(p for p in programs if p is not base)
    tasks = [t for t in spec["tasks"] if t not in same]
    design = dataclasses.replace(design, comparisons=max(1, len(tasks)))
    rng = np.random.default_rng(seed)
    rows = []
    for task in tasks:
        scores = {p.key: {} for p in programs}
        walls = []
        for r in results:
            if r.task == task and r.evaluation is not None and r.program_key in scores:
                scores[r.program_key][r.seed] = 100.0 * r.evaluation.score
                walls.append(r.wall_seconds)
        common = sorted(set(scores[base.key]) & set(scores[other.key]))[:first_seeds]
        diffs = [scores[other.key][s] - scores[base.key][s] for s in common]
        rows.append(_task_row(task, diffs, walls, effect, design, rng))
    return tuple(rows)


def guide_lines(rows: Sequence[GuideRow], design: sequential.Design, machines: str) -> list[str]:
    def pct(x: float) -> str:
        return markdown.DASH if math.isnan(x) else f"{100 * x:.0f}%"

    def num(x: float, fmt: str) -> str:
        return markdown.DASH if math.isnan(x) else format(x, fmt)

    table = [
        [r.task, r.pilot_seeds, num(r.spread, ".2f"), f"{r.effect:+.2f}", pct(r.decided)]
        + [pct(r.win_loss), pct(r.equivalent), num(r.mean_seeds, ".1f"), num(r.mean_hours, ".2f")]
        for r in rows
    ]
    head = ["task", "pilot seeds", "spread (pp)", "true diff (pp)", "decided", "win/loss"]
    total = sum(r.mean_hours for r in rows if not math.isnan(r.mean_hours))
    return [
        *markdown.table([*head, "equivalent", "mean seeds", "mean device h"], table),
        "",
        f"Design: {design.seeds_per_round} seeds per round up to {design.max_seeds}, alpha "
        f"{design.alpha:g} over {design.comparisons} tasks, equivalence within "
        f"±{design.delta:g} pp; {SIMS} simulated runs per task with normal seed noise of the "
        f"pilot's spread. Expected device time in all: {total:.2f} h (the pilot's per-seed job "
        f"times, measured on {machines}).",
    ]

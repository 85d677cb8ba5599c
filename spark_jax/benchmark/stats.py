"""Numbers of a benchmark: per (program, task) spread over seeds, and paired comparisons.

Scores are OOD accuracies in percent. A task's cell is the mean and the sample standard
deviation over the seeds that trained (failed seeds are counted apart, never as zeros).
A paired comparison against a baseline counts, per task, a win or a loss only when the
difference of the means exceeds the two cells' combined spread (sqrt(std_a^2 + std_b^2));
anything closer is a tie. The mean difference over tasks gets a 95% bootstrap interval that
resamples tasks and, within each task, each program's seeds.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Sequence

import numpy as np

from spark_jax.util import labels

__all__ = [
    "Cell",
    "PairedComparison",
    "cells_of",
    "cells_of_results",
    "compare",
    "machines_of_results",
    "mean_over",
]

_BOOTSTRAP_SAMPLES = 4000


@dataclasses.dataclass(frozen=True)
class Cell:
    """One program on one task.

    Attributes:
      scores: OOD accuracy (%) of each seed that trained, in seed order.
      failures: seeds whose evaluation failed (error types).
    """

    scores: tuple[float, ...]
    failures: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores)) if self.scores else math.nan

    @property
    def std(self) -> float:
        """Sample standard deviation (0 with one seed: no spread is known)."""
        return float(np.std(self.scores, ddof=1)) if self.n > 1 else 0.0


@dataclasses.dataclass(frozen=True)
class PairedComparison:
    """A program against the baseline over the tasks both have scores on.

    Attributes:
      program, baseline: labels. tasks: the tasks compared.
      wins, ties, losses: per-task outcomes (see the module's rule).
      mean_diff: mean over tasks of (program mean - baseline mean), in pp.
      ci_low, ci_high: 95% bootstrap interval of mean_diff (nan with fewer than 2 tasks
        or no seed spread to resample).
    """

    program: str
    baseline: str
    tasks: tuple[str, ...]
    wins: int
    ties: int
    losses: int
    mean_diff: float
    ci_low: float
    ci_high: float


def cells_of(
    rows: Sequence[tuple[str, str, int, float | None, str | None]],
) -> dict[tuple[str, str], Cell]:
    """(label, task) -> Cell from (label, task, seed, ood fraction or None, error type)."""
    scores: dict[tuple[str, str], list[tuple[int, float]]] = {}
    failures: dict[tuple[str, str], list[str]] = {}
    for label, task, seed, ood, error_type in rows:
        key = (label, task)
        scores.setdefault(key, [])
        if ood is None:
            failures.setdefault(key, []).append(error_type or "error")
        else:
            scores[key].append((seed, 100.0 * float(ood)))
    return {
        key: Cell(tuple(v for _, v in sorted(s)), tuple(failures.get(key, ())))
        for key, s in scores.items()
    }


def cells_of_results(programs: Sequence, results: Sequence) -> dict[tuple[str, str], Cell]:
    """`cells_of` a benchmark's stored programs and results (`BenchmarkDB.programs()` and
    `.results()`): each result under its program's label."""
    labels = {p.key: p.label for p in programs}
    return cells_of(
        [
            (
                labels[r.program_key],
                r.task,
                r.seed,
                None if r.evaluation is None else r.evaluation.ood_score,
                r.error_type,
            )
            for r in results
        ]
    )


def machines_of_results(results: Sequence) -> str:
    """Where a benchmark's landed jobs were measured, as each job recorded it (not where the
    report is written): one label, with job counts when they ran on several machines."""
    return labels.machines_label(r.evaluation.machine for r in results if r.evaluation)


def mean_over(cells: Mapping[tuple[str, str], Cell], label: str, tasks: Sequence[str]) -> float:
    """Mean of `label`'s per-task means over `tasks` (nan unless every task has a score)."""
    means = [cells[(label, t)].mean if (label, t) in cells else math.nan for t in tasks]
    return float(np.mean(means)) if means and not any(math.isnan(m) for m in means) else math.nan


def compare(
    cells: Mapping[tuple[str, str], Cell],
    program: str,
    baseline: str,
    tasks: Sequence[str],
    seed: int = 0,
) -> PairedComparison:
    """`program` vs `baseline` over the tasks where both have at least one score."""
    both = tuple(
        t
        for t in tasks
        if cells.get((program, t), Cell(())).n and cells.get((baseline, t), Cell(())).n
    )
    wins = ties = losses = 0
    diffs = []
    for t in both:
        a, b = cells[(program, t)], cells[(baseline, t)]
        diff = a.mean - b.mean
        diffs.append(diff)
        if abs(diff) <= math.hypot(a.std, b.std):
            ties += 1
        elif diff > 0:
            wins += 1
        else:
            losses += 1
    mean_diff = float(np.mean(diffs)) if diffs else math.nan
    low, high = _bootstrap(cells, program, baseline, both, seed)
    return PairedComparison(program, baseline, both, wins, ties, losses, mean_diff, low, high)


def _bootstrap(cells, program, baseline, tasks, seed) -> tuple[float, float]:
    spread = any(cells[(p, t)].n > 1 for t in tasks for p in (program, baseline))
    if len(tasks) < 2 and not spread:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    n_tasks, samples = len(tasks), _BOOTSTRAP_SAMPLES
    # Each task's resampled mean difference, one per bootstrap sample: [T, S].
    diffs = np.stack(
        [
            rng.choice(cells[(program, t)].scores, size=(samples, cells[(program, t)].n)).mean(1)
            - rng.choice(cells[(baseline, t)].scores, size=(samples, cells[(baseline, t)].n)).mean(
                1
            )
            for t in tasks
        ]
    )
    picks = rng.integers(0, n_tasks, size=(samples, n_tasks))  # [S, T] resampled tasks
    out = diffs[picks, np.arange(samples)[:, None]].mean(axis=1)  # [S]
    low, high = np.percentile(out, [2.5, 97.5])
    return float(low), float(high)

"""Numbers of a benchmark: per (program, task) spread over seeds, and paired comparisons.

Scores are OOD accuracies in percent. A task's cell is the mean and the sample standard
deviation over the seeds that trained (failed seeds are counted apart, never as zeros).
A comparison against a baseline tests each task with `report.significance` (cannot tell
under 2 seeds a side; exact permutation up to 8 seeds, Welch's t beyond; paired when both
cells hold the same seeds) and applies Holm-Bonferroni over every (program, task) test of
the table; the mean difference over the tasks gets a t interval from the seeds within the
tasks (the tasks are a fixed set, never resampled).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Collection, Mapping, Sequence

import numpy as np

from spark_jax.stats import significance
from spark_jax.util import labels

__all__ = [
    "IDENTICAL",
    "Cell",
    "PairedComparison",
    "TaskVerdict",
    "cells_of",
    "cells_of_results",
    "compare",
    "compare_table",
    "machines_of_results",
    "mean_over",
    "table_mdd",
]


@dataclasses.dataclass(frozen=True)
class Cell:
    """One program on one task.

    Attributes:
      scores: OOD accuracy (%) of each seed that trained, in seed order.
      failures: seeds whose evaluation failed (error types).
      seeds: the seed of each score, in the same order (empty: not known).
    """

    scores: tuple[float, ...]
    failures: tuple[str, ...] = ()
    seeds: tuple[int, ...] = ()

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
class TaskVerdict:
    """One task of a comparison: its test, Holm-adjusted p (nan untested) and verdict."""

    task: str
    test: significance.TaskTest
    p_holm: float
    verdict: str


@dataclasses.dataclass(frozen=True)
class PairedComparison:
    """A program against the baseline over the tasks both have scores on.

    Attributes:
      program, baseline: labels. alpha: the table's family-wise error rate.
      per_task: one verdict per task compared (win / loss / cannot tell).
      mean_diff: mean over tasks of (program mean - baseline mean), in pp.
      interval: 95% t interval of mean_diff from the seeds within the tasks; None when a
        task has fewer than 2 seeds on a side (it cannot be computed).
    """

    program: str
    baseline: str
    alpha: float
    per_task: tuple[TaskVerdict, ...]
    mean_diff: float
    interval: significance.Interval | None

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(v.task for v in self.per_task)

    def count(self, verdict: str) -> int:
        return sum(v.verdict == verdict for v in self.per_task)

    @property
    def wins(self) -> int:
        return self.count(significance.WIN)

    @property
    def losses(self) -> int:
        return self.count(significance.LOSS)

    @property
    def cannot_tell(self) -> int:
        return self.count(significance.CANNOT_TELL)

    @property
    def ci_low(self) -> float:
        return math.nan if self.interval is None else self.interval.low

    @property
    def ci_high(self) -> float:
        return math.nan if self.interval is None else self.interval.high


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
        key: Cell(
            tuple(v for _, v in sorted(s)),
            tuple(failures.get(key, ())),
            tuple(seed for seed, _ in sorted(s)),
        )
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
                None if r.evaluation is None else r.evaluation.score,
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


def _task_test(a: Cell, b: Cell) -> significance.TaskTest:
    paired = bool(a.seeds) and a.seeds == b.seeds and len(a.seeds) == a.n
    return significance.task_test(a.scores, b.scores, paired=paired)


IDENTICAL = "identical"


def compare_table(
    cells: Mapping[tuple[str, str], Cell],
    programs: Sequence[str],
    baseline: str,
    tasks: Sequence[str],
    alpha: float = significance.DEFAULT_ALPHA,
    identical: Collection[tuple[str, str]] = (),
) -> tuple[PairedComparison, ...]:
    """Each of `programs` vs `baseline` over the tasks where both have at least one score;
    Holm-Bonferroni over every (program, task) test of the table, at family-wise `alpha`.
    Pairs in `identical` ((program, task) shown to compute the baseline's function there) are
    `identical` with no test: they are not in Holm's family."""
    empty = Cell(())
    found = []
    for program in programs:
        both = [
            t
            for t in tasks
            if cells.get((program, t), empty).n and cells.get((baseline, t), empty).n
        ]
        found.append(
            [
                (
                    t,
                    _task_test(cells[(program, t)], cells[(baseline, t)]),
                    (program, t) in identical,
                )
                for t in both
            ]
        )
    flat = [test for row in found for _, test, same in row if not same]
    adjusted = iter(significance.holm([t.p for t in flat]))
    words = iter(significance.verdicts(flat, alpha))
    untested = significance.TaskTest(0, 0, True, None, 0.0, math.nan)
    out = []
    for program, row in zip(programs, found):
        per_task = tuple(
            TaskVerdict(t, untested, math.nan, IDENTICAL)
            if same
            else TaskVerdict(t, test, next(adjusted), next(words))
            for t, test, same in row
        )
        mean, interval = significance.mean_difference([test for _, test, _ in row])
        out.append(PairedComparison(program, baseline, alpha, per_task, mean, interval))
    return tuple(out)


def compare(
    cells: Mapping[tuple[str, str], Cell],
    program: str,
    baseline: str,
    tasks: Sequence[str],
    alpha: float = significance.DEFAULT_ALPHA,
) -> PairedComparison:
    """`program` vs `baseline` alone (a table of one row: Holm over its tasks)."""
    return compare_table(cells, [program], baseline, tasks, alpha)[0]


def table_mdd(comparisons: Sequence[PairedComparison]) -> float:
    """The table's minimal detectable per-task difference in pp (`significance.MDD_FORMULA`;
    nan when no task could be tested)."""
    tests = [v.test for c in comparisons for v in c.per_task]
    alpha = comparisons[0].alpha if comparisons else significance.DEFAULT_ALPHA
    return significance.mdd(tests, alpha)

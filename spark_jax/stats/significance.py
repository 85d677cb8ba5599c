"""Small-sample verdicts shared by the search report, `benchmark` and `compare`.

Distributions and the permutation tests are scipy.stats' (`t`, `norm`, `permutation_test`);
what this module adds is the project's choices: which test at which seed count, when a test is
not run at all, Holm over a table, the interval over a fixed task set and the MDD.

One comparison is program A against program B on one task, from per-seed scores:

- fewer than 2 seeds on either side: no test; the verdict is `cannot tell` (one seed has no
  spread, so no difference can be told from seed noise);
- at most 8 seeds per side: an exact permutation test of the difference of means, over every
  relabelling of the pooled scores (unpaired) or every sign flip of the per-seed differences
  (paired);
- more seeds: Welch's t-test (unpaired) or the paired t-test;
- paired exactly when both programs were trained with the same seeds.

Across the comparisons of one table, Holm-Bonferroni holds the family-wise error rate at
`alpha` (default 0.05): a task is a `win` or a `loss` only when its Holm-adjusted p-value is at
most alpha; otherwise, as with too few seeds, the verdict is `cannot tell` (a difference the
data cannot separate from seed noise, not evidence of equality).

The mean difference over a fixed set of tasks gets a t interval from the seeds within the
tasks (tasks are not resampled): Var = sum of the per-task variances of the difference / T^2,
degrees of freedom by Welch-Satterthwaite; with a task under 2 seeds it cannot be computed.

The minimal detectable difference at 80% power (normal approximation) is
MDD = (z_{1-alpha/(2m)} + z_{power}) * SE, with SE the standard error of a task's difference
(root mean square over the tested tasks) and m the tests in the family: Holm's first threshold.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Sequence

import numpy as np
from scipy import stats as scipy_stats

__all__ = [
    "CANNOT_TELL",
    "DEFAULT_ALPHA",
    "DEFAULT_POWER",
    "EXACT_MAX_N",
    "LOSS",
    "MDD_FORMULA",
    "WIN",
    "Interval",
    "TaskTest",
    "holm",
    "floor_note",
    "mdd",
    "mean_difference",
    "min_exact_p",
    "task_test",
    "verdicts",
]

CANNOT_TELL = "cannot tell"
WIN, LOSS = "win", "loss"
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
EXACT_MAX_N = 8  # per side: exact permutation test up to here, t-tests beyond
MDD_FORMULA = (
    "MDD = (z_{1-alpha/(2m)} + z_{0.80}) * SE (normal approximation, 80% power, Holm's first "
    "threshold alpha/m over the m tests of the table); SE = sqrt(s_a^2/n_a + s_b^2/n_b) "
    "(paired: s_d/sqrt(n)), root mean square over the tested tasks"
)


@dataclasses.dataclass(frozen=True)
class TaskTest:
    """One task's test of A - B.

    Attributes:
      n_a, n_b: seeds with a score on each side.
      paired: both sides trained with the same seeds (tested on per-seed differences).
      method: 'exact permutation', 'exact sign-flip', "Welch's t", 'paired t', or None when
        untested (fewer than 2 seeds on a side).
      diff: mean(A) - mean(B) (nan without a score on a side).
      p: two-sided p-value, nan when untested.
      parts: (variance, degrees of freedom) pieces of Var(diff): one per side (unpaired) or
        one for the differences (paired); empty when untested.
    """

    n_a: int
    n_b: int
    paired: bool
    method: str | None
    diff: float
    p: float
    parts: tuple[tuple[float, int], ...] = ()

    @property
    def tested(self) -> bool:
        return self.method is not None

    @property
    def se(self) -> float:
        """Standard error of `diff` (nan when untested)."""
        return math.sqrt(sum(v for v, _ in self.parts)) if self.parts else math.nan


def _var(xs: Sequence[float]) -> float:
    return statistics.variance(xs) if len(xs) > 1 else math.nan


def _ws_dof(parts: Sequence[tuple[float, int]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variance pieces (nan if all 0)."""
    total = sum(v for v, _ in parts)
    denom = sum(v * v / dof for v, dof in parts)
    return total * total / denom if denom > 0 else math.nan


def _t_p(diff: float, parts: Sequence[tuple[float, int]]) -> float:
    se = math.sqrt(sum(v for v, _ in parts))
    if se == 0.0:  # no spread on either side: any difference is exact
        return 1.0 if diff == 0.0 else 0.0
    return float(2.0 * scipy_stats.t.sf(abs(diff / se), _ws_dof(parts)))


def _abs_mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))


def _abs_mean_paired(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(np.mean(x - y, axis=axis))


def _exact_p(a: Sequence[float], b: Sequence[float], paired: bool) -> float:
    """Two-sided exact p of |mean difference| over every relabelling (unpaired) or every sign
    flip of the per-seed differences (paired): scipy's permutation test, enumerated in full."""
    result = scipy_stats.permutation_test(
        (np.asarray(a), np.asarray(b)),
        _abs_mean_paired if paired else _abs_mean_difference,
        permutation_type="samples" if paired else "independent",
        vectorized=True,
        n_resamples=np.inf,
        alternative="greater",
    )
    return float(result.pvalue)


def task_test(a: Sequence[float], b: Sequence[float], paired: bool = False) -> TaskTest:
    """Tests A - B on one task from per-seed scores (paired: `a[i]` and `b[i]` share a seed).

    Raises ValueError when `paired` is asked of sides of different lengths.
    """
    a, b = [float(x) for x in a], [float(x) for x in b]
    if paired and len(a) != len(b):
        raise ValueError(f"a paired test needs the same seeds on both sides ({len(a)} vs {len(b)})")
    diff = statistics.fmean(a) - statistics.fmean(b) if a and b else math.nan
    if len(a) < 2 or len(b) < 2:
        return TaskTest(len(a), len(b), paired, None, diff, math.nan)
    exact = max(len(a), len(b)) <= EXACT_MAX_N
    if paired:
        d = [x - y for x, y in zip(a, b)]
        parts = ((_var(d) / len(d), len(d) - 1),)
        method, p = ("exact sign-flip", _exact_p(a, b, True)) if exact else ("paired t", None)
    else:
        parts = ((_var(a) / len(a), len(a) - 1), (_var(b) / len(b), len(b) - 1))
        method, p = ("exact permutation", _exact_p(a, b, False)) if exact else ("Welch's t", None)
    p = _t_p(diff, parts) if p is None else p
    return TaskTest(len(a), len(b), paired, method, diff, p, parts)


def holm(pvalues: Sequence[float]) -> tuple[float, ...]:
    """Holm-Bonferroni adjusted p-values, in input order (nan entries: untested, kept nan and
    left out of the family)."""
    tested = sorted((p, i) for i, p in enumerate(pvalues) if not math.isnan(p))
    m, running = len(tested), 0.0
    out = [math.nan] * len(pvalues)
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return tuple(out)


def verdicts(tests: Sequence[TaskTest], alpha: float = DEFAULT_ALPHA) -> tuple[str, ...]:
    """`win`/`loss` where the Holm-adjusted p (over `tests`, the table's family) is at most
    `alpha`; `cannot tell` everywhere else (untested, or not significant)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1) (got {alpha})")
    adjusted = holm([t.p for t in tests])
    return tuple(
        (WIN if t.diff > 0 else LOSS) if t.tested and q <= alpha and t.diff != 0 else CANNOT_TELL
        for t, q in zip(tests, adjusted)
    )


@dataclasses.dataclass(frozen=True)
class Interval:
    """A t interval: [low, high] at `level`, with Welch-Satterthwaite `dof` (inf: no spread)."""

    low: float
    high: float
    level: float
    dof: float

    def text(self, digits: int = 2) -> str:
        spread = " (no spread observed)" if math.isinf(self.dof) else ""
        return f"[{self.low:+.{digits}f}, {self.high:+.{digits}f}]{spread}"


def mean_difference(
    tests: Sequence[TaskTest], level: float = 0.95
) -> tuple[float, Interval | None]:
    """The mean of the per-task differences over a fixed task set and its t interval from the
    seeds within the tasks; the interval is None when a task is untested (under 2 seeds)."""
    if not tests:
        return math.nan, None
    mean = statistics.fmean(t.diff for t in tests)
    if not all(t.tested for t in tests):
        return mean, None
    parts = [piece for t in tests for piece in t.parts]
    se = math.sqrt(sum(v for v, _ in parts)) / len(tests)
    dof = _ws_dof(parts)
    if math.isnan(dof):  # no spread anywhere: the mean is exact
        return mean, Interval(mean, mean, level, math.inf)
    half = float(scipy_stats.t.ppf(0.5 + level / 2.0, dof)) * se
    return mean, Interval(mean - half, mean + half, level, dof)


def mdd(
    tests: Sequence[TaskTest], alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER
) -> float:
    """Minimal detectable per-task difference of a table (see `MDD_FORMULA`); nan when no
    task is tested (no spread known)."""
    tested = [t for t in tests if t.tested]
    if not tested:
        return math.nan
    se = math.sqrt(statistics.fmean(t.se**2 for t in tested))
    z = scipy_stats.norm.ppf
    return float(z(1.0 - alpha / (2 * len(tested))) + z(power)) * se


def min_exact_p(n_a: int, n_b: int, paired: bool) -> float:
    """The smallest two-sided p-value the exact test can return at these seed counts (nan
    beyond the exact range or under 2 seeds): a floor no difference can get below."""
    if min(n_a, n_b) < 2 or max(n_a, n_b) > EXACT_MAX_N:
        return math.nan
    if paired:
        return 2.0 / 2**n_a
    return 2.0 / math.comb(n_a + n_b, n_a) if n_a == n_b else 1.0 / math.comb(n_a + n_b, n_a)


def floor_note(tests: Sequence[TaskTest], alpha: float = DEFAULT_ALPHA) -> str | None:
    """A sentence when the exact tests' smallest attainable p exceeds Holm's first threshold
    alpha/m (no difference could be significant at these seed counts); None otherwise."""
    tested = [t for t in tests if t.tested]
    floors = [min_exact_p(t.n_a, t.n_b, t.paired) for t in tested]
    floor = min((f for f in floors if not math.isnan(f)), default=math.nan)
    threshold = alpha / max(len(tested), 1)
    if math.isnan(floor) or floor <= threshold:
        return None
    return (
        f"At these seed counts the exact test's smallest possible p is {floor:.3g}, above "
        f"Holm's first threshold {threshold:.3g}: no comparison can be a win or a loss, "
        "whatever the difference; more seeds are needed."
    )

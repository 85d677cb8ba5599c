"""Decisions with seeds added in rounds: win, loss, equivalent within +-delta, or cannot tell.

A comparison (program against baseline on one task, or method against reference) gets paired
per-seed differences d_1, d_2, ... (in percentage points), K more after each round. At each
*look* (the end of a round with at least `min_look_seeds` differences) it builds a two-sided
t interval for the mean difference and stops at the first look where the interval decides:

- **win** / **loss**: the interval lies above / below 0;
- **equivalent**: the interval lies inside (-delta, +delta) (two one-sided tests, TOST);
- otherwise it goes on, and at the seed cap it is **cannot tell**, with the minimal detectable
  difference of the last look.

Why it stays valid under this optional stopping (a group-sequential design, Jennison &
Turnbull 2000, ch. 2 and 7; the alpha-spending function of Lan & DeMets 1983, Pocock type):
look k may spend alpha_k = alpha * (f(t_k) - f(t_{k-1})) with f(t) = ln(1 + (e - 1) t) and
t_k = n_k / cap the share of the cap's seeds seen. The looks are joined by the union bound
(Bonferroni) rather than by the joint distribution of the statistics, so the design holds for
any per-look interval that holds on its own: P(some look's interval misses the true mean) <=
sum_k alpha_k = alpha, whatever the stopping rule, and a claim (win, loss or equivalent) read
off an interval that covers the true mean is never false. Over the m comparisons of a table
the intervals take alpha / m each (Bonferroni, Holm's first step): Holm has no interval form,
and equivalence claims need intervals, so one union bound covers every kind of claim, and the
family-wise rate of false claims of any kind is at most alpha. Pairs proven identical before
training (`evaluation.identity`) are decided without data and are not in the family.

The per-look interval is Student's t (scipy.stats): exact for normal seed noise, and shown by
`simulate` (in the suite, with noise resampled from the project's own per-seed data) not to
exceed alpha with the skewed, heavy-tailed noise of real trainings. The exact sign-flip test of
the fixed-seed mode cannot be used here: at 6 seeds its smallest p is 2/64, far above any
per-look threshold.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Sequence

import numpy as np
from scipy import stats as scipy_stats

__all__ = [
    "CANNOT_TELL",
    "DEFAULT_ALPHA",
    "DEFAULT_DELTA",
    "DEFAULT_MAX_SEEDS",
    "DEFAULT_SEEDS_PER_ROUND",
    "EQUIVALENT",
    "IDENTICAL",
    "LOSS",
    "MIN_LOOK_SEEDS",
    "PENDING",
    "WIN",
    "Decision",
    "Design",
    "decide",
    "decide_paired",
    "fixed_power",
    "simulate",
]

WIN, LOSS, EQUIVALENT, IDENTICAL = "win", "loss", "equivalent", "identical"
CANNOT_TELL, PENDING = "cannot tell", "pending"
DEFAULT_ALPHA = 0.05
DEFAULT_DELTA = (
    5.0  # pp: the smallest difference in OOD accuracy the default calls one that matters
)
DEFAULT_SEEDS_PER_ROUND = 3
DEFAULT_MAX_SEEDS = 12
MIN_LOOK_SEEDS = 6  # below this a t interval at a per-look level of ~1e-3 is too wide to decide
POWER = 0.8


@dataclasses.dataclass(frozen=True)
class Design:
    """A sequential design.

    Attributes:
      alpha: family-wise rate of false claims (of any kind) over the table.
      delta: equivalence margin in pp (claims 'equivalent' when the interval is inside +-delta).
      seeds_per_round: K, the seeds added to an undecided comparison per round.
      max_seeds: the cap; a comparison still undecided there is 'cannot tell'.
      comparisons: m, the comparisons of the table sharing alpha (identical pairs left out).
      min_look_seeds: the first look that spends alpha needs this many seeds.
      futility: stop early with 'cannot tell' at a look before the cap when |mean| is below
        this share of the interval half-width projected to the cap (the current spread, the
        cap's level) and that interval could not fit inside +-delta either: a decision there
        is out of reach (non-binding: it only removes claims, so alpha still holds); 0: never.
    """

    alpha: float = DEFAULT_ALPHA
    delta: float = DEFAULT_DELTA
    seeds_per_round: int = DEFAULT_SEEDS_PER_ROUND
    max_seeds: int = DEFAULT_MAX_SEEDS
    comparisons: int = 1
    min_look_seeds: int = MIN_LOOK_SEEDS
    futility: float = 0.75

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1) (got {self.alpha})")
        if not self.delta > 0:
            raise ValueError(f"delta must be > 0 pp (got {self.delta})")
        if self.seeds_per_round < 1:
            raise ValueError(f"seeds per round must be >= 1 (got {self.seeds_per_round})")
        if self.max_seeds < max(2, self.min_look_seeds):
            raise ValueError(
                f"the seed cap must be >= {max(2, self.min_look_seeds)} (got {self.max_seeds})"
            )
        if self.comparisons < 1:
            raise ValueError(f"a table has at least 1 comparison (got {self.comparisons})")

    @property
    def looks(self) -> tuple[int, ...]:
        """Seed counts at the ends of rounds, up to the cap (the cap always a look)."""
        ends = list(range(self.seeds_per_round, self.max_seeds, self.seeds_per_round))
        return (*ends, self.max_seeds)

    def cap_half_width(self, sd: np.ndarray | float) -> np.ndarray | float:
        """The t interval's half-width at the cap's look for a per-seed spread `sd`."""
        a = self.look_alpha(self.max_seeds)
        t_crit = float(scipy_stats.t.ppf(1.0 - a / 2.0, self.max_seeds - 1))
        return t_crit * sd / math.sqrt(self.max_seeds)

    def futile(self, mean, sd):
        """Whether a comparison at (mean, sd) before the cap stops as out of reach."""
        h = self.cap_half_width(sd)
        return (np.abs(mean) < self.futility * h) & (h > self.delta * 0.999)

    def next_round(self, done: int) -> range:
        """Indices (into the planned seeds) of the round after `done` seeds: empty at the cap."""
        upcoming = [n for n in self.looks if n > done]
        return range(done, upcoming[0]) if upcoming else range(0)

    @property
    def spending_looks(self) -> tuple[int, ...]:
        return tuple(n for n in self.looks if n >= self.min_look_seeds)

    def look_alpha(self, n: int) -> float:
        """Alpha spent at the look with n seeds, per comparison (0 at a look that spends none)."""
        spending = self.spending_looks
        if n not in spending:
            return 0.0
        k = spending.index(n)
        before = _pocock(spending[k - 1] / self.max_seeds) if k else 0.0
        return self.alpha * (_pocock(n / self.max_seeds) - before) / self.comparisons


def _pocock(t: float) -> float:
    """Lan-DeMets spending function of Pocock type, as a share of alpha: ln(1 + (e - 1) t)."""
    return math.log1p((math.e - 1.0) * t)


@dataclasses.dataclass(frozen=True)
class Decision:
    """One comparison's state after the looks its data allow.

    Attributes:
      verdict: win / loss / equivalent / cannot tell (at the cap) / pending (more seeds due).
      n: differences seen at the deciding (or last) look.
      diff: their mean (pp). low, high: the interval at that look (nan before a look).
      level: the interval's confidence level (1 - alpha spent at that look).
      mdd: minimal detectable difference at the last look (pp), for 'cannot tell'.
      within_delta: the interval lies inside +-delta (a win or loss can also be small).
    """

    verdict: str
    n: int
    diff: float
    low: float = math.nan
    high: float = math.nan
    level: float = math.nan
    mdd: float = math.nan
    within_delta: bool = False

    @property
    def decided(self) -> bool:
        return self.verdict not in (PENDING, CANNOT_TELL)


def _interval(d: np.ndarray, a: float) -> tuple[float, float, float]:
    """(mean, half-width, mdd) of a two-sided 1 - a t interval of d's mean."""
    n, mean = len(d), float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    t_crit = float(scipy_stats.t.ppf(1.0 - a / 2.0, n - 1))
    se = sd / math.sqrt(n)
    mdd = (t_crit + float(scipy_stats.t.ppf(POWER, n - 1))) * se
    return mean, t_crit * se, mdd


def decide(differences: Sequence[float], design: Design) -> Decision:
    """The comparison's decision from its paired differences in seed order (A - B, pp): the
    looks are taken in order at the design's seed counts, the first deciding one stops it."""
    d_all = np.asarray(differences, dtype=float)
    last: Decision | None = None
    for n in design.looks:
        if len(d_all) < n:
            break
        a = design.look_alpha(n)
        if a <= 0.0:
            last = Decision(PENDING, n, float(np.mean(d_all[:n])))
            continue
        mean, half, mdd = _interval(d_all[:n], a)
        low, high = mean - half, mean + half
        inside = -design.delta < low and high < design.delta
        verdict = WIN if low > 0 else LOSS if high < 0 else EQUIVALENT if inside else PENDING
        last = Decision(verdict, n, mean, low, high, 1.0 - a, mdd, inside)
        if verdict != PENDING:
            return last
        if n < design.max_seeds and design.futile(mean, float(np.std(d_all[:n], ddof=1))):
            return dataclasses.replace(last, verdict=CANNOT_TELL)
    if last is None:
        mean = float(np.mean(d_all)) if len(d_all) else math.nan
        return Decision(PENDING, len(d_all), mean)
    if last.n == design.max_seeds:
        return dataclasses.replace(last, verdict=CANNOT_TELL)
    return last


def decide_paired(
    mine: Mapping[int, float | None],
    theirs: Mapping[int, float | None],
    seeds: Sequence[int],
    design: Design,
) -> tuple[Decision, int]:
    """(decision, seeds both sides have) of A - B from per-seed scores: the planned `seeds` in
    order up to the first one missing on a side (a None score landed but failed: it counts as
    a seed, gives no difference); pending with every planned seed in is `cannot tell`."""
    prefix = 0
    for seed in seeds:
        if seed not in mine or seed not in theirs:
            break
        prefix += 1
    pairs = [(mine[s], theirs[s]) for s in seeds[:prefix]]
    decision = decide([a - b for a, b in pairs if a is not None and b is not None], design)
    if decision.verdict == PENDING and prefix >= len(seeds):
        decision = dataclasses.replace(decision, verdict=CANNOT_TELL)
    return decision, prefix


def simulate(
    true_diffs: np.ndarray, noise: np.ndarray, design: Design, rng: np.random.Generator, sims: int
) -> dict[str, np.ndarray]:
    """`sims` simulated tables of m = len(true_diffs) comparisons under the design, each seed's
    difference drawn as true_diff + noise, noise resampled (with replacement) from that
    comparison's row of `noise` (centred per-seed differences, pp). Vectorised, no training.

    Returns arrays of shape [sims, m]: 'verdict' (0 pending/cannot tell, 1 win, -1 loss,
    2 equivalent) and 'seeds' (the seeds each comparison used)."""
    m, cap = len(true_diffs), design.max_seeds
    d = _draws(true_diffs, noise, cap, rng, sims)  # [S, m, cap]
    verdict = np.zeros((sims, m), dtype=int)
    seeds = np.full((sims, m), cap, dtype=int)
    open_ = np.ones((sims, m), dtype=bool)
    for n in design.looks:
        a = design.look_alpha(n)
        if a <= 0.0:
            continue
        x = d[:, :, :n]
        mean = x.mean(axis=2)
        se = x.std(axis=2, ddof=1) / math.sqrt(n)
        half = float(scipy_stats.t.ppf(1.0 - a / 2.0, n - 1)) * se
        low, high = mean - half, mean + half
        now = np.where(low > 0, 1, np.where(high < 0, -1, 0))
        now = np.where((now == 0) & (low > -design.delta) & (high < design.delta), 2, now)
        hit = open_ & (now != 0)
        verdict[hit], seeds[hit] = now[hit], n
        open_ &= ~hit
        if n < cap:
            stop = open_ & design.futile(mean, x.std(axis=2, ddof=1))
            seeds[stop] = n
            open_ &= ~stop
    return {"verdict": verdict, "seeds": seeds}


def _draws(true_diffs, noise, n: int, rng, sims: int) -> np.ndarray:
    """[sims, m, n] per-seed differences: true_diff + noise drawn with replacement from each
    comparison's row of `noise` [m, pool]."""
    m = len(true_diffs)
    assert noise.ndim == 2 and noise.shape[0] == m, noise.shape  # [m, pool]
    picks = rng.integers(0, noise.shape[1], size=(sims, m, n))  # [S, m, n]
    pool = np.broadcast_to(noise[None], (sims, m, noise.shape[1]))
    return true_diffs[None, :, None] + np.take_along_axis(pool, picks, axis=2)


def fixed_power(
    true_diffs: np.ndarray,
    noise: np.ndarray,
    n: int,
    alpha: float,
    rng: np.random.Generator,
    sims: int,
) -> np.ndarray:
    """Per comparison, the share of `sims` fixed-n designs (a paired t test at alpha / m, one
    look, the same noise model as `simulate`) that claim the right sign: shape [m]."""
    m = len(true_diffs)
    d = _draws(true_diffs, noise, n, rng, sims)  # [S, m, n]
    mean, se = d.mean(axis=2), d.std(axis=2, ddof=1) / math.sqrt(n)
    t_crit = float(scipy_stats.t.ppf(1.0 - alpha / m / 2.0, n - 1))
    right = np.sign(true_diffs)[None, :] * mean / np.where(se > 0, se, np.inf) > t_crit
    return right.mean(axis=0)

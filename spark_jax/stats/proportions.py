"""Rates of successes in n trials: the Wilson score interval and Fisher's exact test.

Both from scipy.stats (`binomtest(...).proportion_ci(method="wilson")`, `fisher_exact`); this
module keeps the project's conventions around them: an empty sample's interval is (0, 1), the
interval is exactly 0 or 1 at the ends, and the odds ratio is inf or nan where a cell is 0.
"""

from __future__ import annotations

import dataclasses
import math

from scipy import stats as scipy_stats

__all__ = ["Z95", "FisherTest", "fisher_exact", "wilson"]

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of successes/n ((0.0, 1.0) for n == 0)."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n (got {successes} of {n})")
    if n == 0:
        return 0.0, 1.0
    level = float(scipy_stats.norm.cdf(z) - scipy_stats.norm.cdf(-z))
    ci = scipy_stats.binomtest(successes, n).proportion_ci(level, method="wilson")
    centre_lo, centre_hi = float(ci.low), float(ci.high)
    lo = 0.0 if successes == 0 else max(0.0, centre_lo)  # exact at the ends (no rounding)
    hi = 1.0 if successes == n else min(1.0, centre_hi)
    return lo, hi


@dataclasses.dataclass(frozen=True)
class FisherTest:
    """a/n_a against b/n_b: the odds ratio (inf or nan where a cell is 0) and the exact
    two-sided p-value (the probability, with the margins fixed, of a table as likely as the
    observed one or less)."""

    a: int
    n_a: int
    b: int
    n_b: int
    odds_ratio: float
    p_value: float


def fisher_exact(a: int, n_a: int, b: int, n_b: int) -> FisherTest:
    """Fisher's exact test of the 2x2 table [[a, n_a - a], [b, n_b - b]], two-sided."""
    if not (0 <= a <= n_a and 0 <= b <= n_b):
        raise ValueError(f"need 0 <= a <= n_a and 0 <= b <= n_b (got {a}/{n_a}, {b}/{n_b})")
    table = [[a, n_a - a], [b, n_b - b]]
    p = float(scipy_stats.fisher_exact(table, alternative="two-sided").pvalue) if n_a + n_b else 1.0
    fa, fb = a * (n_b - b), (n_a - a) * b
    odds = fa / fb if fb else (math.inf if fa else math.nan)
    return FisherTest(a, n_a, b, n_b, odds, p)

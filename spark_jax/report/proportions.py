"""Rates of successes in n trials: the Wilson score interval and Fisher's exact test.

Both exact and dependency-free: `fisher_exact` sums hypergeometric probabilities in
integer arithmetic (math.comb), so its two-sided p-value has no rounding tolerance.
"""

from __future__ import annotations

import dataclasses
import math

__all__ = ["Z95", "FisherTest", "fisher_exact", "wilson"]

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of successes/n ((0.0, 1.0) for n == 0)."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n (got {successes} of {n})")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    lo = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends (no rounding)
    hi = 1.0 if successes == n else min(1.0, centre + half)
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
    col = a + b  # successes in both rows: the margin held fixed
    lo, hi = max(0, col - n_b), min(n_a, col)

    def weight(x: int) -> int:  # C(n_a, x) C(n_b, col - x): proportional to P(x)
        return math.comb(n_a, x) * math.comb(n_b, col - x)

    observed = weight(a)
    tail = sum(w for w in (weight(x) for x in range(lo, hi + 1)) if w <= observed)
    total = math.comb(n_a + n_b, col)
    p = min(1.0, tail / total) if total else 1.0
    fa, fb = a * (n_b - b), (n_a - a) * b
    odds = fa / fb if fb else (math.inf if fa else math.nan)
    return FisherTest(a, n_a, b, n_b, odds, p)

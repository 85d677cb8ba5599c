"""Student's t distribution without SciPy: the two-sided tail, the CDF and the quantile.

The tail comes from the regularized incomplete beta function, P(|T| >= t) = I_x(dof/2, 1/2)
with x = dof / (dof + t^2), evaluated by its continued fraction (modified Lentz, the
symmetry I_x(a, b) = 1 - I_{1-x}(b, a) keeping it on the side where the fraction converges
fast). Degrees of freedom may be fractional (Welch-Satterthwaite). The quantile inverts the
CDF by bisection, so it is as accurate as the CDF (about 1e-12 absolute).
"""

from __future__ import annotations

import math

__all__ = ["betainc", "t_cdf", "t_quantile", "t_two_sided_p"]

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 500


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (modified Lentz); converges for x < (a+1)/(a+b+2)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_TERMS + 1):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + num / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta did not converge (a={a}, b={b}, x={x})")


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if a <= 0 or b <= 0:
        raise ValueError(f"betainc needs a, b > 0 (got a={a}, b={b})")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc needs 0 <= x <= 1 (got {x})")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, dof: float) -> float:
    """P(|T| >= |t|) for Student's t with `dof` > 0 degrees of freedom."""
    if dof <= 0 or math.isnan(dof):
        raise ValueError(f"degrees of freedom must be > 0 (got {dof})")
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    return betainc(dof / 2.0, 0.5, dof / (dof + t * t))


def t_cdf(t: float, dof: float) -> float:
    """P(T <= t) for Student's t with `dof` degrees of freedom."""
    half_tail = 0.5 * t_two_sided_p(t, dof)
    return 1.0 - half_tail if t > 0 else half_tail


def t_quantile(q: float, dof: float) -> float:
    """The t with P(T <= t) = q, for 0 < q < 1 (bisection on `t_cdf`)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile needs 0 < q < 1 (got {q})")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_quantile(1.0 - q, dof)
    low, high = 0.0, 1.0
    while t_cdf(high, dof) < q:
        low, high = high, 2.0 * high
        if high > 1e12:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (low + high)
        if t_cdf(mid, dof) < q:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * max(1.0, high):
            break
    return 0.5 * (low + high)

"""The sequential design (`stats.sequential`): decisions checked by hand, and its calibration
proven by simulation with the project's own seed noise (`stats.calibration`): under a true
null the rate of any win/loss claim over a table of ten, with a look after every round, is not
above alpha; at a true 10 pp difference it decides in fewer seeds on average than the fixed
design of the same power. The simulation check is shown able to fail on a design that skips
the correction over the table."""

from __future__ import annotations

import csv
import dataclasses
import math
import pathlib

import numpy as np
import pytest
from scipy import stats as scipy_stats

from spark_jax.stats import calibration, sequential

RESULTS = pathlib.Path(__file__).resolve().parents[1] / "results"
SIMS = 4000


def _t_interval(d, a):
    n = len(d)
    half = scipy_stats.t.ppf(1 - a / 2, n - 1) * np.std(d, ddof=1) / math.sqrt(n)
    return np.mean(d) - half, np.mean(d) + half


# -- the design and one decision ------------------------------------------------------------


def test_spending_adds_up_to_alpha_over_the_looks_that_spend():
    design = sequential.Design(comparisons=7)
    assert design.looks == (3, 6, 9, 12)
    assert design.spending_looks == (6, 9, 12)
    assert design.look_alpha(3) == 0.0
    spent = sum(design.look_alpha(n) for n in design.looks) * design.comparisons
    assert spent == pytest.approx(0.05)
    # Pocock type: ln(1 + (e - 1) t) at t = 1/2 is spent at the first look.
    assert design.look_alpha(6) * 7 == pytest.approx(0.05 * math.log(1 + (math.e - 1) / 2))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"alpha": 0.0}, "alpha"),
        ({"delta": 0.0}, "delta"),
        ({"seeds_per_round": 0}, "seeds per round"),
        ({"max_seeds": 4}, "seed cap"),
        ({"comparisons": 0}, "comparison"),
    ],
)
def test_bad_designs_are_refused_with_the_field_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sequential.Design(**kwargs)


def test_a_clear_difference_is_a_win_at_the_first_look_by_hand():
    d = [10.0, 12.0, 9.0, 11.0, 10.0, 8.0, 1.0, 1.0]
    design = sequential.Design(comparisons=3)
    got = sequential.decide(d, design)
    low, high = _t_interval(d[:6], design.look_alpha(6))
    assert got.verdict == sequential.WIN and got.n == 6
    assert (got.low, got.high) == pytest.approx((low, high))
    assert low > 0
    loss = sequential.decide([-x for x in d], design)
    assert loss.verdict == sequential.LOSS and loss.high == pytest.approx(-low)


def test_a_tight_small_difference_is_equivalent_within_delta():
    d = [0.5, -0.3, 0.2, 0.1, -0.4, 0.3]
    got = sequential.decide(d, sequential.Design(delta=5.0))
    assert got.verdict == sequential.EQUIVALENT and got.within_delta
    assert -5.0 < got.low < got.high < 5.0
    # The same data with a margin narrower than the interval: not equivalent yet.
    narrow = sequential.decide(d, sequential.Design(delta=0.3, futility=0.0))
    assert narrow.verdict == sequential.PENDING


def test_pending_before_the_first_look_and_cannot_tell_at_the_cap():
    design = sequential.Design(futility=0.0)
    assert sequential.decide([3.0, -1.0, 4.0], design).verdict == sequential.PENDING
    noisy = [8.0, -7.0, 6.0, -9.0, 7.0, -6.0, 9.0, -8.0, 6.5, -7.5, 8.5, -6.5]
    got = sequential.decide(noisy, design)
    assert got.verdict == sequential.CANNOT_TELL and got.n == 12
    a = design.look_alpha(12)
    se = np.std(noisy, ddof=1) / math.sqrt(12)
    mdd = (scipy_stats.t.ppf(1 - a / 2, 11) + scipy_stats.t.ppf(0.8, 11)) * se
    assert got.mdd == pytest.approx(mdd)


def test_futility_stops_a_hopeless_pair_early():
    noisy = [20.0, -21.0, 19.0, -18.0, 22.0, -20.0]
    got = sequential.decide(noisy, sequential.Design(futility=0.75))
    assert got.verdict == sequential.CANNOT_TELL and got.n == 6
    assert sequential.decide(noisy, sequential.Design(futility=0.0)).verdict == sequential.PENDING


# -- calibration by simulation ------------------------------------------------------------------


def _differences(path: pathlib.Path, a: str, b: str) -> dict[str, list[list[float]]]:
    with path.open() as f:
        return calibration.differences_of(list(csv.DictReader(f)), a, b)


@pytest.fixture(scope="module")
def project_noise():
    """Per-seed paired differences of the project's smoke benchmarks on clrs10."""
    found = _differences(
        RESULTS / "port-vs-official" / "results.csv", "triplet_gmpnn", "official:triplet_gmpnn"
    )
    for task, rows in _differences(
        RESULTS / "default-search" / "results.csv", "default-search:best", "triplet_gmpnn"
    ).items():
        found.setdefault(task, []).extend(rows)
    return calibration.noise_pools(found)


def _not_above(rate: float, alpha: float, sims: int) -> bool:
    """False when `rate` of `sims` tables is significantly above alpha (binomial, 0.001)."""
    k = round(rate * sims)
    return scipy_stats.binomtest(k, sims, alpha, alternative="greater").pvalue > 1e-3


def _shapes(noise: np.ndarray) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    sd = noise.std(axis=1, keepdims=True)
    t3 = rng.standard_t(3, size=(1, 20000))
    return {
        "the project's residuals": noise,
        "normal": rng.standard_normal((1, 20000)) * sd,
        "Student t(3)": t3 / t3.std() * sd,
    }


def test_the_project_noise_has_one_spread_per_task(project_noise):
    tasks, noise = project_noise
    assert len(tasks) == 10 and noise.shape[0] == 10
    sd = dict(zip(tasks, noise.std(axis=1)))
    assert sd["articulation_points"] > 3 * sd["find_maximum_subarray_kadane"] > 0


@pytest.mark.parametrize("shape", ["the project's residuals", "normal", "Student t(3)"])
def test_no_more_false_claims_than_alpha_under_the_null(project_noise, shape):
    tasks, noise = project_noise
    design = sequential.Design()
    found = calibration.calibrate(tasks, _shapes(noise)[shape], design, effects=(0.0,), sims=SIMS)
    null = found.row(0.0)
    assert null.right == 0.0
    assert _not_above(null.any_false, design.alpha, SIMS), (shape, null)


def test_the_check_fails_a_design_without_the_correction_over_the_table(project_noise):
    tasks, noise = project_noise
    design = dataclasses.replace(sequential.Design(), comparisons=1)
    out = sequential.simulate(np.zeros(len(tasks)), noise, design, np.random.default_rng(0), SIMS)
    claims = (out["verdict"] == 1) | (out["verdict"] == -1)
    assert not _not_above(float(claims.any(axis=1).mean()), design.alpha, SIMS)


def test_a_true_10pp_difference_is_decided_in_fewer_seeds_than_the_fixed_design(project_noise):
    tasks, noise = project_noise
    found = calibration.calibrate(tasks, noise, sequential.Design(), effects=(10.0,), sims=SIMS)
    row = found.row(10.0)
    assert row.right > 0.3 and row.wrong < 0.01
    assert row.fixed_seeds is not None and row.mean_seeds < row.fixed_seeds, row

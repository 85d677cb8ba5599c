"""The sequential design checked by simulation: false claims under the null, power and seeds
spent under true differences, against the fixed-seed design of the same power.

The noise is the project's own: per comparison, the per-seed paired differences of stored
benchmarks (one pool per task), centred on their mean and scaled by sqrt(n / (n - 1)) so that
a pool's variance is the unbiased estimate of its comparison's; a simulated seed draws from
its task's pool with replacement (skew and heavy tails kept, nothing assumed normal).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Sequence

import numpy as np

from spark_jax.stats import sequential

__all__ = ["Calibration", "EffectRow", "calibrate", "noise_pools"]


def noise_pools(
    differences: Mapping[str, Sequence[Sequence[float]]],
) -> tuple[tuple[str, ...], np.ndarray]:
    """(tasks, noise [m, pool]) from each task's comparisons' per-seed differences (pp).

    Comparisons with under 2 seeds or no spread are left out; pools are padded to one length
    by repeating (resampling is with replacement, so a pool's repeats change nothing but the
    draw's weights: each comparison's residuals keep equal total weight)."""
    pools: dict[str, list[float]] = {}
    for task, comparisons in differences.items():
        for d in comparisons:
            x = np.asarray(d, dtype=float)
            if len(x) < 2 or float(np.std(x)) == 0.0:
                continue
            pools.setdefault(task, []).extend((x - x.mean()) * math.sqrt(len(x) / (len(x) - 1)))
    if not pools:
        raise ValueError("no comparison with 2 or more seeds and a spread: no noise to draw")
    tasks = tuple(pools)
    width = math.lcm(*(len(p) for p in pools.values()))
    noise = np.stack([np.resize(np.asarray(pools[t]), width) for t in tasks])  # [m, pool]
    return tasks, noise


@dataclasses.dataclass(frozen=True)
class EffectRow:
    """One true difference applied to every comparison of the table.

    Attributes:
      effect: the true difference (pp).
      claims: share of comparisons with a win or loss claim (right or wrong).
      right: share claiming the true sign (power); wrong: the opposite sign.
      equivalent: share claimed equivalent within +-delta (a false claim when effect >= delta).
      any_false: share of simulated tables with at least one false claim.
      mean_seeds: mean seeds spent per comparison. fixed_seeds: the fewest seeds of a fixed
        design (paired t at alpha / m, one look) whose mean power reaches `right` (None: not
        within the cap).
    """

    effect: float
    claims: float
    right: float
    wrong: float
    equivalent: float
    any_false: float
    mean_seeds: float
    fixed_seeds: int | None


@dataclasses.dataclass(frozen=True)
class Calibration:
    design: sequential.Design
    tasks: tuple[str, ...]
    sims: int
    rows: tuple[EffectRow, ...]

    def row(self, effect: float) -> EffectRow:
        return next(r for r in self.rows if r.effect == effect)


def _row(effect, design, noise, rng, sims) -> EffectRow:
    m = noise.shape[0]
    truth = np.full(m, float(effect))
    out = sequential.simulate(truth, noise, design, rng, sims)
    v = out["verdict"]  # [S, m]
    sign = 0 if effect == 0 else (1 if effect > 0 else -1)
    directional = (v == 1) | (v == -1)
    right = (v == sign) if sign else np.zeros_like(directional)
    wrong = directional & ~right
    equivalent = v == 2
    false = wrong | (equivalent & (abs(effect) >= design.delta))
    power = float(right.mean())
    fixed = None
    if sign:
        for n in range(2, design.max_seeds + 1):
            got = sequential.fixed_power(truth, noise, n, design.alpha, rng, sims)
            if float(got.mean()) >= power:
                fixed = n
                break
    return EffectRow(
        effect=float(effect),
        claims=float(directional.mean()),
        right=power,
        wrong=float(wrong.mean()),
        equivalent=float(equivalent.mean()),
        any_false=float(false.any(axis=1).mean()),
        mean_seeds=float(out["seeds"].mean()),
        fixed_seeds=fixed,
    )


def calibrate(
    tasks: Sequence[str],
    noise: np.ndarray,
    design: sequential.Design,
    effects: Sequence[float] = (0.0, 2.0, 5.0, 10.0),
    sims: int = 4000,
    seed: int = 0,
) -> Calibration:
    """Simulated tables of len(tasks) comparisons under `design` (its `comparisons` set to
    the table's size) at each true difference of `effects`."""
    design = dataclasses.replace(design, comparisons=len(tasks))
    rng = np.random.default_rng(seed)
    rows = tuple(_row(e, design, noise, rng, sims) for e in effects)
    return Calibration(design, tuple(tasks), sims, rows)

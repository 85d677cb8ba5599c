"""The sequential design checked by simulation: false claims under the null, power and seeds
spent under true differences, against the fixed-seed design of the same power.

The noise is the project's own, in two parts: each task's spread (the pooled sample standard
deviation of its stored per-seed paired differences, over the comparisons measured on it) and
one shape for all tasks (every comparison's differences centred on their mean, divided by their
task's spread, pooled over tasks and mirrored, since under the null the two programs of a pair
are exchangeable and their difference symmetric). A simulated seed on task j draws a residual
from the shape with replacement, times task j's spread: the data's tails are kept, nothing is
assumed normal. Two other constructions were tried and rejected as artefacts of small samples,
not properties of seed noise: resampling each task's own 3-8 residuals (a pool that lumpy
makes t intervals far too narrow at a table's tail levels: any false claim 0.35 at alpha 0.05)
and standardising each comparison by its own standard deviation (a self-standardised 3-seed
sample is bounded by 1.15, so the shape loses its tails: 0.07). `tests/test_sequential.py`
also runs normal and Student-t(3) noise at the same spreads.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping, Sequence

import numpy as np

from spark_jax.stats import sequential

__all__ = ["Calibration", "EffectRow", "calibrate", "differences_of", "noise_pools"]


def differences_of(
    rows: Sequence[Mapping[str, str]], program: str, baseline: str
) -> dict[str, list[list[float]]]:
    """task -> [per-seed differences program - baseline (pp, OOD accuracy)] from a benchmark's
    `results.csv` rows (columns program, task, seed, ok, ood_score), over the seeds both
    scored on, in seed order."""
    scores: dict[tuple[str, str], dict[int, float]] = {}
    for row in rows:
        if row["ok"] == "1":
            key = (row["program"], row["task"])
            scores.setdefault(key, {})[int(row["seed"])] = 100.0 * float(row["ood_score"])
    out: dict[str, list[list[float]]] = {}
    for (label, task), mine in scores.items():
        theirs = scores.get((baseline, task))
        if label != program or not theirs:
            continue
        seeds = sorted(set(mine) & set(theirs))
        out.setdefault(task, []).append([mine[s] - theirs[s] for s in seeds])
    return out


def noise_pools(
    differences: Mapping[str, Sequence[Sequence[float]]],
) -> tuple[tuple[str, ...], np.ndarray]:
    """(tasks, noise [m, pool]) from each task's comparisons' per-seed differences (pp): row j
    is the pooled standardised shape times task j's spread (module docstring). Comparisons with
    under 2 seeds or no spread are left out; a task left with none is dropped."""
    residuals: dict[str, list[float]] = {}
    squares: dict[str, list[float]] = {}  # task -> [sum of squared deviations, dof]
    for task, comparisons in differences.items():
        for d in comparisons:
            x = np.asarray(d, dtype=float)
            if len(x) < 2 or float(np.std(x)) == 0.0:
                continue
            centred = x - x.mean()
            residuals.setdefault(task, []).extend(centred)
            total = squares.setdefault(task, [0.0, 0.0])
            total[0] += float(np.sum(centred**2))
            total[1] += len(x) - 1
    if not squares:
        raise ValueError("no comparison with 2 or more seeds and a spread: no noise to draw")
    tasks = tuple(squares)
    sds = [math.sqrt(ss / dof) for ss, dof in (squares[t] for t in tasks)]
    z = np.concatenate([np.asarray(residuals[t]) / s for t, s in zip(tasks, sds)])
    z = np.concatenate([z, -z])  # symmetric: under the null the two sides are exchangeable
    z = z / z.std()  # [pool], mean 0, variance 1
    return tasks, np.stack([z * s for s in sds])  # [m, pool]


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

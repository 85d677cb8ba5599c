"""The one training loop of an evaluation, clrs/examples/run.py's: cycle the training batches,
validate every `eval_every` steps (and at step 0), keep each seed's best-validation parameters
in memory, and score them on the test set.

It trains K >= 1 seeds through a `Learner`: `OneSeed` (one `Trainer`: the multi-device path
and the cascade of `evaluate.train_and_score`) or `seeds.SeedStack` (K seeds as one
program). Seed k's keys, batches and fixed sets are its own, so its result is the same
whichever learner trains it. The loop returns a `LoopResult`; the callers turn it into their
metrics records.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Protocol, Sequence

import jax
import numpy as np

from spark_jax.config.protocol import ProtocolConfig
from spark_jax.evaluation.train import CompileStats, Trainer

__all__ = ["FixedSet", "Inputs", "Learner", "LoopResult", "OneSeed", "cascade_stage_steps", "run"]


def cascade_stage_steps(train_steps: int, fraction: float) -> int:
    """Steps of a cascade's first stage: `fraction` of the training, at least one step."""
    return max(1, min(train_steps, round(fraction * train_steps)))


class Learner(Protocol):
    """K seeds' parameters and the executables that train and score them."""

    k: int
    compile_stats: CompileStats
    params: Any  # on the device

    def init(self, features: Any, seeds: Sequence[int]) -> None: ...

    def step(self, keys: Sequence[Any], feedback: Any) -> np.ndarray: ...  # [K] losses

    def evaluate(
        self, keys: Sequence[Any], batches: Sequence[Any], params: Any = None, orders=None
    ) -> list[float]: ...

    def snapshot(self, seeds: Sequence[int]) -> dict[int, Any]: ...  # host params per seed

    def place_best(self, best: Sequence[Any]) -> Any: ...  # per-seed host params -> device


@dataclasses.dataclass(frozen=True)
class FixedSet:
    """A validation or test set as the learner scores it: its batches (stacked over seeds for
    a `SeedStack`) and each seed's order (`TaskData.val_order`/`test_order`, or None)."""

    batches: Sequence[Any]
    orders: Sequence[Any]


@dataclasses.dataclass(frozen=True)
class LoopResult:
    """Per seed (lists of K) and for the shared program (seconds, steps)."""

    best_val: list[float]
    best_step: list[int]
    best_params: list[Any]  # host copies
    test_scores: list[float]
    losses: np.ndarray  # [K] the last step's
    steps_run: int
    init_seconds: float
    train_seconds: float  # optimizer steps, compilation excluded
    eval_seconds: float
    loop_seconds: float  # steps after the first pass, data waits included
    first_pass_seconds: float  # the first pass's steps (they compile), data waits included
    cascade: dict[str, Any]

    def timings(self, learner: Learner, n_first: int) -> dict[str, Any]:
        """The metrics every evaluation record shares (timings, steps, throughput)."""
        steady = max(0, self.steps_run - n_first)
        train = self.train_seconds
        return dict(
            train_seconds=train,
            compile_seconds=learner.compile_stats.seconds,
            compile_wall_seconds=learner.compile_stats.wall_seconds,
            init_seconds=self.init_seconds,
            steps=self.steps_run,
            steps_per_second=self.steps_run / train if train > 0 else 0.0,
            eval_seconds=self.eval_seconds,
            loop_steps_per_second=steady / self.loop_seconds if self.loop_seconds > 0 else None,
        )


class OneSeed:
    """A `Trainer` as a learner of one seed (keys, losses and scores are lists of one)."""

    k = 1

    def __init__(self, trainer: Trainer):
        self.trainer = trainer

    @property
    def compile_stats(self) -> CompileStats:
        return self.trainer.compile_stats

    @property
    def params(self) -> Any:
        return self.trainer.params

    def init(self, features, seeds: Sequence[int]) -> None:
        self.trainer.init(features, seeds[0])

    def step(self, keys, feedback) -> np.ndarray:
        return np.array([self.trainer.step(keys[0], feedback)["loss"]])

    def evaluate(self, keys, batches, params=None, orders=None) -> list[float]:
        order = None if orders is None else orders[0]
        return [self.trainer.evaluate(keys[0], batches, params, order)["score"]]

    def snapshot(self, seeds: Sequence[int]) -> dict[int, Any]:
        return {0: self.trainer.snapshot()}

    def place_best(self, best: Sequence[Any]) -> Any:
        return self.trainer.place(best[0])


def _split_all(keys: Sequence[Any]) -> tuple[list, list]:
    pairs = [jax.random.split(k) for k in keys]
    return [p[0] for p in pairs], [p[1] for p in pairs]


@dataclasses.dataclass
class _Best:
    """Each seed's best validation score so far, its step and a host copy of its parameters."""

    val: list[float]
    step: list[int]
    params: list[Any]

    def validate(self, learner: Learner, keys: list, val: FixedSet, step: int) -> list:
        """Scores every seed on `val` and keeps the improved seeds' parameters (at step 0
        every seed's); returns the keys after the split."""
        keys, val_keys = _split_all(keys)
        scores = learner.evaluate(val_keys, val.batches, orders=val.orders)
        improved = [i for i in range(learner.k) if scores[i] > self.val[i] or step == 0]
        for i, params in (learner.snapshot(improved) if improved else {}).items():
            self.val[i], self.step[i], self.params[i] = scores[i], step, params
        return keys


@dataclasses.dataclass(frozen=True)
class Inputs:
    """The K seeds' data as the loop reads it (lists of K, in seed order).

    keys: each seed's key (`TaskData.rng_key`), split for every step and pass; init_seeds: each
    seed's parameter-init seed (run.py's seed + 1); first_features: what the parameters are
    initialised from; n_first: the first pass (one batch per training length), left out of
    `loop_seconds`; val, test: the fixed sets.
    """

    keys: Sequence[Any]
    init_seeds: Sequence[int]
    first_features: Any
    n_first: int
    val: FixedSet
    test: FixedSet

    @classmethod
    def one_seed(cls, task_data: Any, seed: int, first_features: Any, n_first: int) -> Inputs:
        """One seed's inputs from its `data.TaskData` (run.py's init seed: `seed + 1`)."""
        return cls(
            [task_data.rng_key],
            [seed + 1],
            first_features,
            n_first,
            FixedSet(task_data.val_batches, [task_data.val_order]),
            FixedSet(task_data.test_batches, [task_data.test_order]),
        )


def _score_best(learner: Learner, keys: list, best: _Best, test: FixedSet) -> list[float]:
    keys, test_keys = _split_all(keys)
    return learner.evaluate(test_keys, test.batches, learner.place_best(best.params), test.orders)


def run(
    learner: Learner,
    inputs: Inputs,
    batches,
    cfg: ProtocolConfig,
    progress: Callable[[int, float], None] | None = None,
    cascade: tuple[float, float] | None = None,
) -> LoopResult:
    """Trains the learner's K seeds for `cfg.train_steps` steps (fewer when a one-seed
    cascade stops it) and scores each seed's best-validation parameters on the test set.
    `batches`: training feedback, stacked over seeds for K > 1; `cascade`: (threshold,
    fraction), see `evaluate.train_and_score` (K = 1 only)."""
    k, keys, clock = learner.k, list(inputs.keys), time.perf_counter
    assert len(keys) == len(inputs.init_seeds) == k, (len(keys), len(inputs.init_seeds), k)
    assert cascade is None or k == 1, "a cascade stops one seed's training"
    start = clock()
    learner.init(inputs.first_features, inputs.init_seeds)
    jax.block_until_ready(learner.params)
    init_seconds = clock() - start
    best = _Best([float("-inf")] * k, [0] * k, [None] * k)
    train_seconds = eval_seconds = loop_seconds = first_seconds = 0.0
    losses, next_eval, steps_run, verdict = np.full(k, np.nan), 0, cfg.train_steps, {}
    stage_end = None if cascade is None else cascade_stage_steps(cfg.train_steps, cascade[1])
    for step in range(cfg.train_steps):
        t_loop = clock()
        feedback = next(batches)
        keys, step_keys = _split_all(keys)
        compile_before = learner.compile_stats.seconds
        t0 = clock()
        losses = learner.step(step_keys, feedback)
        train_seconds += clock() - t0 - (learner.compile_stats.seconds - compile_before)
        if step >= inputs.n_first:
            loop_seconds += clock() - t_loop
        else:
            first_seconds += clock() - t_loop
        at_stage_end = stage_end is not None and step + 1 == stage_end
        if step >= next_eval or at_stage_end:
            t_eval = clock()
            keys = best.validate(learner, keys, inputs.val, step)
            eval_seconds += clock() - t_eval
            if step >= next_eval:
                next_eval += cfg.eval_every
        if progress is not None:
            progress(step + 1, float(np.mean(losses)))
        if at_stage_end:
            promoted = bool(best.val[0] >= cascade[0])
            verdict = dict(cascade_steps=stage_end, cascade_val_score=float(best.val[0]))
            verdict["cascade_promoted"] = promoted
            if not promoted:
                steps_run = step + 1
                break
    t_eval = clock()
    test_scores = _score_best(learner, keys, best, inputs.test)
    eval_seconds += clock() - t_eval
    return LoopResult(
        best.val, best.step, best.params, test_scores, losses, steps_run, init_seconds,
        train_seconds, eval_seconds, loop_seconds, first_seconds, verdict,
    )  # fmt: skip

"""How evaluating a program ended: the `Evaluation` record of what training and scoring it
on one task measured, or `TrainingError` when its training diverged (`source.ProgramError`
is the other failure a program causes itself).

Pure data (no JAX import), on a low floor so that the training side (`evaluation`, which
builds the record and raises the error), the job side (`jobs`, which carries the record in
an `EvalResult` and classifies the error), the run database and the reports share them across
process boundaries: `Evaluation.to_dict()` crosses a pipe or a Ray task, `from_dict` rebuilds
it on the other side.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

__all__ = ["Evaluation", "TrainingError"]


class TrainingError(RuntimeError):
    """Training diverged (non-finite loss) or the setup is inconsistent."""


_PER_SEED = ("seeds", "seed_scores", "seed_val_scores", "seed_best_steps", "seed_final_losses")


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """The measured outcome of training one processor on one task.

    Attributes:
      task, preset, seed: what was run.
      program: program name; program_sha256: hash of its normalized source.
      ood_score: `clrs.evaluate(...)['score']` of the best-validation parameters on the OOD set.
      val_score: best validation score; best_step: the step it was reached at.
      params: processor parameters; model_params: all parameters (encoders/decoders too).
      macs: contraction MACs of one processor step on the reference input (see `macs`),
        batch 1, `macs_nodes` nodes, width `hidden_size`.
      train_seconds: wall time of the optimizer steps (compilation excluded).
      compile_seconds: ahead-of-time compilation of all train/predict executables (the sum
        of every compile).
      seeds: the seeds trained together as one program (None: the single `seed`);
        then `seed` is `seeds[0]`, `ood_score`/`val_score`/`final_loss` are means over the
        seeds, `best_step` is the first seed's, and the timings are the shared program's.
      seed_scores: per-seed OOD scores, in `seeds` order; seed_val_scores: per-seed best
        validation scores; seed_best_steps, seed_final_losses: per-seed best-validation step
        and last loss (None: a record from before they were kept).
      eval_seconds: wall time of every validation and the test scoring.
      loop_steps_per_second: steady-state training rate, after one step per training length:
        steps / wall time of those steps including the wait for their data (validation
        excluded).
      compile_wall_seconds: the wall time the run waited for them (compiles run concurrently;
        None: an older record).
      init_seconds: parameter initialization.
      steps, final_loss: training length and last loss; steps_per_second: steps / train time.
      peak_rss_mb: peak resident memory of this process (host; includes data), if known.
      device_peak_mb: peak device memory, where the backend reports it.
      n_devices: devices the batch was sharded over.
      cascade_steps: steps of the cascade's first stage (None: no cascade).
      cascade_val_score: best validation score within the first stage.
      family: the task family of a non-CLRS evaluation (None: CLRS); then `task` is the
        family's benchmark, `ood_score` and `val_score` its score (higher is better), and
        `metrics` its paper metrics (accuracy and loss, or train and test return).
      cascade_promoted: whether the candidate went on to the full training (None: no
        cascade); a candidate not promoted was scored after the first stage.
      seed_mode: how that program ran the seed axis (`seeds.SEED_MODES`): 'map' (per-seed
        figures bit-identical to one-seed runs) or 'vmap' (batched: they differ by float
        rounding); 'sequential' when that program would not fit in memory and the seeds
        trained one after another (each seed's figures its lone run's); None: one seed, or a
        record from before it was kept (then 'vmap').
      machine: where it was measured, host and JAX devices (`labels.measured_on`; None: a
        record from before it was recorded). Timings compare only within one machine.
    """

    task: str
    preset: str
    seed: int
    program: str
    program_sha256: str
    ood_score: float
    val_score: float
    best_step: int
    params: int
    model_params: int
    macs: int
    macs_nodes: int
    train_seconds: float
    compile_seconds: float
    init_seconds: float
    steps: int
    final_loss: float
    steps_per_second: float
    peak_rss_mb: float | None
    device_peak_mb: float | None
    n_devices: int
    cascade_steps: int | None = None
    cascade_val_score: float | None = None
    cascade_promoted: bool | None = None
    compile_wall_seconds: float | None = None
    eval_seconds: float | None = None
    loop_steps_per_second: float | None = None
    seeds: tuple[int, ...] | None = None
    seed_scores: tuple[float, ...] | None = None
    seed_val_scores: tuple[float, ...] | None = None
    seed_best_steps: tuple[int, ...] | None = None
    seed_final_losses: tuple[float, ...] | None = None
    family: str | None = None
    metrics: dict[str, float] | None = None
    machine: str | None = None
    seed_mode: str | None = None

    @property
    def score_mean(self) -> float:
        """Mean OOD score over the seeds (the OOD score of a single-seed record)."""
        return (
            self.ood_score
            if not self.seed_scores
            else math.fsum(self.seed_scores) / len(self.seed_scores)
        )

    @property
    def score_std(self) -> float:
        """Population standard deviation of the per-seed OOD scores (0 for one seed)."""
        if not self.seed_scores or len(self.seed_scores) < 2:
            return 0.0
        mean = self.score_mean
        return math.sqrt(
            math.fsum((s - mean) ** 2 for s in self.seed_scores) / len(self.seed_scores)
        )

    def per_seed(self) -> list[Evaluation]:
        """One single-seed record per seed of a K-seed record (`[self]` for one seed): its
        scores, best step and last loss; the shared program's timings, each seed's
        `train_seconds` and `compile_seconds` its 1/K share."""
        if not self.seeds:
            return [self]
        k = len(self.seeds)
        steps = self.seed_best_steps or (self.best_step,) * k
        losses = self.seed_final_losses or (self.final_loss,) * k
        return [
            dataclasses.replace(
                self,
                seed=seed,
                ood_score=self.seed_scores[i],
                val_score=self.seed_val_scores[i],
                best_step=steps[i],
                final_loss=losses[i],
                train_seconds=self.train_seconds / k,
                compile_seconds=self.compile_seconds / k,
                **dict.fromkeys(_PER_SEED),
            )
            for i, seed in enumerate(self.seeds)
        ]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-safe once numpy scalars are converted)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evaluation:
        """The record back from `to_dict()` (e.g. after a process or database boundary);
        raises ValueError naming missing or unknown fields."""
        names = {f.name for f in dataclasses.fields(cls)}
        required = {f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING}
        missing, unknown = sorted(required - set(data)), sorted(set(data) - names)
        if missing or unknown:
            raise ValueError(f"not an Evaluation: missing {missing}, unknown {unknown}")
        values = dict(data)
        for name in _PER_SEED:
            if values.get(name) is not None:  # JSON turns tuples into lists
                values[name] = tuple(values[name])
        return cls(**values)

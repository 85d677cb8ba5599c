"""The one evaluation record of every task family: what training and scoring one program on
one benchmark measured.

Its core is the same for every family: `score`, the number the archive ranks by (higher is
better: CLRS's OOD score, a classifier's accuracy, a policy's return); `metrics`, the
family's named metrics beside it; and what the program cost, `params`, `macs` and
`train_seconds`. A family whose programs train in a protocol loop with validation-based
selection (CLRS) also fills the loop's fields (the best validation score and its step,
compile and initialization times, memory, ...); a family trained by its own `evaluate`
leaves them None instead of inventing zeros.

Pure data (no JAX import) on the families floor, so that a family's plug-in, the training
side that builds the record, the job side that carries it, the run database and the reports
all share it across process boundaries: `to_dict()` crosses a pipe or a Ray task and is what
the stores hold, `from_dict` rebuilds it on the other side.

The stored form keeps the key `ood_score` for `score`: it is the run database's column of
that name (the `evaluations` table) and the key every stored record has carried since the
first run, so records written before and after read back alike and new ones are
byte-identical to the old.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

__all__ = ["STORED_SCORE_KEY", "Evaluation"]

STORED_SCORE_KEY = "ood_score"  # `score`'s key in `to_dict()` and the run database's column
_PER_SEED = ("seeds", "seed_scores", "seed_val_scores", "seed_best_steps", "seed_final_losses")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Evaluation:
    """The measured outcome of training one program on one benchmark (keyword arguments).

    Every family:
      task, preset, seed: what was run (`task`: the benchmark; a CLRS algorithm for CLRS).
      program: program name; program_sha256: hash of its normalized source.
      score: what the archive ranks by, higher is better (CLRS: `clrs.evaluate(...)['score']`
        of the best-validation parameters on the OOD set scored; a family: its `score`).
      params: parameters of the evolved module (CLRS: the processor's).
      macs: multiply-accumulates of one forward pass of the evolved module on the family's
        reference input (CLRS: one processor step, batch 1, `macs_nodes` nodes).
      train_seconds: wall time of the optimizer steps (compilation excluded).
      family: the task family (None: CLRS, the default family); metrics: its named metrics
        (accuracy and loss, train and test return, ...; None: CLRS, whose figures are the
        fields below).
      machine: where it was measured, host and JAX devices (`labels.measured_on`; None: a
        record from before it was recorded). Timings compare only within one machine.
      n_devices: devices the batch was sharded over.

    A protocol training loop's fields (None where the family's training has no such loop):
      val_score: best validation score; best_step: the step it was reached at.
      model_params: all parameters (encoders/decoders too); macs_nodes: the node count of
        the MACs' reference input.
      compile_seconds: ahead-of-time compilation of all train/predict executables (the sum
        of every compile); compile_wall_seconds: the wall time the run waited for them
        (compiles run concurrently; None: an older record).
      init_seconds: parameter initialization; eval_seconds: wall time of every validation
        and the test scoring.
      steps, final_loss: training length and last loss; steps_per_second: steps / train time;
        loop_steps_per_second: steady-state training rate, after one step per training
        length: steps / wall time of those steps including the wait for their data.
      peak_rss_mb: peak resident memory of this process (host; includes data), if known;
        device_peak_mb: peak device memory, where the backend reports it.
      cascade_steps: steps of the cascade's first stage (None: no cascade);
        cascade_val_score: best validation score within the first stage; cascade_promoted:
        whether the candidate went on to the full training (a candidate not promoted was
        scored after the first stage).

    Several training seeds of one program:
      seeds: the seeds trained together (None: the single `seed`); then `seed` is `seeds[0]`,
        `score`/`val_score`/`final_loss` and the metrics are means over the seeds,
        `best_step` is the first seed's, and the timings are the shared program's.
      seed_scores: per-seed scores, in `seeds` order; seed_val_scores: per-seed best
        validation scores; seed_best_steps, seed_final_losses: per-seed best-validation step
        and last loss (None: a family without them, or a record from before they were kept).
      seed_mode: how that program ran the seed axis (`seeds.SEED_MODES`): 'map' (per-seed
        figures bit-identical to one-seed runs) or 'vmap' (batched: they differ by float
        rounding); 'sequential' when that program would not fit in memory and the seeds
        trained one after another (each seed's figures its lone run's); None: one seed, or a
        record from before it was kept (then 'vmap').
    """

    # The order is the stored form's key order (`to_dict`); every family fills the fields
    # without a default.
    task: str
    preset: str
    seed: int
    program: str
    program_sha256: str
    score: float
    val_score: float | None = None
    best_step: int | None = None
    params: int
    model_params: int | None = None
    macs: int
    macs_nodes: int | None = None
    train_seconds: float
    # A protocol training loop's timings and memory.
    compile_seconds: float | None = None
    init_seconds: float | None = None
    steps: int | None = None
    final_loss: float | None = None
    steps_per_second: float | None = None
    peak_rss_mb: float | None = None
    device_peak_mb: float | None = None
    n_devices: int = 1
    # The cascade's first stage.
    cascade_steps: int | None = None
    cascade_val_score: float | None = None
    cascade_promoted: bool | None = None
    compile_wall_seconds: float | None = None
    eval_seconds: float | None = None
    loop_steps_per_second: float | None = None
    # Several training seeds of one program.
    seeds: tuple[int, ...] | None = None
    seed_scores: tuple[float, ...] | None = None
    seed_val_scores: tuple[float, ...] | None = None
    seed_best_steps: tuple[int, ...] | None = None
    seed_final_losses: tuple[float, ...] | None = None
    # The family and its named metrics (None: CLRS), the machine, the seed axis's mode.
    family: str | None = None
    metrics: dict[str, float] | None = None
    machine: str | None = None
    seed_mode: str | None = None

    @property
    def score_mean(self) -> float:
        """Mean score over the seeds (the score of a single-seed record)."""
        return (
            self.score
            if not self.seed_scores
            else math.fsum(self.seed_scores) / len(self.seed_scores)
        )

    @property
    def score_std(self) -> float:
        """Population standard deviation of the per-seed scores (0 for one seed)."""
        if not self.seed_scores or len(self.seed_scores) < 2:
            return 0.0
        mean = self.score_mean
        return math.sqrt(
            math.fsum((s - mean) ** 2 for s in self.seed_scores) / len(self.seed_scores)
        )

    def per_seed(self) -> list[Evaluation]:
        """One single-seed record per seed of a K-seed record (`[self]` for one seed): its
        score, validation score, best step and last loss where kept; the shared program's
        timings, each seed's `train_seconds` and `compile_seconds` its 1/K share."""
        if not self.seeds:
            return [self]
        k = len(self.seeds)
        vals = self.seed_val_scores or (self.val_score,) * k
        steps = self.seed_best_steps or (self.best_step,) * k
        losses = self.seed_final_losses or (self.final_loss,) * k
        compile_seconds = None if self.compile_seconds is None else self.compile_seconds / k
        return [
            dataclasses.replace(
                self,
                seed=seed,
                score=self.seed_scores[i],
                val_score=vals[i],
                best_step=steps[i],
                final_loss=losses[i],
                train_seconds=self.train_seconds / k,
                compile_seconds=compile_seconds,
                **dict.fromkeys(_PER_SEED),
            )
            for i, seed in enumerate(self.seeds)
        ]

    def to_dict(self) -> dict[str, Any]:
        """The stored form: plain data (JSON-safe once numpy scalars are converted), `score`
        under `STORED_SCORE_KEY` in its place."""
        return {
            (STORED_SCORE_KEY if name == "score" else name): value
            for name, value in dataclasses.asdict(self).items()
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evaluation:
        """The record back from its stored form (`to_dict()`, e.g. after a process or database
        boundary); raises ValueError naming missing or unknown fields."""
        values = dict(data)
        if STORED_SCORE_KEY in values and "score" not in values:
            values["score"] = values.pop(STORED_SCORE_KEY)
        names = {f.name for f in dataclasses.fields(cls)}
        required = {
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        missing, unknown = sorted(required - set(values)), sorted(set(values) - names)
        if missing or unknown:
            raise ValueError(f"not an Evaluation: missing {missing}, unknown {unknown}")
        for name in _PER_SEED:
            if values.get(name) is not None:  # JSON turns tuples into lists
                values[name] = tuple(values[name])
        return cls(**values)

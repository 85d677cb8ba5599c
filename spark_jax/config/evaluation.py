"""The search config's evaluation sections: where candidates train (`executor`), the
feasibility check's limits (`feasibility`), two-stage evaluation (`cascade`) and what the
search selects on (`fitness`).

`ExecutorConfig` goes whole to `jobs.executors.make_executor`, `FeasibilityConfig` to
`feasibility.checker.CheckOptions.from_config`, `CascadeConfig` to the evaluation job.
Bad values raise `ConfigError` (a ValueError) naming the key. Pure Python.
"""

from __future__ import annotations

import dataclasses

from spark_jax.config import registry
from spark_jax.config.checks import check_number as _check_number
from spark_jax.config.protocol import ConfigError, ProtocolConfig

__all__ = [
    "EXECUTOR_KINDS",
    "FITNESS_SOURCES",
    "CascadeConfig",
    "ExecutorConfig",
    "FeasibilityConfig",
    "FitnessConfig",
]

EXECUTOR_KINDS = ("local", "ray")
DUPLICATE_RULES = ("source", "function")
FITNESS_SOURCES = ("ood_test", "ood_val")
# How K seeds trained as one program run the seed axis (`evaluation.seeds`): the shipped seed
# modes of `config.registry`, 'map' (each seed's arithmetic a one-seed run's; the default) and
# 'vmap' (batched).
SEED_MODES = registry.shipped_names("seed")
DEFAULT_SEED_MODE = SEED_MODES[0]


@dataclasses.dataclass(frozen=True)
class ExecutorConfig:
    """Where candidates train: 'local' worker processes or 'ray'.

    Attributes:
      kind: 'local' or 'ray'.
      in_flight: evaluations running while the next proposals are made (1 = the paper's
        strictly sequential loop).
      num_workers: local worker processes.
      devices: GPU ids to pin the local workers to (round-robin; null: no pinning).
      timeout_s, memory_mb: per-evaluation wall-clock and host-memory limits (null: none).
      address, num_gpus_per_job, num_cpus_per_job: Ray's cluster and per-task resources.
      compile_cache_dir: a persistent XLA compilation cache the workers share (JAX's
        `jax_compilation_cache_dir`): a program compiled once (another seed of it, a resumed or
        repeated job, the seed program of every search of a comparison) is loaded, not
        recompiled. A relative path is taken from the run or benchmark directory; null: none.
        Results are the same with and without it.
      result_cache_dir: stored results reused for an identical job (`jobs.result_cache`;
        relative to the run directory; null: none). Scores are the same with and without it.
    """

    kind: str = "local"
    num_workers: int = 1
    in_flight: int = 1
    timeout_s: float | None = None
    memory_mb: int | None = None
    devices: tuple[str, ...] | None = None
    address: str | None = None
    num_gpus_per_job: float = 0.0
    num_cpus_per_job: float = 1.0
    compile_cache_dir: str | None = None
    result_cache_dir: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in EXECUTOR_KINDS:
            raise ConfigError(f"kind: must be one of {EXECUTOR_KINDS} (got {self.kind!r})")
        _check_number("num_workers", self.num_workers, minimum=1, integer=True)
        _check_number("in_flight", self.in_flight, minimum=1, integer=True)
        _check_number("timeout_s", self.timeout_s, positive=True, optional=True)
        _check_number("memory_mb", self.memory_mb, minimum=1, optional=True, integer=True)
        _check_number("num_gpus_per_job", self.num_gpus_per_job, minimum=0.0)
        _check_number("num_cpus_per_job", self.num_cpus_per_job, minimum=0.0)
        if self.devices is not None:
            if isinstance(self.devices, (str, bytes)) or not isinstance(
                self.devices, (list, tuple)
            ):
                raise ConfigError(f"devices: must be a list of device ids (got {self.devices!r})")
            object.__setattr__(self, "devices", tuple(str(d) for d in self.devices))
        for key in ("compile_cache_dir", "result_cache_dir"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ConfigError(f"{key}: must be a directory path (got {value!r})")


@dataclasses.dataclass(frozen=True)
class FeasibilityConfig:
    """Feasibility limits: optional parameter/MACs caps (the `budget` stage), and the
    sandbox's wall clock and memory allowance per check.

    Attributes:
      max_params, max_macs: caps on a candidate's parameter count and MACs (null: none).
      timeout_s: the sandbox's wall clock per check, in seconds.
      memory_mb: the sandbox's memory allowance per check.
    """

    max_params: int | None = None
    max_macs: int | None = None
    timeout_s: float = 60.0
    memory_mb: int = 2048

    def __post_init__(self) -> None:
        _check_number("max_params", self.max_params, minimum=0, optional=True, integer=True)
        _check_number("max_macs", self.max_macs, minimum=0, optional=True, integer=True)
        _check_number("timeout_s", self.timeout_s, positive=True)
        _check_number("memory_mb", self.memory_mb, minimum=1, integer=True)


@dataclasses.dataclass(frozen=True)
class CascadeConfig:
    """Cascade evaluation: a first training stage of `fraction` of the protocol's steps; a
    candidate whose best validation score by then is below `threshold` is not promoted to
    the rest of the training (it is scored on the OOD set as it stands). Scores lie in
    [0, 1], so the default threshold (the paper's -100) promotes every candidate and the
    stage boundary is only recorded. Each evaluation stores its stage score and whether it
    was promoted.

    Attributes:
      threshold: the first stage's best validation score a candidate needs to be promoted.
      fraction: the first stage's share of the protocol's training steps, in (0, 1].
    """

    threshold: float = -100.0
    fraction: float = 0.25

    def __post_init__(self) -> None:
        _check_number("threshold", self.threshold)
        _check_number("fraction", self.fraction, positive=True)
        if not self.fraction <= 1.0:
            raise ConfigError(f"fraction: must be in (0, 1] (got {self.fraction!r})")

    @property
    def active(self) -> bool:
        """Whether the first stage can reject anything."""
        return self.threshold > 0.0


@dataclasses.dataclass(frozen=True)
class FitnessConfig:
    """What the search selects on (default: a validation set, never the reported test set).

    Attributes:
      seeds: training seeds per candidate (the search's `seed`, `seed + 1`, ...), trained
        as one program (each seed's figures those of a run of its own); archive placement
        and the incumbent use the mean OOD score over them. The seed program is evaluated
        with the same number (1: the paper).
      source: 'ood_val' (default: CLRS selects on a separate OOD-size validation set drawn
        with `ood_val_seed`, another task family on its validation split; the official test
        set or test split is scored only for the final programs, the seed and the best,
        trained again on the `seeds` training seeds after the search's own, never one it
        selected with) or 'ood_test' (the paper's protocol: the search selects on the test set it reports, and
        the report says so).
      ood_val_seed: sampler seed of the CLRS OOD validation set (must differ from the
        protocol's `test_seed`, the official test set's); other families ignore it.
      duplicates: what makes a child a duplicate, never trained and not counted toward the
        budget, for every method alike: 'source' (default: its normalised source equals a
        program that entered training) or 'function' (that, or the identity probes of
        `evaluation.identity` give it the function fingerprint of a program that entered
        training: same parameters and bit-identical loss and gradients on probe batches of
        the task; CLRS only; it costs one compile of the model's loss per child).
      intensify: 0 (default: the paper's rule, the best selection score is the best) or N: a
        candidate becomes the run's best only after it is trained on N more seeds and its
        mean over all its seeds still beats the incumbent's on the same seeds
        (`search.intensify`); the re-evaluations are device time, never candidates.
    """

    seeds: int = 1
    source: str = "ood_val"
    ood_val_seed: int = 1003
    duplicates: str = "source"
    intensify: int = 0

    def __post_init__(self) -> None:
        _check_number("seeds", self.seeds, minimum=1, integer=True)
        _check_number("ood_val_seed", self.ood_val_seed, minimum=0, integer=True)
        _check_number("intensify", self.intensify, minimum=0, integer=True)
        if self.source not in FITNESS_SOURCES:
            raise ConfigError(f"source: must be one of {FITNESS_SOURCES} (got {self.source!r})")
        if self.duplicates not in DUPLICATE_RULES:
            raise ConfigError(
                f"duplicates: must be one of {DUPLICATE_RULES} (got {self.duplicates!r})"
            )

    def selection_protocol(self, protocol: ProtocolConfig) -> ProtocolConfig:
        """`protocol` with its OOD set swapped for the validation set under 'ood_val'."""
        if self.source == "ood_test":
            return protocol
        return protocol.replace(test_seed=self.ood_val_seed)

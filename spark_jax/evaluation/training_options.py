"""How one evaluation trains, apart from what it trains: one immutable record.

`evaluate.evaluate_program` and `evaluate.evaluate_official` take this one record (their
`training` argument) and pass it down to the training, instead of the same five keyword
options in every signature and helper. Cheap to import (no JAX).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from spark_jax.config.evaluation import DEFAULT_SEED_MODE

__all__ = ["TrainingOptions", "seed_tuple"]


def seed_tuple(seed: int, seeds: int | tuple[int, ...] | None) -> tuple[int, ...]:
    """The seeds to train: `(seed,)`, `seed .. seed+K-1` for an int K, or the tuple given."""
    if seeds is None:
        return (seed,)
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {seeds}")
        return tuple(range(seed, seed + seeds))
    return tuple(int(s) for s in seeds)


@dataclasses.dataclass(frozen=True)
class TrainingOptions:
    """The options of one evaluation's training (none changes what a given seed scores,
    except `seeds`, which says which seeds train, and `cascade`, which may stop early).

    Attributes:
      seeds: None (the evaluation seed alone), K (seeds `seed .. seed+K-1`) or a tuple of
        seeds, trained as one program (`seeds.train_and_score_seeds`); the record then carries
        per-seed scores.
      seed_mode: how that program runs the seed axis (`config.evaluation.SEED_MODES`).
      cascade: (threshold, fraction) of a first training stage (`evaluate.train_and_score`),
        or None; one seed only.
      devices: the devices to train on (None: JAX's local devices).
      progress: called with (step, loss) as training goes, or None.
    """

    seeds: int | tuple[int, ...] | None = None
    seed_mode: str = DEFAULT_SEED_MODE
    cascade: tuple[float, float] | None = None
    devices: Any = None
    progress: Callable[[int, float], None] | None = None

    def seed_list(self, seed: int) -> tuple[int, ...]:
        """The seeds that train for evaluation seed `seed` (`seed_tuple`)."""
        return seed_tuple(seed, self.seeds)

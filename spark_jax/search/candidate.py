"""The archive's records: a `Candidate` (an evaluated program as the archive sees it),
the fitness order, what an `add` did, and what a `sample` returns."""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Mapping, NamedTuple

from spark_jax.config.sections import check_int

__all__ = ["AddResult", "Candidate", "Cell", "Sample", "fitness_key", "is_better"]

Cell = tuple[int, ...]
BUILTIN_FEATURES = ("ood_acc", "macs", "val_score")


@dataclasses.dataclass(frozen=True)
class Candidate:
    """An evaluated program as the archive sees it.

    Attributes:
      id: unique id (the run DB's program id).
      source_sha: sha256 of the normalized source (migration skips known sources).
      ood_acc: fitness, OOD score in [0, 1].
      macs: MACs of one processor step; lower wins a fitness tie.
      val_score: best validation score (None: a family whose training has no validation-based
        selection loop).
      island: the island it lives on (for a copy returned by the archive: the copy's).
      parent_id: the parent's id (None for the seed).
      iteration: attempt index that produced it (0 for the seed).
      extra: other JSON-serializable metrics.
      migrated: True for a copy placed by `migrate` (or on an empty island).
    """

    id: str
    source_sha: str
    ood_acc: float
    macs: int
    val_score: float | None = 0.0
    island: int = 0
    parent_id: str | None = None
    iteration: int = 0
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    migrated: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.ood_acc, numbers.Real) or not math.isfinite(self.ood_acc):
            raise ValueError(
                f"Candidate {self.id!r}: ood_acc must be finite (got {self.ood_acc!r})"
            )
        check_int(f"Candidate {self.id!r}: macs", self.macs, 0)
        check_int(f"Candidate {self.id!r}: island", self.island, 0)
        for key, kind in (("ood_acc", float), ("macs", int), ("island", int)):
            object.__setattr__(self, key, kind(getattr(self, key)))
        if self.val_score is not None:
            object.__setattr__(self, "val_score", float(self.val_score))
        object.__setattr__(self, "extra", dict(self.extra))

    def feature(self, dim: str) -> float:
        """Value of descriptor `dim` (a field or an `extra` key)."""
        value = getattr(self, dim) if dim in BUILTIN_FEATURES else self.extra.get(dim)
        if not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(
                f"Candidate {self.id!r}: descriptor {dim!r} must be a finite number (got {value!r})"
            )
        return float(value)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Candidate:
        return cls(**dict(data))


def fitness_key(candidate: Candidate) -> tuple[float, int]:
    """Sort key, larger is better: OOD accuracy, then fewer MACs."""
    return (candidate.ood_acc, -candidate.macs)


def is_better(a: Candidate, b: Candidate) -> bool:
    """True if `a` is strictly fitter than `b` (equal keys keep the incumbent)."""
    return fitness_key(a) > fitness_key(b)


@dataclasses.dataclass(frozen=True)
class AddResult:
    """What `IslandArchive.add` did.

    Attributes:
      cell: the candidate's cell on its island.
      replaced_id: the incumbent it displaced from the cell, if any.
      is_new_best: strictly fitter than every earlier candidate (True for the first).
      accepted_in_cell: it now owns its cell (False: it joined the island as a non-elite).
      evicted_ids: members evicted from the island by the population cap.
    """

    cell: Cell
    replaced_id: str | None
    is_new_best: bool
    accepted_in_cell: bool
    evicted_ids: tuple[str, ...] = ()


class Sample(NamedTuple):
    """A parent and its inspirations; unpacks as `parent, top, diverse`."""

    parent: Candidate
    top: tuple[Candidate, ...]
    diverse: tuple[Candidate, ...]

"""The search's side of a step's context: structured records of its state (the parent's
origin, the task's split), built from archive candidates, the protocol and the run's data
record. Their prose is rendered in one place, `operator.context_text`."""

from __future__ import annotations

from typing import Any, Mapping

from spark_jax.operator.context_text import ClrsSplit, FamilySplit, ParentOrigin
from spark_jax.search.candidate import Candidate

__all__ = ["family_split", "origin", "task_split"]


def origin(parent: Candidate, best: Candidate | None, island: int) -> ParentOrigin:
    """Where `parent` came from (drawn from `island`) and the best program beside it."""
    return ParentOrigin(
        program_id=parent.id,
        attempt=None if parent.parent_id is None else parent.iteration,
        edited_from=parent.parent_id,
        island=island,
        migrated=bool(parent.migrated),
        parent_ood=parent.ood_acc,
        best_id=None if best is None else best.id,
        best_ood=None if best is None else best.ood_acc,
    )


def task_split(protocol: Any) -> ClrsSplit:
    """The train / validation / OOD test graph sizes of a CLRS protocol."""
    return ClrsSplit.from_protocol(protocol)


def family_split(record: Mapping[str, Any]) -> FamilySplit:
    """A task family's fixed data split and seeds (its data record)."""
    return FamilySplit.from_record(record)

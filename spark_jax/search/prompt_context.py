"""Text the search gives the editor about its state: the parent's provenance and the task's
OOD split (pure functions of archive candidates and the protocol)."""

from __future__ import annotations

from typing import Any

from spark_jax.search.candidate import Candidate

__all__ = ["provenance", "task_split"]


def provenance(parent: Candidate, best: Candidate | None, island: int) -> str:
    """Where the parent came from and why it may not be the best program."""
    origin = (
        "the seed program"
        if parent.parent_id is None
        else f"made at attempt {parent.iteration} by editing {parent.parent_id}"
    )
    text = f"program {parent.id}, {origin}; drawn from island {island}"
    if parent.migrated:
        text += " (a copy migrated from another island)"
    if best is None or best.id == parent.id:
        return text + "; it is the best program so far."
    return (
        text + f". It is not the best program so far ({best.id}, OOD {best.ood_acc:.4f} vs "
        f"{parent.ood_acc:.4f}): the archive samples parents across islands and fitness "
        "levels on purpose, to keep exploring, so a weaker parent is expected."
    )


def task_split(protocol: Any) -> str:
    """The train / validation / OOD test graph sizes of a protocol, in one sentence."""
    train = ", ".join(str(n) for n in protocol.train_lengths)
    return (
        f"Training graphs have N in {{{train}}} nodes and validation graphs "
        f"N={protocol.validation_length}; the out-of-distribution (OOD) test graphs have "
        f"N={protocol.test_length} nodes, larger than any training graph: the processor "
        "must generalise to sizes it never saw (OOD = larger graphs, same algorithm)."
    )

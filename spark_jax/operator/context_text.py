"""The prose of a step's context, rendered in one place from its structured records.

`StepContext` (editors) carries records, never pre-rendered text: the parent's origin
(`ParentOrigin`), the task's split (`ClrsSplit` or a family's `FamilySplit`), the CLRS task
whose inputs and outputs the prompts describe (or the family whose contract does), the search
signals (`signals.StepSignals`), the recent outcomes (`signals.Outcome`) and the training seeds
per candidate. `render(ctx)` turns them into the prompt fields every role and baseline fills:
`task_split`, `task_outputs`, `search_signals`, `score_noise`, `parent_provenance`,
`recent_outcomes`, `feasibility_summary`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from spark_jax.config.tasks import TASK_IO
from spark_jax.operator.prompts import DEFAULT_OUTPUTS, DEFAULT_SPLIT, noise_sentence
from spark_jax.operator.signals import Outcome, StepSignals

__all__ = [
    "ClrsSplit",
    "FamilySplit",
    "ParentOrigin",
    "feasibility_summary",
    "outcomes_text",
    "outputs_text",
    "provenance",
    "render",
    "signals_text",
    "split_text",
]


@dataclasses.dataclass(frozen=True)
class ParentOrigin:
    """Where a step's parent came from, and the best program beside it.

    Attributes:
      program_id: the parent's id. attempt, edited_from: the attempt that made it and the
        program it was edited from (both None for the seed). island: where it was drawn.
      migrated: a copy migrated from another island. parent_ood: its OOD score.
      best_id, best_ood: the best program so far (None: unknown, or the parent itself).
    """

    program_id: str
    attempt: int | None
    edited_from: str | None
    island: int
    migrated: bool = False
    parent_ood: float = 0.0
    best_id: str | None = None
    best_ood: float | None = None


def provenance(origin: ParentOrigin | None) -> str:
    """Where the parent came from and why it may not be the best program."""
    if origin is None:
        return "not recorded"
    came = (
        "the seed program"
        if origin.edited_from is None
        else f"made at attempt {origin.attempt} by editing {origin.edited_from}"
    )
    text = f"program {origin.program_id}, {came}; drawn from island {origin.island}"
    if origin.migrated:
        text += " (a copy migrated from another island)"
    if origin.best_id is None or origin.best_id == origin.program_id:
        return text + "; it is the best program so far."
    return (
        text + f". It is not the best program so far ({origin.best_id}, OOD "
        f"{origin.best_ood:.4f} vs {origin.parent_ood:.4f}): the archive samples parents "
        "across islands and fitness levels on purpose, to keep exploring, so a weaker parent "
        "is expected."
    )


@dataclasses.dataclass(frozen=True)
class ClrsSplit:
    """The CLRS graph sizes of a protocol: train, validation and OOD test."""

    train_lengths: tuple[int, ...]
    validation_length: int
    test_length: int
    val_samples: int
    test_samples: int

    @classmethod
    def from_protocol(cls, protocol: Any) -> "ClrsSplit":
        return cls(
            tuple(protocol.train_lengths),
            protocol.validation_length,
            protocol.test_length,
            protocol.val_samples,
            protocol.test_samples,
        )


@dataclasses.dataclass(frozen=True)
class FamilySplit:
    """A task family's fixed data split and seeds (its data record, in its order)."""

    items: tuple[tuple[str, Any], ...]

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "FamilySplit":
        return cls(tuple((k, v) for k, v in record.items() if k not in ("family", "benchmark")))


def split_text(split: ClrsSplit | FamilySplit | None) -> str:
    """The task's split in one paragraph (the default sentence when none is known)."""
    if split is None:
        return DEFAULT_SPLIT
    if isinstance(split, FamilySplit):
        items = ", ".join(f"{k}={v}" for k, v in split.items)
        return (
            f"The data split and seeds are fixed for the whole search: {items or 'not recorded'}."
        )
    train = ", ".join(str(n) for n in split.train_lengths)
    return (
        f"Training graphs have N in {{{train}}} nodes and validation graphs "
        f"N={split.validation_length}; the out-of-distribution (OOD) test graphs have "
        f"N={split.test_length} nodes, larger than any training graph: the processor "
        "must generalise to sizes it never saw (OOD = larger graphs, same algorithm). "
        f"Set sizes: {split.val_samples} validation and {split.test_samples} OOD test "
        "graphs (CLRS scales them up for a few tasks); a score is an average over these "
        "graphs' nodes, so two programs can tie exactly and validation can saturate near "
        "its top."
    )


_KINDS = {
    ("node", "pointer"): "for every node, the node it points to (a softmax over nodes, scored "
    "from the two nodes' embeddings and the pair's edge embedding)",
    ("edge", "pointer"): "for every node pair, a node it points to",
    ("node", "should_be_permutation"): "a permutation: for every node, its predecessor in the "
    "sorted order (decoded like a node pointer)",
    ("node", "mask"): "a 0/1 label per node",
    ("edge", "mask"): "a 0/1 label per node pair",
    ("graph", "mask"): "one 0/1 label per graph",
    ("node", "mask_one"): "exactly one selected node (a softmax over nodes)",
    ("edge", "categorical"): "one class per node pair",
}


def _feature(name: str, location: str, kind: str) -> str:
    if name == "pos":
        return "`pos` (node scalar: the node's index divided by N)"
    return f"`{name}` ({location} {kind})"


def outputs_text(io_task: str | None, family: str | None = None) -> str:
    """What the encoders read and the decoders produce for the CLRS task `io_task`, in two
    sentences; a named family's programs are described by its contract instead."""
    if family is not None:
        return f"see the {family} contract"
    if io_task is None:
        return DEFAULT_OUTPUTS
    if io_task not in TASK_IO:
        return "The task's outputs are decoded from the processor's node and edge embeddings."
    inputs, outputs, n_hints = TASK_IO[io_task]
    parts = [
        f"`{name}` ({location} {kind}: {_KINDS.get((location, kind), kind)})"
        for name, location, kind in outputs
    ]
    return (
        f"Encoded inputs: {', '.join(_feature(*f) for f in inputs)}. "
        f"Decoded output{'s' if len(parts) > 1 else ''}: {'; '.join(parts)}; the OOD score is "
        f"its accuracy on the test graphs. {n_hints} hints (the algorithm's intermediate "
        "states) are also decoded after every processor step and trained on, not scored. Every "
        "decoder reads `nxt_hidden` (beside the node features and the previous hidden state) "
        "and `nxt_edge` (beside `edge_fts`)."
    )


def signals_text(signals: StepSignals | None) -> str:
    """The router's view of the search signals (stagnation, recent feasibility failures)."""
    if signals is None:
        return "- none yet"
    described = signals.describe()
    return (
        f"- Stagnation over the last {signals.stagnation_window} evaluated candidates: "
        f"{described['stagnation']}\n"
        f"- Feasibility failure rate over the last {signals.failure_window} proposals: "
        f"{described['failure_rate']}\n"
        f"- Dominant failure types: {described['dominant_failures']}"
    )


def feasibility_summary(signals: StepSignals | None) -> str:
    """The route prompt's one line on recent feasibility failures."""
    if signals is None:
        return "no proposals yet"
    described = signals.describe()
    return f"{described['failure_rate']} failed; dominant: {described['dominant_failures']}"


def outcomes_text(outcomes: tuple[Outcome, ...]) -> str:
    """The recent proposals' outcomes, one line each, oldest first."""
    return "\n".join(o.line() for o in outcomes) or "- none yet"


def render(ctx: Any) -> dict[str, str]:
    """The prompt fields of a `StepContext`'s records, as text."""
    return dict(
        task_split=split_text(ctx.split),
        task_outputs=outputs_text(ctx.io_task, ctx.family),
        search_signals=signals_text(ctx.signals),
        score_noise=noise_sentence(ctx.fitness_seeds),
        parent_provenance=provenance(ctx.origin),
        recent_outcomes=outcomes_text(ctx.outcomes),
        feasibility_summary=feasibility_summary(ctx.router_signals),
    )

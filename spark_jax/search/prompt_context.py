"""Text the search gives the editor about its state: the parent's provenance and the task's
OOD split (pure functions of archive candidates and the protocol)."""

from __future__ import annotations

from typing import Any

from spark_jax.config.tasks import TASK_IO
from spark_jax.search.candidate import Candidate

__all__ = ["family_split", "provenance", "search_signals", "task_outputs", "task_split"]


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
        "must generalise to sizes it never saw (OOD = larger graphs, same algorithm). "
        f"Set sizes: {protocol.val_samples} validation and {protocol.test_samples} OOD test "
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


def task_outputs(task: str) -> str:
    """What the encoders read and the decoders produce for `task`, in two sentences."""
    if task not in TASK_IO:
        return "The task's outputs are decoded from the processor's node and edge embeddings."
    inputs, outputs, n_hints = TASK_IO[task]
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


def search_signals(history: Any) -> str:
    """The router's view of the search signals (stagnation, recent feasibility failures)."""
    described = history.signals("").describe()
    return (
        f"- Stagnation over the last {history.stagnation_window} evaluated candidates: "
        f"{described['stagnation']}\n"
        f"- Feasibility failure rate over the last {history.failure_window} proposals: "
        f"{described['failure_rate']}\n"
        f"- Dominant failure types: {described['dominant_failures']}"
    )


def family_split(record: dict[str, Any]) -> str:
    """A task family's fixed data split and seeds (its data record), in one sentence."""
    items = ", ".join(f"{k}={v}" for k, v in record.items() if k not in ("family", "benchmark"))
    return f"The data split and seeds are fixed for the whole search: {items or 'not recorded'}."

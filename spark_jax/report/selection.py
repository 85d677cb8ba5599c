"""What a run selected on, in one sentence for its report's verdict.

Under `fitness.source: ood_val` (the default) the search ranks candidates on a validation set
(CLRS: an OOD-size set drawn with its own sampler seed; another task family: a validation
split carved from its training data) and scores the test set only for the final programs, so
the reported test score never chose the program. Under `ood_test` (the paper's protocol) the
best program was chosen by the very test score the report prints: `selection_lines` says so
beside the verdict. Runs that predate the recorded source selected on the test set.
"""

from __future__ import annotations

from typing import Any, Mapping

from spark_jax import families
from spark_jax.families import DEFAULT_FAMILY
from spark_jax.report.accounting import find_meta

__all__ = ["TEST_SELECTED", "selection_lines", "selection_source"]

TEST_SELECTED = "the best program was selected on the test set"


def selection_source(meta: Mapping[str, Any]) -> tuple[str, bool]:
    """(source, recorded): the run's fitness source; an unrecorded one is 'ood_test' (the
    only behaviour before the source was recorded)."""
    source = find_meta(meta, "fitness_source") or find_meta(meta, "fitness.source")
    return (source or "ood_test"), source is not None


def selection_lines(meta: Mapping[str, Any]) -> list[str]:
    """The report's selection note (Markdown lines; [] when selection used a validation set)."""
    source, recorded = selection_source(meta)
    if source != "ood_test":
        return []
    name = find_meta(meta, "family") or DEFAULT_FAMILY
    try:
        family = families.get(name)
        test, val = family.test_part, family.val_part
        command = getattr(family, "remeasure_command", None)  # CLRS: `spark-jax benchmark`
    except ValueError:  # a run of a family that is not installed here
        test, val, command = f"{name} test split", "a validation split", None
    remeasure = (
        f" Re-measure it with `{command}` (training seeds the search never used) before quoting it."
        if command
        else ""
    )
    assumed = "" if recorded else " (not recorded by this run: runs before it was recorded did)"
    return [
        f"**Selection on the test set:** {TEST_SELECTED} ({test}; `fitness.source: ood_test`, "
        f"the paper's protocol{assumed}): the score reported for it is the score that chose "
        f"it, so it is biased upward (the winner's curse). `fitness.source: ood_val` (the "
        f"default) selects on {val} and scores the test set only for the final programs."
        + remeasure,
        "",
    ]

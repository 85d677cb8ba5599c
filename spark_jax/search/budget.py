"""The budget and duplicate rules, one for every method (the paper's, Sec. Budget Accounting).

  attempt     every proposal, whatever became of it
  evaluated   a proposal that is feasible and enters training, whatever training gives (an
              error or a NaN counts as much as a score): it counts toward the budget B
  duplicate   a proposal whose child equals (normalized source) a program that entered
              training before, the seed included, or (`fitness.duplicates: function`)
              computes its function on the task (`search.function_duplicates`): not
              trained again; an attempt, not evaluated, recorded with status 'failed' and
              failure stage and type 'duplicate'
  best at budget
              the best scored candidate among the first B evaluated ones; the seed is never
              one (it is its own row), so best at budget can fall below the seed

The run database counts (`RunQueries.evaluated_count`, `entered_training`,
`best_candidate`); this module says what a duplicate proposal becomes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from spark_jax.operator.step import Proposal

__all__ = ["DUPLICATE", "as_duplicate", "better_evaluation", "is_duplicate"]

DUPLICATE = "duplicate"  # failure stage and type of a proposal that repeats a trained program


def as_duplicate(proposal: Proposal, twin_id: str, same: str = "source") -> Proposal:
    """`proposal` recorded as a duplicate of program `twin_id` (its feasibility report, diff
    and entanglement kept, so the metrics still see what the edit touched); `same`: 'source'
    (equal normalized source) or 'function' (equal function fingerprint)."""
    what = "equal to" if same == "source" else "computes the same function as"
    return dataclasses.replace(
        proposal,
        status="failed",
        failure_stage=DUPLICATE,
        failure_type=DUPLICATE,
        reason=f"{what} program {twin_id}, which entered training already: not retrained",
    )


def is_duplicate(proposal: Proposal) -> bool:
    """Whether a recorded proposal is a duplicate (not an editor or feasibility failure)."""
    return proposal.failure_type == DUPLICATE


def better_evaluation(e: Mapping[str, Any], best: Mapping[str, Any] | None) -> bool:
    """Whether evaluation record `e` beats `best` (None: nothing yet): higher OOD wins; equal
    OOD: fewer MACs (a record without MACs never wins a tie); else the earlier record stays.
    The one rule for best at budget, the report's incumbent and the final programs."""
    if best is None:
        return True
    if e["ood_score"] != best["ood_score"]:
        return e["ood_score"] > best["ood_score"]
    return e["macs"] is not None and (best["macs"] is None or e["macs"] < best["macs"])

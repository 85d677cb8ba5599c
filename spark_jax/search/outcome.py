"""What a search hands back: its `SearchResult` at the end and `Progress` while it runs.

Both the training loop (`search.loop`) and proposal-only mode (`search.proposal_only`) return
and report these, so they live apart from either.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Progress", "SearchResult"]


@dataclasses.dataclass(frozen=True)
class SearchResult:
    run_dir: str
    attempts: int
    evaluated: int
    seed_ood: float
    # best/'s program (`search.best_program`): the best evaluated candidate, the seed apart;
    # the seed itself when no candidate scored.
    best_ood: float
    best_program_id: str
    best_path: str
    # Best at budget: the best evaluated candidate's OOD, the seed excluded (None: none scored).
    best_candidate_ood: float | None = None


@dataclasses.dataclass(frozen=True)
class Progress:
    """What the progress display shows."""

    attempt: int
    evaluated: int
    valid_rate: float
    best_ood: float | None
    stage: str

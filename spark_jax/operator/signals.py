"""Search signals for the Refinement Compass: stagnation and recent feasibility failures.

Following the paper's Algorithms 1 and 2: stagnation is measured over the last k (default 3)
*evaluated* candidates (none of them raised the best-so-far score), the failure rate and
dominant failure types over the last k' (default 10) *proposals*, kept in a FIFO buffer. A
proposal enters that buffer when its feasibility is decided: PASS as soon as it is feasible,
before training, so a training failure is an evaluation failure (its own status,
'eval_failed'), not a feasibility failure.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Deque


@dataclasses.dataclass(frozen=True)
class StepSignals:
    """What RC conditions its directive on.

    Attributes:
      stagnating: the last k evaluated candidates did not improve the best-so-far score
        (False until k candidates have been evaluated after the seed).
      failure_rate: infeasible or failed proposals / proposals, over the last k' proposals.
      dominant_failures: the most frequent failure types in that window, most frequent first.
      factor: the factor the directive is for.
      evaluated_in_window, proposals_in_window: how many observations the figures rest on.
      stagnation_window, failure_window: k and k', the window sizes (from the config).
    """

    stagnating: bool = False
    failure_rate: float = 0.0
    dominant_failures: tuple[str, ...] = ()
    factor: str = "ACTION"
    evaluated_in_window: int = 0
    proposals_in_window: int = 0
    stagnation_window: int = 3
    failure_window: int = 10

    def describe(self) -> dict[str, str]:
        """Prompt-ready strings."""
        return dict(
            stagnation=(
                "yes: no improvement of the best score"
                if self.stagnating
                else "no: the best score improved at least once (by any amount, possibly "
                "less than the seed noise)"
                if self.evaluated_in_window
                else "not enough evaluations yet"
            ),
            failure_rate=(
                f"{self.failure_rate:.0%} of {self.proposals_in_window}"
                if self.proposals_in_window
                else "no proposals yet"
            ),
            dominant_failures=", ".join(self.dominant_failures) or "none",
        )


PASS_STATUSES = ("feasible", "evaluated", "eval_failed")


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One proposal's outcome, for prompts and signals.

    status: 'failed' (no usable program), 'infeasible', 'feasible' (evaluation pending),
    'evaluated', or 'eval_failed' (feasible, but training or evaluation failed).
    summary: a one-line description of the change; val_score / ood_score once evaluated.
    """

    attempt: int
    factor: str | None
    status: str
    failure_type: str | None = None
    ood_score: float | None = None
    improved: bool = False
    summary: str = ""
    val_score: float | None = None
    parent_id: str | None = None

    def line(self) -> str:
        what = f"{self.factor or 'REWRITE'} edit"
        if self.parent_id:
            what += f" of {self.parent_id}"
        change = f": {self.summary}" if self.summary else ""
        if self.status == "evaluated":
            mark = " (new best)" if self.improved else ""
            val = f"val {self.val_score:.4f}, " if self.val_score is not None else ""
            result = f"evaluated, {val}OOD {self.ood_score:.4f}{mark}"
        elif self.status == "feasible":
            result = "feasible, evaluation pending"
        elif self.status == "eval_failed":
            result = f"feasible but training failed ({self.failure_type})"
        else:
            result = f"{self.status} ({self.failure_type})"
        return f"- attempt {self.attempt}, {what}{change} -> {result}"


class SearchHistory:
    """FIFO windows over proposals and evaluations (deterministic, no randomness)."""

    def __init__(
        self, stagnation_window: int = 3, failure_window: int = 10, outcome_window: int = 10
    ):
        if stagnation_window < 1 or failure_window < 1:
            raise ValueError("signal windows must be >= 1")
        self.stagnation_window = stagnation_window
        self.failure_window = failure_window
        self._proposals: Deque[Outcome] = collections.deque(maxlen=failure_window)
        self._outcomes: Deque[Outcome] = collections.deque(maxlen=outcome_window)
        self._improvements: Deque[bool] = collections.deque(maxlen=stagnation_window)
        self.best_score: float | None = None

    def seed(self, ood_score: float) -> None:
        """The initial program's score (evaluated before the loop; not a proposal)."""
        self.best_score = ood_score if self.best_score is None else max(self.best_score, ood_score)

    def record(self, outcome: Outcome) -> Outcome:
        """Adds an outcome: a proposal's feasibility verdict ('failed', 'infeasible',
        'feasible') enters the proposal window; an evaluation ('evaluated', 'eval_failed')
        updates the stagnation window and that attempt's line. An evaluation of an attempt
        never recorded as feasible also enters the proposal window, as PASS. Returns the
        outcome, with `improved` decided for evaluated ones."""
        if outcome.status == "evaluated":
            assert outcome.ood_score is not None
            improved = self.best_score is None or outcome.ood_score > self.best_score
            if improved:
                self.best_score = outcome.ood_score
            outcome = dataclasses.replace(outcome, improved=improved)
            self._improvements.append(improved)
        evaluation = outcome.status in ("evaluated", "eval_failed")
        known = [i for i, o in enumerate(self._outcomes) if o.attempt == outcome.attempt]
        if evaluation and known:
            previous = self._outcomes[known[-1]]
            outcome = dataclasses.replace(
                outcome,
                summary=outcome.summary or previous.summary,
                parent_id=outcome.parent_id or previous.parent_id,
            )
            self._outcomes[known[-1]] = outcome
        else:
            self._outcomes.append(outcome)
        if not evaluation or not any(o.attempt == outcome.attempt for o in self._proposals):
            self._proposals.append(outcome)
        return outcome

    def signals(self, factor: str) -> StepSignals:
        window = list(self._proposals)
        failures = [o.failure_type or o.status for o in window if o.status not in PASS_STATUSES]
        counts = collections.Counter(failures)
        dominant = tuple(t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))[:3]
        full = len(self._improvements) == self.stagnation_window
        return StepSignals(
            stagnating=full and not any(self._improvements),
            failure_rate=len(failures) / len(window) if window else 0.0,
            dominant_failures=dominant,
            factor=factor,
            evaluated_in_window=len(self._improvements),
            proposals_in_window=len(window),
            stagnation_window=self.stagnation_window,
            failure_window=self.failure_window,
        )

    def recent_outcomes(self) -> tuple[Outcome, ...]:
        return tuple(self._outcomes)

    def recent_text(self) -> str:
        return "\n".join(o.line() for o in self._outcomes) or "- none yet"

    def to_state(self) -> dict:
        """JSON-serializable state (for run snapshots)."""
        return dict(
            stagnation_window=self.stagnation_window,
            failure_window=self.failure_window,
            outcome_window=self._outcomes.maxlen,
            best_score=self.best_score,
            proposals=[dataclasses.asdict(o) for o in self._proposals],
            outcomes=[dataclasses.asdict(o) for o in self._outcomes],
            improvements=list(self._improvements),
        )

    @classmethod
    def from_state(cls, state: dict) -> "SearchHistory":
        h = cls(state["stagnation_window"], state["failure_window"], state["outcome_window"])
        h.best_score = state["best_score"]
        h._proposals.extend(Outcome(**o) for o in state["proposals"])
        h._outcomes.extend(Outcome(**o) for o in state["outcomes"])
        h._improvements.extend(state["improvements"])
        return h

"""The SPARK step (paper Algorithm 2): ASR -> RC -> SAR -> feasibility, as one immutable record.

`SparkOperator.step(ctx, attempt)` picks a factor (ASR, with R_asr retries and the ACTION
fallback; or random/fixed for ablations), asks for a directive (RC, from stagnation and
failure signals; skippable), asks for a complete program (SAR; FAIL when the tags are missing)
and runs the feasibility pipeline. Every call and parse outcome lands in the `Proposal`.
Mode 'rewrite' is the holistic (OpenEvolve-style) baseline: one unscoped edit call, locality
not enforced, entanglement still measured.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import re
from typing import Any, Callable

from spark_jax.config.sections import FACTOR_CHOICES, MODES, OperatorConfig, OperatorConfigError  # noqa: F401 - re-exported for callers of the step
from spark_jax.feasibility.checker import FeasibilityReport
from spark_jax.operator.editors import CallRecord, Editor, StepContext
from spark_jax.operator.signals import SearchHistory
from spark_jax.program import regions
from spark_jax.util import rngstate

Checker = Callable[[str, str, "str | None"], FeasibilityReport]


# A sentence ends at . ! or ? followed by space and a capital, a backtick or a digit; common
# abbreviations ("e.g. x", "i.e. y") do not end one.
_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<=[.!?])\s+(?=[A-Z`0-9(])")


def _cut_at_word(text: str, limit: int) -> str:
    """`text` shortened to at most `limit` characters at a word boundary, with '...'."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 3].rsplit(" ", 1)[0] if " " in text[: limit - 3] else text[: limit - 3]
    return cut.rstrip(" ,;:(") + "..."


def diff_lines(diff: str) -> tuple[int, int, list[str]]:
    """(added, removed, new code lines) of a unified diff; a re-indented or moved line is
    not new code, nor is a comment."""
    lines = diff.splitlines()
    added = [x[1:].strip() for x in lines if x.startswith("+") and not x.startswith("+++")]
    removed = [x[1:].strip() for x in lines if x.startswith("-") and not x.startswith("---")]
    moved = set(removed)
    code = [x for x in added if x and not x.startswith("#") and x not in moved]
    return len(added), len(removed), code


@dataclasses.dataclass(frozen=True)
class Proposal:
    """One attempt, the record the run database stores as it is: what was asked, what came
    back, and whether it is feasible.

    Attributes:
      attempt: the attempt index. island: the island its parent was drawn from.
      parent_id: the parent program's id. mode: 'spark' or 'rewrite'.
      factor: 'OPERATOR' / 'ACTION' (None for an unscoped rewrite); factor_source: 'asr',
        'fallback', 'random', 'fixed' or 'none'. directive: RC's directive ('' if none).
      child_source: the edited program (None when the edit produced none).
      status: 'feasible' (goes to evaluation), 'infeasible' (failed a feasibility stage) or
        'failed' (no usable program: LLM error, no code, missing tags).
      failure_stage, failure_type, reason: why it is not feasible ('edit' stage for 'failed').
      feasibility: the feasibility report (None when there was no program to check); it
        carries the region diff and the entanglement, computed once.
      calls: every role call of the attempt, in order. editor, is_llm: who edited.
      created_at: when it was stored (set by the run database).
    """

    attempt: int
    parent_id: str
    mode: str
    factor: str | None
    factor_source: str
    directive: str
    child_source: str | None
    status: str
    failure_stage: str | None
    failure_type: str | None
    reason: str
    feasibility: FeasibilityReport | None
    calls: tuple[CallRecord, ...]
    editor: str
    is_llm: bool
    island: int = 0
    created_at: float | None = None

    @property
    def diff(self) -> str:
        """Unified parent -> child diff ('' when there is no checked program)."""
        return self.feasibility.diff if self.feasibility is not None else ""

    @property
    def entanglement(self) -> str | None:
        """Which regions the edit touched (None when there is no checked program)."""
        return self.feasibility.entanglement if self.feasibility is not None else None

    @property
    def feasible(self) -> bool:
        return self.status == "feasible"

    def change_summary(self, limit: int = 300) -> str:
        """One line describing the change: the directive's leading whole sentences (at most
        `limit` characters), else the diff's size and the regions it touched."""
        if self.directive:
            sentences = _SENTENCE_END.split(self.directive.strip())
            kept = sentences[0]
            for sentence in sentences[1:]:  # as many whole sentences as fit
                if len(kept) + 1 + len(sentence) > limit:
                    break
                kept += " " + sentence
            return kept if len(kept) <= limit else _cut_at_word(kept, limit)
        if self.child_source is None:
            return "no usable program"
        added, removed, code = diff_lines(self.diff)
        shown = "; ".join(f"`{_cut_at_word(x, 70)}`" for x in code[:2])
        where = {
            "operator": "OPERATOR region",
            "action": "ACTION region",
            "entangled": "both regions",
            "scaffold": "scaffolding (tags or frozen code)",
            "none": "nothing",
        }.get(self.entanglement or "", "unknown regions")
        return f"changed {where}, +{added}/-{removed} lines" + (
            f", adding {shown}" if shown else ""
        )

    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["calls"] = [c.to_dict(timings) for c in self.calls]
        if not timings:
            d.pop("created_at")
        if self.feasibility is not None:
            fd = self.feasibility.to_dict()
            if not timings:
                fd.pop("timings", None)
                fd.pop("total_s", None)
            d["feasibility"] = fd
        return d

    def canonical_json(self) -> str:
        """Wall-clock-free JSON: equal for a recorded run and its replay."""
        return json.dumps(self.to_dict(timings=False), sort_keys=True)


class SparkOperator:
    """Runs SPARK steps with an editor and a feasibility checker."""

    def __init__(
        self,
        editor: Editor,
        checker: Checker,
        config: OperatorConfig | None = None,
        history: SearchHistory | None = None,
    ):
        self.editor = editor
        self.checker = checker
        self.config = config if config is not None else OperatorConfig()
        self.history = (
            history
            if history is not None
            else SearchHistory(self.config.stagnation_window, self.config.failure_window)
        )
        self._rng = random.Random(self.config.seed)

    def observe(self, program_id: str, source: str, evaluation: Any, proposal: Any) -> None:
        """An evaluated program (the seed: proposal None); SPARK keeps no population of its
        own (the archive is it), baselines do."""

    def observe_pool(
        self, program_id: str, source: str, evaluation: Any, parent: Any, description: str
    ) -> None:
        """An evaluated program of a proposal-only run's fixed pool, made from `parent` (a
        ProgramView, None for the seed) by an edit `description` says in words; SPARK reads
        the lineage from the prompt context, so it is `observe`."""
        self.observe(program_id, source, evaluation, None)

    def rng_state(self) -> Any:
        """JSON-serializable state of the random factor choice (for run snapshots)."""
        return rngstate.dump(self._rng)

    def load_rng_state(self, state: Any) -> None:
        """Restores `rng_state()` on resume."""
        rngstate.load(self._rng, state)

    async def _choose_factor(self, ctx: StepContext, calls: list) -> tuple[str, str]:
        choice = self.config.factor_choice
        if choice in regions.FACTORS:
            return choice, "fixed"
        if choice == "random":
            return self._rng.choice(regions.FACTORS), "random"
        for _ in range(self.config.asr_retries):
            out = await self.editor.route(ctx)
            calls.append(out.call)
            if out.value in regions.FACTORS:
                return out.value, "asr"
        return "ACTION", "fallback"

    async def step(self, ctx: StepContext, attempt: int) -> Proposal:
        calls: list[CallRecord] = []
        scoped = self.config.mode == "spark"
        factor, source, directive = None, "none", ""
        if scoped:
            factor, source = await self._choose_factor(ctx, calls)
            if self.config.use_rc:
                out = await self.editor.direct(ctx, factor, self.history.signals(factor))
                calls.append(out.call)
                directive = out.value or ""
        out = await self.editor.edit(ctx, factor, directive)
        calls.append(out.call)
        base = dict(
            attempt=attempt,
            parent_id=ctx.parent.id,
            island=ctx.island,
            mode=self.config.mode,
            factor=factor,
            factor_source=source,
            directive=directive,
            calls=tuple(calls),
            editor=self.editor.name,
            is_llm=self.editor.is_llm,
        )
        if out.value is None:
            return Proposal(
                child_source=None,
                status="failed",
                failure_stage="edit",
                failure_type=out.call.parse_outcome.split(":")[0],
                reason=out.call.error or out.call.parse_outcome,
                feasibility=None,
                **base,
            )
        child = out.value
        report = await asyncio.to_thread(self.checker, child, ctx.parent.source, factor)
        return Proposal(
            child_source=child,
            status="feasible" if report.feasible else "infeasible",
            failure_stage=report.failure_stage,
            failure_type=report.failure_type,
            reason=report.reason,
            feasibility=report,
            **base,
        )

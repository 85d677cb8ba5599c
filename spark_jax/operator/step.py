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
from typing import Any, Callable

from spark_jax.program import regions
from spark_jax.operator.editors import CallRecord, Editor, StepContext
from spark_jax.feasibility.checker import FeasibilityReport
from spark_jax.operator.signals import SearchHistory

FACTOR_CHOICES = ("asr", "random", "OPERATOR", "ACTION")
MODES = ("spark", "rewrite")

Checker = Callable[[str, str, "str | None"], FeasibilityReport]


class OperatorConfigError(ValueError):
    """Bad operator configuration; the message names the key."""


@dataclasses.dataclass(frozen=True)
class OperatorConfig:
    """The SPARK operator and its ablations.

    Attributes:
      mode: 'spark' (factor-scoped) or 'rewrite' (holistic baseline, no factor).
      factor_choice: 'asr' (router), 'random', or a fixed 'OPERATOR' / 'ACTION'.
      use_rc: ask RC for a directive (False: SAR gets no directive).
      asr_retries: R_asr, router attempts before falling back to ACTION.
      stagnation_window: k; failure_window: k' (RC signals).
      directive_max_chars: RC sanitization cap.
      seed: RNG seed of random factor choice.
    """

    mode: str = "spark"
    factor_choice: str = "asr"
    use_rc: bool = True
    asr_retries: int = 3
    stagnation_window: int = 3
    failure_window: int = 10
    directive_max_chars: int = 600
    seed: int = 0

    def __post_init__(self):
        if self.mode not in MODES:
            raise OperatorConfigError(f"operator.mode: must be one of {MODES} (got {self.mode!r})")
        if self.factor_choice not in FACTOR_CHOICES:
            raise OperatorConfigError(f"operator.factor_choice: must be one of {FACTOR_CHOICES} "
                                      f"(got {self.factor_choice!r})")
        for key in ("asr_retries", "stagnation_window", "failure_window", "directive_max_chars"):
            if not isinstance(getattr(self, key), int) or getattr(self, key) < 1:
                raise OperatorConfigError(f"operator.{key}: must be an integer >= 1 "
                                          f"(got {getattr(self, key)!r})")

    @property
    def variant(self) -> str:
        """The paper's name for this configuration."""
        if self.mode == "rewrite":
            return "Global Rewrite"
        scope = {"asr": "ASR", "random": "Random-Scope", "OPERATOR": "Fixed-OP",
                 "ACTION": "Fixed-ACT"}[self.factor_choice]
        if self.factor_choice == "asr":
            return "SPARK (ASR+RC+SAR)" if self.use_rc else "ASR+SAR"
        return f"{scope} RC+SAR" if self.use_rc else f"{scope} SAR"


@dataclasses.dataclass(frozen=True)
class Proposal:
    """One attempt: what was asked, what came back, and whether it is feasible.

    status: 'feasible' (goes to evaluation), 'infeasible' (failed a feasibility stage), or
    'failed' (no usable program: LLM error, no code, missing tags).
    """

    attempt: int
    parent_id: str
    mode: str
    factor: str | None
    factor_source: str  # 'asr' | 'fallback' | 'random' | 'fixed' | 'none'
    directive: str
    child_source: str | None
    status: str
    failure_stage: str | None
    failure_type: str | None
    reason: str
    feasibility: FeasibilityReport | None
    entanglement: str | None
    diff: str
    calls: tuple[CallRecord, ...]
    editor: str
    is_llm: bool

    @property
    def feasible(self) -> bool:
        return self.status == "feasible"

    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["calls"] = [c.to_dict(timings) for c in self.calls]
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

    def __init__(self, editor: Editor, checker: Checker, config: OperatorConfig | None = None,
                 history: SearchHistory | None = None):
        self.editor = editor
        self.checker = checker
        self.config = config if config is not None else OperatorConfig()
        self.history = history if history is not None else SearchHistory(
            self.config.stagnation_window, self.config.failure_window)
        self._rng = random.Random(self.config.seed)

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
        base = dict(attempt=attempt, parent_id=ctx.parent.id, mode=self.config.mode,
                    factor=factor, factor_source=source, directive=directive,
                    calls=tuple(calls), editor=self.editor.name, is_llm=self.editor.is_llm)
        if out.value is None:
            return Proposal(child_source=None, status="failed", failure_stage="edit",
                            failure_type=out.call.parse_outcome.split(":")[0],
                            reason=out.call.error or out.call.parse_outcome, feasibility=None,
                            entanglement=None, diff="", **base)
        child = out.value
        report = await asyncio.to_thread(self.checker, child, ctx.parent.source, factor)
        diff = ""
        try:
            diff = regions.diff_regions(ctx.parent.source, child).unified
        except regions.TemplateError:
            pass
        return Proposal(child_source=child,
                        status="feasible" if report.feasible else "infeasible",
                        failure_stage=report.failure_stage, failure_type=report.failure_type,
                        reason=report.reason, feasibility=report,
                        entanglement=report.entanglement, diff=diff, **base)

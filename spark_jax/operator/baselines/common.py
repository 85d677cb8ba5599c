"""What every baseline operator shares: population members, LLM or offline-analogue calls,
and the step that turns a parsed child into a `Proposal` on the common backbone.

A baseline is an operator (same seam as `SparkOperator`: `step(ctx, attempt)`, `observe`,
`rng_state` / `load_rng_state`), so it shares the search loop's seed program, feasibility
check, training, archive and budget accounting. Its own population (islands, generations)
lives in the operator's state, which the loop snapshots with every proposal and evaluation.

With an LLM editor a baseline asks the editor's backend (recorded and replayed like every
other call) with its own templates from `prompts/`. With the offline editor it runs an
offline analogue built from the rule-based catalogue transforms: NOT an LLM, labelled
`offline analogue` in every call record and proposal.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import hashlib
import random
from typing import Any, Callable, Sequence

from spark_jax.config.sections import OperatorConfig
from spark_jax.operator.editors import CallRecord, Editor, LLMEditor, StepContext, ask_and_parse
from spark_jax.operator.offline import CATALOGUE, TransformNotApplicable
from spark_jax.operator.prompts import PROMPTS_DIR, PromptLibrary, read_template
from spark_jax.operator.signals import SearchHistory
from spark_jax.operator.step import Proposal
from spark_jax.program import regions
from spark_jax.util import rngstate

OFFLINE_ANALOGUE = "offline-analogue"  # editor / backend name of every offline-analogue record
OFFLINE_NOTE = "offline analogue (NOT an LLM): rule-based catalogue transforms"
# SPARK's contract in a baseline's library: a placeholder that names itself, so that a baseline
# template asking for `${contract}` shows it at once (tests assert no baseline prompt holds it).
SPARK_ONLY = "(SPARK's contract is not part of a baseline's prompt)"


@dataclasses.dataclass(frozen=True)
class Member:
    """An evaluated program in a baseline's own population."""

    id: str
    source: str
    score: float
    macs: float = 0.0
    thought: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Member":
        return cls(**d)


@dataclasses.dataclass(frozen=True)
class ScaleEntry:
    """One scale parameter of a baseline: the value this run uses, the original's default,
    and the rule that relates them (for the report: the stats helper renders it)."""

    parameter: str
    ours: str
    original: str
    rule: str

    def to_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Child:
    """What a baseline's proposal step produced: the parent it is checked against, the child
    (None: nothing usable, `outcome` says why), its calls and an optional idea text."""

    parent_id: str
    parent_source: str
    child: str | None
    calls: tuple[CallRecord, ...]
    outcome: str = "ok"
    error: str = ""
    thought: str = ""


def load_templates(names: Sequence[str]) -> PromptLibrary:
    """The baseline's templates (`prompts/NAME.md`) with the shared system prompt and task
    description (`${task_description}`). SPARK's own contract (regions, factor-scoped edits)
    is left out: `${contract}` in a baseline's template would render a placeholder saying so."""
    base = PromptLibrary.load()
    templates = {name: read_template(PROMPTS_DIR / f"{name}.md") for name in names}
    return PromptLibrary(
        templates, base.system, SPARK_ONLY, base.task_description, directory=str(PROMPTS_DIR)
    )


def offline_call(role: str, prompt: str, response: str, what: str, outcome: str = "ok"):
    """A call record of the offline analogue (is_llm False; backend 'offline-analogue')."""
    return CallRecord.not_llm(
        role, prompt, response, OFFLINE_ANALOGUE, f"{OFFLINE_ANALOGUE}:{what}", outcome
    )


def no_transform_child(role: str, prompt: str, parent: Any, error: Exception) -> Child:
    """The offline analogue's step when no catalogue transform applies to `parent` (a member
    or program view: its `id` and `source`): no child, one call record saying so."""
    call = offline_call(role, prompt, "", "catalogue", "no_applicable_transform")
    return Child(parent.id, parent.source, None, (call,), call.parse_outcome, str(error))


def offline_child(
    role: str,
    prompt: str,
    parent: Any,
    child: str,
    what: str,
    response: str | None = None,
    thought: str = "",
) -> Child:
    """The offline analogue's step that made `child` from `parent` (its `id` and `source`) with
    the transforms `what`: one call record answering `response` (None: the child itself)."""
    call = offline_call(role, prompt, child if response is None else response, what)
    return Child(parent.id, parent.source, child, (call,), thought=thought)


def sha(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def mutate(
    source: str,
    rng: random.Random,
    factor=None,
    magnitude=None,
    avoid=frozenset(),
    catalogue: Sequence[Any] = CATALOGUE,
) -> tuple[str, str]:
    """One applicable transform of `catalogue` (of `factor` / `magnitude` when some apply)
    whose child is not in `avoid` (source hashes); returns (child, transform name); raises
    TransformNotApplicable when none applies."""
    pool = [t for t in catalogue if factor is None or t.factor == factor]
    pool = [t for t in pool if t.applies(source)]
    preferred = [t for t in pool if magnitude is None or t.magnitude == magnitude]
    pool = preferred or pool
    rng.shuffle(pool)
    for t in pool:
        try:
            child = t.apply(source, rng)
        except TransformNotApplicable:
            continue
        if sha(child) not in avoid:
            return child, t.name
    raise TransformNotApplicable("no catalogue transform applies to this program")


def crossover(a: str, b: str) -> str | None:
    """A's OPERATOR region with B's ACTION region when their scaffolding is the same (the
    child is then a mix of two parents' regions), else None."""
    try:
        ra, rb = regions.parse_regions(a), regions.parse_regions(b)
    except regions.TemplateError:
        return None
    if ra.scaffolding != rb.scaffolding:
        return None
    return regions.replace_region(a, "ACTION", rb.body("ACTION"))


def tags_outcome(program: str) -> str:
    """'ok', or 'tags_broken: ...' (the program still goes to feasibility, whose template
    stage rejects it and counts it as a scaffold edit, as for SPARK's editor)."""
    try:
        regions.parse_regions(program)
    except regions.TemplateError as e:
        return f"tags_broken: {e.reason}"
    return "ok"


class BaselineOperator(abc.ABC):
    """A baseline search method as an operator; subclasses implement `propose`."""

    method: str = "baseline"
    templates: tuple[str, ...] = ()

    def __init__(
        self,
        editor: Editor,
        checker: Callable,
        config: OperatorConfig,
        history: SearchHistory | None = None,
    ):
        self.editor, self.checker, self.config, self.history = editor, checker, config, history
        self.is_llm = isinstance(editor, LLMEditor)
        self.backend = editor.backend if self.is_llm else None
        # The offline analogue edits with the offline editor's catalogue (the task family's).
        self.catalogue = tuple(getattr(editor, "catalogue", None) or CATALOGUE)
        self.prompts = load_templates(self.templates)
        self._rng = random.Random(config.seed)
        self.known: set[str] = set()  # hashes of every program proposed or evaluated

    # -- the population seam ----------------------------------------------------------------
    def observe(self, program_id: str, source: str, evaluation: Any, proposal: Any) -> None:
        """An evaluated program (the seed: proposal None); failed evaluations never come."""
        self.known.add(sha(source))
        self.admit(program_id, source, evaluation, proposal)

    def observe_pool(
        self, program_id: str, source: str, evaluation: Any, parent: Any, description: str
    ) -> None:
        """A proposal-only run's pool program, made from `parent` (a ProgramView, None for the
        seed) by the edit `description` says; methods that keep lineage (OpenEvolve's changes,
        EoH's ideas) override it, the others see an evaluated program."""
        self.observe(program_id, source, evaluation, None)

    def admit(self, program_id: str, source: str, evaluation: Any, proposal: Any) -> None:
        """Puts an evaluated program into the method's own population (if it has one)."""

    def scale_note(self) -> tuple[ScaleEntry, ...]:
        """The method's scale parameters against its original's defaults (recorded with the
        operator's state as `scale_note`)."""
        return ()

    def population_state(self) -> dict[str, Any]:
        return {}

    def load_population_state(self, state: dict[str, Any]) -> None:
        pass

    def rng_state(self) -> Any:
        return dict(
            rng=rngstate.dump(self._rng),
            population=self.population_state(),
            known=sorted(self.known),
            scale_note=[e.to_dict() for e in self.scale_note()],
        )

    def load_rng_state(self, state: Any) -> None:
        rngstate.load(self._rng, state["rng"])
        self.load_population_state(state["population"])
        self.known = set(state.get("known", ()))

    # -- calls ------------------------------------------------------------------------------
    async def ask(
        self, role: str, prompt: str, parse, system: str | None = None
    ) -> tuple[Any, CallRecord]:
        """One LLM call parsed by `parse(text) -> (value, outcome)`; never raises (SPARK's
        call path: `editors.ask_and_parse`). `system` defaults to the shared system prompt."""
        system = self.prompts.system if system is None else system
        return await ask_and_parse(self.backend, role, prompt, system, lambda r: parse(r.text))

    @abc.abstractmethod
    async def propose(self, ctx: StepContext, attempt: int) -> Child:
        """Picks parents, asks (or runs the offline analogue), parses: one child."""

    async def step(self, ctx: StepContext, attempt: int) -> Proposal:
        out = await self.propose(ctx, attempt)
        if out.child is not None:
            if out.child == out.parent_source:  # OpenEvolve's no-op: reported apart, not retrained
                error = "unchanged: the answer leaves the parent as it was"
                out = dataclasses.replace(out, child=None, outcome="duplicate", error=error)
            else:  # a repeat of a trained program: the search loop's duplicate rule
                self.known.add(sha(out.child))
        base = dict(
            attempt=attempt,
            parent_id=out.parent_id,
            island=ctx.island,
            mode=self.method,
            factor=None,
            factor_source="none",
            directive=out.thought,
            calls=out.calls,
            editor="llm" if self.is_llm else OFFLINE_ANALOGUE,
            is_llm=self.is_llm,
        )
        if out.child is None:
            return Proposal(
                child_source=None,
                status="failed",
                failure_stage="edit",
                failure_type=out.outcome.split(":")[0],
                reason=out.error or out.outcome,
                feasibility=None,
                **base,
            )
        report = await asyncio.to_thread(self.checker, out.child, out.parent_source, None)
        return Proposal(
            child_source=out.child,
            status="feasible" if report.feasible else "infeasible",
            failure_stage=report.failure_stage,
            failure_type=report.failure_type,
            reason=report.reason,
            feasibility=report,
            **base,
        )


def score_of(evaluation: Any) -> tuple[float, float]:
    """(score, MACs) of an evaluation record; the score is the archive's fitness (the mean
    over the candidate's seeds where the record has one)."""
    score = getattr(evaluation, "score_mean", None)
    score = evaluation.score if score is None else score
    return float(score), float(evaluation.macs or 0.0)


def metrics_line(m: Member) -> str:
    return f"ood_score={m.score:.4f}, macs={m.macs:.0f}"

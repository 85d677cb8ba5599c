"""Editors: who plays SPARK's three roles (route, directive, edit).

`Editor` is the small boundary the operator talks to. `LLMEditor` renders the role prompts
from `prompts/`, calls an LLM backend and parses the answers deterministically;
`OfflineEditor` (in `spark_jax.offline`) plays the same roles by rules, with no LLM.
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
from typing import Any, Mapping, Sequence

from spark_jax.llm import LLMBackend, LLMError, LLMResponse
from spark_jax.llm.parsing import extract_program, parse_factor, sanitize_directive
from spark_jax.operator import context_text
from spark_jax.operator.context_text import ClrsSplit, FamilySplit, ParentOrigin
from spark_jax.operator.prompts import PromptLibrary, masking_rule
from spark_jax.operator.signals import Outcome, StepSignals
from spark_jax.operator.two_step import submodule_note, unused_line
from spark_jax.program import regions


@dataclasses.dataclass(frozen=True)
class ProgramView:
    """A program as the editor sees it: id, source, metrics, and where it came from
    (`parent_id`: the program it was edited from, None for the seed)."""

    id: str
    source: str
    metrics: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    parent_id: str | None = None

    def metrics_text(self) -> str:
        keys = ("ood_score", "val_score", "macs", "params")
        parts = [
            f"{k}={self.metrics[k]:.4f}"
            if isinstance(self.metrics[k], float)
            else f"{k}={self.metrics[k]}"
            for k in keys
            if k in self.metrics
        ]
        return ", ".join(parts) or "not evaluated"


@dataclasses.dataclass(frozen=True)
class StepContext:
    """The evolution context H_t of one step: parent (drawn from `island`), inspirations,
    recent outcomes. Records only: the prompts' prose is rendered from them in one place
    (`context_text.render`; None and () render the "not known yet" sentences).

    Attributes:
      task: the benchmark's name. parent, top, diverse: the programs shown.
      outcomes: the recent proposals' outcomes, oldest first.
      router_signals: the signals behind the route prompt's feasibility summary.
      signals: the search signals (stagnation, feasibility failures).
      origin: where the parent came from. split: the task's data split.
      io_task: the CLRS task whose inputs and outputs the prompts describe; family: the name
        of a family whose contract describes them instead (None: CLRS's task description).
      macs_nodes: the graph size MACs are counted at. fitness_seeds: training seeds per score.
      contract: a task family's contract text ('': the CLRS processor contract).
    """

    task: str
    parent: ProgramView
    top: tuple[ProgramView, ...] = ()
    diverse: tuple[ProgramView, ...] = ()
    outcomes: tuple[Outcome, ...] = ()
    router_signals: StepSignals | None = None
    island: int = 0
    origin: ParentOrigin | None = None
    split: ClrsSplit | FamilySplit | None = None
    io_task: str | None = None
    family: str | None = None
    signals: StepSignals | None = None
    macs_nodes: int = 16
    fitness_seeds: int = 1
    contract: str = ""


@dataclasses.dataclass(frozen=True)
class CallRecord:
    """One role call, LLM or not, as stored with the proposal."""

    role: str
    prompt: str
    prompt_sha256: str
    response: str
    reasoning: str
    parse_outcome: str
    backend: str
    model: str
    is_llm: bool
    ok: bool
    error: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 1

    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if not timings:
            d.pop("latency_s")
        return d

    @classmethod
    def not_llm(
        cls,
        role: str,
        prompt: str,
        response: str,
        backend: str,
        model: str,
        outcome: str = "ok",
        ok: bool | None = None,
        error: str | None = None,
    ) -> "CallRecord":
        """A call answered by rules, not a model (is_llm False, no reasoning or tokens);
        `ok` and `error` default to what `outcome` says."""
        return cls(
            role=role,
            prompt=prompt,
            prompt_sha256=hashlib.sha256(prompt.encode()).hexdigest(),
            response=response,
            reasoning="",
            parse_outcome=outcome,
            backend=backend,
            model=model,
            is_llm=False,
            ok=outcome == "ok" if ok is None else ok,
            error=("" if outcome == "ok" else outcome) if error is None else error,
        )


@dataclasses.dataclass(frozen=True)
class RoleOutput:
    """A role's parsed result (None when parsing failed) and the call that produced it."""

    value: str | None
    call: CallRecord


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_call_record(
    role: str,
    prompt: str,
    response: LLMResponse | None,
    parse_outcome: str,
    error: str = "",
    *,
    backend: str = "",
    is_llm: bool = True,
) -> CallRecord:
    if response is None:
        return CallRecord(
            role=role,
            prompt=prompt,
            prompt_sha256=_sha(prompt),
            response="",
            reasoning="",
            parse_outcome=parse_outcome,
            backend=backend,
            model="",
            is_llm=is_llm,
            ok=False,
            error=error,
        )
    return CallRecord(
        role=role,
        prompt=prompt,
        prompt_sha256=_sha(prompt),
        response=response.text,
        reasoning=response.reasoning,
        parse_outcome=parse_outcome,
        backend=response.backend,
        model=response.model,
        is_llm=response.is_llm,
        ok=not error,
        error=error,
        prompt_tokens=response.prompt_tokens,
        completion_tokens=response.completion_tokens,
        latency_s=response.latency_s,
        attempts=response.attempts,
    )


class Editor(abc.ABC):
    """The three SPARK roles. Implementations never raise for bad model output or LLM errors:
    they return RoleOutput(value=None, call=...) with the reason in the call record."""

    name: str = "editor"
    is_llm: bool = True

    @abc.abstractmethod
    async def route(self, ctx: StepContext) -> RoleOutput:
        """ASR: returns 'OPERATOR' or 'ACTION' (or None if no factor token could be parsed)."""

    @abc.abstractmethod
    async def direct(self, ctx: StepContext, factor: str, signals: StepSignals) -> RoleOutput:
        """RC: a sanitized prose directive for editing `factor`."""

    @abc.abstractmethod
    async def edit(self, ctx: StepContext, factor: str | None, directive: str) -> RoleOutput:
        """SAR: a complete program (factor None: an unscoped, holistic rewrite)."""

    def observe(self, factor: str | None, success: bool, detail: Any = None) -> None:
        """Feedback after a proposal is judged (used by adaptive rule-based editors)."""

    def state(self) -> dict[str, Any]:
        """JSON-serializable state, stored in run snapshots (stateless editors: {})."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restores `state()` on resume."""

    async def aclose(self) -> None:
        """Releases resources (HTTP clients)."""


def relation(view: ProgramView, parent: ProgramView) -> str:
    """How an inspiration is related to the parent, in words."""
    if view.id == parent.id:
        return "the parent itself"
    if view.parent_id is not None and view.parent_id == parent.id:
        return "a child of the parent"
    if parent.parent_id is not None and parent.parent_id == view.id:
        return "the parent's own parent"
    if view.parent_id is not None and view.parent_id == parent.parent_id:
        return "a sibling of the parent (same parent)"
    if view.parent_id is None:
        return "the seed program"
    return "another lineage"


# Differences in OOD score below this are labelled as seed noise (the contract says why).
NOISE_BAND = 0.02


def _versus(view: ProgramView, parent: ProgramView) -> str:
    mine, theirs = view.metrics.get("ood_score"), parent.metrics.get("ood_score")
    if not isinstance(mine, (int, float)) or not isinstance(theirs, (int, float)):
        return "not comparable"
    delta = mine - theirs
    if abs(delta) < NOISE_BAND:
        return f"OOD {delta:+.4f}, within seed noise of the parent"
    word = "better than" if delta > 0 else "worse than"
    return f"OOD {delta:+.4f}, {word} the parent"


def _both_regions(view: ProgramView, parent: ProgramView) -> str | None:
    """Both regions of `view`, tags included, when its scaffolding equals the parent's (then
    they are the whole difference); None otherwise."""
    try:
        mine, theirs = regions.parse_regions(view.source), regions.parse_regions(parent.source)
    except regions.TemplateError:
        return None
    if mine.scaffolding != theirs.scaffolding:
        return None
    parts, changed = [], []
    for factor in regions.FACTORS:
        span = mine.span(factor)
        parts.append("\n".join(mine.lines[span.begin : span.end + 1]))
        if mine.body(factor) != theirs.body(factor):
            changed.append(factor)
    same = [f for f in regions.FACTORS if f not in changed]
    label = (
        "; differs from the parent in " + " and ".join(changed)
        if changed
        else "; identical regions"
    ) + (f", {' and '.join(same)} identical" if changed and same else "")
    return label + ":\n```python\n" + "\n    ...\n".join(parts)


def program_views(views: Sequence[ProgramView], parent: ProgramView) -> str:
    """Inspiration programs, each with its scores and its relation to the parent: both
    regions when its scaffolding is the parent's (the rest is identical), else the whole
    program."""
    blocks = []
    for v in views:
        head = f"### {v.id}: {relation(v, parent)}; {v.metrics_text()}; {_versus(v, parent)}"
        regions_only = _both_regions(v, parent)
        if regions_only is None:
            blocks.append(f"{head}\nWhole program:\n```python\n{v.source.rstrip()}\n```")
        else:
            blocks.append(
                f"{head}\nSame scaffolding as the parent; its two regions{regions_only}\n```"
            )
    return "\n\n".join(blocks) or "(none yet)"


def role_fields(ctx: StepContext) -> dict[str, Any]:
    """The prompt fields every role shares: task, contract fields, parent and history."""
    text = context_text.render(ctx)
    text.pop("feasibility_summary")  # the route prompt's alone
    return dict(
        task=ctx.task,
        macs_nodes=ctx.macs_nodes,
        masking_rule=masking_rule(ctx.parent.source),
        parent_metrics=ctx.parent.metrics_text(),
        parent_source=ctx.parent.source.rstrip(),
        top_inspirations=program_views(ctx.top, ctx.parent),
        diverse_inspirations=program_views(ctx.diverse, ctx.parent),
        contract_text=ctx.contract,
        **text,
    )


TRUNCATED = "truncated"


async def ask_and_parse(backend, role: str, prompt: str, system: str, parse):
    """One LLM call, parsed by `parse(response) -> (value, outcome)`: `(value, CallRecord)`,
    never raising; the one call path of SPARK's roles and every baseline. A failed call keeps
    its latency and retries; an answer cut off at max_tokens is never parsed (so it is not
    misread as a missing factor, a half directive or missing tags)."""
    try:
        response = await backend.complete(role, prompt, system=system)
    except LLMError as e:
        rec = make_call_record(role, prompt, None, "llm_error", str(e), backend=backend.name)
        return None, dataclasses.replace(rec, latency_s=e.latency_s, attempts=e.attempts)
    if response.finish_reason == "length":
        error = "answer cut off at max_tokens (finish_reason 'length')"
        return None, make_call_record(role, prompt, response, TRUNCATED, error)
    value, outcome = parse(response)
    return value, make_call_record(role, prompt, response, outcome)


class LLMEditor(Editor):
    """Role prompts + one LLM backend + deterministic parsers."""

    def __init__(
        self,
        backend: LLMBackend,
        prompts: PromptLibrary | None = None,
        directive_max_chars: int = 600,
    ):
        self.backend = backend
        self.prompts = prompts if prompts is not None else PromptLibrary.load()
        self.directive_max_chars = directive_max_chars
        self.name = "llm"  # the transport (record/replay/openai) is in each call record
        self.is_llm = True

    async def _ask(self, role: str, prompt: str, parse) -> RoleOutput:
        system = self.prompts.system
        return RoleOutput(*await ask_and_parse(self.backend, role, prompt, system, parse))

    async def route(self, ctx: StepContext) -> RoleOutput:
        prompt = self.prompts.render(
            "route",
            feasibility_summary=context_text.feasibility_summary(ctx.router_signals),
            unused_submodules=unused_line(ctx.parent.source),
            **role_fields(ctx),
        )

        def parse(r: LLMResponse):
            factor = parse_factor(r.text)
            return factor, ("ok" if factor else "no_factor_line")

        return await self._ask("route", prompt, parse)

    async def direct(self, ctx: StepContext, factor: str, signals: StepSignals) -> RoleOutput:
        prompt = self.prompts.render(
            "directive",
            factor=factor,
            directive_max_chars=self.directive_max_chars,
            directive_max_words=self.directive_max_chars // 6,
            stagnation_window=signals.stagnation_window,
            failure_window=signals.failure_window,
            submodule_note=submodule_note(ctx.parent.source, factor),
            **signals.describe(),
            **role_fields(ctx),
        )

        def parse(r: LLMResponse):
            directive = sanitize_directive(r.text, self.directive_max_chars)
            return (directive or None), ("ok" if directive else "empty_directive")

        return await self._ask("directive", prompt, parse)

    async def edit(self, ctx: StepContext, factor: str | None, directive: str) -> RoleOutput:
        common = role_fields(ctx)
        if factor is None:
            prompt = self.prompts.render("rewrite", **common)
        else:
            other = "ACTION" if factor == "OPERATOR" else "OPERATOR"
            prompt = self.prompts.render(
                "edit",
                factor=factor,
                other_factor=other,
                directive=directive or "(no directive)",
                submodule_note=submodule_note(ctx.parent.source, factor),
                **common,
            )

        def parse(r: LLMResponse):
            program = extract_program(r.text)
            if program is None:
                return None, "no_program"
            try:
                regions.parse_regions(program)
            except regions.TemplateError as e:
                # Tags are scaffolding: the program still goes to feasibility, whose template
                # stage rejects it and counts it as a scaffold edit (entanglement).
                return program, f"tags_broken: {e.reason}"
            return program, "ok"

        return await self._ask("edit", prompt, parse)

    async def aclose(self) -> None:
        await self.backend.aclose()

"""The two controls every code-evolution claim needs (Gideoni, Risi, Gal 2026, "Simple
Baselines are Competitive with Code Evolution", arXiv 2602.16805), as operators on the same
backbone as every method (seed program, feasibility, training, archive, budget and duplicate
rules):

  sample      IID sampling: every attempt is asked from the task description and the seed
              program alone: no parent selection, no previous attempt, no archive. The prompt
              is the same at every attempt; the best evaluated sample is the result (the
              archive's best, as for every method).
  sequential  sequential sampling: every attempt sees the seed program and the last K attempts
              (K = `operator.sequential_window`, default 8), each as a unified diff against
              the seed with its score or failure type, oldest first; nothing else: no
              islands, no inspirations, no archive.

Each in two forms: full rewrite (`sample`, `sequential`: the answer is a complete program) and
region edit (`sample-regions`, `sequential-regions`: the answer is the code between the marker
lines, put into the seed in place of the code there), the latter where the seed's regions
parse (every search's seed does; otherwise the full-rewrite form runs). The form that ran is
the call's role: `sample-full`, `sample-regions`, `sequential-full`, `sequential-regions`.
A child is checked against the seed, without a factor (tag lines only), as every baseline's.

Offline analogue (NOT an LLM): one or two catalogue transforms (drawn at random) of the seed
(`sample`), or of the best evaluated program among the last K attempts, the seed when none of
them beats it (`sequential`); the catalogue's transforms each stay inside one region, so the
two forms run alike offline.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import textwrap
from typing import Any

from spark_jax.llm.parsing import extract_program, split_reasoning
from spark_jax.operator.baselines.common import (
    BaselineOperator,
    Child,
    Member,
    ScaleEntry,
    metrics_line,
    mutate,
    no_transform_child,
    offline_child,
    score_of,
    tags_outcome,
)
from spark_jax.operator.editors import ProgramView, StepContext, role_fields
from spark_jax.operator.offline import TransformNotApplicable
from spark_jax.program import regions

__all__ = ["CONTROLS", "MAX_DIFF_LINES", "ControlOperator", "splice_regions"]

# mode -> (kind, region-edit form)
CONTROLS = {
    "sample": ("sample", False),
    "sample-regions": ("sample", True),
    "sequential": ("sequential", False),
    "sequential-regions": ("sequential", True),
}
MAX_DIFF_LINES = 60  # an attempt's diff in the sequential prompt is cut after this many lines
_TAG_LINE = re.compile(r"^[ \t]*# SPARK:(BEGIN|END) (OPERATOR|ACTION)[ \t]*$")
_FINAL = ("evaluated", "eval_failed", "failed", "infeasible")


def splice_regions(seed: str, answer: str) -> tuple[str | None, str]:
    """The seed with the bodies of the marked parts the answer gives (each between its two
    marker lines, re-indented to the seed's) in place of its own; (program, 'ok') or (None,
    'no_regions: ...') when the answer holds no complete marked part."""
    code = extract_program(answer) or split_reasoning(answer)[0]
    lines = code.split("\n")
    tags: dict[tuple[str, str], int] = {}
    for i, line in enumerate(lines):
        m = _TAG_LINE.match(line)
        if m:
            tags.setdefault((m.group(1), m.group(2)), i)
    program, given = seed, []
    for factor in regions.FACTORS:
        begin, end = tags.get(("BEGIN", factor)), tags.get(("END", factor))
        if begin is None or end is None or end < begin:
            continue
        body = textwrap.dedent("\n".join(lines[begin + 1 : end])).strip("\n")
        indent = regions.parse_regions(program).span(factor).indent
        text = textwrap.indent(body, indent) + "\n" if body.strip() else ""
        program = regions.replace_region(program, factor, text)
        given.append(factor)
    if not given:
        return None, "no_regions: the answer holds no part between two marker lines"
    return program, "ok"


def _diff(seed: str, source: str) -> str:
    lines = list(
        difflib.unified_diff(
            seed.splitlines(), source.splitlines(), "starting program", "attempt", n=1,
            lineterm="",
        )
    )  # fmt: skip
    if not lines:
        return "(no change)"
    more = len(lines) - MAX_DIFF_LINES
    lines = lines[:MAX_DIFF_LINES] + ([f"... ({more} more diff lines)"] if more > 0 else [])
    return "\n".join(lines)


class ControlOperator(BaselineOperator):
    """IID (`sample`) or sequential (`sequential`) sampling from the seed program."""

    templates = ("sample", "sample_regions", "sequential", "sequential_regions")

    def __init__(self, *args, mode: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.method = mode
        self.kind, self.regions = CONTROLS[mode]
        self.window = self.config.sequential_window if self.kind == "sequential" else 0
        self.seed: Member | None = None
        self.attempts: list[dict[str, Any]] = []  # sequential: the last K attempts

    def scale_note(self) -> tuple[ScaleEntry, ...]:
        if self.kind == "sample":
            return (
                ScaleEntry(
                    "samples", "one per attempt, up to the attempt cap",
                    "N independent samples", "the comparison's attempt cap is N",
                ),
            )  # fmt: skip
        return (
            ScaleEntry(
                "previous attempts shown (K)", str(self.window), "all previous samples",
                "the last K attempts (operator key sequential_window, default 8), so that the "
                "prompt stays bounded at any budget",
            ),
        )  # fmt: skip

    # -- population: the seed and, for `sequential`, the last K attempts ------------------
    def population_state(self) -> dict[str, Any]:
        seed = None if self.seed is None else self.seed.to_dict()
        return dict(seed=seed, attempts=[dict(a) for a in self.attempts])

    def load_population_state(self, state: dict[str, Any]) -> None:
        self.seed = None if state.get("seed") is None else Member.from_dict(state["seed"])
        self.attempts = [dict(a) for a in state.get("attempts", ())]

    def admit(self, program_id, source, evaluation, proposal) -> None:
        score, macs = score_of(evaluation)
        if proposal is None:
            self.seed = Member(program_id, source, score, macs)
            return
        for a in self.attempts:
            if a["attempt"] == proposal.attempt:
                a.update(status="evaluated", score=score, macs=macs, id=program_id)

    def _settle(self) -> None:
        """Each attempt's final outcome from the search's history (a duplicate, an evaluation
        that failed), for attempts still pending here."""
        if self.history is None:
            return
        final = {o.attempt: o for o in self.history.recent_outcomes() if o.status in _FINAL}
        for a in self.attempts:
            o = final.get(a["attempt"])
            if a["status"] != "evaluated" and o is not None:
                a.update(status=o.status, failure_type=o.failure_type)
                if o.status == "evaluated" and a.get("score") is None:
                    a["score"] = o.ood_score

    def _attempts_text(self) -> str:
        if not self.attempts:
            return "- none yet"
        blocks = []
        for a in self.attempts:
            if a["status"] == "evaluated":
                result = f"evaluated: ood_score={a['score']:.4f}, macs={a.get('macs') or 0:.0f}"
            elif a["status"] == "feasible":
                result = "feasible, evaluation pending"
            elif a["status"] == "eval_failed":
                result = f"feasible, but training failed ({a.get('failure_type')})"
            else:
                result = f"{a['status']} ({a.get('failure_type')})"
            change = (
                f"```diff\n{_diff(self.seed.source, a['source'])}\n```"
                if a.get("source") is not None
                else "(no program)"
            )
            blocks.append(f"## Attempt {a['attempt']}: {result}\n{change}")
        return "\n\n".join(blocks)

    # -- proposals --------------------------------------------------------------------------
    def _template(self) -> tuple[str, bool]:
        """(template, region form): the region-edit form where the seed's regions parse."""
        use_regions = self.regions and tags_outcome(self.seed.source) == "ok"
        return self.kind + ("_regions" if use_regions else ""), use_regions

    def prompt(self, ctx: StepContext) -> str:
        seed_view = ProgramView(self.seed.id, self.seed.source, {})
        # Only the seed: the archive's parent, inspirations and outcomes are left out.
        own = dataclasses.replace(ctx, parent=seed_view, top=(), diverse=())
        fields = role_fields(own)
        fields.update(
            seed_source=self.seed.source.rstrip(),
            seed_metrics=metrics_line(self.seed),
            attempts=self._attempts_text(),
            window=self.window,
        )
        return self.prompts.render(self._template()[0], **fields)

    async def propose(self, ctx: StepContext, attempt: int) -> Child:
        if self.seed is None:
            raise RuntimeError(f"{self.method}: the seed program was never observed")
        self._settle()
        template, use_regions = self._template()
        role = f"{self.kind}-{'regions' if use_regions else 'full'}"
        if not self.is_llm:
            return self._offline(role)

        def parse(text: str):
            if use_regions:
                program, outcome = splice_regions(self.seed.source, text)
                return (program, tags_outcome(program)) if program else (None, outcome)
            program = extract_program(text)
            return (program, tags_outcome(program)) if program else (None, "no_program")

        child, call = await self.ask(role, self.prompt(ctx), parse)
        return Child(self.seed.id, self.seed.source, child, (call,), call.parse_outcome, call.error)

    async def step(self, ctx: StepContext, attempt: int):
        proposal = await super().step(ctx, attempt)
        if self.window:
            status = proposal.status
            self.attempts.append(
                dict(
                    attempt=attempt, source=proposal.child_source, status=status,
                    failure_type=proposal.failure_type, score=None, macs=None, id=None,
                )
            )  # fmt: skip
            self.attempts = self.attempts[-self.window :]
        return proposal

    def _base(self) -> Member:
        """The offline analogue's starting point: the seed (`sample`), or the best evaluated
        program among the last K attempts when it beats the seed (`sequential`)."""
        best = self.seed
        for a in self.attempts:
            if a["status"] == "evaluated" and a.get("id") and a["score"] > best.score:
                best = Member(a["id"], a["source"], a["score"], a.get("macs") or 0.0)
        return best

    def _offline(self, role: str) -> Child:
        base = self._base()
        seen = "the seed" if self.kind == "sample" else f"the seed and the last {self.window} "
        prompt = f"{role} offline analogue from {seen}{'' if self.kind == 'sample' else 'attempts'}"
        prompt += f"; starts from {base.id} ({metrics_line(base)})"
        try:
            child, names = mutate(
                base.source, self._rng, avoid=self.known, catalogue=self.catalogue
            )
        except TransformNotApplicable as e:
            return no_transform_child(role, prompt, base, e)
        if self._rng.random() < 0.5:  # a second transform, when one applies
            try:
                child, more = mutate(child, self._rng, avoid=self.known, catalogue=self.catalogue)
                names = f"{names}+{more}"
            except TransformNotApplicable:
                pass
        return offline_child(role, prompt, base, child, names)

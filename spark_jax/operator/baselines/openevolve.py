"""OpenEvolve as a baseline: holistic editing of the evolvable code (both regions, tags as
OpenEvolve's EVOLVE-BLOCK markers), diff-based (SEARCH/REPLACE, OpenEvolve's default) or full
rewrite, with the prompt context OpenEvolve builds from its island database: the current
program with its metrics, previous attempts with their outcomes, top programs (the absolute
best first when it lives on another island) and diverse inspirations. Parent and
inspirations come from the loop's island MAP-Elites archive, which is OpenEvolve's scheme.

Offline analogue (NOT an LLM): diff mode applies one catalogue transform to either region;
full mode rewrites both regions (one transform each).
"""

from __future__ import annotations

from spark_jax.operator.baselines.common import (
    BaselineOperator,
    Child,
    mutate,
    offline_call,
    tags_outcome,
)
from spark_jax.operator.baselines.diffs import DiffError, apply_diff, as_diff
from spark_jax.operator.editors import ProgramView, StepContext, role_fields
from spark_jax.operator.llm.parsing import extract_program
from spark_jax.operator.offline import TransformNotApplicable


def _programs(views: tuple[ProgramView, ...], label: str) -> str:
    blocks = [
        f"### {label} {k} (id {v.id}; {v.metrics_text()})\n```python\n{v.source.rstrip()}\n```"
        for k, v in enumerate(views, 1)
    ]
    return "\n\n".join(blocks) or "(none yet)"


class OpenEvolveOperator(BaselineOperator):
    """OpenEvolve's diff-based (`full=False`) or full-rewrite (`full=True`) editing."""

    templates = ("openevolve_diff", "openevolve_full")

    def __init__(self, *args, full: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.full = full
        self.method = "openevolve-full" if full else "openevolve"

    def prompt(self, ctx: StepContext) -> str:
        fields = role_fields(ctx)
        fields.update(
            previous_attempts=ctx.recent_outcomes,
            top_programs=_programs(ctx.top, "Program"),
            inspiration_programs=_programs(ctx.diverse, "Inspiration"),
        )
        return self.prompts.render("openevolve_full" if self.full else "openevolve_diff", **fields)

    async def propose(self, ctx: StepContext, attempt: int) -> Child:
        parent = ctx.parent
        role = "openevolve-full" if self.full else "openevolve-diff"
        if not self.is_llm:
            return self._offline(parent, role)
        prompt = self.prompt(ctx)

        def parse(text: str):
            if self.full:
                program = extract_program(text)
                return (program, tags_outcome(program)) if program else (None, "no_program")
            try:
                program = apply_diff(parent.source, text)
            except DiffError as e:
                return None, f"{e.outcome}: {e}"
            if program == parent.source:
                return None, "no_change: the diff leaves the program as it was"
            return program, tags_outcome(program)

        child, call = await self.ask(role, prompt, parse)
        outcome = call.parse_outcome
        return Child(parent.id, parent.source, child, (call,), outcome, call.error)

    def _offline(self, parent: ProgramView, role: str) -> Child:
        prompt = f"{role} offline analogue on {parent.id} ({parent.metrics_text()})"
        try:
            if self.full:
                first, a = mutate(parent.source, self._rng, "OPERATOR", catalogue=self.catalogue)
                child, b = mutate(
                    first, self._rng, "ACTION", avoid=self.known, catalogue=self.catalogue
                )
                names = f"{a}+{b}"
            else:
                child, names = mutate(
                    parent.source, self._rng, avoid=self.known, catalogue=self.catalogue
                )
        except TransformNotApplicable as e:
            call = offline_call(role, prompt, "", "catalogue", "no_applicable_transform")
            return Child(parent.id, parent.source, None, (call,), call.parse_outcome, str(e))
        response = child if self.full else as_diff(parent.source, child)
        call = offline_call(role, prompt, response, names)
        return Child(parent.id, parent.source, child, (call,))

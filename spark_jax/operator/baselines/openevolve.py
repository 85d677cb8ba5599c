"""OpenEvolve as a baseline: holistic editing of the evolvable code, diff-based
(SEARCH/REPLACE, OpenEvolve's default) or full rewrite, with the prompt OpenEvolve builds
(`openevolve/prompt/sampler.py` and `prompt/templates.py`, the same text in v0.3.2 and 0.4.0;
templates `prompts/openevolve_*.md`, parts in `openevolve_prompt.py`). Parent and inspirations
come from the loop's island MAP-Elites archive, which is OpenEvolve's scheme.

Answers are read as OpenEvolve 0.4.0 reads them (`process_parallel.py: _run_iteration_worker`):
diff mode as `diffs.py` says (blocks that match apply, the others are skipped; no block,
malformed delimiters or no block matching are failures); full mode as OpenEvolve's own
`utils/code_utils.py: parse_full_rewrite` (`parse_full_rewrite` below, the same in v0.3.2 and
0.4.0): the FIRST fenced block tagged with the program's language (python), else the first
fenced block of any kind, else the whole answer. SPARK's own parser
(`llm/parsing.py: extract_program`) takes the largest block instead: an answer that
quotes a one-line snippet before its program is a child for SPARK and, as in OpenEvolve, the
snippet for this baseline (which then fails the checks). An answer that leaves the program
unchanged (replacements equal to what they replace, a rewrite equal to the parent) is the
parent itself. OpenEvolve 0.4.0 fails the attempt; here it is reported as a `duplicate` of an
evaluated program under the one duplicate rule every method shares: not evaluated, an attempt,
not valid, as in 0.4.0.

What else 0.4.0 changed, and why this baseline does not follow it: a pluggable island selector
(`selection.py`) and population-strategy hooks (`population.py`) whose defaults (none) keep
v0.3.2's round-robin islands and MAP-Elites database, which is what this baseline runs;
`enforce_evolve_blocks` (off by default), which reverts edits outside `EVOLVE-BLOCK` markers; a
new LLM backend (`llm/copilot_cli.py`) and token-usage bookkeeping, which are not part of the
method. The prompt templates are unchanged.

The prompt states no region rule: it shows the program and asks for SEARCH/REPLACE blocks (or a
complete rewrite), as OpenEvolve's does. Its cross-factor entanglement is therefore an edit
across a rule it was never told; reports say so where they give it.

Offline analogue (NOT an LLM): diff mode applies one catalogue transform to either region;
full mode rewrites both regions (one transform each).
"""

from __future__ import annotations

import re
from typing import Any

from spark_jax.operator.baselines import openevolve_prompt as oe
from spark_jax.operator.baselines.common import (
    BaselineOperator,
    Child,
    ScaleEntry,
    mutate,
    no_transform_child,
    offline_child,
    tags_outcome,
)
from spark_jax.operator.baselines.diffs import (
    DiffError,
    apply_diff,
    as_diff,
    extract_diffs,
    line_blocks,
)
from spark_jax.operator.editors import ProgramView, StepContext, role_fields
from spark_jax.operator.offline import TransformNotApplicable

LANGUAGE = "python"  # OpenEvolve's `config.language` for a Python program


def parse_full_rewrite(answer: str, language: str = LANGUAGE) -> str:
    """OpenEvolve's `parse_full_rewrite` (utils/code_utils.py, v0.3.2 and 0.4.0), line for
    line: the first fenced block opened with `language`, else the first fenced block of any
    kind (its language word, if any, stays as the first line, as OpenEvolve's regular
    expression leaves it), else the whole answer; stripped. Never None."""
    matches = re.findall(r"```" + language + r"\n(.*?)```", answer, re.DOTALL)
    if matches:
        return matches[0].strip()
    matches = re.findall(r"```(.*?)```", answer, re.DOTALL)
    if matches:
        return matches[0].strip()
    return answer


class OpenEvolveOperator(BaselineOperator):
    """OpenEvolve's diff-based (`full=False`) or full-rewrite (`full=True`) editing."""

    templates = ("openevolve_system", "openevolve_diff", "openevolve_full")

    def __init__(self, *args, full: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.full = full
        self.method = "openevolve-full" if full else "openevolve"
        # What OpenEvolve keeps in a program's metadata: the diff summary that made it and its
        # parent's metrics (for "Previous Attempts"); by attempt until the child is evaluated.
        self.pending: dict[str, dict[str, Any]] = {}
        self.meta: dict[str, dict[str, Any]] = {}

    def scale_note(self) -> tuple[ScaleEntry, ...]:
        return (
            ScaleEntry(
                "top programs / diverse programs per prompt",
                f"{oe.NUM_TOP_PROGRAMS} / {oe.NUM_DIVERSE_PROGRAMS}", "3 / 2",
                "OpenEvolve's defaults (PromptConfig)",
            ),
            ScaleEntry(
                "previous attempts", f"island's top {oe.NUM_TOP_PROGRAMS}", "island's top 3",
                "as OpenEvolve's process_parallel.py",
            ),
            ScaleEntry(
                "islands, migration, population",
                "the search's archive section (defaults: 5 islands, migration every 10 "
                "generations, 100 members per island)",
                "5 islands, migration every 50 generations, population 1000",
                "the shared island archive (archive.num_islands, archive.migration_interval, "
                "archive.population_size), OpenEvolve's scheme",
            ),
            ScaleEntry("samples per prompt", "1", "1", "OpenEvolve asks once per iteration"),
        )  # fmt: skip

    # -- population -------------------------------------------------------------------------
    def population_state(self) -> dict[str, Any]:
        return dict(pending=dict(self.pending), meta=dict(self.meta))

    def load_population_state(self, state: dict[str, Any]) -> None:
        self.pending = dict(state.get("pending", {}))
        self.meta = dict(state.get("meta", {}))

    def observe_pool(self, program_id, source, evaluation, parent, description) -> None:
        """A pool program keeps what OpenEvolve's metadata would hold had it made it: the
        summary of the diff from its parent, and the parent's metrics."""
        self.observe(program_id, source, evaluation, None)
        if parent is not None:
            changes = oe.diff_summary(line_blocks(parent.source, source))
            self.meta[program_id] = dict(
                changes=changes, parent_metrics=oe.numeric_metrics(parent.metrics)
            )

    def admit(self, program_id, source, evaluation, proposal) -> None:
        if proposal is not None:
            info = self.pending.pop(str(proposal.attempt), None)
            if info is not None:
                self.meta[program_id] = info

    # -- prompts ----------------------------------------------------------------------------
    def prompt(self, ctx: StepContext) -> tuple[str, str]:
        """(system message, user message) as OpenEvolve's `build_prompt` returns them."""
        fields = role_fields(ctx)
        ranked = oe.island_programs(ctx.parent, ctx.top)
        best = ranked[: oe.NUM_TOP_PROGRAMS]
        top_text, shown = oe.top_programs(ranked, self._rng)
        fields.update(
            fitness=f"{oe.fitness(ctx.parent.metrics):.4f}",
            feature_coords=oe.feature_coords(ctx.parent.metrics),
            feature_dimensions=", ".join(oe.FEATURE_DIMENSIONS),
            focus_areas=oe.focus_areas(ctx.parent, best),
            artifacts="",
            previous_attempts=oe.previous_attempts(best, self.meta),
            top_programs=top_text,
            inspirations_section=oe.inspirations(ctx.diverse, shown),
        )
        user = self.prompts.render("openevolve_full" if self.full else "openevolve_diff", **fields)
        system = self.prompts.render("openevolve_system", system=self.prompts.system, **fields)
        return system, user

    # -- proposals --------------------------------------------------------------------------
    async def propose(self, ctx: StepContext, attempt: int) -> Child:
        parent = ctx.parent
        role = "openevolve-full" if self.full else "openevolve-diff"
        if not self.is_llm:
            out = self._offline(parent, role)
        else:
            system, prompt = self.prompt(ctx)
            child, call = await self.ask(role, prompt, self._parse(parent), system=system)
            out = Child(parent.id, parent.source, child, (call,), call.parse_outcome, call.error)
        if out.child is not None:
            response = out.calls[0].response
            changes = "Full rewrite" if self.full else oe.diff_summary(extract_diffs(response))
            self.pending[str(attempt)] = dict(
                changes=changes, parent_metrics=oe.numeric_metrics(parent.metrics)
            )
        return out

    async def step(self, ctx: StepContext, attempt: int):
        proposal = await super().step(ctx, attempt)
        if not proposal.feasible:  # only a program that will be evaluated keeps its metadata
            self.pending.pop(str(attempt), None)
        return proposal

    def _parse(self, parent: ProgramView):
        def parse(text: str):
            if self.full:  # OpenEvolve's reading (the file keeps one final newline)
                program = parse_full_rewrite(text).strip()
                if not program:
                    return None, "no_program"
                return program + "\n", tags_outcome(program + "\n")
            try:
                applied = apply_diff(parent.source, text)
            except DiffError as e:
                return None, f"{e.outcome}: {e}"
            tags = tags_outcome(applied.program)
            return applied.program, applied.note() if tags == "ok" else tags

        return parse

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
            return no_transform_child(role, prompt, parent, e)
        response = child if self.full else as_diff(parent.source, child)
        return offline_child(role, prompt, parent, child, names, response)

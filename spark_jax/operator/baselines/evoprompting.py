"""EvoPrompting (API variant) as a baseline: an evolutionary population loop whose crossover
and mutation are few-shot prompts over sampled parents.

Generations of `evoprompting_children` (operator key, default 4) proposals: each prompt samples
`evoprompting_shots` (2) parents from the current parents without replacement, shows them as few-shot examples sorted by
fitness ascending, each with its metrics, then target metrics for the new program (OOD above
the best example, MACs at most 90% of the smallest) and asks for the program: a crossover
prompt with two parents, a mutation prompt with one (while the population has one member).
After a generation the parents become the `evoprompting_parents` (4) fittest of parents and
children.

EvoPrompting also prompt-tunes the LM's soft prompt on each generation's fittest children;
an API model exposes no soft prompt, so that step is left out (the API variant).
Fitness here is the backbone's (OOD score), not the paper's size-times-error product.
Offline analogue (NOT an LLM): crossover combines the OPERATOR region of one parent with the
ACTION region of the other, then applies one small catalogue transform; mutation applies one
transform.
"""

from __future__ import annotations

from typing import Any

from spark_jax.llm.parsing import extract_program
from spark_jax.operator.baselines import common
from spark_jax.operator.baselines.common import BaselineOperator, Child, Member, crossover
from spark_jax.operator.editors import StepContext, role_fields
from spark_jax.operator.offline import TransformNotApplicable


class EvoPromptingOperator(BaselineOperator):
    method = "evoprompting"
    templates = ("evoprompting",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.parents: list[Member] = []
        self.children: list[Member] = []
        self.generation = 0
        self.proposed = 0  # proposals in the current generation

    def population_state(self) -> dict[str, Any]:
        return dict(
            parents=[m.to_dict() for m in self.parents],
            children=[m.to_dict() for m in self.children],
            generation=self.generation,
            proposed=self.proposed,
        )

    def load_population_state(self, state: dict[str, Any]) -> None:
        self.parents = [Member.from_dict(m) for m in state["parents"]]
        self.children = [Member.from_dict(m) for m in state["children"]]
        self.generation, self.proposed = state["generation"], state["proposed"]

    def admit(self, program_id, source, evaluation, proposal) -> None:
        score, macs = common.score_of(evaluation)
        member = Member(program_id, source, score, macs)
        (self.parents if proposal is None else self.children).append(member)

    def _next_generation(self) -> None:
        pool = {m.id: m for m in [*self.parents, *self.children]}
        ranked = sorted(pool.values(), key=lambda m: (m.score, -m.macs), reverse=True)
        self.parents = ranked[: self.config.evoprompting_parents]
        self.children, self.proposed = [], 0
        self.generation += 1

    def prompt(self, ctx: StepContext, shots: list[Member]) -> str:
        examples = "\n\n".join(
            f"# Example {i + 1}. Metrics: {common.metrics_line(m)}\n```python\n{m.source.rstrip()}\n```"
            for i, m in enumerate(shots)
        )
        best = max(m.score for m in shots)
        macs = [m.macs for m in shots if m.macs]
        target = f"ood_score={min(1.0, best + 0.01):.4f}" + (
            f", macs<={0.9 * min(macs):.0f}" if macs else ""
        )
        kind = "crossover" if len(shots) > 1 else "mutation"
        return self.prompts.render(
            "evoprompting",
            operation=kind,
            instruction=(
                "Combine the strengths of the examples into one new program."
                if kind == "crossover"
                else "Mutate the example into a new, better program."
            ),
            examples=examples,
            target_metrics=target,
            generation=self.generation,
            **role_fields(ctx),
        )

    async def propose(self, ctx: StepContext, attempt: int) -> Child:
        if self.proposed >= self.config.evoprompting_children:
            self._next_generation()
        self.proposed += 1
        shots = self._rng.sample(
            self.parents, min(self.config.evoprompting_shots, len(self.parents))
        )
        shots.sort(key=lambda m: m.score)
        parent = shots[-1]
        role = "evoprompting-crossover" if len(shots) > 1 else "evoprompting-mutation"
        if not self.is_llm:
            return self._offline(shots, role)

        def parse(text: str):
            program = extract_program(text)
            return (program, common.tags_outcome(program)) if program else (None, "no_program")

        child, call = await self.ask(role, self.prompt(ctx, shots), parse)
        return Child(parent.id, parent.source, child, (call,), call.parse_outcome, call.error)

    def _offline(self, shots: list[Member], role: str) -> Child:
        parent = shots[-1]
        desc = ", ".join(f"{m.id} ({m.score:.4f})" for m in shots)
        prompt = f"{role} offline analogue, generation {self.generation}: parents {desc}"
        try:
            source, names = parent.source, []
            if len(shots) > 1:
                mixed = crossover(shots[-1].source, shots[0].source)
                if mixed is not None and mixed != parent.source:
                    source, names = mixed, ["crossover"]
            child, name = common.mutate(
                source,
                self._rng,
                magnitude="small" if names else None,
                avoid=self.known,
                catalogue=self.catalogue,
            )
        except TransformNotApplicable as e:
            return common.no_transform_child(role, prompt, parent, e)
        return common.offline_child(role, prompt, parent, child, "+".join([*names, name]))

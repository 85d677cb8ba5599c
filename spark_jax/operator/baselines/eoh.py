"""Evolution of Heuristics (EoH) as a baseline: thoughts and code evolved together.

As EoH (FeiLiu36/EoH: v0.1 `methods/eoh/eoh_evolution.py`, `eoh_interface_EC.py`; the current
`eoh/src/eoh/eoh/evolution.py`, `eoh.py`, `config.py`). Every individual is an idea (one
sentence, in braces) and its code. A generation draws `eoh_pop_size` (operator key) prompt
strategies uniformly from `strategies` (EoH's default operators E1, E2, M1, M2; M3 exists,
`ALL_STRATEGIES`, but neither EoH version schedules it by default) and runs them in order;
E1 (a totally different algorithm) and E2 (a new one motivated by the parents' common backbone
idea) show `eoh_parents` (2) parents, M1 (a modified version) and M2 (different parameter
settings) one. A prompt shows each parent's idea and code, never its objective value, then
the template program (EoH's `template_program`: here the seed) to implement. Parents are drawn
by EoH's rank selection (weights 1 / (rank + 1 + |pop|), with replacement) from the
population sorted best first. After a generation, population management keeps the
`eoh_pop_size` best distinct-score individuals of population plus offspring.

Retries as EoH's: an answer from which no code or no idea can be read is asked again, up to
`EXTRACT_RETRIES` (4) more times (v0.1's `_get_alg`); a child equal to a program proposed or
evaluated before is generated again, with newly selected parents, up to `DUPLICATE_RETRIES`
(2; v0.1 retried once) times (`get_offspring`). Every call is kept with the proposal. A child
still duplicated after that is not evaluated again (EoH evaluates it): the duplicate rule
every method shares.

Not as EoH: the initial population is the shared seed program (EoH samples 2N programs with
its I1 prompt from scratch) so every method starts from the same backbone. Offline analogue
(NOT an LLM): E1 a large catalogue transform, E2 two parents' regions combined plus a
transform, M1 any transform, M2 a small transform, M3 a small transform; the idea is the
transform's description.
"""

from __future__ import annotations

import re
from typing import Any

from spark_jax.llm.parsing import extract_program, split_reasoning
from spark_jax.operator.baselines.common import (
    BaselineOperator,
    Child,
    Member,
    ScaleEntry,
    crossover,
    mutate,
    no_transform_child,
    offline_child,
    score_of,
    sha,
    tags_outcome,
)
from spark_jax.operator.editors import StepContext, role_fields
from spark_jax.operator.offline import TransformNotApplicable, get_transform

ALL_STRATEGIES = ("e1", "e2", "m1", "m2", "m3")
STRATEGIES = ("e1", "e2", "m1", "m2")  # EoH's default operators (config.py / getParas.py)
EXTRACT_RETRIES = 4  # re-asks after an answer without code or idea (v0.1 `_get_alg`)
DUPLICATE_RETRIES = 2  # new generations after a duplicated child (`get_offspring`)
SEED_THOUGHT = "The hand-written seed processor of this search."
_THOUGHT = re.compile(r"\{([^{}]{8,})\}", re.DOTALL)


def parse_answer(text: str) -> tuple[Any, str]:
    """((thought, code), outcome) or (None, failure outcome), as EoH reads an answer: the code
    block, and the idea in braces before it, else the prose before the code; an answer
    without either is an extraction failure (EoH asks again)."""
    code = extract_program(text)
    if code is None:
        return None, "no_program"
    answer, _ = split_reasoning(text)
    if "```" in answer:
        pre = answer.split("```", 1)[0]
    else:
        at = answer.find(code.split("\n", 1)[0])
        pre = answer[:at] if at > 0 else ""
    found = _THOUGHT.findall(pre)
    thought = found[0].strip() if found else pre.strip()
    if not thought:
        return None, "no_thought: no idea in braces before the code"
    return (" ".join(thought.split()), code), tags_outcome(code)


def _extracted(outcome: str) -> bool:
    return not outcome.startswith(("no_program", "no_thought"))


class EoHOperator(BaselineOperator):
    method = "eoh"
    templates = tuple(f"eoh_{s}" for s in ALL_STRATEGIES)
    strategies: tuple[str, ...] = STRATEGIES

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.population: list[Member] = []
        self.offspring: list[Member] = []
        self.plan: list[str] = []
        self.generation = 0
        self.thoughts: dict[str, str] = {}  # attempt -> the child's idea, until evaluated
        self.template = ""  # EoH's template program: the seed

    def scale_note(self) -> tuple[ScaleEntry, ...]:
        c = self.config
        return (
            ScaleEntry(
                "population size", str(c.eoh_pop_size), "5 (paper: 20 for large budgets)",
                "operator key eoh_pop_size; also the offspring per generation, as in EoH",
            ),
            ScaleEntry("parents of E1/E2", str(c.eoh_parents), "2", "EoH's default (eoh_parents)"),
            ScaleEntry(
                "operators", "/".join(s.upper() for s in self.strategies), "E1/E2/M1/M2",
                "EoH's default operators with equal weights; M3 is not scheduled by default",
            ),
            ScaleEntry(
                "retries", f"{EXTRACT_RETRIES} on extraction, {DUPLICATE_RETRIES} on duplicates",
                "4 on extraction (v0.1); 2 on duplicates (v0.1: 1)", "EoH's own",
            ),
            ScaleEntry(
                "initial population", "the seed program", "2 x pop programs from I1",
                "every method starts from the same seed",
            ),
        )  # fmt: skip

    def population_state(self) -> dict[str, Any]:
        return dict(
            population=[m.to_dict() for m in self.population],
            offspring=[m.to_dict() for m in self.offspring],
            plan=list(self.plan),
            generation=self.generation,
            thoughts=dict(self.thoughts),
            template=self.template,
        )

    def load_population_state(self, state: dict[str, Any]) -> None:
        self.population = [Member.from_dict(m) for m in state["population"]]
        self.offspring = [Member.from_dict(m) for m in state["offspring"]]
        self.plan, self.generation = list(state["plan"]), state["generation"]
        self.thoughts = dict(state["thoughts"])
        self.template = state.get("template", "")

    def observe_pool(self, program_id, source, evaluation, parent, description) -> None:
        """A pool program made by an edit joins the population with that edit as its idea
        (EoH keeps every individual's idea); the seed as `observe` has it."""
        if parent is None:
            self.observe(program_id, source, evaluation, None)
            return
        self.known.add(sha(source))
        score, macs = score_of(evaluation)
        thought = description or "An edit of the seed program."
        self.population.append(Member(program_id, source, score, macs, thought))

    def admit(self, program_id, source, evaluation, proposal) -> None:
        score, macs = score_of(evaluation)
        if proposal is None:
            self.template = self.template or source
            self.population.append(Member(program_id, source, score, macs, SEED_THOUGHT))
            return
        thought = self.thoughts.pop(str(proposal.attempt), proposal.directive)
        self.offspring.append(Member(program_id, source, score, macs, thought))

    def _manage(self) -> None:
        """EoH's population management: best `eoh_pop_size` of distinct scores."""
        seen, unique = set(), []
        for m in sorted([*self.population, *self.offspring], key=lambda m: -m.score):
            if m.score not in seen:
                seen.add(m.score)
                unique.append(m)
        self.population, self.offspring = unique[: self.config.eoh_pop_size], []
        self.generation += 1

    def select(self, m: int) -> list[Member]:
        pop = sorted(self.population, key=lambda x: -x.score)
        weights = [1 / (rank + 1 + len(pop)) for rank in range(len(pop))]
        return self._rng.choices(pop, weights=weights, k=m)

    def prompt(self, ctx: StepContext, strategy: str, parents: list[Member]) -> str:
        if strategy in ("e1", "e2"):
            block = "\n".join(
                f"No.{i + 1} algorithm and the corresponding code are:\n{p.thought}\n"
                f"{p.source.rstrip()}"
                for i, p in enumerate(parents)
            )
        else:
            p = parents[0]
            block = f"Algorithm description: {p.thought}\nCode:\n{p.source.rstrip()}"
        template = (self.template or parents[0].source).rstrip()
        return self.prompts.render(
            f"eoh_{strategy}",
            n_parents=len(parents),
            parents=block,
            parent_code=parents[0].source.rstrip(),
            template=template,
            **role_fields(ctx),
        )

    def _plan_next(self) -> str:
        if not self.plan:
            if self.generation > 0 or self.offspring:
                self._manage()
            else:
                self.generation = 1
            self.plan = self._rng.choices(self.strategies, k=self.config.eoh_pop_size)
        return self.plan.pop(0)

    async def _generate(self, ctx: StepContext, strategy: str, role: str):
        """EoH's `_generate`: parents, prompt, and up to 1 + EXTRACT_RETRIES calls until an
        answer yields code and an idea. Returns (parents, (thought, code) or None, calls)."""
        parents = self.select(self.config.eoh_parents if strategy in ("e1", "e2") else 1)
        prompt = self.prompt(ctx, strategy, parents)
        calls = []
        for _ in range(1 + EXTRACT_RETRIES):
            value, call = await self.ask(role, prompt, parse_answer)
            calls.append(call)
            if value is not None or _extracted(call.parse_outcome):
                break  # read, or an LLM error / a cut-off answer (the backend retries those)
        return parents, value, calls

    async def propose(self, ctx: StepContext, attempt: int) -> Child:
        strategy = self._plan_next()
        role = f"eoh-{strategy}"
        if not self.is_llm:
            parents = self.select(self.config.eoh_parents if strategy in ("e1", "e2") else 1)
            out = self._offline(strategy, parents, role)
        else:
            calls: list = []
            for _ in range(1 + DUPLICATE_RETRIES):
                parents, value, more = await self._generate(ctx, strategy, role)
                calls.extend(more)
                if value is None or sha(value[1]) not in self.known:
                    break
            thought, child = value if value is not None else ("", None)
            parent = max(parents, key=lambda p: p.score)
            last = calls[-1]
            out = Child(
                parent.id, parent.source, child, tuple(calls), last.parse_outcome, last.error,
                thought,
            )  # fmt: skip
        if out.child is not None:
            self.thoughts[str(attempt)] = out.thought
        return out

    def _offline(self, strategy: str, parents: list[Member], role: str) -> Child:
        parent = max(parents, key=lambda p: p.score)
        desc = ", ".join(f"{p.id} ({p.score:.4f})" for p in parents)
        prompt = f"{role} offline analogue, generation {self.generation}: parents {desc}"
        magnitude = {"e1": "large", "m2": "small", "m3": "small"}.get(strategy)
        try:
            source = parent.source
            if strategy == "e2" and len({p.id for p in parents}) > 1:
                mixed = crossover(parent.source, min(parents, key=lambda p: p.score).source)
                source = mixed if mixed is not None else source
            child, name = mutate(
                source, self._rng, magnitude=magnitude, avoid=self.known, catalogue=self.catalogue
            )
        except TransformNotApplicable as e:
            return no_transform_child(role, prompt, parent, e)
        thought = get_transform(name).description
        return offline_child(role, prompt, parent, child, name, f"{{{thought}}}\n{child}", thought)

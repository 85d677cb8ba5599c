"""FunSearch as a baseline: best-shot prompting over islands of evaluated programs.

As FunSearch's programs database (google-deepmind/funsearch, `implementation/
programs_database.py`, `config.py`): the seed is registered on every island; a prompt draws an
island uniformly, then `k` (functions_per_prompt = 2) programs by cluster-based sampling
within it (clusters are programs of equal score; a cluster is drawn by softmax of its score
with temperature T0 * (1 - (n % period) / period); within a cluster shorter programs are
preferred, softmax of minus the normalized length), sorts them by score ascending and shows
them, without their scores, as `Processor_v0`, `Processor_v1`, ... (later versions documented
as "Improved version of `Processor_v{i-1}`"), after the specification's preamble and ending
with the header of the next version, whose body the model writes (`_generate_prompt`). The
preamble is the task description as the specification's docstring, then the best shown
version's module text before its class (docstring, imports, helpers), as FunSearch keeps the
specification's preface. Only the body is kept and put into the best shown version's program
(the class header and docstring stay the parent's, as FunSearch keeps the template's function
signature). One prompt serves `SAMPLES_PER_PROMPT` (FunSearch's samples_per_prompt = 4)
consecutive attempts, one sample each. The child joins the island it was prompted from.
Every `reset_every` evaluated programs the weaker half of the islands (by best score, ties
broken by tiny noise) is reset, each re-seeded with the best program of a random surviving
island.

A class's span runs to its last indented line, so the `# SPARK:END ACTION` tag line after the
final `return` belongs to the versions shown and to the body the answer replaces.

Scaled for small budgets (operator keys `funsearch_islands`, `funsearch_reset_every`; the rule
is `scale_note()`, recorded with the operator's state): FunSearch's 10 islands and resets every
4 hours of wall time. Offline analogue (NOT an LLM): one catalogue transform on the best shown
version.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from typing import Any

from spark_jax.llm.parsing import extract_program
from spark_jax.operator.baselines.common import (
    BaselineOperator,
    Child,
    Member,
    ScaleEntry,
    mutate,
    no_transform_child,
    offline_child,
    score_of,
    tags_outcome,
)
from spark_jax.operator.editors import StepContext, role_fields
from spark_jax.operator.offline import TransformNotApplicable

TEMPERATURE_INIT = 0.1  # ProgramsDatabaseConfig.cluster_sampling_temperature_init
TEMPERATURE_PERIOD = 30_000  # ProgramsDatabaseConfig.cluster_sampling_temperature_period
SAMPLES_PER_PROMPT = 4  # Config.samples_per_prompt
CLASS = "Processor"


def _softmax(logits: list[float], temperature: float) -> list[float]:
    top = max(x / temperature for x in logits)
    exps = [math.exp(x / temperature - top) for x in logits]
    return [e / sum(exps) for e in exps]


def _class_span(source: str) -> tuple[int, int, int]:
    """(first line, docstring end line, last line) of `class Processor`, 0-based inclusive.
    The last line is the class's last indented line: the AST's span stops at the last
    statement, which would leave out trailing comment lines such as `# SPARK:END ACTION`."""
    tree = ast.parse(source)
    lines = source.split("\n")
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == CLASS:
            first = node.body[0]
            doc = isinstance(first, ast.Expr) and isinstance(
                getattr(first, "value", None), ast.Constant
            )
            doc_end = first.end_lineno - 1 if doc else node.lineno - 1
            end = node.end_lineno - 1
            for k in range(end + 1, len(lines)):
                if lines[k].strip() and not lines[k][0].isspace():
                    break
                if lines[k].strip():
                    end = k
            return node.lineno - 1, doc_end, end
    raise ValueError(f"no class {CLASS!r}")


def preamble(source: str) -> str:
    """The program's module text before its class (docstring, imports, constants, helpers)."""
    start, _, _ = _class_span(source)
    return "\n".join(source.split("\n")[:start]).rstrip()


def versioned(source: str, version: int) -> str:
    """The program's Processor class renamed `Processor_v{version}` (docstring from v1 on:
    'Improved version of `Processor_v{version-1}`')."""
    lines = source.split("\n")
    start, doc_end, end = _class_span(source)
    header = lines[start].replace(f"class {CLASS}", f"class {CLASS}_v{version}", 1)
    if version == 0:
        doc = lines[start + 1 : doc_end + 1]
    else:
        doc = [f'    """Improved version of `{CLASS}_v{version - 1}`."""']
    return "\n".join([header, *doc, *lines[doc_end + 1 : end + 1]])


def header(source: str, version: int) -> str:
    lines = source.split("\n")
    start, _, _ = _class_span(source)
    head = lines[start].replace(f"class {CLASS}", f"class {CLASS}_v{version}", 1)
    return f'{head}\n    """Improved version of `{CLASS}_v{version - 1}`."""\n'


def splice_body(parent: str, answer: str, version: int) -> str | None:
    """The parent with its Processor class body (after the docstring) replaced by the body
    the model wrote for `Processor_v{version}`; None when there is no body or the program
    does not parse."""
    code = extract_program(answer) or answer
    lines = code.split("\n")
    pattern = re.compile(rf"^\s*class\s+{CLASS}_v{version}\b")
    at = next((i for i, line in enumerate(lines) if pattern.match(line)), None)
    if at is not None:  # the model repeated the header: keep what follows, up to a dedent
        rest = []
        for line in lines[at + 1 :]:
            if line.strip() and not line[0].isspace():
                break
            rest.append(line)
        lines = rest
    body = textwrap.dedent("\n".join(lines)).strip("\n")
    stripped = body.lstrip()
    if stripped.startswith(('"""', "'''")):  # drop a docstring the model wrote itself
        quote = stripped[:3]
        close = stripped.find(quote, 3)
        body = stripped[close + 3 :].strip("\n") if close >= 0 else ""
    if not body.strip():
        return None
    body = textwrap.indent(textwrap.dedent(body), "    ")
    src_lines = parent.split("\n")
    _, doc_end, end = _class_span(parent)
    program = "\n".join([*src_lines[: doc_end + 1], body, *src_lines[end + 1 :]])
    try:  # FunSearch discards a sample whose body does not parse
        ast.parse(program)
    except SyntaxError:
        return None
    return program


class FunSearchOperator(BaselineOperator):
    method = "funsearch"
    templates = ("funsearch",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.islands: list[list[Member]] = [[] for _ in range(self.config.funsearch_islands)]
        self.pending: dict[str, int] = {}  # attempt -> island prompted from
        self.registered = 0
        self.last_reset = 0
        self.queued: dict[str, Any] | None = None  # the open prompt: island, versions, left

    def scale_note(self) -> tuple[ScaleEntry, ...]:
        c = self.config
        return (
            ScaleEntry(
                "islands", str(c.funsearch_islands), "10",
                "scaled to the budget: FunSearch spreads ~10^6 samples over 10 islands; at a "
                "budget B near 100 evaluations the default 4 islands each receive about B/4 = "
                "25 programs (operator key funsearch_islands)",
            ),
            ScaleEntry(
                "reset period", f"every {c.funsearch_reset_every} evaluated programs",
                "every 4 hours of wall time",
                "counted, not timed, so that runs are reproducible; default 2 x islands, so "
                "each island gains about 2 programs between resets (funsearch_reset_every)",
            ),
            ScaleEntry(
                "functions per prompt", str(c.funsearch_functions_per_prompt), "2",
                "FunSearch's default (funsearch_functions_per_prompt)",
            ),
            ScaleEntry(
                "samples per prompt", str(SAMPLES_PER_PROMPT), "4",
                "FunSearch's default; each sample is one attempt",
            ),
        )  # fmt: skip

    # -- population -------------------------------------------------------------------------
    def population_state(self) -> dict[str, Any]:
        return dict(
            islands=[[m.to_dict() for m in isl] for isl in self.islands],
            pending=dict(self.pending),
            registered=self.registered,
            last_reset=self.last_reset,
            queued=self.queued,
        )

    def load_population_state(self, state: dict[str, Any]) -> None:
        self.islands = [[Member.from_dict(m) for m in isl] for isl in state["islands"]]
        self.pending = dict(state["pending"])
        self.registered, self.last_reset = state["registered"], state["last_reset"]
        self.queued = state.get("queued")

    def admit(self, program_id, source, evaluation, proposal) -> None:
        score, macs = score_of(evaluation)
        member = Member(program_id, source, score, macs)
        if proposal is None:  # FunSearch registers the initial program on every island
            for island in self.islands:
                island.append(member)
            return
        island = self.pending.pop(str(proposal.attempt), 0)
        self.islands[island].append(member)
        self.registered += 1
        if self.registered - self.last_reset >= self.config.funsearch_reset_every:
            self.last_reset = self.registered
            self.reset_islands()

    def reset_islands(self) -> None:
        best = [max(m.score for m in isl) if isl else -1.0 for isl in self.islands]
        noisy = [b + self._rng.gauss(0, 1e-6) for b in best]
        order = sorted(range(len(best)), key=lambda i: noisy[i])
        n_reset = len(best) // 2
        keep = order[n_reset:]
        for i in order[:n_reset]:
            founder_island = self._rng.choice(keep)
            founder = max(self.islands[founder_island], key=lambda m: m.score)
            self.islands[i] = [founder]

    def sample(self, island: int) -> list[Member]:
        """k programs of `island` by cluster sampling, sorted by score ascending."""
        members = self.islands[island]
        clusters: dict[float, list[Member]] = {}
        for m in members:
            clusters.setdefault(round(m.score, 6), []).append(m)
        keys = list(clusters)
        n = len(members)
        temperature = TEMPERATURE_INIT * (1 - (n % TEMPERATURE_PERIOD) / TEMPERATURE_PERIOD)
        probs = _softmax(keys, temperature)
        k = min(len(keys), self.config.funsearch_functions_per_prompt)
        chosen = []
        for key in self._rng.choices(keys, weights=probs, k=k):
            cluster = clusters[key]
            lengths = [len(m.source) for m in cluster]
            norm = [(x - min(lengths)) / (max(lengths) + 1e-6) for x in lengths]
            chosen.append(self._rng.choices(cluster, weights=_softmax([-x for x in norm], 1.0))[0])
        return sorted(chosen, key=lambda m: m.score)

    # -- proposals --------------------------------------------------------------------------
    def prompt(self, ctx: StepContext, versions: list[Member]) -> str:
        shown = "\n\n\n".join(versioned(m.source, i) for i, m in enumerate(versions))
        return self.prompts.render(
            "funsearch",
            preamble=preamble(versions[-1].source),
            versions=shown,
            next_header=header(versions[-1].source, len(versions)),
            **role_fields(ctx),
        )

    def next_prompt(self) -> tuple[int, list[Member]]:
        """(island, versions) of this attempt's prompt: the open prompt while it has samples
        left, else a new one (a uniformly drawn island and its cluster-sampled versions)."""
        queued = self.queued
        if queued and queued["left"] > 0:
            queued["left"] -= 1
            return queued["island"], [Member.from_dict(m) for m in queued["versions"]]
        island = self._rng.randrange(len(self.islands))
        versions = self.sample(island)
        self.queued = dict(
            island=island, versions=[m.to_dict() for m in versions], left=SAMPLES_PER_PROMPT - 1
        )
        return island, versions

    async def propose(self, ctx: StepContext, attempt: int) -> Child:
        island, versions = self.next_prompt()
        self.pending[str(attempt)] = island
        parent = versions[-1]
        k = len(versions)
        if not self.is_llm:
            desc = ", ".join(f"v{i}={m.id} ({m.score:.4f})" for i, m in enumerate(versions))
            prompt = f"funsearch offline analogue, island {island}: {desc}; edit v{k - 1}"
            try:
                child, name = mutate(
                    parent.source, self._rng, avoid=self.known, catalogue=self.catalogue
                )
            except TransformNotApplicable as e:
                return no_transform_child("funsearch", prompt, parent, e)
            return offline_child("funsearch", prompt, parent, child, name)

        def parse(text: str):
            program = splice_body(parent.source, text, k)
            return (
                (program, tags_outcome(program))
                if program
                else (None, "no_body: no parsable class body")
            )

        child, call = await self.ask("funsearch", self.prompt(ctx, versions), parse)
        return Child(parent.id, parent.source, child, (call,), call.parse_outcome, call.error)

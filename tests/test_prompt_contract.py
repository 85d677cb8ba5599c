"""Every role's prompt, rendered for every seed in processors/, states the rules a model
needs: the Flax and factor rules, the task and its OOD split, the metrics, the masking claim
as a fixed property, whole inspirations with their relation to the parent, the history and
the directive's length limit."""

from __future__ import annotations

import asyncio
import dataclasses
import pathlib
import re

import pytest

from spark_jax.config import protocol as protocol_config
from spark_jax.llm import LLMBackend, LLMResponse
from spark_jax.operator import context_text
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext
from spark_jax.operator.prompts import claims_masking
from spark_jax.operator.signals import Outcome, SearchHistory
from spark_jax.search import prompt_context
from spark_jax.search.candidate import Candidate

SEED_FILES = sorted((pathlib.Path(__file__).resolve().parents[1] / "processors").glob("*.py"))

RULES = (
    "`__call__` is NOT `@nn.compact`",
    "an ACTION edit cannot create layers",
    "an OPERATOR edit leaves the ACTION region frozen",
    "the first step of a two-step edit",
    "keeping every `self.*` name the ACTION region uses, its call signature and its output width",
    "An ACTION edit may call only the attributes the parent's `setup` defines",
    "A holistic rewrite (both regions editable together) may add a submodule",
    "New module-level classes or functions are impossible",
    "Code taken from another program must fit the parent's frozen parts",
    "`adj_mat` is float32 with values 0/1",
    "self-loops always included",
    "symmetric (`adj_mat[b, i, j] == adj_mat[b, j, i]`)",
    "the message from node i (axis 1) to node j (axis 2)",
    "Decoded output: `pi` (node pointer: for every node, the node it points to",
    "10 hints (the algorithm's intermediate states)",
    "`nxt_edge` may have any width H'",
    "even where an edit makes a frozen comment or docstring out of date",
    "every score comes from one training run with one seed",
    "the archive keeps several islands",
    "`ood_score` is the CLRS score on the out-of-distribution test graphs",
    "`val_score` is the score on the validation graphs",
    "`macs` is the multiply-accumulates of one processor step",
    "## Masking rule (a fixed property of this program)",
    "no edit can change that",
    "Training graphs have N in {4, 7, 11, 13, 16} nodes",
    "(OOD) test graphs have N=64 nodes",
    "A tag line that is changed, moved or dropped counts as a scaffold edit",
)


TASK_RULES = (
    "`__call__` is NOT `@nn.compact`",
    "`adj_mat` is float32 with values 0/1",
    "the message from node i (axis 1) to node j (axis 2)",
    "Decoded output: `pi` (node pointer: for every node, the node it points to",
    "`nxt_edge` may have any width H'",
    "every score comes from one training run with one seed",
    "`ood_score` is the CLRS score on the out-of-distribution test graphs",
    "## Masking rule (a fixed property of this program)",
    "keep each verbatim, once, in this order",
)


class _Capture(LLMBackend):
    """Records each prompt; answers with a fixed, parseable text per role."""

    def __init__(self) -> None:
        self.prompts: dict[str, str] = {}

    @property
    def name(self) -> str:
        return "capture"

    async def _complete(self, role, prompt, *, system=None):
        self.prompts[role] = prompt
        return LLMResponse(role=role, text="FACTOR: ACTION", backend="capture")


def _region_edit(source: str) -> str:
    """`source` with one line added to its ACTION body (scaffolding unchanged)."""
    tag = next(line for line in source.splitlines() if line.strip() == "# SPARK:BEGIN ACTION")
    return source.replace(
        tag + "\n", tag + "\n" + tag.replace("# SPARK:BEGIN ACTION", "pass  # p9") + "\n"
    )


def _context(source: str) -> StepContext:
    paper = protocol_config.get_preset("paper")
    parent_c = Candidate("p3", "sha", 0.40, 1000, val_score=0.6, parent_id="p1", iteration=3)
    best_c = Candidate("p7", "sha", 0.55, 900, val_score=0.7, parent_id="p1", iteration=7)
    history = SearchHistory(stagnation_window=4, failure_window=7)
    history.seed(0.3)
    history.record(Outcome(5, "OPERATOR", "feasible", summary="Deepen `msg_mlp`.", parent_id="p1"))
    history.record(Outcome(5, "OPERATOR", "evaluated", ood_score=0.35, val_score=0.61))
    history.record(Outcome(6, "ACTION", "infeasible", failure_type="mask_leak", summary="Drop it."))
    parent = ProgramView("p3", source, {"ood_score": 0.40, "val_score": 0.6}, parent_id="p1")
    return StepContext(
        task="dfs",
        parent=parent,
        top=(
            ProgramView("p7", source + "# top\n", {"ood_score": 0.55}, parent_id="p1"),
            ProgramView("p9", _region_edit(source), {"ood_score": 0.30}, parent_id="p3"),
        ),
        diverse=(ProgramView("p1", source + "# grandparent\n", {"ood_score": 0.20}),),
        outcomes=history.recent_outcomes(),
        router_signals=history.signals("ACTION"),
        origin=prompt_context.origin(parent_c, best_c, island=2),
        split=prompt_context.task_split(paper),
        io_task="dfs",
        signals=history.signals(""),
    ), history


def _render(source: str):
    backend = _Capture()
    editor = LLMEditor(backend, directive_max_chars=345)
    ctx, history = _context(source)

    async def go():
        await editor.route(ctx)
        await editor.direct(ctx, "ACTION", history.signals("ACTION"))
        await editor.edit(ctx, "ACTION", "Gate the messages.")
        edit = backend.prompts["edit"]
        await editor.edit(ctx, None, "")
        return {**backend.prompts, "edit": edit, "rewrite": backend.prompts["edit"]}

    return asyncio.run(go())


@pytest.mark.parametrize("seed", SEED_FILES, ids=lambda p: p.stem)
def test_every_role_prompt_states_the_rules(seed):
    source = seed.read_text()
    prompts = _render(source)
    assert sorted(prompts) == ["directive", "edit", "rewrite", "route"]
    claim = claims_masking(source)
    for role, text in prompts.items():
        assert "${" not in text, role
        # The unscoped rewrite is checked on its tag lines only, so it is told the task
        # description every method shares and not SPARK's region rules.
        for rule in RULES if role != "rewrite" else TASK_RULES:
            assert rule in text, (role, rule)
        if role == "rewrite":
            assert "must stay byte-identical" not in text and "an OPERATOR edit" not in text
        assert f"`MASKS_NON_EDGES = {claim}`" in text, role
        # The parent's provenance: why a weaker parent was drawn.
        assert "program p3, made at attempt 3 by editing p1; drawn from island 2" in text
        assert "It is not the best program so far (p7, OOD 0.5500 vs 0.4000)" in text
        # Recent outcomes: what changed, its factor, validation and OOD scores.
        assert (
            "- attempt 5, OPERATOR edit of p1: Deepen `msg_mlp`. -> evaluated, val 0.6100, "
            "OOD 0.3500" in text
        ), role
        assert "- attempt 6, ACTION edit: Drop it. -> infeasible (mask_leak)" in text
    # Route, edit and rewrite see whole inspirations, with scores and relation to the parent.
    for role in ("route", "edit", "rewrite"):
        text = prompts[role]
        assert (
            "### p7: a sibling of the parent (same parent); ood_score=0.5500; OOD +0.1500" in text
        )
        assert "### p9: a child of the parent; ood_score=0.3000; OOD -0.1000, worse" in text
        assert "### p1: the parent's own parent" in text
        # The task description (and SPARK's contract but for the rewrite), the parent, two
        # whole programs and the regions of the third.
        assert text.count("# SPARK:BEGIN OPERATOR") == (5 if role == "rewrite" else 6)
        assert "# grandparent" in text and "# top" in text
        p9 = text.split("### p9")[1].split("###")[0]
        assert (
            "Same scaffolding as the parent; its two regions; differs from the parent in "
            "ACTION, OPERATOR identical:" in p9
        )
        assert "pass  # p9" in p9 and "def make_processor" not in p9
        p7 = text.split("### p7")[1].split("###")[0]
        assert "Whole program:" in p7 and "def make_processor" in p7
    # The directive prompt: its limit, and k / k' from the config, not hard-coded.
    directive = prompts["directive"]
    assert "at most 345 characters in all, about 57 words" in directive
    # The router sees the search signals too; a within-noise gain is not called progress.
    assert (
        "## Search signals\n- Stagnation over the last 4 evaluated candidates: " in prompts["route"]
    )
    assert "- Feasibility failure rate over the last 7 proposals: " in prompts["route"]
    assert "last 4 evaluated candidates" in directive and "last 7 proposals" in directive
    assert "FACTOR: OPERATOR` or `FACTOR: ACTION`" in prompts["route"]


def test_masking_claim_read_statically():
    assert claims_masking("MASKS_NON_EDGES = True\n")
    assert not claims_masking("MASKS_NON_EDGES = False\n")
    assert not claims_masking("X = 1\n")
    assert not claims_masking("def f(:\n")
    assert any(claims_masking(p.read_text()) for p in SEED_FILES)  # both rules are exercised
    assert not all(claims_masking(p.read_text()) for p in SEED_FILES)


def test_provenance_of_the_best_parent_and_the_seed():
    seed = Candidate("s", "sha", 0.3, 10)
    assert context_text.provenance(prompt_context.origin(seed, seed, 0)) == (
        "program s, the seed program; drawn from island 0; it is the best program so far."
    )
    assert context_text.provenance(None) == "not recorded"
    tiny = context_text.split_text(prompt_context.task_split(protocol_config.get_preset("tiny")))
    assert re.search(r"N in \{4\} nodes and validation graphs N=5; .* test graphs have N=8 ", tiny)
    assert "Set sizes: " in tiny and "validation and" in tiny and "OOD test graphs" in tiny


def test_task_outputs_say_what_is_decoded():
    outputs = context_text.outputs_text
    assert "`is_bridge` (edge mask: a 0/1 label per node pair)" in outputs("bridges")
    two = outputs("topological_sort")
    assert "Decoded outputs: `topo` (node pointer" in two and "`topo_head`" in two
    assert two.startswith("Encoded inputs: `pos` (node scalar: the node's index divided by N)")
    assert "decoded from the processor's node and edge" in outputs("nope")
    assert outputs("dfs", family="classify") == "see the classify contract"


def test_inspiration_labels_small_differences_as_noise():
    from spark_jax.operator.editors import program_views

    source = SEED_FILES[0].read_text()
    parent = ProgramView("p", source, {"ood_score": 0.40})
    near = ProgramView("q", source + "# q\n", {"ood_score": 0.41})
    far = ProgramView("r", source + "# r\n", {"ood_score": 0.45})
    text = program_views((near, far), parent)
    assert "OOD +0.0100, within seed noise of the parent" in text
    assert "OOD +0.0500, better than the parent" in text


def test_change_summary_skips_reindented_lines():
    from spark_jax.operator.step import diff_lines

    diff = "--- a\n+++ b\n@@ -1 +1,2 @@\n-x = 1\n+    x = 1\n+y = 2\n+# note\n"
    assert diff_lines(diff) == (3, 1, ["y = 2"])


def test_noise_sentence_follows_the_seeds_per_candidate():
    from spark_jax.operator.prompts import noise_sentence

    assert noise_sentence(1).startswith("every score comes from one training run with one seed")
    three = noise_sentence(3)
    assert "the mean over 3 training runs with different seeds" in three
    ctx = dataclasses.replace(_context(SEED_FILES[0].read_text())[0], fitness_seeds=3)
    backend = _Capture()
    asyncio.run(LLMEditor(backend).route(ctx))
    assert "- Noise: every score is the mean over 3 training runs" in backend.prompts["route"]

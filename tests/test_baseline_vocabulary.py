"""No baseline (the sampling controls included) is told SPARK's factor rules: every prompt each
baseline sends through the OpenAI-compatible backend to a real HTTP server on 127.0.0.1 (system
and user messages, every strategy and retry) is free of SPARK's factor vocabulary, while SPARK's
own prompts carry it.
Baselines are not told the region rule, and only tag integrity is enforced for them (the
feasibility check runs without a factor): prompts and checks agree."""

from __future__ import annotations

import asyncio
import types

import pytest

from spark_jax.config.sections import OperatorConfig
from spark_jax.llm import OpenAIBackend
from spark_jax.llm.loopback import LoopbackServer
from spark_jax.operator.baselines import BASELINES, CONTROLS, make_operator
from spark_jax.operator.baselines import funsearch as fs
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext

VOCABULARY = ("factor-scoped", "Factor-scoped", "an OPERATOR edit", "an ACTION edit", "FACTOR:")
TAGS = ("# SPARK:BEGIN OPERATOR", "# SPARK:END OPERATOR", "# SPARK:BEGIN ACTION")
EOH_ALL = ["e1", "e2", "m1", "m2", "m3"]


def _ev(ood):
    return types.SimpleNamespace(score=ood, macs=1000.0)


def _messages(server: LoopbackServer) -> list[str]:
    return [m["content"] for r in server.requests if r.body for m in r.body["messages"]]


def _answer(mode: str, seed: str) -> str:
    """A usable answer in `mode`'s format (so that every step reaches the checker)."""
    line = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs))  # [B, N, H]"
    new = line.replace("self.o2(msgs)", "self.o2(msgs) + self.o1(z)")
    if mode == "openevolve":
        return f"<<<<<<< SEARCH\n{line}\n=======\n{new}\n>>>>>>> REPLACE\n"
    if mode == "funsearch":
        body = fs.versioned(seed, 0).split('"""', 2)[2].split("\n", 1)[1]
        return f"```python\n{body.replace(line, new)}\n```"
    return f"{{An idea.}}\n```python\n{seed.replace(line, new)}```"


def _baseline_messages(mode: str, seed: str) -> tuple[list[str], list]:
    """Every message `mode` sends in a few steps, and the checker's factors."""
    factors = []
    rejected = types.SimpleNamespace(
        feasible=False, failure_stage="template", failure_type="template", reason="test"
    )

    def checker(child, parent, factor):
        factors.append(factor)
        return rejected

    other = seed.replace("    use_ln: bool = True\n", "    use_ln: bool = True  # o\n")
    steps = len(EOH_ALL) if mode == "eoh" else 3
    with LoopbackServer(default_reply=_answer(mode, seed)) as srv:
        backend = OpenAIBackend(srv.base_url, "loopback", api_key_env=None, max_retries=1)
        op = make_operator(LLMEditor(backend), checker, OperatorConfig(mode=mode))
        op.observe("s", seed, _ev(0.5), None)
        op.observe("o", other, _ev(0.4), types.SimpleNamespace(attempt=-1, directive="Other."))
        if mode == "eoh":  # every strategy, M3 included although not scheduled by default
            op.plan, op.generation = list(EOH_ALL), 1
        parent = ProgramView("s", seed, {"ood_score": 0.5, "val_score": 0.6, "macs": 1000.0})
        ctx = StepContext(
            task="bfs",
            parent=parent,
            top=(ProgramView("o", other, {"ood_score": 0.4}),),
            diverse=(ProgramView("o", other, {"ood_score": 0.4}),),
        )
        for k in range(steps):
            asyncio.run(op.step(ctx, k))
        return _messages(srv), factors


def test_the_sampling_controls_are_checked_like_every_baseline():
    """`sample`, `sequential` and their region-edit forms go through the test below."""
    assert set(CONTROLS) == {"sample", "sample-regions", "sequential", "sequential-regions"}
    assert set(CONTROLS) <= set(BASELINES)


@pytest.mark.parametrize("mode", BASELINES)
def test_no_baseline_prompt_carries_spark_factor_vocabulary(mode, seed_paths):
    seed = seed_paths["mpnn"].read_text()
    messages, factors = _baseline_messages(mode, seed)
    assert len(messages) >= 2  # a system and a user message at least
    for text in messages:
        for word in VOCABULARY:
            assert word not in text, (mode, word)
        assert "${" not in text and "SPARK's contract is not part" not in text
    # Told the tag rule, checked on the tags only: no factor, so no region (locality) check.
    prompt = "\n".join(messages)
    assert all(tag in prompt for tag in TAGS)
    assert factors and set(factors) == {None}


def test_spark_prompts_do_carry_it(seed_paths):
    """The control: the same vocabulary is in SPARK's route and edit prompts, so the test
    above would see it if a baseline's prompt carried SPARK's contract."""
    from spark_jax.operator.prompts import PromptLibrary

    seed = seed_paths["mpnn"].read_text()
    lib = PromptLibrary.load()
    fields = dict(
        task="bfs", masking_rule="", macs_nodes=16, parent_metrics="", parent_provenance="",
        parent_source=seed, top_inspirations="", diverse_inspirations="", recent_outcomes="",
        search_signals="", feasibility_summary="", unused_submodules="none", submodule_note="",
    )  # fmt: skip
    route = lib.render("route", **fields)
    edit = lib.render("edit", factor="ACTION", other_factor="OPERATOR", directive="d", **fields)
    for text in (route, edit):
        assert (
            "Factor-scoped" in text and "an OPERATOR edit" in text and "## Program contract" in text
        )
    assert "FACTOR:" in route


@pytest.mark.parametrize("family", ["cartpole", "classify"])
def test_family_contracts_split_the_same_way(family, seed_paths):
    """A task family's contract: its text before SPARK's section is the task description a
    baseline gets; SPARK's prompts get all of it."""
    from spark_jax import families
    from spark_jax.operator.prompts import SPARK_SECTION, PromptLibrary, task_part

    contract = families.get(family).contract_text()
    assert SPARK_SECTION in contract and "# SPARK:END ACTION" in task_part(contract)
    seed = seed_paths["mpnn"].read_text()
    ctx = StepContext(
        task="t", parent=ProgramView("s", seed, {"ood_score": 0.5}), contract=contract
    )
    for mode in ("openevolve", "evoprompting"):
        with LoopbackServer(default_reply="no answer") as srv:
            backend = OpenAIBackend(srv.base_url, "loopback", api_key_env=None, max_retries=1)
            op = make_operator(LLMEditor(backend), None, OperatorConfig(mode=mode))
            op.observe("s", seed, _ev(0.5), None)
            asyncio.run(op.step(ctx, 0))
            sent = "\n".join(_messages(srv))
        assert task_part(contract) in sent and SPARK_SECTION not in sent
        assert "OPERATOR edit" not in sent and "ACTION edit" not in sent
    edit = PromptLibrary.load().render(
        "edit", factor="ACTION", other_factor="OPERATOR", directive="d", task="t",
        masking_rule="", parent_metrics="", parent_provenance="", parent_source=seed,
        top_inspirations="", diverse_inspirations="", recent_outcomes="", contract_text=contract,
        submodule_note="",
    )  # fmt: skip
    assert contract.strip() in edit

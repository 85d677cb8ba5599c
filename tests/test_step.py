"""One SPARK step against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib

import pytest

from spark_jax.feasibility import checker as feasibility
from spark_jax.llm import OpenAIBackend, RecordBackend, ReplayBackend
from spark_jax.llm.loopback import Fault, LoopbackServer, Reply
from spark_jax.operator import context_text
from spark_jax.operator.context_text import ParentOrigin
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext
from spark_jax.operator.prompts import PromptLibrary
from spark_jax.operator.signals import Outcome, SearchHistory, StepSignals
from spark_jax.operator.step import OperatorConfig, OperatorConfigError, SparkOperator

GOLDEN = pathlib.Path(__file__).parent / "golden"
KEY_ENV = "SPARK_TEST_LLM_KEY"
SECRET = "sk-test-3f9c1d2e8b7a6054"

ACTION_OLD = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs))  # [B, N, H]\n"
ACTION_NEW = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs) + self.o1(hidden_msgs))\n"


def _action_edit(parent: str) -> str:
    # A real ACTION-scoped edit: add a mean-aggregated message term reusing o1's projection.
    assert ACTION_OLD in parent
    return parent.replace(
        ACTION_OLD,
        "        hidden_msgs = jnp.concatenate([jnp.mean(node_fts, axis=1, keepdims=True)\n"
        "                                       * jnp.ones_like(node_fts), hidden], axis=-1)\n"
        + ACTION_NEW,
    )


def _role(body) -> str:
    text = body["messages"][-1]["content"]
    for marker, role in (
        ("# Architecture Scope Router", "route"),
        ("# Refinement Compass", "directive"),
        ("# Scoped Architecture Refiner", "edit"),
    ):
        if text.startswith(marker):
            return role
    raise AssertionError("unknown prompt: " + text[:80])


def _parent_from(body) -> str:
    text = body["messages"][-1]["content"]
    start = text.index("```python\n", text.index("## Parent program")) + len("```python\n")
    return text[start : text.index("\n```", start)] + "\n"


def responder(body) -> Reply:
    role = _role(body)
    if role == "route":
        return Reply(
            "The aggregation wiring is the bottleneck.\nFACTOR: ACTION",
            reasoning_content="OPERATOR could widen layers, but wiring matters more.",
        )
    if role == "directive":
        return Reply(
            "<think>keep it short</think>Add a global mean-context term to the node "
            "update while keeping shapes.\n```python\nx = 1\n```\nPreserve OPERATOR."
        )
    child = _action_edit(_parent_from(body))
    return Reply(f"Here is the edited program:\n```python\n{child}```\nThis adds context.")


@pytest.fixture()
def keyed(monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)


def _ctx(seed_paths) -> StepContext:
    src = seed_paths["mpnn"].read_text()
    parent = ProgramView(
        "p0", src, {"ood_score": 0.25, "val_score": 0.5, "macs": 1000}, parent_id="seed"
    )
    inspo = ProgramView("p1", src, {"ood_score": 0.2}, parent_id="p0")
    return StepContext(
        task="dfs",
        parent=parent,
        top=(inspo,),
        diverse=(),
        outcomes=(
            Outcome(
                0,
                "ACTION",
                "infeasible",
                "locality",
                summary="changed ACTION region",
                parent_id="seed",
            ),
        ),
        router_signals=StepSignals(
            failure_rate=1.0, dominant_failures=("locality",), proposals_in_window=1
        ),
        origin=ParentOrigin("p0", attempt=0, edited_from="seed", island=0),
    )


def _operator(server, sandbox_worker, check_options, backend=None, **cfg):
    backend = backend or OpenAIBackend(
        server.base_url,
        "loopback",
        api_key_env=KEY_ENV,
        timeout_s=2.0,
        max_retries=3,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )

    def checker(child, parent, factor):
        return feasibility.check_program(
            child, parent_source=parent, factor=factor, options=check_options, worker=sandbox_worker
        )

    return SparkOperator(LLMEditor(backend), checker, OperatorConfig(**cfg)), backend


def test_one_spark_step(seed_paths, sandbox_worker, check_options, keyed):
    with LoopbackServer(responder=responder) as server:
        op, _ = _operator(server, sandbox_worker, check_options)
        proposal = asyncio.run(op.step(_ctx(seed_paths), attempt=1))
        auth = {r.headers.get("authorization") for r in server.requests}
    assert [c.role for c in proposal.calls] == ["route", "directive", "edit"]
    assert proposal.factor == "ACTION" and proposal.factor_source == "asr"
    assert "```" not in proposal.directive and "x = 1" not in proposal.directive
    assert proposal.directive.startswith("Add a global mean-context term")
    assert proposal.calls[0].reasoning.startswith("OPERATOR could widen")
    assert proposal.child_source == _action_edit(seed_paths["mpnn"].read_text())
    assert proposal.status == "feasible", proposal.reason
    assert proposal.feasibility.stages_passed[:2] == ("template", "locality")
    assert proposal.entanglement == "action" and "hidden_msgs" in proposal.diff
    assert all(c.is_llm and c.ok and c.prompt_tokens > 0 for c in proposal.calls)
    assert auth == {f"Bearer {SECRET}"}
    assert SECRET not in json.dumps(proposal.to_dict())


def test_router_garbage_falls_back_to_action(seed_paths, sandbox_worker, check_options, keyed):
    # Tokens inside prose are not an answer: each is a parse failure that uses a retry.
    script = [
        Reply("I cannot decide between the operator and the action."),
        Fault("malformed_json"),
        Reply("Maybe OPERATOR later; ACTION now?"),
        Reply("FACTOR: ACTION, probably"),
    ]
    with LoopbackServer(script=script, responder=responder) as server:
        op, _ = _operator(server, sandbox_worker, check_options, asr_retries=3)
        proposal = asyncio.run(op.step(_ctx(seed_paths), attempt=2))
    routes = [c for c in proposal.calls if c.role == "route"]
    assert len(routes) == 3 and all(c.parse_outcome == "no_factor_line" for c in routes)
    assert routes[1].attempts == 2  # the malformed JSON was retried
    assert proposal.factor == "ACTION" and proposal.factor_source == "fallback"


@pytest.mark.parametrize("mode", ["spark", "rewrite"])
def test_broken_tags_are_a_scaffold_edit(seed_paths, sandbox_worker, check_options, keyed, mode):
    def no_tags(body):
        text = body["messages"][-1]["content"]
        if text.startswith(("# Scoped Architecture Refiner", "# Program Rewrite")):
            child = _action_edit(_parent_from(body)).replace("# SPARK:END ACTION\n", "")
            return Reply(f"```python\n{child}```")
        return responder(body)

    with LoopbackServer(responder=no_tags) as server:
        op, _ = _operator(server, sandbox_worker, check_options, mode=mode)
        proposal = asyncio.run(op.step(_ctx(seed_paths), attempt=3))
    assert proposal.calls[-1].parse_outcome.startswith("tags_broken")
    assert proposal.status == "infeasible" and proposal.failure_stage == "template"
    assert proposal.failure_type == "template" and proposal.child_source is not None
    # Tags are scaffolding: counted in the entanglement rate.
    assert proposal.entanglement == "scaffold" and "-        # SPARK:END ACTION" in proposal.diff


def test_truncated_answers(seed_paths, sandbox_worker, check_options, keyed):
    cut = _action_edit(seed_paths["mpnn"].read_text())[:900]
    script = [
        Reply("FACTOR: ACTION", finish_reason="length"),  # cut off: not a routing answer
        Reply("FACTOR: OPERATOR"),
        Reply("Widen the message MLP.", finish_reason="length"),
        Reply(f"```python\n{cut}", finish_reason="length"),
    ]
    with LoopbackServer(script=script, responder=responder) as server:
        op, _ = _operator(server, sandbox_worker, check_options)
        proposal = asyncio.run(op.step(_ctx(seed_paths), attempt=3))
    assert [c.parse_outcome for c in proposal.calls] == ["truncated", "ok", "truncated"] + [
        "truncated"
    ]
    assert proposal.factor == "OPERATOR" and proposal.directive == ""
    assert proposal.status == "failed" and proposal.failure_type == "truncated"
    assert proposal.calls[-1].response.startswith("```python")  # kept for the record
    assert not proposal.calls[-1].ok and "max_tokens" in proposal.calls[-1].error


def test_out_of_scope_edit_is_infeasible(seed_paths, sandbox_worker, check_options, keyed):
    def wrong_region(body):
        if _role(body) == "route":
            return Reply("FACTOR: OPERATOR")
        return responder(body)  # edits ACTION although OPERATOR was chosen

    with LoopbackServer(responder=wrong_region) as server:
        op, _ = _operator(server, sandbox_worker, check_options)
        proposal = asyncio.run(op.step(_ctx(seed_paths), attempt=4))
    assert proposal.factor == "OPERATOR"
    assert proposal.status == "infeasible" and proposal.failure_stage == "locality"
    assert proposal.entanglement == "action"


def test_faults_retried_or_failed(seed_paths, sandbox_worker, check_options, keyed):
    script = [
        Fault("429", retry_after=0),
        Reply("FACTOR: ACTION"),
        Fault("500"),
        Reply("Keep masking."),
        Fault("400", message="context too long"),
    ]
    with LoopbackServer(script=script, responder=responder) as server:
        op, _ = _operator(server, sandbox_worker, check_options)
        proposal = asyncio.run(op.step(_ctx(seed_paths), attempt=5))
    route, directive, edit = proposal.calls
    assert route.ok and route.attempts == 2 and directive.attempts == 2
    assert not edit.ok and edit.parse_outcome == "llm_error" and "context too long" in edit.error
    assert proposal.status == "failed" and proposal.failure_type == "llm_error"


def test_ablation_configs(seed_paths, sandbox_worker, check_options, keyed):
    with LoopbackServer(responder=responder) as server:
        op, _ = _operator(
            server, sandbox_worker, check_options, factor_choice="ACTION", use_rc=False
        )
        proposal = asyncio.run(op.step(_ctx(seed_paths), attempt=6))
    assert [c.role for c in proposal.calls] == ["edit"]
    assert proposal.factor_source == "fixed" and proposal.directive == ""
    assert op.config.variant == "Fixed-ACT SAR"
    assert OperatorConfig().variant == "SPARK (ASR+RC+SAR)"
    with pytest.raises(OperatorConfigError, match="operator.factor_choice"):
        OperatorConfig(factor_choice="both")


def test_record_then_replay_is_identical(
    seed_paths, sandbox_worker, check_options, keyed, tmp_path
):
    cassette = tmp_path / "calls.jsonl"
    with LoopbackServer(responder=responder) as server:
        inner = OpenAIBackend(server.base_url, "loopback", api_key_env=KEY_ENV, timeout_s=2.0)
        op, _ = _operator(
            server, sandbox_worker, check_options, backend=RecordBackend(inner, cassette)
        )
        recorded = asyncio.run(op.step(_ctx(seed_paths), attempt=7))
    op2, _ = _operator(None, sandbox_worker, check_options, backend=ReplayBackend(cassette))
    replayed = asyncio.run(op2.step(_ctx(seed_paths), attempt=7))
    assert replayed.canonical_json() == recorded.canonical_json()
    assert SECRET not in cassette.read_text()


def test_signals_window():
    h = SearchHistory(stagnation_window=3, failure_window=4)
    h.seed(0.5)
    for i, score in enumerate([0.4, 0.45, 0.3]):
        h.record(Outcome(i, "ACTION", "evaluated", ood_score=score))
    assert h.signals("ACTION").stagnating
    h.record(Outcome(3, "ACTION", "evaluated", ood_score=0.6))
    assert not h.signals("ACTION").stagnating
    for i in range(4, 7):
        h.record(Outcome(i, "OPERATOR", "infeasible", failure_type="mask_leak"))
    sig = h.signals("OPERATOR")
    assert sig.failure_rate == 0.75 and sig.dominant_failures == ("mask_leak",)
    assert (sig.stagnation_window, sig.failure_window) == (3, 4)


def test_pass_enters_the_window_at_feasibility():
    """Algorithm 1: PASS is pushed when feasibility passes; a training failure afterwards is
    an evaluation failure, not a feasibility failure, and is not pushed twice."""
    h = SearchHistory(stagnation_window=2, failure_window=3)
    h.seed(0.5)
    h.record(Outcome(0, "ACTION", "infeasible", failure_type="locality", summary="s0"))
    h.record(Outcome(1, "ACTION", "feasible", summary="Gate messages.", parent_id="p0"))
    sig = h.signals("ACTION")
    assert sig.proposals_in_window == 2 and sig.failure_rate == 0.5  # evaluation pending
    assert "Gate messages. -> feasible, evaluation pending" in h.recent_text()
    h.record(Outcome(1, "ACTION", "eval_failed", failure_type="train_timeout"))
    sig = h.signals("ACTION")
    assert sig.proposals_in_window == 2 and sig.failure_rate == 0.5
    assert sig.dominant_failures == ("locality",) and sig.evaluated_in_window == 0
    line = h.recent_text().splitlines()[-1]
    assert line == (
        "- attempt 1, ACTION edit of p0: Gate messages. -> feasible but training failed "
        "(train_timeout)"
    )
    h.record(Outcome(2, "OPERATOR", "feasible", summary="Deeper MLP.", parent_id="p0"))
    h.record(Outcome(2, "OPERATOR", "evaluated", ood_score=0.6, val_score=0.7))
    assert h.recent_text().splitlines()[-1] == (
        "- attempt 2, OPERATOR edit of p0: Deeper MLP. -> evaluated, val 0.7000, "
        "OOD 0.6000 (new best)"
    )
    assert h.signals("ACTION").proposals_in_window == 3
    restored = SearchHistory.from_state(json.loads(json.dumps(h.to_state())))
    assert restored.recent_text() == h.recent_text()


def _render_all(prompts: PromptLibrary, ctx: StepContext) -> dict[str, str]:
    from spark_jax.operator.editors import role_fields
    from spark_jax.operator.two_step import submodule_note, unused_line

    fields = role_fields(ctx)
    return {
        "route": prompts.render(
            "route",
            feasibility_summary=context_text.feasibility_summary(ctx.router_signals),
            unused_submodules=unused_line(ctx.parent.source),
            **fields,
        ),
        "edit": prompts.render(
            "edit",
            factor="ACTION",
            other_factor="OPERATOR",
            directive="Add a mean-context term.",
            submodule_note=submodule_note(ctx.parent.source, "ACTION"),
            **fields,
        ),
    }


@pytest.mark.parametrize("role", ["route", "edit"])
def test_prompt_rendering_matches_golden(role, seed_paths):
    rendered = _render_all(PromptLibrary.load(), _ctx(seed_paths))[role]
    golden = GOLDEN / f"{role}.txt"
    if os.environ.get("SPARK_UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text()
    assert "${" not in rendered


def test_prompt_missing_field_is_named():
    from spark_jax.operator.prompts import PromptError

    with pytest.raises(PromptError, match="needs field 'task'"):
        PromptLibrary.load().render(
            "route", parent_metrics="", parent_source="", recent_outcomes="", feasibility_summary=""
        )


def test_change_summary_keeps_abbreviations_and_shows_added_code():
    import records

    directive = (
        "Mask the node max by real edges plus self-loops (e.g. `jnp.maximum(adj_mat, "
        "jnp.eye(n))`), since DFS moves along edges. Leave the triplets alone."
    )
    p = records.proposal(3, directive=directive)
    assert p.change_summary() == directive  # whole sentences while they fit
    assert p.change_summary(limit=130) == directive.split(" Leave")[0]
    diff = "--- parent\n+++ child\n+        # wider\n+        self.sel = linear(h)\n-        x\n"
    q = records.proposal(
        4,
        directive=None,
        mode="rewrite",
        feasibility=records.report(diff=diff, entanglement="entangled"),
    )
    assert q.change_summary() == "changed both regions, +2/-1 lines, adding `self.sel = linear(h)`"

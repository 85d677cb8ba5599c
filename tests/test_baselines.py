"""The baselines against a real OpenAI-compatible server on 127.0.0.1: each prompt carries
what its method needs (parents, scores, `_vN` versions, thoughts, SEARCH/REPLACE rules) and
each answer is parsed; a malformed answer is a counted parse failure with its call kept."""

from __future__ import annotations

import asyncio
import types

import pytest

from spark_jax.config.sections import OperatorConfig
from spark_jax.feasibility import checker as feasibility
from spark_jax.operator.baselines import OFFLINE_ANALOGUE, make_operator
from spark_jax.operator.baselines import funsearch as fs
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext
from spark_jax.operator.llm import OpenAIBackend
from spark_jax.operator.llm.loopback import LoopbackServer, Reply
from spark_jax.operator.offline import OfflineEditor

OLD = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs))  # [B, N, H]"
NEW = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs) + self.o2(hidden))  # [B, N, H]"


@pytest.fixture(scope="module")
def seed(seed_paths):
    return seed_paths["mpnn"].read_text()


def _ev(ood, macs=1000.0):
    return types.SimpleNamespace(ood_score=ood, macs=macs)


def _run(mode, server, sandbox_worker, check_options, members, answers, prep=None):
    """Steps of `mode` answered by `answers` in order; returns proposals and the prompts."""
    backend = OpenAIBackend(server.base_url, "loopback", api_key_env=None, max_retries=1)

    def checker(child, parent, factor):
        return feasibility.check_program(
            child, parent_source=parent, factor=factor, options=check_options, worker=sandbox_worker
        )

    op = make_operator(LLMEditor(backend), checker, OperatorConfig(mode=mode))
    for i, (pid, source, ood) in enumerate(members):
        op.observe(pid, source, _ev(ood), None if i == 0 else types.SimpleNamespace(attempt=-i))
    if prep:
        prep(op)
    parent = ProgramView(members[-1][0], members[-1][1], {"ood_score": members[-1][2]})
    top = ProgramView("top1", members[0][1], {"ood_score": 0.61})
    ctx = StepContext(
        task="bfs",
        parent=parent,
        top=(top,),
        diverse=(ProgramView("div1", members[0][1], {"ood_score": 0.33}),),
        recent_outcomes="- attempt 0: changed ACTION region -> infeasible (locality)",
    )
    out = []
    for k, answer in enumerate(answers):
        server.push(Reply(answer))
        out.append(asyncio.run(op.step(ctx, k)))
    prompts = [r.body["messages"][-1]["content"] for r in server.requests if r.body]
    return op, out, prompts


def _fenced(src):
    return f"```python\n{src}```"


def test_openevolve_diff_and_full(seed, sandbox_worker, check_options):
    block = f"<<<<<<< SEARCH\n{OLD}\n=======\n{NEW}\n>>>>>>> REPLACE"
    missing = "<<<<<<< SEARCH\n        no_such_line()\n=======\n        x = 1\n>>>>>>> REPLACE"
    with LoopbackServer() as server:
        _, (good, bad, again), prompts = _run(
            "openevolve", server, sandbox_worker, check_options, [("s", seed, 0.5)],
            [f"Reasoning first.\n{block}\n", missing, block],
        )  # fmt: skip
    p = prompts[0]
    for needed in ("<<<<<<< SEARCH", ">>>>>>> REPLACE", "## Previous Attempts", "infeasible"):
        assert needed in p
    assert "Top Performing Programs" in p and "top1" in p and "ood_score=0.6100" in p
    assert "Inspiration Programs" in p and "div1" in p and "ood_score=0.5000" in p
    assert good.status == "feasible", good.reason
    assert good.child_source == seed.replace(OLD, NEW) and good.mode == "openevolve"
    assert good.entanglement == "action" and good.calls[0].is_llm
    assert bad.status == "failed" and bad.failure_type == "diff_no_match"
    assert bad.calls[0].response == missing  # the answer is kept with the proposal
    # A repeat is checked as any child; the search loop records it as a duplicate.
    assert again.status == "feasible" and again.child_source == good.child_source
    with LoopbackServer() as server:
        _, (full, none), prompts = _run(
            "openevolve-full", server, sandbox_worker, check_options, [("s", seed, 0.5)],
            [_fenced(seed.replace(OLD, NEW)), "I would rather not."],
        )  # fmt: skip
    assert "complete new program" in prompts[0] and "SEARCH" not in prompts[0]
    assert full.status == "feasible" and full.child_source == seed.replace(OLD, NEW)
    assert none.failure_type == "no_program"


def _class_body(source):
    lines = source.split("\n")
    _, doc_end, end = fs._class_span(source)
    return "\n".join(lines[doc_end + 1 : end + 1])


def _versions(op, island):
    # Both clusters, sorted (cluster sampling is checked on its own below).
    return sorted(op.islands[0], key=lambda m: m.score)


def test_funsearch_cluster_sampling(seed):
    op = make_operator(OfflineEditor(0), None, OperatorConfig(mode="funsearch"))
    short, long = seed, seed + "\n# " + "x" * 4000 + "\n"
    op.islands[0] = [fs.Member("lo", seed, 0.1), fs.Member("a", long, 0.9)]
    op.islands[0].append(fs.Member("b", short, 0.9))
    draws = [op.sample(0) for _ in range(300)]
    assert all([m.score for m in d] == sorted(m.score for m in d) for d in draws)
    ids = [m.id for d in draws for m in d]
    assert ids.count("lo") < 0.02 * len(ids)  # softmax at T=0.1 over scores 0.1 vs 0.9
    assert ids.count("b") > ids.count("a")  # shorter programs preferred within a cluster


def test_funsearch_versions_and_body(seed, sandbox_worker, check_options):
    worse = seed.replace("    use_ln: bool = True\n", "    use_ln: bool = True  # v\n")
    members = [("s", seed, 0.5), ("w", worse, 0.2)]
    answer = _class_body(seed.replace(OLD, NEW))
    with LoopbackServer() as server:
        op, (good, bad), prompts = _run(
            "funsearch", server, sandbox_worker, check_options, members,
            [_fenced(answer + "\n"), "```python\n    def broken(:\n```"],
            prep=lambda op: setattr(op, "sample", lambda island: _versions(op, island)),
        )  # fmt: skip
    p = prompts[0]
    # Two versions sorted by score ascending, the next header last.
    assert (
        p.index("class Processor_v0")
        < p.index("class Processor_v1")
        < p.index("class Processor_v2")
    )
    assert "# Processor_v0: ood_score=0.2000" in p and "# Processor_v1: ood_score=0.5000" in p
    assert "Improved version of `Processor_v1`" in p and p.rstrip().endswith('v1`."""')
    assert good.status == "feasible", good.reason
    assert good.child_source == seed.replace(OLD, NEW) and good.parent_id == "s"
    assert bad.status == "failed" and bad.failure_type == "no_body"
    # Islands: the child joins the island it was prompted from; resets keep the stronger half.
    island = op.pending["0"]
    op.observe("c", good.child_source, _ev(0.7), good)
    assert op.islands[island][-1].id == "c"
    op.islands = [[fs.Member(f"i{i}", seed, i / 10)] for i in range(op.config.funsearch_islands)]
    op.reset_islands()
    best = {m.id for isl in op.islands for m in isl}
    assert best <= {"i2", "i3"} and [m.id for m in op.islands[3]] == ["i3"]


def test_evoprompting_few_shot_crossover(seed, sandbox_worker, check_options):
    other = seed.replace("    use_ln: bool = True\n", "    use_ln: bool = True  # o\n")
    with LoopbackServer() as server:
        _, (good, bad), prompts = _run(
            "evoprompting", server, sandbox_worker, check_options,
            [("s", seed, 0.5), ("o", other, 0.3)],
            [_fenced(seed.replace(OLD, NEW)), "no code here"],
            prep=lambda op: op.parents.extend(op.children),
        )  # fmt: skip
    p = prompts[0]
    assert "crossover" in p and "# Example 1. Metrics: ood_score=0.3000" in p
    assert "# Example 2. Metrics: ood_score=0.5000" in p
    assert "# New program. Metrics: ood_score=0.5100" in p
    assert good.status == "feasible" and good.parent_id == "s"
    assert bad.status == "failed" and bad.failure_type == "no_program"


def test_eoh_thoughts_and_strategies(seed, sandbox_worker, check_options):
    thought = "{Add the hidden state to the node update as a residual input.}"
    answers = [f"{thought}\n{_fenced(seed.replace(OLD, NEW))}", _fenced(seed), "{too}"]
    with LoopbackServer() as server:
        op, (good, bad, empty), prompts = _run(
            "eoh", server, sandbox_worker, check_options, [("s", seed, 0.5)], answers,
            prep=lambda op: setattr(op, "plan", ["e2", "m1", "m2"]) or setattr(op, "generation", 1),
        )  # fmt: skip
    p = prompts[0]
    assert "I have 2 existing algorithms" in p and "common backbone idea" in p
    assert "{The hand-written seed processor of this search.}" in p and "inside a brace" in p
    assert "different form but can be a modified version" in prompts[1]
    assert "different parameter settings" in prompts[2]
    assert good.status == "feasible" and good.directive.startswith("Add the hidden state")
    assert bad.status == "failed" and bad.failure_type == "no_thought"
    assert empty.failure_type == "no_program"
    op.observe("c", good.child_source, _ev(0.6), good)
    assert op.offspring[-1].thought.startswith("Add the hidden state")
    op.plan = []
    asyncio.run(op.propose(StepContext(task="bfs", parent=ProgramView("s", seed)), 9))
    assert [m.id for m in op.population] == ["c", "s"] and op.generation == 2


def test_offline_analogues_are_labelled(seed):
    for mode in ("openevolve", "openevolve-full", "evoprompting", "funsearch", "eoh"):
        op = make_operator(OfflineEditor(0), None, OperatorConfig(mode=mode))
        op.observe("s", seed, _ev(0.5), None)
        child = asyncio.run(op.propose(StepContext(task="bfs", parent=ProgramView("s", seed)), 0))
        assert child.child is not None and child.child != seed
        assert child.calls[0].backend == OFFLINE_ANALOGUE and not child.calls[0].is_llm
        state = op.rng_state()
        op.load_rng_state(state)
        assert op.rng_state() == state


def test_population_sizes_are_config_keys(seed):
    """The baselines' sizes come from the operator config, not from constants."""
    cfg = OperatorConfig(
        mode="funsearch", funsearch_islands=10, funsearch_reset_every=2,
        funsearch_functions_per_prompt=3,
    )  # fmt: skip
    op = make_operator(OfflineEditor(0), None, cfg)
    assert len(op.islands) == 10
    op.observe("s", seed, _ev(0.5), None)
    for i, score in enumerate((0.9, 0.1, 0.7)):
        op.pending[str(i)] = i
        variant = seed + f"\n# variant {i}\n"
        op.observe(f"c{i}", variant, _ev(score), types.SimpleNamespace(attempt=i))
    assert op.registered == 3 and op.last_reset == 2  # reset after 2 evaluated programs
    op.islands[0] = [fs.Member(f"m{i}", seed + "#" * i, i / 10) for i in range(4)]
    assert max(len(op.sample(0)) for _ in range(50)) == 3  # k = 3 versions per prompt
    evo = make_operator(
        OfflineEditor(0), None,
        OperatorConfig(mode="evoprompting", evoprompting_children=2, evoprompting_parents=2),
    )  # fmt: skip
    evo.observe("s", seed, _ev(0.5), None)
    ctx = StepContext(task="bfs", parent=ProgramView("s", seed))
    for i in range(2):
        asyncio.run(evo.propose(ctx, i))
        evo.observe(f"c{i}", seed + f"\n# c{i}\n", _ev(0.6 + i / 10), types.SimpleNamespace())
    asyncio.run(evo.propose(ctx, 2))  # the third proposal opens generation 1
    assert evo.generation == 1 and [m.id for m in evo.parents] == ["c1", "c0"]
    eoh = make_operator(OfflineEditor(0), None, OperatorConfig(mode="eoh", eoh_pop_size=2))
    eoh.observe("s", seed, _ev(0.5), None)
    asyncio.run(eoh.propose(StepContext(task="bfs", parent=ProgramView("s", seed)), 0))
    assert len(eoh.plan) + 1 == 2  # a generation plans eoh_pop_size strategies


@pytest.mark.parametrize("key", ["funsearch_islands", "evoprompting_shots", "eoh_pop_size"])
@pytest.mark.parametrize("value", [0, -1, "4", True])
def test_population_sizes_are_validated(key, value):
    with pytest.raises(ValueError, match=f"operator.{key}: must be an integer >= 1"):
        OperatorConfig(**{key: value})

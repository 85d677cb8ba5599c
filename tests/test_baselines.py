"""The baselines against a real OpenAI-compatible server on 127.0.0.1: each prompt carries
what its original's prompt carries (OpenEvolve's island top programs and focus areas,
FunSearch's unscored `_vN` versions after the specification preamble, EoH's thoughts and code
without objective values) and each answer is read as the original reads it (OpenEvolve skips
unmatched SEARCH blocks, EoH asks again); a malformed answer is a counted failure with its
calls kept."""

from __future__ import annotations

import asyncio
import pathlib
import types

import pytest

from spark_jax.config.sections import OperatorConfig
from spark_jax.feasibility import checker as feasibility
from spark_jax.llm import OpenAIBackend
from spark_jax.llm.loopback import LoopbackServer, Reply
from spark_jax.llm.parsing import extract_program
from spark_jax.operator.baselines import OFFLINE_ANALOGUE, make_operator
from spark_jax.operator.baselines import eoh as eoh_lib
from spark_jax.operator.baselines import funsearch as fs
from spark_jax.operator.baselines import openevolve_prompt as oe_prompt
from spark_jax.operator.baselines.diffs import DiffError, apply_diff
from spark_jax.operator.baselines.openevolve import parse_full_rewrite
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext
from spark_jax.operator.offline import OfflineEditor
from spark_jax.operator.signals import Outcome

OLD = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs))  # [B, N, H]"
NEW = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs) + self.o2(hidden))  # [B, N, H]"
NEW2 = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs) + self.o1(z))  # [B, N, H]"


@pytest.fixture(scope="module")
def seed(seed_paths):
    return seed_paths["mpnn"].read_text()


def _ev(ood, macs=1000.0):
    return types.SimpleNamespace(score=ood, macs=macs)


def _run(mode, server, sandbox_worker, check_options, members, answers, prep=None, per_step=None):
    """Steps of `mode` answered by `answers` in order (`per_step[k]` answers queued for step
    k, default 1); returns the operator, proposals and the prompts."""
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
        outcomes=(Outcome(0, "ACTION", "infeasible", "locality", summary="changed ACTION region"),),
    )
    out, queue = [], list(answers)
    for k, n in enumerate(per_step or [1] * len(answers)):
        server.push(*(Reply(a) for a in queue[:n]))
        del queue[:n]
        out.append(asyncio.run(op.step(ctx, k)))
    prompts = [r.body["messages"][-1]["content"] for r in server.requests if r.body]
    return op, out, prompts


def _block(old, new):
    return f"<<<<<<< SEARCH\n{old}\n=======\n{new}\n>>>>>>> REPLACE"


def test_diffs_apply_as_openevolve():
    program = "a\nb\nc\nb"
    one = apply_diff(program, "Reasoning.\n" + _block("b", "B") + "\n")
    assert one.program == "a\nB\nc\nb" and one.skipped == () and one.note() == "ok"
    # An unmatched block is skipped; the others still apply, in order.
    two = apply_diff(program, _block("zzz", "y") + "\n" + _block("c", "C"))
    assert two.program == "a\nb\nC\nb" and two.skipped == (1,) and two.blocks == 2
    assert two.note().startswith("skipped_blocks: 1 of 2 SEARCH blocks matched nothing")
    # Trailing whitespace of either text is dropped (OpenEvolve's rstrip()).
    assert apply_diff(program, _block("c   ", "D  ")).program == "a\nb\nD\nb"
    # 0.4.0: a SEARCH line matches a program line that differs only by trailing whitespace.
    assert apply_diff("a\nb  \nc", _block("a\nb", "X")).program == "X\nc"
    # 0.4.0: nothing matches, no block, or malformed delimiters: the attempt fails.
    for answer, outcome in (
        (_block("zzz", "y"), "no_match"),
        ("no blocks at all", "no_diff"),
        (_block("b", "B\n=======\nC"), "malformed_diff"),  # a second separator
        ("=======\n" + _block("b", "B"), "malformed_diff"),  # a delimiter outside a block
    ):
        with pytest.raises(DiffError) as e:
            apply_diff(program, answer)
        assert e.value.outcome == outcome, answer


def test_full_rewrite_parses_as_openevolve_and_spark_parses_its_own_way():
    """OpenEvolve's parse_full_rewrite takes the FIRST python block; SPARK's extract_program the
    largest. An answer quoting a snippet before its program: the snippet for OpenEvolve, the
    program for SPARK."""
    program = "import jax\n\n\ndef f(x):\n    return jax.nn.relu(x)\n"
    answer = (
        "The key change is this line:\n```python\nreturn jax.nn.relu(x)\n```\n"
        f"The complete program:\n```python\n{program}```\n"
    )
    assert parse_full_rewrite(answer) == "return jax.nn.relu(x)"
    assert extract_program(answer) == program
    # Fallbacks, as OpenEvolve's: the first block of any kind (its language word kept as a
    # line), else the whole answer.
    assert parse_full_rewrite("```py\nx = 1\n```\n```python3\ny = 2\n```") == "py\nx = 1"
    assert parse_full_rewrite("no fences here") == "no fences here"


def test_recorded_openevolve_answers_give_the_same_children_under_the_current_rules():
    """The real-model OpenEvolve answers were parsed by v0.3.2's rules when recorded; the
    0.4.0 rules (diffs.py) give the same child for every one of them."""
    import sqlite3

    root = pathlib.Path(__file__).resolve().parents[1] / "results"
    dbs = sorted(root.glob("llm-reliability/**/openevolve/seed-*/run.db"))
    dbs += sorted(root.glob("llm-trained/data/openevolve/seed-*/run.db"))
    assert len(dbs) >= 3, dbs
    checked = 0
    for db in dbs:
        con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
        rows = con.execute(
            "SELECT c.response, p.status, p.failure_type, p.child_source, g.source "
            "FROM llm_calls c JOIN proposals p ON p.attempt = c.attempt "
            "JOIN programs g ON g.id = p.parent_id WHERE c.role = 'openevolve-diff'"
        ).fetchall()
        con.close()
        for response, status, failure, child, parent in rows:
            applied = apply_diff(parent, response).program
            if status == "feasible" or failure == "duplicate":
                assert child is None or applied == child, (db, failure)
            checked += 1
    assert checked >= 60


def _fenced(src):
    return f"```python\n{src}```"


def test_openevolve_diff_and_full(seed, sandbox_worker, check_options):
    block = _block(OLD, NEW)
    missing = _block("        no_such_line()", "        x = 1")
    partial = missing + "\n" + _block(OLD, NEW2)
    with LoopbackServer() as server:
        _, (good, unchanged, half, again), prompts = _run(
            "openevolve", server, sandbox_worker, check_options, [("s", seed, 0.5)],
            [f"Reasoning first.\n{block}\n", missing, partial, block],
        )  # fmt: skip
        system = server.requests[-1].body["messages"][0]["content"]
    p = prompts[0]
    for needed in ("<<<<<<< SEARCH", ">>>>>>> REPLACE", "## Previous Attempts", "### Attempt 1"):
        assert needed in p
    # OpenEvolve's history: the island's top programs, never the latest failures.
    assert "infeasible" not in p and "locality" not in p
    assert "### Program 1 (Score: 0.6100)" in p and "Key features: Performs well on" in p
    assert "## Inspiration Programs" in p and "### Inspiration 1 (Score: 0.3300" in p
    assert "- Fitness: 0.5000" in p and "Consider simplifying - code length exceeds 500" in p
    # The task description is OpenEvolve's system message.
    assert "## Program contract" in system and "## Program contract" not in p
    assert good.status == "feasible", good.reason
    assert good.child_source == seed.replace(OLD, NEW) and good.mode == "openevolve"
    assert good.entanglement == "action" and good.calls[0].is_llm
    # No block matches: a failed attempt, as in OpenEvolve 0.4.0.
    assert unchanged.status == "failed" and unchanged.failure_type == "no_match"
    assert "none of the 1 SEARCH block(s) matched" in unchanged.reason
    assert unchanged.calls[0].response == missing  # the answer is kept with the proposal
    # One block matches, one does not: the matching one applies, as in OpenEvolve.
    assert half.status == "feasible" and half.child_source == seed.replace(OLD, NEW2)
    assert half.calls[0].parse_outcome.startswith("skipped_blocks: 1 of 2")
    # A repeat is checked as any child; the search loop records it as a duplicate.
    assert again.status == "feasible" and again.child_source == good.child_source
    with LoopbackServer() as server:
        quoted = f"The change:\n```python\n{NEW.strip()}\n```\n" + _fenced(seed.replace(OLD, NEW))
        _, (full, prose, snippet), prompts = _run(
            "openevolve-full", server, sandbox_worker, check_options, [("s", seed, 0.5)],
            [_fenced(seed.replace(OLD, NEW)), "I would rather not.", quoted],
        )  # fmt: skip
    assert "complete new program" in prompts[0] and "SEARCH" not in prompts[0]
    assert full.status == "feasible" and full.child_source == seed.replace(OLD, NEW)
    # OpenEvolve takes an answer without fences as the program: it fails the checks.
    assert prose.status != "feasible" and prose.failure_stage == "template"
    # A snippet quoted before the program: OpenEvolve reads the snippet (a failed child),
    # where SPARK's parser would read the program.
    assert snippet.status != "feasible" and snippet.calls[0].parse_outcome.startswith("tags_")
    assert extract_program(quoted) == seed.replace(OLD, NEW)


def test_openevolve_previous_attempts_carry_changes_and_outcome(seed):
    """An evaluated child keeps the diff summary that made it and its parent's metrics, and
    shows them under "Previous Attempts" when it ranks among the island's top 3."""
    op = make_operator(OfflineEditor(0), None, OperatorConfig(mode="openevolve"))
    op.observe("s", seed, _ev(0.5), None)
    parent = ProgramView("s", seed, {"ood_score": 0.5, "macs": 10.0})
    child = asyncio.run(op.propose(StepContext(task="bfs", parent=parent), 0))
    assert op.pending["0"]["changes"].startswith("Change 1:")
    proposal = types.SimpleNamespace(attempt=0)
    op.observe("c", child.child, _ev(0.7), proposal)
    view = ProgramView("c", child.child, {"ood_score": 0.7, "macs": 12.0})
    text = oe_prompt.previous_attempts([view, parent], op.meta)
    assert text.index("### Attempt 2") < text.index("### Attempt 1")  # OpenEvolve's order
    attempt_1 = text.split("### Attempt 1")[1]
    assert "- Changes: Change 1:" in attempt_1 and "Improvement in all metrics" in attempt_1
    assert "- Changes: Unknown changes" in text.split("### Attempt 1")[0]
    state = op.rng_state()
    op.load_rng_state(state)
    assert op.meta["c"]["parent_metrics"] == {"ood_score": 0.5, "macs": 10.0}


def _versions(op, island):
    # Both clusters, sorted (cluster sampling is checked on its own below).
    return sorted(op.islands[0], key=lambda m: m.score)


def _body_from_prompt(prompt: str, version: int) -> str:
    """What a model writes for `Processor_v{version+1}` from the prompt alone: the body of the
    last version shown (after its docstring), as the prompt shows it."""
    shown = prompt.split(f"class Processor_v{version}(")[1].split(
        f"class Processor_v{version + 1}("
    )[0]
    lines = shown.split("\n")[2:]  # the header's rest and the one-line docstring
    return "\n".join(lines).rstrip() + "\n"


def test_funsearch_versions_and_body(seed, sandbox_worker, check_options):
    worse = seed.replace("    use_ln: bool = True\n", "    use_ln: bool = True  # v\n")
    members = [("s", seed, 0.5), ("w", worse, 0.2)]
    with LoopbackServer() as server:
        op, (first,), prompts = _run(
            "funsearch", server, sandbox_worker, check_options, members, ["no code at all"],
            prep=lambda op: setattr(op, "sample", lambda island: _versions(op, island)),
        )  # fmt: skip
    p = prompts[0]
    # The preamble (task description, then the module text before the class), two versions
    # sorted by score ascending without their scores, the next header last.
    assert p.startswith('"""## Program contract') and "import flax.linen as nn" in p
    assert p.index("import flax.linen as nn") < p.index("class Processor_v0")
    assert (
        p.index("class Processor_v0")
        < p.index("class Processor_v1")
        < p.index("class Processor_v2")
    )
    assert "ood_score=0." not in p and "0.2000" not in p and "0.5000" not in p
    assert "Improved version of `Processor_v1`" in p and p.rstrip().endswith('v1`."""')
    # Every version shown keeps its closing tag (the class's AST span stops at `return`).
    assert p.count("        # SPARK:END ACTION") == 2
    assert first.failure_type == "no_body"
    # The answer a model writes from that prompt: v1's body with one line changed, the tag
    # line included as shown. It splices into v1's program as exactly that program.
    answer = _body_from_prompt(p, 1).replace(OLD, NEW)
    assert answer.count("# SPARK:END ACTION") == 1
    with LoopbackServer() as server:
        op, (good, bad), _ = _run(
            "funsearch", server, sandbox_worker, check_options, members,
            [_fenced(answer), "```python\n    def broken(:\n```"],
            prep=lambda op: setattr(op, "sample", lambda island: _versions(op, island)),
        )  # fmt: skip
    assert good.status == "feasible", good.reason
    assert good.child_source == seed.replace(OLD, NEW) and good.parent_id == "s"
    assert good.child_source.count("# SPARK:END ACTION") == 1
    assert bad.status == "failed" and bad.failure_type == "no_body"
    # Islands: the child joins the island it was prompted from; resets keep the stronger half.
    island = op.pending["0"]
    op.observe("c", good.child_source, _ev(0.7), good)
    assert op.islands[island][-1].id == "c"
    op.islands = [[fs.Member(f"i{i}", seed, i / 10)] for i in range(op.config.funsearch_islands)]
    op.reset_islands()
    best = {m.id for isl in op.islands for m in isl}
    assert best <= {"i2", "i3"} and [m.id for m in op.islands[3]] == ["i3"]


def test_funsearch_class_span_keeps_the_closing_tag(seed_paths):
    for path in seed_paths.values():
        source = path.read_text()
        shown = fs.versioned(source, 0)
        assert shown.rstrip().endswith("# SPARK:END ACTION"), path.name
        assert "def make_processor" not in shown
        # The body a model returns unchanged splices back into the same program.
        body = shown.split('"""', 2)[2] if '"""' in shown else shown
        assert fs.splice_body(source, body.split("\n", 1)[1], 1) == source, path.name


def test_funsearch_samples_per_prompt(seed):
    """One prompt (island and versions) serves FunSearch's 4 samples, then a new one is drawn."""
    op = make_operator(OfflineEditor(0), None, OperatorConfig(mode="funsearch"))
    op.observe("s", seed, _ev(0.5), None)
    for i in range(op.config.funsearch_islands):
        op.islands[i].append(fs.Member(f"m{i}", seed + f"# {i}\n", 0.1 * i))
    draws = [op.next_prompt() for _ in range(3 * fs.SAMPLES_PER_PROMPT)]
    keys = [(island, tuple(m.id for m in versions)) for island, versions in draws]
    for k in range(0, len(keys), fs.SAMPLES_PER_PROMPT):
        assert len(set(keys[k : k + fs.SAMPLES_PER_PROMPT])) == 1
    assert len(set(keys)) > 1  # later prompts are drawn anew
    state = op.rng_state()
    assert state["population"]["queued"]["left"] == 0
    assert {e["parameter"] for e in state["scale_note"]} >= {"islands", "samples per prompt"}


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


def _eoh_prep(plan):
    return lambda op: setattr(op, "plan", list(plan)) or setattr(op, "generation", 1)


def test_eoh_thoughts_and_strategies(seed, sandbox_worker, check_options):
    thought = "{Add the hidden state to the node update as a residual input.}"
    answers = [
        f"{thought}\n{_fenced(seed.replace(OLD, NEW))}",
        f"{{Gate it all.}}\n{_fenced(seed.replace(OLD, NEW2))}",
    ]
    with LoopbackServer() as server:
        op, (good, other), prompts = _run(
            "eoh", server, sandbox_worker, check_options, [("s", seed, 0.5)], answers,
            prep=_eoh_prep(["e2", "m1"]),
        )  # fmt: skip
    p = prompts[0]
    assert p.startswith("## Program contract")  # the task description comes first
    assert "I have 2 existing algorithms" in p and "common backbone idea" in p
    assert "No.1 algorithm and the corresponding code are:\nThe hand-written seed" in p
    assert "inside a brace" in p and "implement the following Python class:\n```python" in p
    assert "ood_score" not in p.split("## Masking rule")[1]  # no objective values
    assert "Algorithm description: The hand-written seed" in prompts[1]
    assert "different form but can be a modified version" in prompts[1]
    assert good.status == "feasible" and good.directive.startswith("Add the hidden state")
    assert other.status == "feasible" and len(other.calls) == 1
    op.observe("c", good.child_source, _ev(0.6), good)
    assert op.offspring[-1].thought.startswith("Add the hidden state")
    op.plan = []
    asyncio.run(op.propose(StepContext(task="bfs", parent=ProgramView("s", seed)), 9))
    assert [m.id for m in op.population] == ["c", "s"] and op.generation == 2
    # M3 exists but is not scheduled by default (neither EoH version does).
    assert "m3" not in op.strategies and all(s != "m3" for s in op.plan)


def test_eoh_retries_as_eoh(seed, sandbox_worker, check_options):
    """Extraction failures are asked again up to 4 times; a duplicated child is generated
    again (new parents, new prompt) up to 2 times; every call stays with the proposal."""
    code = _fenced(seed.replace(OLD, NEW))
    answers = [
        "no code here",
        "{An idea without code at all.}",
        f"{{Residual hidden input.}}\n{code}",
    ]
    answers += ["nothing"] * (1 + eoh_lib.EXTRACT_RETRIES)
    dup = f"{{The seed again, unchanged.}}\n{_fenced(seed)}"
    answers += [dup] * (1 + eoh_lib.DUPLICATE_RETRIES)
    answers += [dup, f"{{Another gate.}}\n{_fenced(seed.replace(OLD, NEW2))}"]
    with LoopbackServer() as server:
        _, (late, lost, dupe, fresh), prompts = _run(
            "eoh", server, sandbox_worker, check_options, [("s", seed, 0.5)], answers,
            prep=_eoh_prep(["m1", "m2", "m1", "e1"]),
            per_step=[3, 1 + eoh_lib.EXTRACT_RETRIES, 1 + eoh_lib.DUPLICATE_RETRIES, 2],
        )  # fmt: skip
    assert late.status == "feasible" and len(late.calls) == 3
    assert [c.parse_outcome.split(":")[0] for c in late.calls] == ["no_program", "no_program", "ok"]
    assert late.directive == "Residual hidden input."
    assert lost.status == "failed" and lost.failure_type == "no_program"
    assert len(lost.calls) == 1 + eoh_lib.EXTRACT_RETRIES
    assert dupe.status == "failed" and dupe.failure_type == "duplicate"
    assert len(dupe.calls) == 1 + eoh_lib.DUPLICATE_RETRIES
    assert fresh.status == "feasible" and len(fresh.calls) == 2
    assert len(prompts) == sum([3, 1 + eoh_lib.EXTRACT_RETRIES, 1 + eoh_lib.DUPLICATE_RETRIES, 2])


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


def test_funsearch_completion_keeps_its_indentation_through_the_backend(seed, seed_paths):
    """A model continuing `class Processor_v1` answers with the body, its first line indented;
    the backend's answer text keeps that indentation, so the body splices (the reliability
    run's first record lost it and parsed 0 of 15 FunSearch answers)."""
    from spark_jax.llm._text import split_reasoning

    shown = fs.versioned(seed, 0)
    body = shown.split('"""', 2)[2].split("\n", 1)[1]  # after the docstring line
    answer, _ = split_reasoning(body + "\n")
    assert answer.startswith("    ") and fs.splice_body(seed, answer, 1) == seed
    assert fs.splice_body(seed, answer.lstrip(), 1) is None  # what a stripped answer gave


def test_pool_programs_carry_their_lineage_into_openevolve_and_eoh(seed):
    """In proposal-only runs the pool's programs keep what the method would have recorded when
    it made them: OpenEvolve's diff summary and parent metrics, EoH's idea."""
    child = seed.replace(OLD, NEW)
    parent = ProgramView("s", seed, {"ood_score": 0.5, "macs": 10.0})
    view = ProgramView("c", child, {"ood_score": 0.4, "macs": 10.0}, parent_id="s")
    op = make_operator(OfflineEditor(0), None, OperatorConfig(mode="openevolve"))
    op.observe_pool("s", seed, _ev(0.5), None, "")
    op.observe_pool("c", child, _ev(0.4), parent, "adds a skip term")
    text = oe_prompt.previous_attempts([parent, view], op.meta)
    attempt = text.split("### Attempt 1")[0]  # the child's block: Attempt 2 (reversed order)
    assert "- Changes: Change 1: " in attempt and "self.o2(hidden)" in attempt
    assert "Improvement in all metrics" not in attempt  # 0.4 < 0.5: not against a zero parent
    eoh = make_operator(OfflineEditor(0), None, OperatorConfig(mode="eoh"))
    eoh.observe_pool("s", seed, _ev(0.5), None, "")
    eoh.observe_pool("c", child, _ev(0.4), parent, "adds a skip term")
    assert [m.thought for m in eoh.population] == [eoh_lib.SEED_THOUGHT, "adds a skip term"]

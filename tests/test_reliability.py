"""The reliability harness: Wilson and Fisher's exact test, the file-queue model script, the
attempt-keyed cassette, and a proposal-only comparison recorded through the command backend
with attempts in flight at once, then replayed with no model to the same table."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import math
import os
import pathlib
import random
import subprocess
import sys
import threading
import time

import pytest

from spark_jax.config import search as search_config
from spark_jax.config.protocol import ConfigError
from spark_jax.families import Evaluation
from spark_jax.llm import queue as llm_queue
from spark_jax.llm.attempt_cassette import ATTEMPT, AttemptCassetteBackend
from spark_jax.llm.base import LLMBackend, LLMResponse, LLMTimeoutError, ReplayMissError
from spark_jax.search.parent_pool import load_pool
from spark_jax.search.schema import program_sha256
from spark_jax.stats.proportions import fisher_exact, wilson

ROOT = pathlib.Path(__file__).resolve().parents[1]
QUEUE_SCRIPT = ROOT / "scripts" / "llm_queue_model.py"  # what the experiments' configs run


# -- statistics -------------------------------------------------------------------------------
def _fisher_brute(a, n_a, b, n_b):
    col = a + b

    def prob(x):
        return math.comb(n_a, x) * math.comb(n_b, col - x) / math.comb(n_a + n_b, col)

    xs = range(max(0, col - n_b), min(n_a, col) + 1)
    return sum(prob(x) for x in xs if prob(x) <= prob(a) * (1 + 1e-12))


def test_fisher_exact_matches_the_textbook_and_a_brute_force_sum():
    assert fisher_exact(3, 4, 1, 4).p_value == pytest.approx(17 / 35, abs=1e-15)  # tea tasting
    assert fisher_exact(3, 4, 1, 4).odds_ratio == 9.0
    assert fisher_exact(5, 5, 0, 5).p_value == pytest.approx(2 / 252)
    for a, n_a, b, n_b in [(16, 30, 8, 30), (0, 15, 7, 15), (30, 30, 29, 30), (2, 9, 6, 11)]:
        assert fisher_exact(a, n_a, b, n_b).p_value == pytest.approx(
            _fisher_brute(a, n_a, b, n_b), rel=1e-9
        )
    assert fisher_exact(4, 10, 4, 10).p_value == 1.0
    with pytest.raises(ValueError, match="0 <= a <= n_a"):
        fisher_exact(5, 4, 1, 4)


def test_wilson_interval():
    lo, hi = wilson(15, 30)
    assert (round(lo, 4), round(hi, 4)) == (0.3315, 0.6685)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


# -- the queue script -------------------------------------------------------------------------
BRIEF = ROOT / "scripts" / "llm_model_brief.md"


def _answer_when_asked(
    queue: pathlib.Path, text: str, out: list, agent: str = "a1", think_s: float = 0.0
) -> None:
    """An answerer on the real file queue: claims a prompt by moving it to claimed/<agent>/,
    takes `think_s` seconds, then writes the answer under a temporary name and renames it."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pending = [p for p in (queue / "pending").glob("*.md")] if queue.exists() else []
        if pending:
            p = pending[0]
            mine = queue / "claimed" / agent / p.name
            mine.parent.mkdir(parents=True, exist_ok=True)
            os.rename(p, mine)
            out.append(mine.read_text(encoding="utf-8"))
            time.sleep(think_s)
            tmp = queue / "answers" / f".{p.name}.tmp"
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, queue / "answers" / p.name)
            return
        time.sleep(0.05)


def _ask(queue, prompt, answer, seen, **kw):
    """`llm.queue.ask` with an answerer on another thread: (answer, channel record)."""
    helper = threading.Thread(target=_answer_when_asked, args=(queue, answer, seen), kwargs=kw)
    helper.start()
    env = dict(SPARK_LLM_QUEUE=str(queue), SPARK_LLM_BRIEF=str(BRIEF))
    queue_dir, timeout, brief = llm_queue.settings(env)
    try:
        return llm_queue.ask(queue_dir, prompt, timeout, brief)
    finally:
        helper.join()


def test_queue_hands_the_prompt_over_and_returns_the_answer(tmp_path):
    queue = tmp_path / "q"
    seen: list[str] = []
    text, _ = _ask(queue, "the prompt\nsays: FACTOR", "FACTOR: ACTION\n", seen, agent="m1")
    assert text == "FACTOR: ACTION\n"
    assert seen == ["the prompt\nsays: FACTOR"]  # the prompt itself, nothing appended
    assert not list((queue / "pending").glob(".*"))  # no temporary file left
    # Nothing but the prompt reaches the answerer: the queue holds no other file for it.
    visible = sorted(str(p.relative_to(queue)) for p in queue.rglob("*") if p.is_file())
    assert visible == [f"answers/{p}" for p in os.listdir(queue / "answers")] + [
        f"claimed/m1/{p}" for p in os.listdir(queue / "claimed" / "m1")
    ]


def test_queue_channel_records_answerer_brief_and_latency_and_flags_a_fast_answerer(
    tmp_path, monkeypatch
):
    """The channel's record per call, read back by the command backend; a fake answerer that
    writes a whole program at once is flagged, one that takes its time is not."""
    from spark_jax.llm import CommandBackend
    from spark_jax.llm.channel import ChannelRecord, read_brief

    brief = read_brief(BRIEF)
    assert brief.version.startswith("3") and brief.bound_chars_per_s == 300
    program = "x = 1\n" * 200  # 1,200 characters
    fast = _ask(tmp_path / "q1", "p", program, [], agent="fast-fake")
    # The claim is seen at the next poll (POLL_S): the answer time may fall short by that much.
    slow = _ask(tmp_path / "q2", "p", "FACTOR: ACTION\n", [], agent="slow-fake", think_s=0.65)
    (_, f), (_, s) = fast, slow
    assert ChannelRecord.from_stderr(f"noise\n{f.line()}\n") == f  # how the backend reads it
    assert (f.answerer, s.answerer) == ("fast-fake", "slow-fake")
    assert f.brief_version == brief.version and f.brief_sha256 == brief.sha256
    assert f.chars == 1200 and f.fast and f.chars_per_s > 300
    assert not s.fast and s.answer_s >= 0.5 and s.chars == 15
    # Through the command backend: the record is kept with the response and named in its label.
    queue = tmp_path / "q3"
    helper = threading.Thread(
        target=_answer_when_asked, args=(queue, program, []), kwargs={"agent": "t9"}
    )
    helper.start()
    monkeypatch.setenv("SPARK_LLM_QUEUE", str(queue))
    monkeypatch.setenv("SPARK_LLM_BRIEF", str(BRIEF))
    backend = CommandBackend([sys.executable, str(QUEUE_SCRIPT)], model="stand-in")
    response = asyncio.run(backend.complete("edit", "the prompt"))
    helper.join()
    assert response.text == program.strip() and response.channel["answerer"] == "t9"
    assert response.channel["fast"] is True
    assert response.model.startswith("stand-in: agent t9, brief 3 (2026-11-28)")
    assert "FASTER than the brief's bound 300" in response.model
    assert LLMResponse.from_dict(response.to_dict()).channel == response.channel


def test_queue_script_times_out_with_one_line(tmp_path):
    """The script's command line: one stderr line, exit 1, on a timeout or a bad setting."""
    env = dict(
        os.environ,
        SPARK_LLM_QUEUE=str(tmp_path / "q"),
        SPARK_LLM_QUEUE_TIMEOUT_S="0.5",
        SPARK_LLM_BRIEF=str(BRIEF),
    )
    out = subprocess.run(
        [sys.executable, str(QUEUE_SCRIPT)], input="p", env=env, capture_output=True, text=True
    )
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "no answer to" in out.stderr
    del env["SPARK_LLM_QUEUE"]
    out = subprocess.run(
        [sys.executable, str(QUEUE_SCRIPT)], input="p", env=env, text=True, capture_output=True
    )
    assert out.returncode != 0 and "SPARK_LLM_QUEUE is not set" in out.stderr
    env["SPARK_LLM_QUEUE"] = str(tmp_path / "q")
    for brief, says in ((None, "SPARK_LLM_BRIEF is not set"), (ROOT / "README.md", "Version:")):
        env.pop("SPARK_LLM_BRIEF", None)
        if brief:
            env["SPARK_LLM_BRIEF"] = str(brief)
        out = subprocess.run(
            [sys.executable, str(QUEUE_SCRIPT)], input="p", env=env, text=True, capture_output=True
        )
        assert out.returncode != 0 and says in out.stderr and out.stderr.count("\n") == 1


def test_the_fake_agent_claims_and_answers_in_the_format_asked(tmp_path):
    """`llm.fake_agent` (scripts/llm_fake_queue_agent.py, dry runs only): a claim through
    claimed/<agent>/, a canned answer per format, renamed into answers/; stops when idle."""
    from spark_jax.llm import fake_agent

    queue = tmp_path / "q"
    (queue / "pending").mkdir(parents=True)
    prompts = {"a": "say FACTOR: OPERATOR or ...", "b": "Do not write code blocks.", "c": "x"}
    for name, text in prompts.items():
        (queue / "pending" / f"{name}.md").write_text(text)
    fake_agent.answer_queue(queue, "fake-7", "pass\n", stop_after=0.3)
    assert sorted(p.name for p in (queue / "claimed" / "fake-7").iterdir()) == [
        "a.md",
        "b.md",
        "c.md",
    ]
    answers = {p.stem: p.read_text() for p in (queue / "answers").iterdir()}
    assert answers == {n: fake_agent.canned_answer(t, "pass\n") for n, t in prompts.items()}
    assert answers["a"].endswith("FACTOR: OPERATOR\n") and "```" not in answers["b"]
    assert answers["c"] == "```python\npass\n```\n"


def test_the_pool_writer_gives_a_pool_the_reader_loads(tmp_path):
    """`compare.pool` (scripts/llm_reliability_pool.py) on a committed search: the seed first,
    then each program that evaluated ok with its lineage; `load_pool` reads it back."""
    from spark_jax.compare import pool

    run = ROOT / "results" / "controls-offline" / "data" / "spark" / "seed-0"
    path, count = pool.write_pool(run, tmp_path / "parents")
    data = json.loads(path.read_text())
    names = [p["name"] for p in data["programs"]]
    assert count == len(names) >= 2 and names[0] == "seed" and "parent" not in data["programs"][0]
    assert all(p["parent"] in names[:i] for i, p in enumerate(data["programs"][1:], 1))
    loaded = load_pool(path, data["task"])
    assert [p.name for p in loaded.programs] == names
    assert loaded.programs[0].source == (tmp_path / "parents" / "seed.py").read_text()


# -- the attempt-keyed cassette ---------------------------------------------------------------
class _SlowCounting(LLMBackend):
    """Answers with a global counter after a random delay: the order answers come back in
    (and so what each call gets) depends on timing, as with agents answering in parallel."""

    def __init__(self):
        self.counter = itertools.count()

    @property
    def name(self):
        return "counting"

    async def _complete(self, role, prompt, *, system=None):
        await asyncio.sleep(random.random() * 0.02)
        n = next(self.counter)
        if n == 3:
            raise LLMTimeoutError("no answer in time")
        return LLMResponse(role=role, text=f"answer {n}", model="m", backend="t", latency_s=n)


async def _attempts(backend, n):
    async def one(i):
        ATTEMPT.set(i)
        out = []
        for _ in range(2):  # the same prompt twice within an attempt, and across attempts
            try:
                out.append((await backend.complete("edit", "same prompt")).text)
            except Exception as e:  # noqa: BLE001
                out.append(f"{type(e).__name__}: {e}")
        return out

    return await asyncio.gather(*(one(i) for i in range(n)))


def test_attempt_cassette_replays_each_attempt_its_own_answers(tmp_path):
    path = tmp_path / "c.jsonl"
    recorded = asyncio.run(_attempts(AttemptCassetteBackend(path, _SlowCounting()), 6))
    assert sorted(a for r in recorded for a in r if a.startswith("answer")) != []
    assert any("no answer in time" in a for r in recorded for a in r)
    replayed = asyncio.run(_attempts(AttemptCassetteBackend(path), 6))
    assert [[a.split(": ", 1)[-1] for a in r] for r in replayed] == [
        [a.split(": ", 1)[-1] for a in r] for r in recorded
    ]
    # Resumed with a model: recorded calls are answered from the file, not asked again.
    inner = _SlowCounting()
    asyncio.run(_attempts(AttemptCassetteBackend(path, inner), 6))
    assert next(inner.counter) == 0
    more = asyncio.run(_attempts(AttemptCassetteBackend(path), 7))
    assert all(a.startswith(ReplayMissError.__name__) for a in more[6])


# -- a proposal-only comparison, recorded and replayed ----------------------------------------
_MODEL = """\
import itertools, pathlib, random, sys, time
prompt = sys.stdin.read()
time.sleep(random.random() * 0.5)  # answers come back in any order
counter = pathlib.Path(sys.argv[1])
with counter.open("a") as f:
    f.write("x")
n = len(counter.read_text())
if "FACTOR: OPERATOR" in prompt:
    print("FACTOR: ACTION" if n % 2 else "FACTOR: OPERATOR")
elif "Do not write code blocks" in prompt:
    print(f"Change the aggregation, idea {n}.")
else:
    print("```python\\n" + pathlib.Path(sys.argv[2]).read_text() + f"# idea {n}\\n```")
"""


def _pool(tmp_path: pathlib.Path) -> pathlib.Path:
    """A two-program pool: the seed and a variant, with evaluation records (test inputs)."""
    seed = (ROOT / "processors" / "triplet_gmpnn.py").read_text(encoding="utf-8")
    (tmp_path / "seed.py").write_text(seed, encoding="utf-8")
    (tmp_path / "variant.py").write_text(seed + "\n# a variant\n", encoding="utf-8")
    fields = {f: 0 for f in Evaluation.__dataclass_fields__}
    fields.update(task="dfs", preset="tiny", program="p", program_sha256="0", machine=None)
    for k in ("peak_rss_mb", "device_peak_mb", "cascade_steps", "cascade_val_score"):
        fields[k] = None
    fields.update(cascade_promoted=None, seeds=None, seed_scores=None, seed_val_scores=None)
    fields.update(seed_best_steps=None, seed_final_losses=None)
    fields.update(family=None, metrics=None, compile_wall_seconds=None, eval_seconds=None)
    fields.update(loop_steps_per_second=None, n_devices=1)
    entries = []
    for name, score in (("seed", 0.3), ("variant", 0.4)):
        ev = Evaluation(**{**fields, "score": score, "val_score": score})
        entries.append(dict(name=name, file=f"{name}.py", evaluation=ev.to_dict()))
    entries[1].update(parent="seed", attempt=3, description="appends a comment")
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(dict(task="dfs", programs=entries)), encoding="utf-8")
    return path


def test_parent_pool_rule_and_bad_pools(tmp_path):
    pool = load_pool(_pool(tmp_path), "dfs")
    assert [pool.parent_index(i) for i in range(5)] == [0, 1, 0, 1, 0]
    assert pool.inspirations(0) == (1,)
    assert [pool.parent_of(i) for i in range(2)] == [None, 0]  # the lineage
    assert pool.programs[1].description == "appends a comment"
    with pytest.raises(ConfigError, match="evaluated on task 'dfs'"):
        load_pool(tmp_path / "pool.json", "bfs")
    data = json.loads((tmp_path / "pool.json").read_text())
    data["programs"][1]["parent"] = "variant"  # itself: no earlier program
    (tmp_path / "loop.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="parent 'variant' is no earlier program"):
        load_pool(tmp_path / "loop.json", "dfs")
    (tmp_path / "bad.json").write_text('{"programs": []}')
    with pytest.raises(ConfigError, match="non-empty list"):
        load_pool(tmp_path / "bad.json", "dfs")
    with pytest.raises(ConfigError, match="proposal_only.pool: file not found"):
        search_config.from_dict({"proposal_only": {"pool": str(tmp_path / "none.json")}})
    with pytest.raises(ConfigError, match="proposal_only.jobs"):
        search_config.from_dict({"proposal_only": {"pool": str(tmp_path / "pool.json"), "jobs": 0}})


def _compare(tmp_path, out, *extra):
    cmd = [sys.executable, "-m", "spark_jax.cli", "compare", "--proposal-only"]
    cmd += ["--config", str(tmp_path / "base.yaml"), "--pool", str(tmp_path / "pool.json")]
    cmd += ["--methods", "spark,openevolve", "--seeds", "1", "--max-attempts", "3"]
    cmd += ["--parallel-attempts", "3", "--jobs", "2", "--out", str(out), *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


def test_proposal_only_compare_records_in_parallel_and_replays_the_same_table(tmp_path):
    # ~1 min on a contended CPU: two real searches (each starts the feasibility sandbox),
    # recorded through the command backend with 3 attempts in flight, then replayed.
    _pool(tmp_path)
    (tmp_path / "model.py").write_text(_MODEL, encoding="utf-8")
    program = ROOT / "processors" / "triplet_gmpnn.py"
    command = [sys.executable, str(tmp_path / "model.py"), str(tmp_path / "n"), str(program)]
    llm = dict(kind="command", command=command, timeout_s=60, model="fake model (test)")
    base = dict(
        task="dfs",
        preset="tiny",
        seed_program=str(program),
        feasibility={"timeout_s": 300},
        editor=dict(kind="llm", preflight=False, llm=llm),
    )
    (tmp_path / "base.yaml").write_text(json.dumps(base), encoding="utf-8")
    recorded = _compare(tmp_path, tmp_path / "rec")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    report = (tmp_path / "rec" / "report.md").read_text(encoding="utf-8")
    assert "| `spark` | 3 |" in report and "| `openevolve` | 3 |" in report
    assert "Fisher's exact test, valid rate `spark`" in report
    assert "fake model (test)" in report
    cassette = tmp_path / "rec" / "spark" / "seed-0.cassette.jsonl"
    lines = [json.loads(x) for x in cassette.read_text().splitlines()]
    assert sorted({x["attempt"] for x in lines}) == [0, 1, 2]
    (tmp_path / "n").unlink()  # a replay calls no model: it would recreate the counter
    replayed = _compare(tmp_path, tmp_path / "rep", "--replay", str(tmp_path / "rec"))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert not (tmp_path / "n").exists()
    again = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert again == report


def test_proposal_only_flags_need_the_mode(tmp_path, capsys):
    from spark_jax import cli

    assert cli.main(["search", "--pool", str(tmp_path / "p.json")]) == 2
    assert "--pool and --parallel-attempts need --proposal-only" in capsys.readouterr().err
    assert cli.main(["search", "--proposal-only", "--run-dir", str(tmp_path / "r")]) == 2
    assert "proposal_only.pool: the parent pool file is required" in capsys.readouterr().err
    out = tmp_path / "cmp"
    assert cli.main(["compare", "--proposal-only", "--out", str(out), "--max-attempts", "2"]) == 2
    assert "--proposal-only needs a parent pool" in capsys.readouterr().err
    assert not out.exists()  # nothing written


def test_a_child_equal_to_a_pool_program_or_an_earlier_child_is_a_duplicate(tmp_path):
    # The one duplicate rule (`search.budget`) in proposal-only mode, for every method: the
    # pool programs stand for what entered training; an earlier feasible child counts too.
    from spark_jax.operator.step import Proposal
    from spark_jax.search.parents import PoolSource
    from spark_jax.search.pipeline import Pipeline
    from spark_jax.search.rundb import RunDB

    seed = (ROOT / "processors" / "triplet_gmpnn.py").read_text(encoding="utf-8")
    new = seed.replace("# SPARK:END ACTION", "# a new line\n    # SPARK:END ACTION", 1)
    source = object.__new__(PoolSource)  # its pool part only: no config, no pool file
    source.db = RunDB.create(tmp_path / "run.db")
    pid = source.db.insert_program(seed)
    source.candidates = [
        dataclasses.make_dataclass("C", ["id", "source_sha"])(pid, program_sha256(seed))
    ]
    attempts = object.__new__(Pipeline)  # its duplicate rule only: no editor, no sandbox
    attempts.source, attempts.db = source, source.db

    def proposal(i, child, status="feasible"):
        fields = dict(mode="spark", factor="ACTION", factor_source="fixed", directive="")
        return Proposal(i, pid, child_source=child, status=status, failure_stage=None,
                        failure_type=None, reason="", feasibility=None, calls=(),
                        editor="llm", is_llm=True, **fields)  # fmt: skip

    same = attempts.unless_duplicate(proposal(0, seed.replace("\n", "  \r\n")))  # normalized
    assert (same.status, same.failure_type) == ("failed", "duplicate") and pid in same.reason
    first = attempts.unless_duplicate(proposal(1, new))
    assert first.status == "feasible"
    attempts.db.record_proposal(first)
    again = attempts.unless_duplicate(proposal(2, new))
    assert again.failure_type == "duplicate"  # equal to attempt 1's child
    broken = proposal(3, seed, status="infeasible")
    assert attempts.unless_duplicate(broken) is broken  # only a valid child can be a duplicate
    attempts.db.close()

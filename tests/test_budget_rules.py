"""The budget and duplicate rules of the search loop (`search.budget`), for every method:
a feasible candidate that enters training counts toward B whatever training gives; a repeat
of a trained program is a `duplicate` (not retrained, an attempt, not evaluated); best at
budget excludes the seed. Scripted operator and executor: no editor, sandbox or trainer."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import pathlib
import re

import pytest
import records  # tests/records.py: record builders

from spark_jax.config import search as search_config
from spark_jax.jobs.executors import EvalResult
from spark_jax.report.accounting import best_within, summarize
from spark_jax.search import loop
from spark_jax.search.budget import DUPLICATE
from spark_jax.search.rundb import RunDB

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEED = (ROOT / "processors" / "mpnn.py").read_text(encoding="utf-8")


def _variant(name: str) -> str:
    """The seed with one OPERATOR line added (a distinct program named `name`)."""
    anchor = "        # SPARK:END OPERATOR\n"
    return SEED.replace(anchor, f"        self.{name} = 1  # {name}\n{anchor}")


# What each program scores: a float, or an error type (training failed / NaN).
SCORES = {"seed": 0.9, "a": 0.4, "b": "training_diverged", "c": 0.6, "d": 0.7}


def _name(source: str) -> str:
    names = [n for n in SCORES if n != "seed" and re.search(rf"# {n}\s*$", source, re.M)]
    return names[0] if names else "seed"


class _Executor:
    """Scores by program name, instantly; records every job it trains."""

    capacity = 1

    def __init__(self):
        self.trained: list[str] = []

    def submit(self, job):
        name = _name(job.source)
        if not job.job_id.startswith("final-test-"):  # the search's trainings, not the test
            self.trained.append(name)
        score = SCORES[name]
        ok = not isinstance(score, str)
        future = concurrent.futures.Future()
        future.set_result(
            EvalResult(
                job_id=job.job_id,
                ok=ok,
                error_type=None if ok else score,
                error="" if ok else "loss is NaN",
                worker="scripted",
                wall_seconds=0.0,
                evaluation=records.evaluation(score, macs=100) if ok else None,
            )
        )
        return future

    def shutdown(self, wait=True):
        pass


class _Operator:
    """Proposes the given children in order, each feasible (no checker)."""

    def __init__(self, children):
        self.children, self.history = list(children), None

    async def step(self, ctx, attempt):
        return records.proposal(
            attempt, child_source=self.children.pop(0), parent_id=ctx.parent.id, island=ctx.island
        )

    def observe(self, *args):
        pass

    def rng_state(self):
        return None

    def load_rng_state(self, state):
        pass


def _run(tmp_path, children, monkeypatch, **overrides):
    monkeypatch.setattr(loop, "make_operator", lambda *a: _Operator(children))
    cfg = search_config.load(ROOT / "configs" / "tiny.yaml")
    cfg = dataclasses.replace(cfg, seed_program=str(ROOT / "processors" / "mpnn.py"), **overrides)
    executor = _Executor()
    result = loop.run_search(cfg, tmp_path / "run", executor=executor, checker=lambda *a: None)
    return result, executor, RunDB.open(tmp_path / "run" / loop.DB_NAME)


def test_failed_training_counts_toward_budget_and_duplicates_do_not(tmp_path, monkeypatch):
    a = _variant("a")
    spaced = a.replace("# a\n", "# a   \r\n")  # equal once normalized
    children = [a, spaced, SEED, _variant("b"), _variant("c"), _variant("d")]
    result, executor, db = _run(tmp_path, children, monkeypatch, budget=4, max_attempts=10)
    with db:
        # seed, a, b (NaN: counted), c -> 4 evaluated = B: d is never proposed.
        assert executor.trained == ["seed", "a", "b", "c"]  # the repeats were not retrained
        assert result.attempts == 5 and result.evaluated == db.evaluated_count() == 4
        # The seed (0.9) is apart: best = the best evaluated candidate, what best/ holds.
        assert result.best_candidate_ood == result.best_ood == 0.6 and result.seed_ood == 0.9
        assert db.scored_count() == 3 and db.evaluated_count(include_baseline=False) == 3
        dups = [p for p in db.proposals() if p.failure_type == DUPLICATE]
        assert [p.attempt for p in dups] == [1, 2]
        assert all(p.status == "failed" and p.failure_stage == DUPLICATE for p in dups)
        assert "entered training already" in dups[0].reason
        acc = summarize(db)
    assert (acc.attempts, acc.duplicates, acc.failed, acc.feasible) == (5, 2, 0, 3)
    assert (acc.evaluated, acc.eval_errors, acc.evaluated_budget) == (2, 1, 3)
    # Best at budget: the best evaluated candidate, never the seed (0.9 beats every one).
    assert acc.best_at_budget == 0.6 and acc.best_ood == 0.9
    assert acc.curves["best_at_evaluated"] == (0.4, 0.4, 0.6)
    assert best_within(acc, 1) == best_within(acc, 2) == 0.4 and best_within(acc, 9) == 0.6
    assert best_within(acc, 0) is None


def test_best_candidate_query_excludes_the_seed(tmp_path, monkeypatch):
    children = [_variant("b"), _variant("a"), _variant("c")]
    _, _, db = _run(tmp_path, children, monkeypatch, budget=10, max_attempts=3)
    with db:
        assert db.best_candidate(within=1) is None  # only b, whose training failed
        assert db.best_candidate(within=2)["ood_score"] == 0.4
        best = db.best_candidate()
        assert best["ood_score"] == 0.6 and best["proposal_attempt"] == 2
        with pytest.raises(ValueError, match="at least 0"):
            db.best_candidate(within=-1)
        seed = db.seed_evaluation()  # the seed's own row, first of all and made by no proposal
        assert seed["proposal_attempt"] is None and seed["ood_score"] == 0.9
        assert seed == db.evaluations()[0]
        acc = summarize(db)
    assert acc.curves["best_at_evaluated"][0] != acc.curves["best_at_evaluated"][0]  # NaN
    assert best_within(acc, 1) is None and acc.best_at_budget == 0.6


def test_a_duplicate_of_a_program_in_flight_is_not_trained_twice(tmp_path, monkeypatch):
    c = _variant("c")
    cfg_executor = search_config.load(ROOT / "configs" / "tiny.yaml").executor
    executor_cfg = dataclasses.replace(cfg_executor, in_flight=2)
    _, executor, db = _run(
        tmp_path, [c, c, _variant("a")], monkeypatch, budget=10, max_attempts=3,
        executor=executor_cfg,
    )  # fmt: skip
    with db:
        assert executor.trained == ["seed", "c", "a"]
        assert [p.status for p in db.proposals()] == ["feasible", "failed", "feasible"]

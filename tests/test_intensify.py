"""Intensifying the incumbent (`fitness.intensify`, `search.intensify`): a candidate becomes
the best only after more seeds confirm it; the re-evaluations never count toward B. Scripted
operator and executor (tests/test_budget_rules.py's), whose intensification jobs score each
program by a table of its own: a lucky candidate (high first score, low on more seeds) does
not become the best."""

from __future__ import annotations

import concurrent.futures
import dataclasses

import pytest
import records
from test_budget_rules import _Executor, _name, _run, _variant

from spark_jax.config.evaluation import FitnessConfig
from spark_jax.config.protocol import ConfigError
from spark_jax.jobs.executors import EvalResult
from spark_jax.search import best_program
from spark_jax.search.intensify import META_KEY, SEED_OFFSET

# The mean over the intensification seeds, by program: `d` was lucky at first (0.7).
ON_MORE_SEEDS = {"a": 0.4, "c": 0.1, "d": 0.1}


class _Racing(_Executor):
    """The scripted executor; an intensification job scores by ON_MORE_SEEDS."""

    def __init__(self):
        super().__init__()
        self.intensified: list[tuple[str, int, int]] = []

    def submit(self, job):
        if not job.job_id.startswith("intensify-"):
            return super().submit(job)
        name = _name(job.source)
        self.intensified.append((name, job.seed, job.seeds))
        future = concurrent.futures.Future()
        future.set_result(
            EvalResult(
                job.job_id, True, records.evaluation(ON_MORE_SEEDS[name]), None, "", "s", 2.0
            )
        )
        return future


def _racing_run(tmp_path, monkeypatch, intensify: int):
    executor = _Racing()
    monkeypatch.setattr("test_budget_rules._Executor", lambda: executor)
    children = [_variant("a"), _variant("c"), _variant("d")]
    fitness = FitnessConfig(intensify=intensify)
    result, _, db = _run(tmp_path, children, monkeypatch, budget=4, max_attempts=3, fitness=fitness)
    return result, executor, db


def test_a_lucky_candidate_does_not_become_the_best(tmp_path, monkeypatch):
    result, executor, db = _racing_run(tmp_path, monkeypatch, intensify=2)
    with db:
        state = db.get_meta(META_KEY)
        best = best_program.best_program(db)
        final = db.get_meta("final_test")["programs"]
        evaluated = db.evaluated_count()
    # a (0.4) is the first challenger; c (0.6) and d (0.7) beat it at first, then not.
    assert [n for n, _, _ in executor.intensified] == ["a", "c", "d"]
    assert {(s, k) for _, s, k in executor.intensified} == {(SEED_OFFSET, 2)}  # search seed 0
    programs = state["programs"]
    by_name = {_name(db_source): pid for pid, db_source in _sources(tmp_path, programs)}
    assert state["incumbent"] == by_name["a"]
    assert programs[by_name["d"]]["confirmed"] == pytest.approx((0.7 + 2 * 0.1) / 3)
    assert [d["became_incumbent"] for d in state["decisions"]] == [True, False, False]
    # The best is the incumbent, at its confirmed score; the re-evaluations are not in B.
    assert best.program_id == by_name["a"] and best.ood_score == pytest.approx(0.4)
    assert evaluated == 4 and result.evaluated == 4
    assert "best" in final[by_name["a"]]["roles"]
    assert executor.trained == ["seed", "a", "c", "d"]


def _sources(tmp_path, programs):
    from spark_jax.search.rundb import RunDB

    with RunDB.open(tmp_path / "run" / "run.db") as db:
        return [(pid, db.program_source(pid)) for pid in programs]


def test_without_intensification_the_first_score_picks_the_best(tmp_path, monkeypatch):
    result, executor, db = _racing_run(tmp_path, monkeypatch, intensify=0)
    with db:
        best = best_program.best_program(db)
        assert db.get_meta(META_KEY) is None
    assert executor.intensified == [] and best.ood_score == pytest.approx(0.7)


def test_intensify_must_be_a_count():
    with pytest.raises(ConfigError, match="intensify"):
        dataclasses.replace(FitnessConfig(), intensify=-1)


def test_the_report_shows_the_re_evaluations_apart(tmp_path, monkeypatch):
    from spark_jax.report.tables import write_report

    _, _, db = _racing_run(tmp_path, monkeypatch, intensify=2)
    db.close()
    text = write_report(tmp_path / "run").report.read_text()
    assert "## Intensification" in text and "Re-evaluations: 3," in text
    assert "never count toward the budget" in text
    rows = [
        line for line in text.split("## Intensification")[1].splitlines() if line.startswith("| `")
    ]
    assert [r.rsplit("|", 2)[1].strip() for r in rows] == ["yes", "no", "no"]


def test_the_drops_are_compared_paired_by_search_seed():
    from spark_jax.compare.intensification import ArmRun, compare_drops

    without = [ArmRun(s, 30.0 + s, 20.0, 1.0, 12, 0) for s in range(4)]  # drops 10, 11, 12, 13
    with_ = [ArmRun(s, 25.0, 24.0 - s / 10, 1.1, 8, 2) for s in range(1, 5)]  # seeds 1-4
    found = compare_drops(without, with_)
    assert found.seeds == (1, 2, 3)
    assert [r.drop for r in found.without] == [11.0, 12.0, 13.0]
    assert found.test.paired and found.test.method == "exact sign-flip"
    assert found.test.diff == pytest.approx(12.0 - (1.1 + 1.2 + 1.3) / 3)
    assert found.verdict == "cannot tell"  # 3 paired seeds: the exact test's floor is 0.25

"""A benchmark's seeds of one (program, task) as one K-seed job: how jobs are grouped, how a
K-seed result becomes one stored result per seed, and when memory says to train the seeds
one after another. (That the K-seed program scores each seed like its own run is
`test_seeds.py`'s and `test_buckets.py`'s.)"""

from __future__ import annotations

import json

import pytest

from spark_jax.benchmark import runner
from spark_jax.benchmark.plan import BenchmarkProgram, plan_jobs
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.evaluation import seeds
from spark_jax.families import Evaluation
from spark_jax.jobs.executors import EvalResult

A = BenchmarkProgram("a", "ka", "src-a", "a", "a.py")
B = BenchmarkProgram("b", "kb", "src-b", "b", "b.py")


def _evaluation(**fields) -> Evaluation:
    base = dict(
        task="dfs", preset="tiny", seed=3, program="a", program_sha256="", score=0.5,
        val_score=0.6, best_step=4, params=10, model_params=20, macs=1, macs_nodes=8,
        train_seconds=6.0, compile_seconds=9.0, init_seconds=1.0, steps=8, final_loss=0.2,
        steps_per_second=2.0, peak_rss_mb=None, device_peak_mb=None, n_devices=1,
    )  # fmt: skip
    return Evaluation(**{**base, **fields})


def test_consecutive_pending_seeds_of_a_program_and_task_form_one_job():
    jobs = plan_jobs([A, B], ["dfs", "bfs"], [3, 4, 5])
    groups = runner.seed_groups(jobs, together=True)
    assert [(g[0].program.label, g[0].task, [j.seed for j in g]) for g in groups] == [
        ("a", "dfs", [3, 4, 5]),
        ("b", "dfs", [3, 4, 5]),
        ("a", "bfs", [3, 4, 5]),
        ("b", "bfs", [3, 4, 5]),
    ]
    pending = [j for j in jobs if not (j.program is A and j.task == "dfs" and j.seed == 4)]
    split = [[j.seed for j in g] for g in runner.seed_groups(pending, True) if g[0].program is A]
    assert split == [[3], [5], [3, 4, 5]]  # a gap breaks a run of seeds
    assert all(len(g) == 1 for g in runner.seed_groups(jobs, together=False))


def test_a_k_seed_result_is_stored_as_one_result_per_seed(tmp_path):
    group = [j for j in plan_jobs([A], ["dfs"], [3, 4])]
    merged = _evaluation(
        seeds=(3, 4), seed_scores=(0.25, 0.75), seed_val_scores=(0.5, 0.7),
        seed_best_steps=(4, 8), seed_final_losses=(0.1, 0.3), score=0.5,
    )  # fmt: skip
    result = EvalResult("x", True, merged, None, "", "local:0:1", 10.0)
    results = runner.split_result(result, group)
    assert [r.job_id for r in results] == [j.job_id for j in group]
    firsts = [(r.evaluation.seed, r.evaluation.score, r.evaluation.val_score) for r in results]
    assert firsts == [(3, 0.25, 0.5), (4, 0.75, 0.7)]
    assert [r.evaluation.best_step for r in results] == [4, 8]
    assert [r.evaluation.final_loss for r in results] == [0.1, 0.3]
    assert all(r.evaluation.seeds is None and r.wall_seconds == 5.0 for r in results)
    failed = EvalResult("x", False, None, "timeout", "too slow", "local:0:1", 10.0)
    assert [r.error_type for r in runner.split_result(failed, group)] == ["timeout"] * 2
    db_path = tmp_path / "benchmark.db"
    with BenchmarkDB(db_path, create=True) as db:
        db.store_plan(dict(tasks=["dfs"], seeds=[3, 4]), [A])
        db.record_all(list(zip(group, results)))
        assert db.done_job_ids() == {j.job_id for j in group}
        assert sorted(r.seed for r in db.results()) == [3, 4]


def test_one_seed_records_stay_as_they_are():
    single = _evaluation()
    assert single.per_seed() == [single]


def test_the_seed_mode_is_stored_and_an_older_benchmark_resumes_vmapped():
    spec = runner.BenchmarkSpec(tasks=("dfs",), seeds=(3, 4), preset="tiny")
    assert spec.seed_mode == "map"
    stored = json.loads(json.dumps(spec.to_dict()))  # as the database holds it
    assert runner.BenchmarkSpec.from_dict(stored) == spec
    older = {k: v for k, v in stored.items() if k != "seed_mode"}
    assert runner.BenchmarkSpec.from_dict(older).seed_mode == "vmap"  # as it started


def test_memory_decides_between_one_program_and_one_seed_after_another():
    seeds.check_fits(needed=700, available=1000, k=4)  # within 80%
    seeds.check_fits(needed=None, available=1000, k=4)  # unknown: vmapped
    seeds.check_fits(needed=10**12, available=None, k=4)
    with pytest.raises(seeds.SeedsDoNotFit, match="4 seeds as one program"):
        seeds.check_fits(needed=900, available=1000, k=4)
    import jax

    assert seeds.available_bytes(jax.devices()[0]) > 0


def test_seeds_that_fall_back_to_one_after_another_are_recorded_so(monkeypatch):
    """A K-seed program that does not fit in memory trains its seeds one after another; the
    record then says 'sequential', not the mode that was asked for."""
    from spark_jax.evaluation import evaluate
    from spark_jax.evaluation.training_options import TrainingOptions

    def too_big(*args, **kwargs):
        raise seeds.SeedsDoNotFit("2 seeds as one program need more memory than there is")

    def alone(factory, task, cfg, seed, devices=None, **kwargs):
        score = 0.1 * (seed + 1)
        return dict(ood_score=score, val_score=score, final_loss=1.0, best_step=seed), None

    monkeypatch.setattr(seeds, "train_and_score_seeds", too_big)
    monkeypatch.setattr(evaluate, "train_and_score", alone)
    for asked in ("map", "vmap"):
        options = TrainingOptions(seeds=2, seed_mode=asked)
        metrics, first = evaluate._train(None, "dfs", None, 3, options)
        assert metrics["seed_mode"] == evaluate.SEQUENTIAL and first == 3
        assert metrics["seeds"] == (3, 4) and metrics["seed_scores"] == (0.4, 0.5)

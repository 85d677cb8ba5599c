"""Task families through the search: a tiny offline search per family end to end, the
search's own feasibility pipeline (sandbox child) on bad candidates of each family, resume of
a finished family run, and deterministic evaluation through the worker's job path.

One sandbox worker and one local executor serve every search here (compile and import once).
"""

from __future__ import annotations

import json
import pathlib

import pytest

from spark_jax.config import search as search_config
from spark_jax.feasibility import checker as feasibility
from spark_jax.feasibility.sandbox import SandboxWorker
from spark_jax.jobs import family_jobs
from spark_jax.jobs.executors import EvalJob, LocalExecutor
from spark_jax.report import tables
from spark_jax.search import family_setup
from spark_jax.search import loop as search
from spark_jax.search.rundb import RunDB

CASES = {
    "mnist1d": dict(family="classify", benchmark="mnist1d", seed_program="cnn", budget=2),
    "breast_cancer": dict(family="classify", benchmark="breast_cancer", budget=3),
    "cartpole": dict(family="cartpole", benchmark="cartpole_v1", budget=2),
}


def _config(name: str):
    values = dict(preset="tiny", max_attempts=4, archive={"num_islands": 2}, **CASES[name])
    values["executor"] = {"timeout_s": 600}
    values["feasibility"] = {"timeout_s": 120}
    return search_config.from_dict(values)


@pytest.fixture(scope="module")
def shared():
    """(sandbox worker, executor) shared by every family search of this module."""
    worker = SandboxWorker()
    executor = LocalExecutor(num_workers=1, timeout_s=600)
    yield worker, executor
    executor.shutdown(wait=False)
    worker.close()


def _checker(cfg, worker):
    """The search's feasibility pipeline: `check_program` in the sandbox child, with the
    options `run_search` builds for this family."""
    options = family_setup.check_options(cfg)

    def check(child, parent, factor):
        return feasibility.check_program(
            child, parent_source=parent, factor=factor, options=options, worker=worker
        )

    return check


@pytest.fixture(scope="module")
def runs(shared, tmp_path_factory):
    """One finished tiny offline search per family case."""
    worker, executor = shared
    out = {}
    for name in CASES:
        cfg = _config(name)
        run_dir = tmp_path_factory.mktemp("family") / name
        result = search.run_search(
            cfg, run_dir, command=["test"], executor=executor, checker=_checker(cfg, worker)
        )
        out[name] = (cfg, run_dir, result)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_tiny_offline_search_completes_with_family_records(runs, name):
    cfg, run_dir, result = runs[name]
    assert result.evaluated == cfg.budget  # the seed included
    with RunDB.open(run_dir / search.DB_NAME) as db:
        assert db.get_meta("family") == cfg.family
        data = db.get_meta("data")
        assert data["benchmark"] == cfg.benchmark and data["preset"] == "tiny"
        evals = db.evaluations()
        proposals = db.proposals()
    assert all(e["status"] == "ok" for e in evals), [e["error"] for e in evals]
    records = [json.loads(e["evaluation_json"]) for e in evals]
    # Selection scores the validation part only (the default `fitness.source: ood_val`).
    wanted = (
        {"val_accuracy", "val_loss"} if cfg.family == "classify" else {"val_return", "train_return"}
    )
    for rec, row in zip(records, evals):
        assert rec["family"] == cfg.family and set(rec["metrics"]) == wanted
        assert row["task"] == cfg.benchmark and row["macs"] > 0
    # The offline editor made feasible children that differ from the seed (and each other).
    sources = {p.child_source for p in proposals if p.feasible}
    assert len(sources) >= 1 and pathlib.Path(cfg.seed_program).read_text() not in sources
    assert all(p.editor == "offline-rules" and not p.is_llm for p in proposals)
    report = tables.write_report(run_dir).report.read_text()
    assert f"Task family `{cfg.family}`" in report and "Paper reference figures" in report
    assert "offline editor, not an LLM" in report


@pytest.mark.parametrize("name", ["breast_cancer", "cartpole"])
def test_selection_reads_the_validation_part_and_only_final_programs_the_test_part(runs, name):
    cfg, run_dir, result = runs[name]
    with RunDB.open(run_dir / search.DB_NAME) as db:
        final = db.get_meta("final_test")
        evals = {e["program_id"]: e for e in db.evaluations() if e["status"] == "ok"}
        seed_id = next(pid for pid, e in evals.items() if e["proposal_attempt"] is None)
    assert cfg.fitness.source == "ood_val" and family_setup.job_fields(cfg)["family_split"] == "val"
    # The test part: scored once for each final program (seed and best), nothing else.
    tested = final["programs"]
    assert {seed_id, result.best_program_id} <= set(tested) and len(tested) <= 3
    test_name = "accuracy" if cfg.family == "classify" else "test_return"
    val_name = "val_accuracy" if cfg.family == "classify" else "val_return"
    for pid, entry in tested.items():
        assert entry["ok"] and test_name in entry["evaluation"]["metrics"]
        assert val_name not in entry["evaluation"]["metrics"]
        assert test_name not in json.loads(evals[pid]["evaluation_json"])["metrics"]
    report = tables.write_report(run_dir).report.read_text()
    label = "test accuracy (%)" if cfg.family == "classify" else "test return"
    val_label = "validation accuracy (%)" if cfg.family == "classify" else "validation return"
    assert label in report and val_label in report and "selection score" in report
    assert "test part was scored only for the final programs" in report
    assert "selected on the test set" not in report


def test_the_prompt_carries_the_family_contract_not_the_clrs_one(runs):
    cfg, run_dir, _ = runs["breast_cancer"]
    with RunDB.open(run_dir / search.DB_NAME) as db:
        parent = db.program_source(db.proposals()[0].parent_id)
    assert "make_classifier" in parent
    assert "logits" in family_setup.contract(cfg) and "adj_mat" not in family_setup.contract(cfg)


def test_resuming_a_finished_family_run_adds_nothing(runs, shared):
    cfg, run_dir, result = runs["breast_cancer"]
    worker, executor = shared
    again = search.run_search(
        cfg, run_dir, resume=True, executor=executor, checker=_checker(cfg, worker)
    )
    assert (again.evaluated, again.attempts, again.best_ood) == (
        result.evaluated,
        result.attempts,
        result.best_ood,
    )


BAD = {
    # (case, region statement to replace, replacement, failure type)
    "classify-shape": (
        "breast_cancer",
        "return self.out(h)  # [B, C]",
        "return self.out(h)[:, :1]  # [B, 1]",
        "shape_mismatch",
    ),
    "classify-nan": (
        "mnist1d",
        "return self.out(h)  # [B, C]",
        "return self.out(h) * jnp.nan  # [B, C]",
        "non_finite",
    ),
    "cartpole-shape": (
        "cartpole",
        "return logits, value",
        "return logits[:, :1], value",
        "shape_mismatch",
    ),
    "cartpole-nan": (
        "cartpole",
        "return logits, value",
        "return logits * jnp.nan, value",
        "non_finite",
    ),
}


@pytest.mark.parametrize("bad", list(BAD))
def test_search_pipeline_rejects_bad_family_candidates(shared, bad):
    name, old, new, failure_type = BAD[bad]
    cfg = _config(name)
    parent = pathlib.Path(cfg.seed_program).read_text()
    assert old in parent, old
    child = parent.replace(old, new, 1)
    report = _checker(cfg, shared[0])(child, parent, "ACTION")
    assert not report.feasible and report.failure_stage == "semantic", report
    assert report.failure_type == failure_type, report.reason
    assert _checker(cfg, shared[0])(parent, None, None).feasible


def test_family_job_evaluation_is_deterministic_for_a_fixed_seed(shared):
    cfg = _config("breast_cancer")
    source = pathlib.Path(cfg.seed_program).read_text()
    job = EvalJob("j", source, "seed", cfg.target, cfg.protocol.to_dict(), 3)
    job = job.__class__(**{**job.to_dict(), **family_setup.job_fields(cfg)})
    a, b = (family_jobs.run_family_job(job.to_dict()) for _ in range(2))
    assert a.score == b.score and a.metrics == b.metrics and a.family == "classify"
    assert a.task == "breast_cancer" and a.seed == 3 and a.macs > 0 and a.params > 0
    # One record for every family: no training-loop figure is invented for a family without one.
    assert (a.val_score, a.best_step, a.macs_nodes, a.compile_seconds, a.steps) == (None,) * 5
    assert a.to_dict()["ood_score"] == a.score  # the stored form's key for the score
    assert set(a.metrics) == {"val_accuracy", "val_loss"}  # the search's part: validation
    test = job.__class__(**{**job.to_dict(), **family_setup.job_fields(cfg, split="test")})
    assert set(family_jobs.run_family_job(test.to_dict()).metrics) == {"accuracy", "loss"}


def _summary(run_dir: pathlib.Path) -> dict:
    """What must be identical between an interrupted-and-resumed and an uninterrupted run."""
    with RunDB.open(run_dir / search.DB_NAME) as db:
        proposals = [
            (p.attempt, p.status, p.factor, db.program_id(p.child_source or ""), p.diff)
            for p in db.proposals()
        ]
        evals = sorted(
            (e["proposal_attempt"] if e["proposal_attempt"] is not None else -1, e["program_id"])
            + (e["ood_score"], e["macs"], e["status"])
            for e in db.evaluations()
        )
        data = db.get_meta("data")
    return dict(proposals=proposals, evaluations=evals, data=data)


class _DyingExecutor:
    """The shared executor, except that submitting job `die_on` stops the run (Ctrl-C)."""

    def __init__(self, executor, die_on: str):
        self.executor, self.die_on = executor, die_on

    def submit(self, job):
        if job.job_id == self.die_on:
            raise KeyboardInterrupt("simulated kill")
        return self.executor.submit(job)

    def shutdown(self, wait: bool = True):
        pass


def test_interrupted_family_run_resumes_to_the_uninterrupted_result(runs, shared, tmp_path):
    cfg, ref_dir, _ = runs["breast_cancer"]
    worker, executor = shared
    run_dir = tmp_path / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        search.run_search(
            cfg, run_dir, executor=_DyingExecutor(executor, "1"), checker=_checker(cfg, worker)
        )
    search.run_search(cfg, run_dir, resume=True, executor=executor, checker=_checker(cfg, worker))
    assert _summary(run_dir) == _summary(ref_dir)


@pytest.mark.slow
def test_kill9_then_resume_a_family_run(tmp_path):
    """The CLI search of a family killed with SIGKILL mid-search, then resumed."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    run_dir = tmp_path / "killed"
    argv = ["search", "--family", "classify", "--benchmark", "breast_cancer"]
    config = tmp_path / "c.yaml"
    config.write_text("preset: tiny\nbudget: 3\nmax_attempts: 4\narchive: {num_islands: 2}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "spark_jax.cli", *argv, "--config", str(config)]
        + ["--run-dir", str(run_dir), "--no-progress"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    db_path = run_dir / search.DB_NAME
    try:
        deadline = time.time() + 600
        while time.time() < deadline:
            try:
                with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
                    if conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0] >= 1:
                        break
            except sqlite3.OperationalError:
                pass
            assert proc.poll() is None, "search finished before it could be killed"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    cfg = search_config.load(run_dir / "config.yaml")
    assert cfg.family == "classify" and cfg.benchmark == "breast_cancer"
    result = search.run_search(cfg, run_dir, resume=True, command=["test", "--resume"])
    assert result.evaluated == cfg.budget
    with RunDB.open(db_path) as db:
        attempts = [p.attempt for p in db.proposals()]
        assert attempts == sorted(set(attempts))  # nothing recorded twice
        assert db.get_meta("data")["benchmark"] == "breast_cancer"


class _BatchNormed:
    """A model whose init creates 'batch_stats' beside 'params' (any family's call shape)."""

    def __init__(self):
        import flax.linen as nn

        class Net(nn.Module):
            @nn.compact
            def __call__(self, x):
                return nn.BatchNorm(use_running_average=False)(nn.Dense(2)(x))

        self.net = Net()

    def init(self, key, x):
        return self.net.init(key, x)

    def apply(self, variables, x):
        return self.net.apply(variables, x, mutable=["batch_stats"])[0]


@pytest.mark.parametrize("family", ["classify", "cartpole"])
def test_semantic_stage_refuses_mutable_collections_in_every_family(family):
    from spark_jax.feasibility import family_checks
    from spark_jax.feasibility.stage_checks import CheckFailure

    info: dict = {}
    spec = {"features": 3, "num_classes": 2}
    with pytest.raises(CheckFailure) as failure:
        family_checks.check_semantic(_BatchNormed(), family, spec, 4, info)
    assert failure.value.failure_type == "mutable_collections"
    assert "batch_stats" in failure.value.reason and "params" not in info


def test_retest_trains_seed_and_best_with_fresh_seeds_on_the_test_part_and_resumes(
    runs, tmp_path, monkeypatch
):
    """The families verdict: both final programs trained again with seeds the search never
    used, scored on the test part, kept in retest.json; a second call evaluates nothing."""
    import shutil

    from spark_jax import families
    from spark_jax.benchmark import family_retest
    from spark_jax.benchmark import seeds as seeds_lib
    from spark_jax.search import best_program

    _, src, _ = runs["mnist1d"]
    run_dir = tmp_path / "mnist1d-cnn"
    shutil.copytree(src, run_dir)
    got = family_retest.retest_run("classify", "mnist1d", "cnn", run_dir, "tiny", 2)
    assert set(got.seeds).isdisjoint(seeds_lib.search_seeds(run_dir))
    first = max(seeds_lib.search_seeds(run_dir)) + 1
    assert got.seeds == (first, first + 1)
    assert got.finished and got.metric == "accuracy %"
    with RunDB.open(run_dir / search.DB_NAME) as db:
        best = best_program.best_program(db)
    assert got.best_is_seed == best.is_seed
    direct = families.get("classify").evaluate(best.source, "mnist1d", "tiny", got.seeds[1], "test")
    assert got.best_scores[1] == 100.0 * direct.metrics["accuracy"]  # test part, that seed

    def refuse(*args, **kwargs):
        raise AssertionError("a finished retest evaluates nothing again")

    monkeypatch.setattr(type(families.get("classify")), "evaluate", refuse)
    assert family_retest.retest_run("classify", "mnist1d", "cnn", run_dir, "tiny", 2) == got
    # The table reads it back from the folder, beside the search's own rows.
    (retest,) = family_retest.retests_from_folder(tmp_path)
    assert retest == got
    lines = family_retest.retest_lines([retest])
    assert "mnist1d" in lines[2] and "cnn" in lines[2]
    with pytest.raises(ValueError, match="at least 2 seeds"):
        family_retest.retest_run("classify", "mnist1d", "cnn", run_dir, "tiny", 1)


def test_retest_verdicts_test_changed_programs_with_holm_and_say_cannot_tell_at_few_seeds():
    from spark_jax.benchmark import family_retest

    seeds8 = tuple(range(1, 9))

    def retest(name, seed_scores, best_scores, kept=False, seeds=seeds8):
        return family_retest.Retest(name, "mlp", seeds, seed_scores, best_scores, "acc", kept)

    better = retest("a", tuple(range(8)), tuple(x + 5.0 for x in range(8)))
    kept = retest("b", tuple(range(8)), tuple(range(8)), kept=True)
    unfinished = retest("c", (1.0,), ())
    rows, note = family_retest.verdicts([better, kept, unfinished])
    assert [r.verdict for r in rows] == ["win", "kept its seed", "unfinished"]
    assert rows[0].diff == 5.0 and rows[0].p_holm == 2 / 2**8  # one tested row: Holm = p
    assert note is None
    # Three seeds: the exact test cannot reach 0.05, and the table says so.
    few = retest("a", (1.0, 2.0, 3.0), (9.0, 9.5, 9.9), seeds=(1, 2, 3))
    rows, note = family_retest.verdicts([few])
    assert rows[0].verdict == "cannot tell" and "more seeds are needed" in note
    with pytest.raises(ValueError, match="no accuracy or test_return"):
        family_retest.test_score({"val_accuracy": 0.5})

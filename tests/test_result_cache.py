"""The result cache answers an identical job from disk and nothing else (issue 25)."""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import Future

import pytest
import records

from spark_jax.config import search as search_config
from spark_jax.jobs import executors
from spark_jax.jobs.result_cache import ResultCache, job_key
from spark_jax.search import startup
from spark_jax.search.rundb import RunDB
from spark_jax.search.stops import SearchUsageError


class CountingExecutor(executors.Executor):
    """Answers every job at once with a scripted result; counts what it was asked."""

    capacity = 1

    def __init__(self, outcome=lambda job: records.result(0.25, job_id=job.job_id)):
        self.jobs: list[executors.EvalJob] = []
        self.outcome = outcome
        self.closed = False

    def submit(self, job):
        self.jobs.append(job)
        future: Future = Future()
        future.set_result(self.outcome(job))
        return future

    def shutdown(self, wait=True):
        self.closed = True


def test_an_identical_job_is_answered_from_the_store(tmp_path):
    inner = CountingExecutor()
    with ResultCache(inner, tmp_path / "cache") as cache:
        first = cache.submit(records.job("seed-of-spark")).result()
        # Another run's job id, name and limits: the same job, answered from the store.
        again_job = dataclasses.replace(
            records.job("final-test-seed"), timeout_s=5.0, memory_mb=100
        )
        again = cache.submit(again_job).result()
    assert len(inner.jobs) == 1 and cache.hits == 1 and inner.closed
    assert again.job_id == "final-test-seed" and again.ok
    assert again.evaluation == first.evaluation  # the same scores and timings
    assert again.worker == "cache:test" and again.wall_seconds == 0.0
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [f"{job_key(again_job)}.json"]


def test_anything_that_decides_a_result_misses(tmp_path):
    inner = CountingExecutor()
    cache = ResultCache(inner, tmp_path)
    base = records.job()
    variants = [
        base,
        records.job(seed=1),
        records.job(task="bfs"),
        records.job(preset="tiny"),
        records.job(source="x = 2\n"),
        dataclasses.replace(base, seeds=2),
        dataclasses.replace(base, seeds=2, seed_mode="vmap"),
        dataclasses.replace(base, family_split="val"),
        dataclasses.replace(base, cascade=(0.1, 0.2)),
    ]
    for job in variants:
        cache.submit(job).result()
    assert len(inner.jobs) == len(variants) and cache.hits == 0
    # One seed runs alike in every mode: its key is the one from before modes were kept.
    assert job_key(dataclasses.replace(base, seed_mode="vmap")) == job_key(base)
    # Other code versions: the stored result is not reused.
    assert job_key(base) != job_key(base, {"jax": "0.0.1"})
    # An official processor (empty source) is told apart by its name.
    a = dataclasses.replace(base, source="", program_name="official:mpnn")
    b = dataclasses.replace(base, source="", program_name="official:pgn")
    assert job_key(a) != job_key(b)


def test_failures_are_not_stored_and_bad_files_are_ignored(tmp_path):
    inner = CountingExecutor(lambda job: records.result(None, "timeout", job_id=job.job_id))
    cache = ResultCache(inner, tmp_path)
    assert not cache.submit(records.job()).result().ok
    assert not cache.submit(records.job()).result().ok
    assert len(inner.jobs) == 2 and not list(tmp_path.iterdir())  # a timeout may not repeat
    stored = tmp_path / f"{job_key(records.job())}.json"
    stored.write_text("{not json")
    inner.outcome = lambda job: records.result(0.5, job_id=job.job_id)
    assert cache.submit(records.job()).result().ok  # unreadable: trained, then stored
    assert len(inner.jobs) == 3 and json.loads(stored.read_text())["ok"] is True


def test_the_config_puts_the_cache_in_front_and_compare_turns_it_on(tmp_path):
    cfg = search_config.from_dict({"executor": {"result_cache_dir": "cache"}})
    executor = executors.make_executor(cfg.executor, tmp_path)
    try:
        assert isinstance(executor, ResultCache)
        assert executor.directory == tmp_path / "cache"
        assert isinstance(executor.inner, executors.LocalExecutor)
    finally:
        executor.shutdown()
    bad = {"executor": {"result_cache_dir": ""}}
    try:
        search_config.from_dict(bad)
    except search_config.ConfigError as e:
        assert "result_cache_dir: must be a directory path" in str(e)
    else:
        raise AssertionError("an empty result_cache_dir was accepted")


def test_a_run_resumes_with_or_without_the_caches(tmp_path):
    # A comparison started before the result cache existed resumes with it: the cache keys
    # change where work is stored, never a result. Any other key still refuses the resume.
    cfg = search_config.from_dict({})
    with RunDB.create(tmp_path / "run.db", meta={"config": cfg.to_dict()}) as db:
        cached = {"executor": {"result_cache_dir": "../../eval-cache", "compile_cache_dir": "x"}}
        startup.check_resume_config(db, search_config.from_dict(cached), tmp_path / "c.yaml")
        other = search_config.from_dict({"executor": {"num_workers": 2}})
        with pytest.raises(SearchUsageError, match=r"at search\.executor\.num_workers;"):
            startup.check_resume_config(db, other, tmp_path / "c.yaml")

"""Executors: results, failure classification and recovery, on a cheap job (bfs, tiny, 2 steps).

One LocalExecutor (one worker) serves the local tests in file order; each failure test checks
that the next job is served by a fresh worker. The Ray test starts its own local instance.
"""

from __future__ import annotations

import concurrent.futures
import os
import time

import pytest

from spark_jax.config import protocol as config
from spark_jax.jobs.executors import (
    ERROR_TYPES,
    EvalJob,
    EvalResult,
    Executor,
    LocalExecutor,
    make_executor,
    worker_env,
)

FACTORY_LINE = (
    "    return Processor(out_size=out_size, use_ln=use_ln, nb_triplet_fts=nb_triplet_fts)"
)
PROTOCOL = config.get_preset("tiny").replace(train_steps=2, eval_every=100)
SEED = 0


def _variant(source: str, body: str) -> str:
    """mpnn with `body` run at the start of make_processor."""
    assert FACTORY_LINE in source
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return source.replace(FACTORY_LINE, lines + FACTORY_LINE)


@pytest.fixture(scope="module")
def mpnn(seed_paths) -> str:
    return seed_paths["mpnn"].read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wrong_width(mpnn) -> str:
    """Outputs of width out_size + 1: a ProgramError before any training."""
    return mpnn.replace(
        FACTORY_LINE, FACTORY_LINE.replace("out_size=out_size", "out_size=out_size + 1")
    )


def _job(job_id: str, source: str, **limits) -> EvalJob:
    return EvalJob(
        job_id=job_id,
        source=source,
        program_name=job_id,
        task="bfs",
        protocol=PROTOCOL.to_dict(),
        seed=SEED,
        **limits,
    )


def _result(executor: Executor, job: EvalJob) -> EvalResult:
    result = executor.submit(job).result(timeout=300)
    assert result.job_id == job.job_id
    return result


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    with LocalExecutor(num_workers=1, log_dir=tmp_path_factory.mktemp("worker-logs")) as ex:
        yield ex


def test_make_executor_rejects_unknown_kind():
    with pytest.raises(ValueError, match="Unknown executor kind 'slurm'"):
        make_executor("slurm")


def test_worker_env_pins_devices_round_robin():
    pinned = [worker_env(i, ["0", "1"], {"FOO": "bar"}) for i in range(3)]
    assert [e["CUDA_VISIBLE_DEVICES"] for e in pinned] == ["0", "1", "0"]
    assert pinned[0]["FOO"] == "bar"
    assert worker_env(0).get("CUDA_VISIBLE_DEVICES") == os.environ.get("CUDA_VISIBLE_DEVICES")


def test_workers_sharing_a_device_split_its_memory(monkeypatch):
    for name in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION"):
        monkeypatch.delenv(name, raising=False)
    alone = worker_env(0, ["0"], num_workers=1)
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" not in alone  # one worker per device: JAX defaults
    assert alone["TPU_VISIBLE_CHIPS"] == "0"
    two_per_gpu = worker_env(1, ["0", "1"], num_workers=4)
    assert two_per_gpu["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    assert float(two_per_gpu["XLA_PYTHON_CLIENT_MEM_FRACTION"]) == pytest.approx(0.45)
    unpinned = worker_env(2, None, num_workers=3)  # three workers see the same devices
    assert float(unpinned["XLA_PYTHON_CLIENT_MEM_FRACTION"]) == pytest.approx(0.3)
    mine = worker_env(0, None, {"XLA_PYTHON_CLIENT_MEM_FRACTION": "0.2"}, num_workers=2)
    assert mine["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.2"  # the user's setting wins


def test_shutdown_cancels_queued_jobs(mpnn):
    ex = LocalExecutor(num_workers=1)
    futures = [ex.submit(_job(f"q{i}", mpnn)) for i in range(2)]
    ex.shutdown(wait=True)  # The worker is still starting: nothing has run.
    assert all(f.cancelled() for f in futures)
    with pytest.raises(RuntimeError, match="shut down"):
        ex.submit(_job("late", mpnn))


def test_good_job_matches_in_process(local, mpnn):
    from spark_jax import program
    from spark_jax.evaluation import evaluate

    future = local.submit(_job("good", mpnn))
    expected = evaluate.evaluate_program(program.Program(mpnn, "good"), "bfs", PROTOCOL, SEED)
    result = future.result(timeout=300)
    assert result.ok, result.error
    assert result.error_type is None and result.error == ""
    assert result.worker.startswith("local:0:")
    ev = result.evaluation
    assert 0.0 <= ev.score <= 1.0
    for key in (
        "score",
        "val_score",
        "final_loss",
        "params",
        "model_params",
        "macs",
        "best_step",
        "program_sha256",
    ):
        assert getattr(ev, key) == getattr(expected, key), key
    assert ev.machine == expected.machine and "JAX cpu x" in ev.machine  # where it ran
    assert result.wall_seconds > 0
    assert EvalResult(**result.to_dict()) == result


def test_program_error_keeps_the_worker(local, wrong_width):
    first, second = (_result(local, _job(f"bad{i}", wrong_width)) for i in range(2))
    for r in (first, second):
        assert not r.ok and r.error_type == "program_error" and r.evaluation is None
        assert r.error.startswith("ProgramError: processor breaks the CLRS contract")
        assert "Traceback" in r.error or "File" in r.error
    assert first.worker == second.worker


def test_timeout_kills_the_worker_and_the_next_job_succeeds(local, mpnn):
    hang = local.submit(_job("hang", _variant(mpnn, "while True:\n    pass"), timeout_s=5.0))
    after = local.submit(_job("after-hang", mpnn))
    hang, after = hang.result(timeout=300), after.result(timeout=300)
    assert hang.error_type == "timeout" and "5 s" in hang.error
    assert 5.0 <= hang.wall_seconds < 15.0
    assert after.ok, after.error
    assert after.worker != hang.worker


def test_crash_replaces_the_worker(local, mpnn, wrong_width):
    crash = _result(local, _job("crash", _variant(mpnn, "import os\nos._exit(3)")))
    assert crash.error_type == "crash" and "status 3" in crash.error
    served = _result(local, _job("after-crash", wrong_width))
    assert served.error_type == "program_error" and served.worker != crash.worker


def test_memory_cap_replaces_the_worker(local, mpnn, wrong_width):
    hog = "import numpy as np\nhog = np.ones(400_000_000)  # 3.2 GB, filled page by page"
    result = _result(local, _job("hog", _variant(mpnn, hog), memory_mb=500))
    assert result.error_type == "memory" and "memory_mb 500" in result.error
    served = _result(local, _job("after-hog", wrong_width))
    assert served.error_type == "program_error" and served.worker != result.worker
    assert set(ERROR_TYPES) >= {"timeout", "crash", "memory", "program_error"}


def test_shutdown_without_wait_abandons_the_running_job(local, mpnn):
    # Last user of the shared executor: shuts it down.
    running = local.submit(_job("hang-forever", _variant(mpnn, "while True:\n    pass")))
    queued = local.submit(_job("queued", mpnn))
    deadline = time.monotonic() + 60
    while not running.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # The job is in the worker.
    local.shutdown(wait=False)
    result = running.result(timeout=30)
    assert result.error_type == "error" and "shut down" in result.error
    assert queued.cancelled()


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # Ray's fork+exec of its daemons.
def test_ray_executor_on_a_local_instance(mpnn, wrong_width):
    ray = pytest.importorskip("ray")
    from spark_jax.jobs.executors import RayExecutor

    assert not ray.is_initialized()
    with RayExecutor(init_kwargs=dict(num_cpus=2, include_dashboard=False)) as ex:
        assert ex.capacity == 2
        futures = [ex.submit(_job("ray-good", mpnn)), ex.submit(_job("ray-bad", wrong_width))]
        good, bad = (f.result(timeout=300) for f in futures)
    assert not ray.is_initialized()  # It started Ray, so it stopped it.
    assert good.ok, good.error
    assert 0.0 <= good.evaluation.score <= 1.0 and good.worker.startswith("ray:")
    assert bad.error_type == "program_error"
    assert isinstance(futures[0], concurrent.futures.Future)

"""Executors: where candidate evaluations run, behind one small interface.

An `Executor` takes `EvalJob`s and returns futures of `EvalResult`s; a failing job is an
`EvalResult(ok=False, error_type=...)`, never an exception in the future. Every executor runs
the same job function (`worker.run_job`: build the Program, `evaluate_program`, return
`Evaluation.to_dict()`). Kinds (`make_executor(kind, **options)`):
* 'local' (`LocalExecutor`): long-lived worker processes on this machine, one job each at a
  time, optionally pinned to GPUs; wall-clock and memory limits; a worker that times out,
  runs over memory, crashes or raises an unexpected error is replaced by a fresh one.
* 'ray' (`ray_executor.RayExecutor`; Ray itself is imported when one is built): one Ray task
  per job, for several machines/GPUs.
The records and the interface are in `jobs.contract` (re-exported here).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import queue
import threading
import time
from typing import Any

from spark_jax.config.sections import EXECUTOR_KINDS, ExecutorConfig
from spark_jax.jobs import worker as _eval_worker
from spark_jax.jobs.contract import (
    COMPILE_CACHE_ENV,
    ERROR_TYPES,
    EvalJob,
    EvalResult,
    Executor,
    Future,
    QueuedExecutor,
    _failed,
)
from spark_jax.jobs.ray_executor import RayExecutor
from spark_jax.jobs.result_cache import ResultCache
from spark_jax.jobs.worker import WorkerProcess, worker_env

__all__ = [
    "EvalJob",
    "EvalResult",
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "make_executor",
    "worker_env",
    "ERROR_TYPES",
]


# -- local worker processes -------------------------------------------------------------------
class LocalExecutor(QueuedExecutor):
    """`num_workers` long-lived worker processes on this machine, one job each at a time.

    Each worker is a fresh interpreter (`python -m spark_jax.jobs.worker`) that imports
    jax/CLRS once (~5-7 s on CPU, paid before its first job and never counted in a job's
    time or timeout). Jobs wait in one FIFO queue; each worker slot has a dispatcher thread
    that hands the next queued job to its worker as soon as the worker is free and ready.

    Device pinning: with `devices` (e.g. ['0', '1'], GPU ids), worker i runs with
    CUDA_VISIBLE_DEVICES=devices[i % len(devices)], so several workers can share a GPU or
    each own one; without it workers see every device (on CPU pass nothing; there, workers
    share the cores, so use about one worker per few cores).

    Limits: `timeout_s` (wall clock per job, from the moment its worker receives it) ->
    'timeout'; `memory_mb` (how much a job may add to its worker's resident memory, measured
    against the worker's RSS when the job starts: a warm JAX/CLRS worker idles at ~0.6-1.3
    GB; host memory only) -> 'memory'; a worker dying (segfault, os._exit; SIGKILL from
    outside, e.g. the OOM killer, counts as 'memory') -> 'crash'. In these cases, and after
    an 'error' or `max_jobs_per_worker` jobs, the worker is killed and a fresh one started;
    after 'program_error' or 'training_diverged' it keeps serving. A job's own limits
    override the executor's.

    Worker stdout/stderr go to `log_dir/worker-SLOT.log` (appended across restarts) or, without
    a log_dir, into a bounded in-memory tail (quoted when a worker dies). `env` adds variables
    to the workers' environment. `compile_cache_dir`: a persistent XLA compilation cache the
    workers share (`JAX_COMPILATION_CACHE_DIR`; an explicit one in `env` wins).
    """

    def __init__(
        self,
        num_workers: int = 1,
        devices: list[str] | None = None,
        timeout_s: float | None = None,
        memory_mb: int | None = None,
        env: dict[str, str] | None = None,
        log_dir: str | os.PathLike | None = None,
        max_jobs_per_worker: int | None = 50,
        startup_timeout_s: float = 300.0,
        compile_cache_dir: str | os.PathLike | None = None,
    ) -> None:
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1 (got {num_workers})")
        if devices is not None and not devices:
            devices = None
        self.capacity = num_workers
        self.devices = None if devices is None else [str(d) for d in devices]
        self.timeout_s, self.memory_mb = timeout_s, memory_mb
        self.env = dict(env or {})
        if compile_cache_dir is not None:
            self.env.setdefault(COMPILE_CACHE_ENV, str(pathlib.Path(compile_cache_dir).absolute()))
        self.log_dir = None if log_dir is None else pathlib.Path(log_dir)
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        self.max_jobs_per_worker = max_jobs_per_worker
        self.startup_timeout_s = startup_timeout_s
        self.restarts = 0
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self._workers: list[WorkerProcess | None] = [None] * num_workers
        self._busy = [False] * num_workers
        self._threads = [
            threading.Thread(
                target=self._serve, args=(slot,), daemon=True, name=f"spark-executor-{slot}"
            )
            for slot in range(num_workers)
        ]
        for t in self._threads:
            t.start()

    def _enqueue(self, job: EvalJob, future: Future) -> None:
        self._queue.put((job, future))

    # -- worker slots --------------------------------------------------------------------
    def _start(self, slot: int) -> tuple[WorkerProcess | None, str]:
        """A ready worker for `slot`, or (None, why it failed to start)."""
        log = None if self.log_dir is None else str(self.log_dir / f"worker-{slot}.log")
        try:
            worker = WorkerProcess(
                slot, worker_env(slot, self.devices, self.env, self.capacity), log
            )
        except OSError as e:
            return None, f"cannot start a worker: {e}"
        with self._lock:
            self._workers[slot] = worker
            if self._closed:
                worker.kill()
                return None, "executor shut down"
        why = worker.await_ready(self.startup_timeout_s)
        return (worker, "") if not why else (None, why)

    def _serve(self, slot: int) -> None:
        worker: WorkerProcess | None = None
        why = ""
        while True:
            if worker is None and not self._closed:
                worker, why = self._start(slot)
            item = self._queue.get()
            if item is None:
                break
            job, future = item
            with self._lock:
                if self._closed:  # Shutting down: a job not yet started is cancelled.
                    future.cancel()
                    continue
                self._busy[slot] = True
            if not future.set_running_or_notify_cancel():
                self._busy[slot] = False
                continue
            if worker is None:
                self._busy[slot] = False
                future.set_result(
                    _failed(job, "error", why or "executor shut down", f"local:{slot}", 0.0)
                )
                continue
            try:
                result, keep = self._run(worker, job)
            except Exception as e:  # noqa: BLE001 - a bug here must not strand the future.
                result, keep = (
                    _failed(job, "error", _eval_worker.describe(e), worker.name, 0.0),
                    False,
                )
            self._busy[slot] = False
            worker.jobs += 1
            future.set_result(result)
            if not keep or (
                self.max_jobs_per_worker is not None and worker.jobs >= self.max_jobs_per_worker
            ):
                worker.kill()
                worker = None
                self.restarts += 1
        if worker is not None:
            worker.close(wait_s=5.0)

    def _run(self, worker: WorkerProcess, job: EvalJob) -> tuple[EvalResult, bool]:
        """Runs one job on `worker`; returns (result, whether the worker can be kept)."""
        start = time.monotonic()
        out = worker.run(
            job.to_dict(),
            job.timeout_s if job.timeout_s is not None else self.timeout_s,
            job.memory_mb if job.memory_mb is not None else self.memory_mb,
        )
        if worker.abandoned and not out["ok"]:
            out.update(error_type="error", error="executor shut down while the job ran")
        result = EvalResult(
            job.job_id,
            bool(out["ok"]),
            out["evaluation"],
            out["error_type"],
            out["error"],
            out["worker"],
            time.monotonic() - start,
        )
        return result, result.ok or result.error_type in _eval_worker.KEEP_WORKER_AFTER

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            # Starting or idle workers go now; busy ones finish their job unless not `wait`.
            doomed = [
                w
                for w, busy in zip(self._workers, self._busy)
                if w is not None and (not busy or not wait)
            ]
        with contextlib.suppress(queue.Empty):
            while True:
                item = self._queue.get_nowait()
                if item is not None:
                    item[1].cancel()
        for _ in self._threads:
            self._queue.put(None)
        for worker in doomed:
            worker.abandoned = True
            worker.terminate()  # Its slot thread sees the pipe close and cleans up.
        for t in self._threads:
            t.join(timeout=None if wait else 15)


# The executor registry: the kinds' names are `config.evaluation.EXECUTOR_KINDS` (what config
# validation and the CLI's choices read); each name builds its executor class from options.
_EXECUTORS: dict[str, type] = {"local": LocalExecutor, "ray": RayExecutor}
assert tuple(_EXECUTORS) == EXECUTOR_KINDS, "executor registry and EXECUTOR_KINDS differ"


def _under(base_dir: str | os.PathLike | None, path: str) -> pathlib.Path:
    """`path` (`~` expanded) as an absolute path, a relative one taken from `base_dir`."""
    resolved = pathlib.Path(path).expanduser()
    if not resolved.is_absolute() and base_dir is not None:
        resolved = pathlib.Path(base_dir) / resolved
    return resolved.absolute()


def make_executor(
    kind: "str | ExecutorConfig", base_dir: str | os.PathLike | None = None, **options: Any
) -> Executor:
    """An executor by kind ('local' or 'ray') built with `options`, or the one a search's
    `config.sections.ExecutorConfig` describes (handed whole; a relative `compile_cache_dir`
    is taken from `base_dir`, the run or benchmark directory; so is `result_cache_dir`, which
    puts `jobs.result_cache.ResultCache` in front of the executor)."""
    if isinstance(kind, ExecutorConfig):
        e = kind
        if e.result_cache_dir is not None:
            inner = make_executor(
                dataclasses.replace(e, result_cache_dir=None), base_dir, **options
            )
            return ResultCache(inner, _under(base_dir, e.result_cache_dir))
        if e.compile_cache_dir is not None:
            options.setdefault("compile_cache_dir", str(_under(base_dir, e.compile_cache_dir)))
        if e.kind == "local":
            return LocalExecutor(
                num_workers=e.num_workers,
                devices=list(e.devices or []) or None,
                timeout_s=e.timeout_s,
                memory_mb=e.memory_mb,
                **options,
            )
        return make_executor(
            "ray",
            address=e.address,
            num_gpus_per_job=e.num_gpus_per_job,
            num_cpus_per_job=e.num_cpus_per_job,
            timeout_s=e.timeout_s,
            **options,
        )
    if kind not in _EXECUTORS:
        raise ValueError(f"Unknown executor kind {kind!r}; known kinds: {', '.join(_EXECUTORS)}")
    return _EXECUTORS[kind](**options)

"""`RayExecutor`: one Ray task per evaluation job, for clusters of machines and GPUs.

Built by `executors.make_executor('ray', ...)`; Ray itself is imported when an executor is
built, so importing this module costs nothing without Ray.
"""

from __future__ import annotations

import collections
import contextlib
import os
import pathlib
import threading
import time
from typing import Any

from spark_jax.jobs import worker as eval_worker
from spark_jax.jobs.contract import (
    COMPILE_CACHE_ENV,
    EvalJob,
    EvalResult,
    Future,
    QueuedExecutor,
    _failed,
)

__all__ = ["RayExecutor"]

_RAY_ERROR_CAP = 1500
_RAY_MEMORY = ("OutOfMemoryError",)
_RAY_CRASH = (
    "WorkerCrashedError",
    "NodeDiedError",
    "LocalRayletDiedError",
    "ObjectLostError",
    "TaskUnschedulableError",
    "RaySystemError",
)


class RayExecutor(QueuedExecutor):
    """One Ray task per job (`eval_worker.ray_job`), for clusters of machines and GPUs.

    Connects with `ray.init(address=address, **init_kwargs)` unless Ray is already
    initialized (address None starts a local instance; `shutdown()` stops Ray only if this
    executor started it). Each job is a task with `num_cpus_per_job`/`num_gpus_per_job`
    resources (Ray sets CUDA_VISIBLE_DEVICES for it) and `max_retries=0`. At most `capacity`
    tasks are submitted at once (`max_concurrency`, else what the cluster's CPUs/GPUs allow),
    the rest queue here FIFO, so a job's `timeout_s` counts from its submission to a free
    slot, not from queueing. A thread waits on the tasks: past the deadline a task is
    cancelled with force (its worker process killed) -> 'timeout'; a dead worker or node ->
    'crash'; Ray's out-of-memory kill -> 'memory'. `memory_mb` is not enforced here (Ray's
    memory monitor is). Workers must be able to import spark_jax (installed on every node,
    or `init_kwargs=dict(runtime_env=...)`); their output stays off the driver by default
    (log_to_driver=False).
    """

    def __init__(
        self,
        address: str | None = None,
        num_gpus_per_job: float = 0,
        num_cpus_per_job: float = 1,
        timeout_s: float | None = None,
        max_concurrency: int | None = None,
        init_kwargs: dict[str, Any] | None = None,
        poll_s: float = 0.2,
        compile_cache_dir: str | os.PathLike | None = None,
    ) -> None:
        try:
            import ray
        except ImportError as e:
            raise ImportError("RayExecutor needs Ray: pip install 'spark-jax[ray]'") from e
        self._ray = ray
        self._started_ray = False
        if not ray.is_initialized():
            kwargs = dict(log_to_driver=False)
            kwargs.update(init_kwargs or {})
            ray.init(address=address, **kwargs)
            self._started_ray = True
        self.timeout_s, self.poll_s = timeout_s, poll_s
        task_options: dict[str, Any] = dict(
            num_cpus=num_cpus_per_job, num_gpus=num_gpus_per_job, max_retries=0
        )
        if compile_cache_dir is not None:  # Shared by the tasks on this node (or a shared fs).
            cache = str(pathlib.Path(compile_cache_dir).absolute())
            task_options["runtime_env"] = {"env_vars": {COMPILE_CACHE_ENV: cache}}
        self._task = ray.remote(eval_worker.ray_job).options(**task_options)
        self.capacity = max_concurrency or self._cluster_capacity(
            num_cpus_per_job, num_gpus_per_job
        )
        self._pending: collections.deque = collections.deque()
        self._running: dict[Any, tuple[EvalJob, Future, float, float]] = {}
        self._lock = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, daemon=True, name="spark-ray")
        self._thread.start()

    def _cluster_capacity(self, cpus: float, gpus: float) -> int:
        resources = self._ray.cluster_resources()
        caps = [
            int(resources.get(key, 0) // need)
            for key, need in (("CPU", cpus), ("GPU", gpus))
            if need > 0
        ]
        return max(1, min(caps)) if caps else 1

    def _enqueue(self, job: EvalJob, future: Future) -> None:
        self._pending.append((job, future))
        self._lock.notify()

    def _launch(self) -> None:
        """Submits queued jobs while fewer than `capacity` run (caller holds the lock)."""
        while self._pending and len(self._running) < self.capacity and not self._closed:
            job, future = self._pending.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            timeout_s = job.timeout_s if job.timeout_s is not None else self.timeout_s
            start = time.monotonic()
            deadline = start + timeout_s if timeout_s is not None else float("inf")
            self._running[self._task.remote(job.to_dict())] = (job, future, start, deadline)

    def _loop(self) -> None:
        try:
            self._serve()
        except Exception as e:  # noqa: BLE001 - Ray went away: fail what is left, loudly.
            with self._lock:
                self._closed = True
                left = [(j, f) for j, f, *_ in self._running.values()] + list(self._pending)
                self._running.clear()
                self._pending.clear()
            for job, future in left:
                if future.running() or future.set_running_or_notify_cancel():
                    future.set_result(
                        _failed(
                            job,
                            "error",
                            f"Ray executor failed: {type(e).__name__}: {e}",
                            "ray",
                            0.0,
                        )
                    )

    def _serve(self) -> None:
        ray = self._ray
        while True:
            with self._lock:
                self._launch()
                while not self._running and not self._closed:
                    self._lock.wait()
                    self._launch()
                if not self._running:
                    return
                refs = list(self._running)
            ready, _ = ray.wait(refs, num_returns=1, timeout=self.poll_s)
            now = time.monotonic()
            for ref in refs:
                with self._lock:
                    entry = self._running.get(ref)
                if entry is None:
                    continue
                job, future, start, deadline = entry
                if ref in ready:
                    result = self._resolve(ref, job, now - start)
                elif now >= deadline:
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=True)
                    timeout_s = deadline - start
                    result = _failed(
                        job,
                        "timeout",
                        f"no result within {timeout_s:g} s; task cancelled (worker killed)",
                        "ray",
                        now - start,
                    )
                else:
                    continue
                with self._lock:
                    self._running.pop(ref, None)
                future.set_result(result)

    def _resolve(self, ref: Any, job: EvalJob, seconds: float) -> EvalResult:
        exc = self._ray.exceptions
        memory = tuple(getattr(exc, n) for n in _RAY_MEMORY if hasattr(exc, n))
        crash = tuple(getattr(exc, n) for n in _RAY_CRASH if hasattr(exc, n))

        def failed(error_type: str, e: Exception) -> EvalResult:
            text = f"{type(e).__name__}: {e}"[:_RAY_ERROR_CAP]  # Ray's text says it all.
            return _failed(job, error_type, text, "ray", seconds)

        try:
            out = self._ray.get(ref)
        except memory as e:
            return failed("memory", e)
        except crash as e:
            return failed("crash", e)
        except Exception as e:  # noqa: BLE001 - RayTaskError, cancellation, ...
            return failed("error", e)
        return EvalResult(
            job.job_id,
            bool(out["ok"]),
            out["evaluation"],
            out["error_type"],
            out["error"],
            out.get("worker", "ray"),
            seconds,
        )

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            while self._pending:
                self._pending.popleft()[1].cancel()
            running = dict(self._running)
            self._lock.notify_all()
        if not wait:
            for ref in running:
                with contextlib.suppress(Exception):
                    self._ray.cancel(ref, force=True)
        self._thread.join(timeout=None if wait else 30)
        if self._started_ray:
            self._ray.shutdown()

"""The executors' contract: the job and result records and the `Executor` interface.

An `Executor` takes `EvalJob`s and returns futures of `EvalResult`s; a failing job is an
`EvalResult(ok=False, error_type=...)`, never an exception in the future. The executors
themselves (local worker processes, Ray, the result cache in front of either) are in
`executors`, `ray_executor` and `result_cache`; this module imports none of them.
"""

from __future__ import annotations

import abc
import concurrent.futures
import dataclasses
import threading
from typing import Any, Mapping

from spark_jax.config.evaluation import DEFAULT_SEED_MODE
from spark_jax.families import DEFAULT_FAMILY, Evaluation
from spark_jax.jobs import worker as _eval_worker

__all__ = [
    "COMPILE_CACHE_ENV",
    "ERROR_TYPES",
    "EvalJob",
    "EvalResult",
    "Executor",
    "Future",
    "QueuedExecutor",
]

ERROR_TYPES = _eval_worker.ERROR_TYPES
# JAX reads its persistent compilation cache directory from this variable at import.
COMPILE_CACHE_ENV = "JAX_COMPILATION_CACHE_DIR"
Future = concurrent.futures.Future


# -- records and the contract -----------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class EvalJob:
    """One candidate to train and score (plain data, so it can cross process boundaries).

    Attributes:
      job_id: the caller's id for the job (echoed in the result).
      source, program_name: the program (`Program(source, program_name)`); an empty source
        with program_name 'official:KIND' trains DeepMind's processor KIND instead.
      task: CLRS task; protocol: `ProtocolConfig.to_dict()`; seed: evaluation seed.
      timeout_s, memory_mb: per-job limits; None falls back to the executor's defaults.
      seeds: training seeds (`seed`, `seed + 1`, ...) trained as one program; the
        evaluation then carries per-seed scores and their mean; seed_mode: how that program
        runs the seed axis (`seeds.SEED_MODES`; 'map': per seed as one-seed runs).
      family, benchmark, family_preset: the task family (default CLRS: `task` under
        `protocol`); another family's job trains `benchmark` at its preset `family_preset` through the
        family's `evaluate` (`family_jobs.run_family_job`); family_split: the part it scores,
        'val' (a search's selection) or 'test' (a search's final programs).
    """

    job_id: str
    source: str
    program_name: str
    task: str
    protocol: dict[str, Any]
    seed: int
    timeout_s: float | None = None
    memory_mb: int | None = None
    cascade: tuple[float, float] | None = None
    seeds: int = 1
    family: str = DEFAULT_FAMILY
    benchmark: str = ""
    family_preset: str = ""
    family_split: str = "test"
    seed_mode: str = DEFAULT_SEED_MODE

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class EvalResult:
    """The outcome of one EvalJob.

    Attributes:
      job_id: the job's id.
      ok: whether the program trained and was scored.
      evaluation: the typed `Evaluation` when ok (a plain dict from a worker is rebuilt
        into one), else None.
      error_type: None when ok, else one of ERROR_TYPES: 'timeout' (wall-clock limit, worker
        killed), 'crash' (the worker process died), 'memory' (memory limit or out of memory),
        'program_error' (`ProgramError`), 'training_diverged' (`TrainingError`), 'error'.
      error: '' when ok, else one line plus a short traceback tail or the worker's log tail.
      worker: where it ran ('local:SLOT:PID', 'ray:HOST:PID').
      wall_seconds: from the start of the job on its worker to its result (queueing and
        worker start-up excluded).
    """

    job_id: str
    ok: bool
    evaluation: Evaluation | None
    error_type: str | None
    error: str
    worker: str
    wall_seconds: float

    def __post_init__(self):
        assert self.ok == (self.error_type is None), (self.ok, self.error_type)
        assert self.error_type is None or self.error_type in ERROR_TYPES, self.error_type
        if isinstance(self.evaluation, Mapping):  # Plain data from a worker or Ray task.
            object.__setattr__(self, "evaluation", Evaluation.from_dict(self.evaluation))
        assert self.ok == (self.evaluation is not None), (self.ok, self.evaluation)

    def to_dict(self) -> dict[str, Any]:
        """Plain data; `EvalResult(**result.to_dict()) == result`."""
        return dataclasses.asdict(self)


def _failed(job: EvalJob, error_type: str, error: str, worker: str, seconds: float) -> EvalResult:
    return EvalResult(job.job_id, False, None, error_type, error, worker, seconds)


class Executor(abc.ABC):
    """Runs EvalJobs concurrently, up to `capacity` at a time, queueing the rest FIFO.

    Contract: `submit(job)` returns at once with a `concurrent.futures.Future` that resolves
    to an `EvalResult` for that job; failures of the job (timeouts, crashes, exceptions) are
    results with ok=False, never exceptions set on the future. `shutdown()` cancels jobs
    that have not started and releases the workers; use the executor as a context manager.
    """

    capacity: int

    @abc.abstractmethod
    def submit(self, job: EvalJob) -> Future:
        """Queues `job`; returns a future of its EvalResult."""

    @abc.abstractmethod
    def shutdown(self, wait: bool = True) -> None:
        """Cancels queued jobs; waits for running ones (wait) or abandons them (not wait)."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


class QueuedExecutor(Executor):
    """An executor that queues its jobs itself, FIFO, for its own dispatchers
    (`LocalExecutor`'s worker slots, `RayExecutor`'s task loop): `submit` written once.

    A subclass sets `_lock` (a lock or condition its dispatchers share) and `_closed`, and
    implements `_enqueue(job, future)`, called holding `_lock` while the executor is open.
    """

    _lock: threading.Lock | threading.Condition
    _closed: bool

    def submit(self, job: EvalJob) -> Future:
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"cannot submit to a {type(self).__name__} that was shut down")
            self._enqueue(job, future)
        return future

    @abc.abstractmethod
    def _enqueue(self, job: EvalJob, future: Future) -> None:
        """Queues `job` and its `future` for the dispatchers (the lock is held)."""

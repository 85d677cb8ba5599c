"""The evaluation worker process: the job function, the child's loop, and the parent's handle.

`run_job` is the job function of every executor: it hands the job to its task family
(`family_jobs.evaluate_job`; CLRS's runs `evaluation.evaluate.evaluate_program`) and returns
plain data (never raises because of the program).
`executors.LocalExecutor` starts `python -m spark_jax.jobs.worker` (a
`WorkerProcess`, i.e. a `workers.ChildProcess`), which pre-imports jax/CLRS and the default
family's plug-in once and then serves one job at a time through `workers.serve`; its stdout
and stderr go to its log file:
  -> ready {pid, startup_s};  job {job} -> result {...};  exit
`worker_env` is the environment of a LocalExecutor's worker; `ray_job` is the job function
of `ray_executor.RayExecutor`'s tasks. No jax import at module level: the parent imports this
module. The job side never imports the training side (`evaluation`): a job reaches it through
its family's plug-in, found by name.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import traceback
from typing import Any

from spark_jax import workers

# How a job can fail (EvalResult.error_type).
ERROR_TYPES = ("timeout", "crash", "memory", "program_error", "training_diverged", "error")
# Failures after which a worker process is kept (the interpreter is still trustworthy).
KEEP_WORKER_AFTER = ("program_error", "training_diverged")
# The supervisor's failure kinds in ERROR_TYPES.
_ERROR_TYPE_OF_KIND = {
    "timeout": "timeout",
    "memory": "memory",
    "signal": "crash",
    "error": "crash",
}
_LINE_CAP = 300
_TAIL_CAP = 1200


def describe(e: BaseException) -> str:
    """One line 'Type: message', then the tail of the traceback (bounded)."""
    line = f"{type(e).__name__}: {e}".replace("\n", " ")[:_LINE_CAP]
    tail = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-4:])
    return f"{line}\n{tail[-_TAIL_CAP:]}".rstrip()


def classify(e: BaseException) -> str:
    """The EvalResult error type of an exception raised while evaluating a program."""
    from spark_jax.program.outcome import TrainingError
    from spark_jax.program.source import ProgramError

    if workers.is_memory_error(e):
        return "memory"
    if isinstance(e, ProgramError):
        return "program_error"
    if isinstance(e, TrainingError):
        return "training_diverged"
    return "error"


def _plain(value: Any) -> Any:
    """JSON-safe copy (numpy scalars -> Python numbers)."""

    def default(x: Any) -> Any:
        if hasattr(x, "item"):
            return x.item()
        raise TypeError(f"not JSON-serializable: {type(x).__name__}")

    return json.loads(json.dumps(value, default=default))


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Evaluates one `EvalJob.to_dict()`; returns {ok, evaluation, error_type, error, seconds}.

    Exceptions are classified (`classify`), never raised; a hang or a dying process is the
    caller's to detect.
    """
    start = time.perf_counter()
    try:
        from spark_jax.jobs import family_jobs

        ev = family_jobs.evaluate_job(job)  # by the job's family (CLRS: the protocol's loop)
        out = dict(ok=True, evaluation=_plain(ev.to_dict()), error_type=None, error="")
    except BaseException as e:  # noqa: BLE001 - program code (SystemExit included).
        if isinstance(e, KeyboardInterrupt):
            raise
        out = dict(ok=False, evaluation=None, error_type=classify(e), error=describe(e))
    out["seconds"] = time.perf_counter() - start
    return out


def ray_job(job: dict[str, Any]) -> dict[str, Any]:
    """`run_job` inside a Ray task, tagged with where it ran."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    # Ray may place several tasks on one GPU (fractional num_gpus): allocate on demand.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    out = run_job(job)
    out["worker"] = f"ray:{socket.gethostname()}:{os.getpid()}"
    return out


# Share of an accelerator's memory that the workers sharing it may take together.
DEVICE_MEMORY_SHARE = 0.9


def worker_env(
    slot: int,
    devices: list[str] | None = None,
    env: dict[str, str] | None = None,
    num_workers: int = 1,
) -> dict[str, str]:
    """The environment of a LocalExecutor's worker `slot` of `num_workers`: ours + `env`.

    With `devices`, the worker is pinned to devices[slot % len(devices)]
    (CUDA_VISIBLE_DEVICES for GPUs, TPU_VISIBLE_CHIPS for TPUs; JAX picks the platform).
    When several workers share one device (more workers than devices, or no pinning), JAX's
    preallocation is turned off and each worker may take an equal share of the device's
    memory (XLA_PYTHON_CLIENT_MEM_FRACTION), so the second worker does not run out of memory
    at start-up; `env` can override both. On a CPU these variables have no effect.
    """
    out = workers.python_env(env)
    if devices:
        device = str(devices[slot % len(devices)])
        out["CUDA_VISIBLE_DEVICES"] = device
        out["TPU_VISIBLE_CHIPS"] = device
    sharing = -(-num_workers // len(devices)) if devices else num_workers  # workers per device
    if sharing > 1:
        out.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        out.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", f"{DEVICE_MEMORY_SHARE / sharing:.3f}")
    return out


class WorkerProcess(workers.ChildProcess):
    """The parent's handle on one evaluation worker process (mutable; see ChildProcess)."""

    def __init__(self, slot: int, env: dict[str, str], log_path: str | None) -> None:
        super().__init__(
            [sys.executable, "-m", "spark_jax.jobs.worker"], env=env, log_path=log_path
        )
        self.slot = slot
        self.jobs = 0
        self.abandoned = False  # Killed by its owner's shutdown, not by a job.

    @property
    def name(self) -> str:
        return f"local:{self.slot}:{self.pid}"

    def await_ready(self, timeout_s: float) -> str:
        """Waits for the 'ready' frame; returns '' or why it failed (the process is killed)."""
        try:
            self.wait_ready(time.monotonic() + timeout_s)
            return ""
        except (workers.ChildFailed, OSError, ValueError) as e:
            rc = self.kill()
            return (
                f"worker failed to start ({type(e).__name__} {e}, status {rc}) {self.tail()}"
            ).strip()

    def run(
        self, job: dict[str, Any], timeout_s: float | None, memory_mb: int | None
    ) -> dict[str, Any]:
        """Runs one job here: `run_job`'s dict plus 'worker'; never raises.

        Past `timeout_s` (from now), or when the RSS grows by more than `memory_mb` over its
        value now, the process is killed ('timeout', 'memory'); if it dies, 'crash' (or
        'memory' for an out-of-memory death, e.g. a SIGKILL from the OOM killer). Then it is
        unusable.
        """
        deadline = time.monotonic() + timeout_s if timeout_s is not None else float("inf")
        memory_cap = self.memory_cap(memory_mb) if memory_mb is not None else None
        name = self.name

        def failed(error_type: str, error: str) -> dict[str, Any]:
            return dict(ok=False, evaluation=None, error_type=error_type, error=error, worker=name)

        try:
            self.send({"type": "job", "job": job})
            frame = self.read(deadline, memory_cap=memory_cap)
        except workers.ChildFailed as e:  # Killed here, or it died.
            late = "" if timeout_s is None else f"no result within {timeout_s:g} s; worker killed"
            return failed(*e.failure.mapped(_ERROR_TYPE_OF_KIND, late))
        except (OSError, ValueError) as e:  # Garbled frame (the child is dead).
            return failed("crash", f"lost the worker: {type(e).__name__}: {e}")
        return dict(frame, worker=name)


def _preimport() -> None:
    # What a CLRS job's training imports, warm here rather than in the first job's time:
    import clrs  # noqa: F401 - TensorFlow and the CLRS samplers: the slow part.
    import haiku  # noqa: F401 - CLRS's nets
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401 - the trainer's optimizer

    from spark_jax import families

    families.get(families.DEFAULT_FAMILY)  # its plug-in, found by name as a job's is
    jnp.ones((2, 2)).block_until_ready()  # Starts the backend client (a GPU context too).
    jax.devices()


def main(argv: list[str] | None = None) -> int:
    """Serves jobs until EOF or an 'exit' request (`workers.serve`; prints go to the log)."""
    del argv
    return workers.serve(_handle, prepare=_preimport, stdout_to_stderr=True)


def _handle(request: dict[str, Any], send: workers.Send) -> None:
    job = request["job"]
    print(
        f"[eval-worker {os.getpid()}] job {job['job_id']} ({job['program_name']} on {job['task']})",
        file=sys.stderr,
        flush=True,
    )
    result = run_job(job)
    sys.stdout.flush()
    sys.stderr.flush()
    send({"type": "result", "job_id": job["job_id"], **result})


if __name__ == "__main__":
    sys.exit(main())

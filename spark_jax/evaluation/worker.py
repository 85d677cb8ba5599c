"""The evaluation worker process: the job function, the child's loop, and the parent's handle.

`run_job` is the job function of every executor: it builds the `Program`, runs
`evaluate.evaluate_program` and returns plain data (never raises because of the program).
`executors.LocalExecutor` starts `python -m spark_jax._eval_worker`, which pre-imports
jax/CLRS once and then serves one job at a time. Frames (4-byte length + UTF-8 JSON, the
sandbox's framing) travel on private duplicates of fds 0/1; fd 0 is then /dev/null and fd 1
points at fd 2 (the worker's log file), so prints never reach the protocol stream:
  -> ready {pid, startup_s};  job {job} -> result {...};  exit
`WorkerProcess` and `worker_env` are the parent's end (for `executors.LocalExecutor`);
`ray_job` is the job function of `executors.RayExecutor`'s tasks. No jax import at module
level: the parent imports this module.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from typing import Any, Callable

from spark_jax.util import resources
from spark_jax.workers import (FrameEOF, FrameTimeout, encode_frame, read_frame, read_frame_from,
                               rss_bytes, signal_name, write_all)

# How a job can fail (EvalResult.error_type).
ERROR_TYPES = ('timeout', 'crash', 'memory', 'program_error', 'training_diverged', 'error')
# Failures after which a worker process is kept (the interpreter is still trustworthy).
KEEP_WORKER_AFTER = ('program_error', 'training_diverged')
MEMORY_MARKERS = ('RESOURCE_EXHAUSTED', 'Out of memory', 'out of memory', 'bad_alloc',
                  'Cannot allocate memory')
_LINE_CAP = 300
_TAIL_CAP = 1200
_POLL_S = 0.05


def describe(e: BaseException) -> str:
    """One line 'Type: message', then the tail of the traceback (bounded)."""
    line = f'{type(e).__name__}: {e}'.replace('\n', ' ')[:_LINE_CAP]
    tail = ''.join(traceback.format_exception(type(e), e, e.__traceback__)[-4:])
    return f'{line}\n{tail[-_TAIL_CAP:]}'.rstrip()


def classify(e: BaseException) -> str:
    """The EvalResult error type of an exception raised while evaluating a program."""
    from spark_jax.program.source import ProgramError
    from spark_jax.evaluation.train import TrainingError

    chain = [e] + ([e.__cause__] if e.__cause__ is not None else [])
    if any(isinstance(x, MemoryError) or any(m in str(x) for m in MEMORY_MARKERS)
           for x in chain):
        return 'memory'
    if isinstance(e, ProgramError):
        return 'program_error'
    if isinstance(e, TrainingError):
        return 'training_diverged'
    return 'error'


def _plain(value: Any) -> Any:
    """JSON-safe copy (numpy scalars -> Python numbers)."""
    def default(x: Any) -> Any:
        if hasattr(x, 'item'):
            return x.item()
        raise TypeError(f'not JSON-serializable: {type(x).__name__}')

    return json.loads(json.dumps(value, default=default))


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Evaluates one `EvalJob.to_dict()`; returns {ok, evaluation, error_type, error, seconds}.

    Exceptions are classified (`classify`), never raised; a hang or a dying process is the
    caller's to detect.
    """
    start = time.perf_counter()
    try:
        from spark_jax.config import protocol as config
        from spark_jax.evaluation import evaluate
        from spark_jax import program as program_lib

        program = program_lib.Program(source=job['source'], name=job['program_name'])
        cfg = config.from_dict(job['protocol'])
        ev = evaluate.evaluate_program(program, job['task'], cfg, int(job['seed']))
        out = dict(ok=True, evaluation=_plain(ev.to_dict()), error_type=None, error='')
    except BaseException as e:  # noqa: BLE001 - program code (SystemExit included).
        if isinstance(e, KeyboardInterrupt):
            raise
        out = dict(ok=False, evaluation=None, error_type=classify(e), error=describe(e))
    out['seconds'] = time.perf_counter() - start
    return out


def ray_job(job: dict[str, Any]) -> dict[str, Any]:
    """`run_job` inside a Ray task, tagged with where it ran."""
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
    out = run_job(job)
    out['worker'] = f'ray:{socket.gethostname()}:{os.getpid()}'
    return out


def worker_env(slot: int, devices: list[str] | None = None,
               env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a LocalExecutor's worker `slot`: ours + `env`, pinned to
    CUDA_VISIBLE_DEVICES=devices[slot % len(devices)] when devices are given."""
    out = dict(os.environ)
    out.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
    out['PYTHONDONTWRITEBYTECODE'] = '1'
    out['PYTHONPATH'] = os.pathsep.join(
        [str(resources.package_root())] + ([out['PYTHONPATH']] if out.get('PYTHONPATH') else []))
    out.update(env or {})
    if devices:
        out['CUDA_VISIBLE_DEVICES'] = str(devices[slot % len(devices)])
    return out


class WorkerDied(Exception):
    """The worker process closed its pipe."""


class WorkerTimeout(Exception):
    """No result before the deadline."""


class _OverMemory(Exception):
    """The worker's RSS went above its job's cap."""


class WorkerProcess:
    """The parent's handle on one `python -m spark_jax._eval_worker` process (mutable)."""

    def __init__(self, slot: int, env: dict[str, str], log_path: str | None) -> None:
        self.slot, self.log_path = slot, log_path
        log = open(log_path, 'ab') if log_path is not None else None  # noqa: SIM115
        try:
            if log is not None:
                log.write(f'--- worker start {time.strftime("%Y-%m-%d %H:%M:%S")}\n'.encode())
                log.flush()
            self.proc = subprocess.Popen(
                [sys.executable, '-m', 'spark_jax.evaluation.worker'],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log if log is not None else subprocess.DEVNULL,
                env=env, start_new_session=True, close_fds=True)
        finally:
            if log is not None:
                log.close()  # The child has its own descriptor.
        self.buffer = bytearray()
        self.jobs = 0
        self.abandoned = False  # Killed by its owner's shutdown, not by a job.

    @property
    def name(self) -> str:
        return f'local:{self.slot}:{self.proc.pid}'

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(encode_frame(message))
            self.proc.stdin.flush()
        except (OSError, ValueError) as e:  # Broken pipe, or closed after a kill.
            raise WorkerDied(str(e)) from None

    def read(self, deadline: float, tick: Callable[[], None] | None = None) -> dict[str, Any]:
        """The next frame; raises WorkerTimeout or WorkerDied (and whatever `tick` raises)."""
        assert self.proc.stdout is not None
        try:
            return read_frame_from(self.proc.stdout.fileno(), self.buffer, deadline,
                                   clock=time.monotonic, tick=tick, poll_s=_POLL_S)
        except FrameTimeout:
            raise WorkerTimeout() from None
        except FrameEOF as e:
            raise WorkerDied(str(e)) from None

    def wait_ready(self, timeout_s: float) -> str:
        """Waits for the 'ready' frame; returns '' or why it failed (the process is killed)."""
        try:
            frame = self.read(time.monotonic() + timeout_s)
            if frame.get('type') != 'ready':
                raise WorkerDied(f'unexpected first frame {frame.get("type")!r}')
            return ''
        except (WorkerDied, WorkerTimeout, OSError, ValueError) as e:
            rc = self.kill()
            return (f'worker failed to start ({type(e).__name__} {e}, status {rc}) '
                    f'{self.log_tail()}').strip()

    def run(self, job: dict[str, Any], timeout_s: float | None,
            memory_mb: int | None) -> dict[str, Any]:
        """Runs one job here: `run_job`'s dict plus 'worker'; never raises.

        Past `timeout_s` (from now), or when the RSS grows by more than `memory_mb` over its
        value now, the process is killed ('timeout', 'memory'); if it dies, 'crash' (or
        'memory' for a SIGKILL from outside, e.g. the OOM killer). Then it is unusable.
        """
        start = time.monotonic()
        deadline = start + timeout_s if timeout_s is not None else float('inf')
        baseline = rss_bytes(self.proc.pid) or 0
        name = self.name

        def watchdog() -> None:
            rss = rss_bytes(self.proc.pid) if memory_mb is not None else None
            if rss is not None and rss > baseline + memory_mb * 2**20:
                raise _OverMemory(f'worker RSS {rss >> 20} MiB above the cap ({baseline >> 20} '
                                  f'MiB at job start + memory_mb {memory_mb}); killed')

        def failed(error_type: str, error: str) -> dict[str, Any]:
            return dict(ok=False, evaluation=None, error_type=error_type, error=error,
                        worker=name)

        try:
            self.send({'type': 'job', 'job': job})
            frame = self.read(deadline, watchdog)
        except WorkerTimeout:
            self.kill()
            return failed('timeout', f'no result within {timeout_s:g} s; worker killed')
        except _OverMemory as e:
            self.kill()
            return failed('memory', str(e))
        except WorkerDied:
            rc = self.kill()
            how = (f'killed by {signal_name(-rc)}'
                   if rc is not None and rc < 0 else f'exited with status {rc}')
            tail = self.log_tail()
            return failed('memory' if rc == -signal.SIGKILL else 'crash',
                          f'worker {how}' + (f': ...{tail}' if tail else ''))
        except (OSError, ValueError) as e:  # Garbled frame.
            self.kill()
            return failed('crash', f'lost the worker: {type(e).__name__}: {e}')
        return dict(frame, worker=name)

    def terminate(self) -> None:
        """SIGKILLs the worker's process group (safe from any thread; no cleanup)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def kill(self) -> int | None:
        """Kills the worker and closes its pipes (owner thread); returns its exit status."""
        self.terminate()
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        return rc

    def close(self) -> None:
        with contextlib.suppress(WorkerDied):
            self.send({'type': 'exit'})
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.kill()

    def log_tail(self, limit: int = 600) -> str:
        if self.log_path is None:
            return ''
        try:
            with open(self.log_path, 'rb') as f:
                f.seek(max(0, os.path.getsize(self.log_path) - limit))
                return f.read().decode('utf-8', 'replace').strip()
        except OSError:
            return ''


def _preimport() -> None:
    import jax
    import jax.numpy as jnp
    import clrs  # noqa: F401 - TensorFlow and the CLRS samplers: the slow part.
    from spark_jax.evaluation import evaluate  # noqa: F401

    jnp.ones((2, 2)).block_until_ready()  # Starts the backend client (a GPU context too).
    jax.devices()


def main(argv: list[str] | None = None) -> int:
    """Serves jobs until EOF or an 'exit' request."""
    import faulthandler

    del argv
    start = time.perf_counter()
    proto_in, proto_out = os.fdopen(os.dup(0), 'rb'), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # Prints go to the log (fd 2), never into the protocol stream.
    faulthandler.enable()  # Fatal-signal tracebacks go to the log too.

    def send(message: dict[str, Any]) -> None:
        write_all(proto_out, encode_frame(message))

    _preimport()
    send({'type': 'ready', 'pid': os.getpid(), 'startup_s': time.perf_counter() - start})
    while True:
        request = read_frame(proto_in)
        if request is None or request.get('type') == 'exit':
            return 0
        job = request['job']
        print(f'[eval-worker {os.getpid()}] job {job["job_id"]} ({job["program_name"]} on '
              f'{job["task"]})', file=sys.stderr, flush=True)
        result = run_job(job)
        sys.stdout.flush()
        sys.stderr.flush()
        send({'type': 'result', 'job_id': job['job_id'], **result})


if __name__ == '__main__':
    sys.exit(main())

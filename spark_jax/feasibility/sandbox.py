"""Isolation for candidate code: a warm, recyclable worker process.

`SandboxWorker` runs `python -m spark_jax.feasibility.sandbox_child` (JAX_PLATFORMS=cpu,
private working directory) under a `workers.ChildProcess`; it pre-imports jax/flax once and
serves checks over a pipe; each candidate is loaded in a fresh module namespace. Limits and their failure types:
* wall clock, enforced here (kill) -> 'timeout'; start-up and the per-shape warm-up (a seed
  check) happen before the clock starts, so they are never a candidate's timeout.
* memory -> 'memory': while candidate code runs the child lowers its soft RLIMIT_AS to its
  current address space + `memory_mb` (JAX on CPU reserves ~1.5 GB up front, so the cap is
  headroom), and this side kills it when its RSS exceeds the pre-check RSS + `memory_mb`.
* output -> 'output_too_large': candidate prints go to a bounded counting sink, fd 1 to
  /dev/null, fd 2 to a bounded tail kept here for crash reasons; frames are size-capped.
* death by signal or exit -> 'crash' (or 'memory' when its stderr says so, or for a SIGKILL
  from outside, e.g. the OOM killer).
After a timeout, crash, memory failure, an exception from candidate code, or `max_checks`
checks, the worker is killed and replaced (a warm standby is swapped in when there is one),
so a poisoned interpreter never serves the next check. `check` never raises because of a
candidate; trouble with the sandbox itself is a 'sandbox_error'.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import pathlib
import shutil
import stat
import sys
import tempfile
import threading
import time
from typing import Any, Mapping

from spark_jax import families, workers
from spark_jax.families import DEFAULT_FAMILY

__all__ = ["SandboxWorker", "default_worker", "close_default_worker", "WARM_KEYS"]

# Options that change the shapes a check compiles for (warm-up is per combination).
WARM_KEYS = ("hidden_size", "use_ln", "nb_triplet_fts", "batch", "nodes", "macs_nodes")
# Keys a task family adds (absent in older option dicts).
_FAMILY_WARM_KEYS = ("family", "family_spec")
_STDERR_TAIL = 8192
_MIN_FRAME_CAP = 1 << 16
# The supervisor's failure kinds in this module's failure types.
_FAILURE_TYPES = {"timeout": "timeout", "memory": "memory", "signal": "crash", "error": "crash"}


class _Child(workers.ChildProcess):
    """One sandbox worker process and the shapes it has been warmed for (internal, mutable)."""

    def __init__(self, cache_dir: str, work_dir: str) -> None:
        env = workers.python_env(
            {"JAX_PLATFORMS": "cpu", "MALLOC_ARENA_MAX": "2"}
        )  # Fewer malloc arenas under RLIMIT_AS.
        super().__init__(
            [sys.executable, "-m", "spark_jax.feasibility.sandbox_child", "--cache-dir", cache_dir],
            env=env,
            cwd=work_dir,
            tail_bytes=_STDERR_TAIL,
        )
        self.warmed: set[tuple[Any, ...]] = set()
        self.pending_warm: tuple[Any, ...] | None = None
        self.checks = 0


def _default_warmup() -> pathlib.Path:
    """The warm-up program of a check without one (CLRS's): the default family's default seed."""
    family = families.get(DEFAULT_FAMILY)
    return pathlib.Path(family.seed_programs()[family.default_seed])


def _warm_key(options: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(options[k] for k in WARM_KEYS) + tuple(options.get(k) for k in _FAMILY_WARM_KEYS)


def _failure(stage: str, failure_type: str, reason: str, **extra: Any) -> dict[str, Any]:
    result = {
        "type": "result",
        "ok": False,
        "stages_passed": [],
        "timings": {},
        "params": None,
        "macs": None,
        "masks_non_edges": None,
        "failure_stage": stage,
        "failure_type": failure_type,
        "reason": reason,
        "recycle": True,
    }
    result.update(extra)
    return result


class SandboxWorker:
    """A warm worker process that runs candidate checks in isolation.

    Use as a context manager (or call `close()`). `check(source, options)` returns the
    worker's result dict: ok, stages_passed, failure_stage, failure_type, reason, timings
    (worker-side stage -> seconds), params, macs, masks_non_edges, plus worker_pid and
    recycled (whether this check ended that worker).
    """

    def __init__(
        self,
        *,
        startup_timeout_s: float = 300.0,
        max_checks: int = 200,
        eager_restart: bool = True,
        standby: bool = True,
        warmup: bool = True,
        cache_dir: str | None = None,
    ) -> None:
        """Creates the worker handle; the process starts on `start()` or the first check.

        Args:
          startup_timeout_s: limit on a cold start plus a warm-up.
          max_checks: checks served by one process before it is recycled.
          eager_restart: start the replacement as soon as a worker is recycled.
          standby: from the first recycle on, keep a warmed spare process so that the
            next recycle swaps it in instead of waiting for a cold start.
          warmup: before the first check at new sizes, run a seed check untimed (compiles
            the eager ops every processor uses; a one-shot check can skip it).
          cache_dir: persistent JAX compilation cache shared by this handle's processes
            (default: a private temporary directory, removed on close).
        """
        self.startup_timeout_s = startup_timeout_s
        self.max_checks = max_checks
        self.eager_restart = eager_restart
        self.standby = standby
        self.warmup = warmup
        self._spare: _Child | None = None
        self.restarts = 0
        self.cold_start_s: float | None = None
        self._lock = threading.RLock()
        self._child: _Child | None = None
        self._last_options: dict[str, Any] | None = None
        self._root, self._owner_fd = _make_root()
        self._cache_dir = cache_dir or os.path.join(self._root, "jax-cache")
        self._work_dir = os.path.join(self._root, "work")
        os.makedirs(self._cache_dir, exist_ok=True)
        os.makedirs(self._work_dir)
        self._closed = False

    def __enter__(self) -> "SandboxWorker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """The current worker's pid (None before the first start or after a recycle)."""
        return None if self._child is None else self._child.pid

    def start(self, options: Mapping[str, Any] | None = None) -> float:
        """Starts (if needed) and warms the worker; returns seconds spent waiting."""
        begin = time.perf_counter()
        with self._lock:
            child = self._ensure_child()
            self._await_ready(child)
            if options is not None:
                self._await_warm(child, dict(options))
        return time.perf_counter() - begin

    def _ensure_child(self) -> _Child:
        if self._closed:
            raise RuntimeError("SandboxWorker is closed")
        if self._child is None or self._child.poll() is not None:
            if self._child is not None:
                self._child.kill()
            self._child = _Child(self._cache_dir, self._work_dir)
        return self._child

    def _await_ready(self, child: _Child) -> None:
        deadline = child.started + self.startup_timeout_s
        child.wait_ready(max(deadline, time.monotonic() + 1.0))
        if self.cold_start_s is None:
            self.cold_start_s = child.startup_s

    def _request_warm(self, child: _Child, options: dict[str, Any]) -> None:
        key = _warm_key(options)
        if key in child.warmed or child.pending_warm is not None:
            return
        program = pathlib.Path(options.get("warmup_program") or _default_warmup())
        if not self.warmup or not program.is_file():
            child.warmed.add(key)
            return
        child.send(
            {"type": "warmup", "source": program.read_text(encoding="utf-8"), "options": options}
        )
        child.pending_warm = key

    def _await_warm(self, child: _Child, options: dict[str, Any]) -> None:
        """Warms the worker for these shapes (a seed check, outside any candidate timeout)."""
        while _warm_key(options) not in child.warmed:
            self._request_warm(child, options)
            if child.pending_warm is None:
                continue
            deadline = time.monotonic() + self.startup_timeout_s
            frame = child.read(deadline, frame_cap=_MIN_FRAME_CAP)
            if frame.get("type") == "warmed":
                child.warmed.add(child.pending_warm)
                child.pending_warm = None

    def check(
        self, source: str, options: Mapping[str, Any], parent_source: str | None = None
    ) -> dict[str, Any]:
        """Runs the worker-side stages on `source`; never raises because of the candidate.

        Args:
          source: the candidate program.
          options: plain data: hidden_size, use_ln, nb_triplet_fts, batch, nodes,
            macs_nodes, timeout_s, memory_mb, output_cap_bytes.
          parent_source: the parent program, whose factory signature is the reference.
        """
        options = dict(options)
        with self._lock:
            try:
                child = self._ensure_child()
                self._await_ready(child)
                self._await_warm(child, options)
            except (workers.ChildFailed, OSError, ValueError) as e:
                tail = self._child.tail() if self._child else ""
                self._recycle(restart=False)
                return _failure(
                    "syntax",
                    "sandbox_error",
                    f"sandbox worker failed to start: {type(e).__name__} {e} {tail}".strip(),
                    worker_pid=None,
                    recycled=True,
                )
            self._last_options = options
            result = self._run(child, source, parent_source, options)
            child.checks += 1
            recycle = bool(result.get("recycle")) or child.checks >= self.max_checks
            result["worker_pid"] = child.pid
            result["recycled"] = recycle
            if recycle:
                self._recycle(restart=self.eager_restart)
            return result

    def _run(
        self, child: _Child, source: str, parent_source: str | None, options: dict[str, Any]
    ) -> dict[str, Any]:
        timeout_s = float(options["timeout_s"])
        frame_cap = max(int(options["output_cap_bytes"]), _MIN_FRAME_CAP)
        memory_cap = child.memory_cap(int(options["memory_mb"]))
        stages: list[str] = []
        stage_start = time.perf_counter()
        timings: dict[str, float] = {}

        def failed(failure_type: str, reason: str) -> dict[str, Any]:
            stage = stages[-1] if stages else "syntax"
            timings[stage] = time.perf_counter() - stage_start
            return _failure(stage, failure_type, reason, stages_passed=stages[:-1], timings=timings)

        deadline = time.monotonic() + timeout_s
        try:
            child.send(
                {
                    "type": "check",
                    "source": source,
                    "parent_source": parent_source,
                    "options": options,
                }
            )
            while True:
                frame = child.read(deadline, frame_cap=frame_cap, memory_cap=memory_cap)
                if frame.get("type") == "stage":
                    now = time.perf_counter()
                    if stages:
                        timings[stages[-1]] = now - stage_start
                    stages.append(frame["stage"])
                    stage_start = now
                elif frame.get("type") == "result":
                    return frame
        except workers.ChildFailed as e:  # Killed here, or it died.
            return failed(
                *e.failure.mapped(_FAILURE_TYPES, f"no result within {timeout_s:g} s (killed)")
            )
        except workers.FrameTooLarge as e:  # The child is dead after any of these.
            return failed("output_too_large", str(e))
        except (OSError, ValueError) as e:  # Garbled frame.
            return failed("sandbox_error", f"{type(e).__name__}: {e}")

    def _recycle(self, restart: bool) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.kill()
            self.restarts += 1
        if not restart or self._closed:
            return
        try:
            spare, self._spare = self._spare, None
            if spare is not None and spare.poll() is None:
                self._child = spare
            else:
                if spare is not None:
                    spare.kill()
                self._child = self._ensure_child()
            if self._last_options is not None:
                self._request_warm(self._child, self._last_options)
            if self.standby:
                self._spare = _Child(self._cache_dir, self._work_dir)
                if self._last_options is not None:
                    self._request_warm(self._spare, self._last_options)
        except (OSError, workers.ChildFailed):
            pass  # The next check starts a worker (or reports a sandbox_error).

    def close(self) -> None:
        """Stops the worker and removes its private directory."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            children = (self._child, self._spare)
            self._child = self._spare = None
            for child in children:
                if child is not None:
                    child.close()
            shutil.rmtree(self._root, ignore_errors=True)
            os.close(self._owner_fd)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown.
            pass


_ROOT_PREFIX = "spark-sandbox-"
_OWNER = ".owner"  # flock-held by the process that made the directory, while it lives
_STALE_AFTER_S = 10.0  # a directory without a held owner lock this old is a leftover


def _make_root() -> tuple[str, int]:
    """A private temporary directory and the fd of its held owner lock. Leftovers of
    processes that died without closing (kill -9) are removed first: their owner lock is
    free once the kernel closed the dead process's descriptors."""
    remove_stale_roots()
    root = tempfile.mkdtemp(prefix=_ROOT_PREFIX)
    fd = os.open(os.path.join(root, _OWNER), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return root, fd


def remove_stale_roots(temp_dir: str | None = None) -> list[str]:
    """Removes this user's `spark-sandbox-*` directories under `temp_dir` (default: the
    temporary directory) whose owner lock no live process holds; returns their paths. A
    directory without an owner file is left alone (another version may be using it)."""
    removed = []
    base = temp_dir or tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(base) if n.startswith(_ROOT_PREFIX)]
    except OSError:
        return removed
    for name in names:
        path = os.path.join(base, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            if time.time() - info.st_mtime < _STALE_AFTER_S or _owner_alive(path):
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _owner_alive(root: str) -> bool:
    """Whether a live process may own `root`: its owner lock is held, or it has no owner
    file at all (made by a version without one: never taken, it may be in use)."""
    try:
        fd = os.open(os.path.join(root, _OWNER), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


_default: SandboxWorker | None = None
_default_lock = threading.Lock()


def default_worker() -> SandboxWorker:
    """A process-wide shared worker, started lazily and closed at exit."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = SandboxWorker()
            atexit.register(close_default_worker)
        return _default


def close_default_worker() -> None:
    """Closes the shared worker, if any."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
            _default = None

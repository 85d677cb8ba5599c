"""Concurrent ahead-of-time compilation: many lowered executables compiled at once.

Lowering (tracing, Python) runs on the caller's thread, one after another: Haiku and Flax keep
per-thread frame state, and tracing holds the GIL anyway. XLA compilation releases the GIL, so
the compiles run side by side on a short-lived thread pool that is joined before returning:
the fixed cost of a candidate becomes its longest compile rather than the sum of them.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import time
from typing import Any, Callable, Hashable, Mapping

__all__ = ["CompileReport", "THREAD_PREFIX", "compile_all"]

THREAD_PREFIX = "spark-compile"


@dataclasses.dataclass(frozen=True)
class CompileReport:
    """What one `compile_all` call cost.

    Attributes:
      executables: compiled executables by the caller's key.
      seconds: sum of every lowering and compile (CPU time spent on them, roughly).
      wall_seconds: wall time of the whole call (what the candidate waited).
      count: executables compiled.
      times: per key, the seconds of its lowering and its compile (what a profile prints).
    """

    executables: dict
    seconds: float
    wall_seconds: float
    count: int
    times: dict = dataclasses.field(default_factory=dict)


def _timed_compile(lowered) -> tuple[Any, float]:
    start = time.perf_counter()
    exe = lowered.compile()
    return exe, time.perf_counter() - start


def compile_all(
    lowerings: Mapping[Hashable, Callable[[], Any]], max_workers: int | None = None
) -> CompileReport:
    """Lowers every entry (`key -> () -> jax Lowered`) here, then compiles them concurrently.

    Raises the first lowering or compile error; the pool's threads are joined either way.
    """
    start = time.perf_counter()
    lowered, seconds, times = {}, 0.0, {}
    for key, lower in lowerings.items():
        t0 = time.perf_counter()
        lowered[key] = lower()
        times[key] = time.perf_counter() - t0
        seconds += times[key]
    workers = max(1, min(len(lowered), max_workers or os.cpu_count() or 1))
    executables = {}
    with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix=THREAD_PREFIX) as pool:
        futures = {key: pool.submit(_timed_compile, low) for key, low in lowered.items()}
        try:
            for key, future in futures.items():
                executables[key], took = future.result()
                seconds += took
                times[key] += took
        except BaseException:
            for future in futures.values():
                future.cancel()
            raise
    return CompileReport(
        executables=executables,
        seconds=seconds,
        wall_seconds=time.perf_counter() - start,
        count=len(executables),
        times=times,
    )

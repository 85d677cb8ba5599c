"""Local workers on a CPU-only machine: a benchmark with one worker against the same with two.

`measure_workers` runs each configuration as one `spark-jax benchmark PROGRAM --tasks T...
--seeds 1` process with a fresh output directory and no compilation cache, timed whole; the
configurations alternate within a repeat so that drifting load hits all of them. One JSON line
per run is appended to OUT_JSONL as it lands (wall, the benchmark's job time, jobs landed,
CPUs). Take it on a quiet machine. (results/bench/workers-tiny.jsonl also holds a third
configuration, "2 workers, pinned": each worker on its own CPU, measured at commit ab906fd,
whose `worker_env` did that; slower, so reverted.) scripts/bench_workers.py runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.util import labels

__all__ = ["CONFIGS", "measure_workers", "run_one"]

CONFIGS = (("1 worker", 1), ("2 workers, unpinned", 2))


def run_one(program: str, tasks: str, preset: str, workers: int) -> dict:
    """One benchmark process with `workers` local workers: its wall and what it landed."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench"
        cmd = [sys.executable, "-m", "spark_jax.cli", "benchmark", program, "--tasks", tasks]
        cmd += ["--seeds", "1", "--preset", preset, "--workers", str(workers), "--quiet"]
        cmd += ["--compile-cache", "none", "--out", str(out)]
        start = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        record = dict(rc=done.returncode, wall_s=wall)
        if done.returncode == 0:
            with BenchmarkDB.open_readonly(out / "benchmark.db") as db:
                record.update(
                    jobs=len(db.results()),
                    ok=sum(r.ok for r in db.results()),
                    job_seconds=db.wall_seconds(),
                    running_seconds=db.running_seconds(),
                )
        else:
            record["stderr_tail"] = done.stderr[-1500:]
    return record


def measure_workers(
    out: Path, program: str, tasks: str, preset: str, repeats: list[int], label: str = ""
) -> None:
    """Runs every configuration once per repeat number in `repeats`, appending a JSON line
    per run to `out` (and its start to stdout)."""
    for repeat in repeats:
        for name, workers in CONFIGS:
            record = run_one(program, tasks, preset, workers)
            record.update(
                config=name,
                workers=workers,
                repeat=repeat,
                program=program,
                tasks=tasks,
                preset=preset,
                machine=labels.machine_label(),
                label=label,
            )
            with out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(json.dumps(record)[:300], flush=True)

#!/usr/bin/env python3
"""Local workers on a CPU-only machine: a benchmark with one worker against the same with two.

    python scripts/bench_workers.py OUT_JSONL [--preset tiny] [--tasks dfs,bfs,...] [--repeats 1]

Each configuration is one `spark-jax benchmark PROGRAM --tasks T... --seeds 1` run with a fresh
output directory and no compilation cache, timed whole; the configurations alternate within a
repeat so that drifting load hits all of them. One JSON line per run is appended to OUT_JSONL
as it lands (wall, the benchmark's job time, jobs landed, CPUs). Take it on a quiet machine.
(results/bench/workers-tiny.jsonl also holds a third configuration, "2 workers, pinned": each
worker on its own CPU, measured at commit ab906fd, whose `worker_env` did that; slower, so
reverted.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.util import labels

CONFIGS = (("1 worker", 1), ("2 workers, unpinned", 2))


def run_one(program: str, tasks: str, preset: str, workers: int) -> dict:
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--program", default="processors/mpnn.py")
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--tasks", default="dfs,bfs,bellman_ford,mst_prim")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--first-repeat", type=int, default=0, help="number of the first repeat")
    parser.add_argument("--label", default="")
    args = parser.parse_args(argv)
    for repeat in range(args.first_repeat, args.first_repeat + args.repeats):
        for name, workers in CONFIGS:
            record = run_one(args.program, args.tasks, args.preset, workers)
            record.update(
                config=name,
                workers=workers,
                repeat=repeat,
                program=args.program,
                tasks=args.tasks,
                preset=args.preset,
                machine=labels.machine_label(),
                label=args.label,
            )
            with args.out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(json.dumps(record)[:300], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

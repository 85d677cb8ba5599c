"""The process side of the accelerator measurements (`perf.gpu_measure`): `spark-jax`
commands started at once and timed whole, nvidia-smi sampled in the background, one JSON line
per measurement.

Each evaluation is a separate `spark-jax evaluate` process timed whole (import, data, compile,
train, score): `process_wall_s` is what a search pays per candidate.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading
import time

__all__ = ["CHECKOUT", "GpuSampler", "append", "cli", "evaluate_cmd", "run_evaluations", "smi"]

# The checkout the commands run in (configs/ is read from it): measurements run from one.
CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
TASK = "dfs"


def append(out: pathlib.Path, record: dict) -> None:
    """Appends one measurement's JSON line to `out` and echoes its start to stdout."""
    with out.open("a") as f:
        f.write(json.dumps(record) + "\n")
    print(json.dumps(record)[:400], flush=True)


def cli() -> list[str]:
    """The command that runs `spark-jax` with this interpreter."""
    return [sys.executable, "-m", "spark_jax.cli"]


def evaluate_cmd(program: str, preset: str, steps: int | None, seed: int, k: int, out: str):
    """`spark-jax evaluate` of `program` on dfs with `k` seeds, its JSON record to `out`."""
    cmd = [*cli(), "evaluate", program, "--task", TASK, "--preset", preset, "--seed", str(seed)]
    cmd += ["--seeds", str(k), "--no-progress", "--json", "--output", out]
    if steps is not None:
        cmd += ["--train-steps", str(steps)]
    return cmd


def run_evaluations(cmds_envs: list[tuple[list[str], dict, str]]) -> list[dict]:
    """Starts every command at once; returns one record per command (wall, rc, JSON)."""
    procs = []
    start = time.perf_counter()
    for cmd, env, out in cmds_envs:
        log = open(out + ".log", "w")
        procs.append(
            (subprocess.Popen(cmd, cwd=CHECKOUT, env=env, stdout=log, stderr=log), out, log)
        )
    records = []
    for proc, out, log in procs:
        rc = proc.wait()
        log.close()
        wall = time.perf_counter() - start
        rec = dict(rc=rc, process_wall_s=wall)
        if rc == 0 and os.path.exists(out):
            rec["evaluation"] = json.loads(pathlib.Path(out).read_text())
        else:
            rec["log_tail"] = pathlib.Path(out + ".log").read_text()[-3000:]
        records.append(rec)
    return records


class GpuSampler:
    """nvidia-smi utilisation and memory, sampled every 0.5 s in a background thread."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        query = [
            "nvidia-smi",
            "--query-gpu=utilization.gpu,memory.used",
            "--format=csv,noheader,nounits",
        ]
        while not self._stop.is_set():
            try:
                line = subprocess.run(query, capture_output=True, text=True, timeout=5).stdout
                util, mem = (float(x) for x in line.strip().splitlines()[0].split(","))
                self.samples.append((util, mem))
            except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
                return
            self._stop.wait(0.5)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict:
        if not self.samples:
            return dict(gpu_samples=0)
        utils = [u for u, _ in self.samples]
        return dict(
            gpu_samples=len(utils),
            gpu_util_mean=sum(utils) / len(utils),
            gpu_util_busy_fraction=sum(u > 0 for u in utils) / len(utils),
            gpu_mem_used_max_mib=max(m for _, m in self.samples),
        )


def smi(fields: str) -> str:
    """nvidia-smi's answer for `fields` ('' where there is none)."""
    try:
        query = ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"]
        return subprocess.run(query, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""

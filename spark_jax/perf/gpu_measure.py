"""Accelerator measurements behind results/gpu/: one JSON line per measurement.

    measure(OUT_JSONL, [PHASE, ...])      # python scripts/gpu_measure.py OUT_JSONL PHASE ...

Phases (each appends its lines to OUT_JSONL as soon as it is measured, so a run cut short
keeps what it finished):
  env                      the device, driver and package versions
  check:PRESET[:STEPS]     one evaluation of DeepMind's Triplet-GMPNN and one of our port on
                           dfs, seed 0 (STEPS overrides the preset's train_steps: a timing run)
  workers:W[:PRESET[:STEPS]]  W evaluations of our port at once on one device, each in its own
                           process with the environment a LocalExecutor gives W workers sharing a
                           device (no preallocation, memory fraction 0.9/W); GPU utilisation and
                           memory sampled by nvidia-smi while they run
  seeds:K[:PRESET[:STEPS]] one evaluation of our port with K seeds vmapped in one program
  bench:SEED[:PRESET]      one `spark-jax bench --only-candidate --repeats 1 --seed SEED` process
                           (official vs ours per candidate, K=4 vmapped seeds, an unseen
                           program's feasibility): run it several times with different seeds
                           for the median and range over repeats, each repeat its own process
  search[:BUDGET:WORKERS]  one `spark-jax search` process: with no arguments the README's GPU
                           line exactly (the embedded default: dfs, smoke, offline editor,
                           budget 4, one worker); else configs/default.yaml with that budget
                           (3x as many attempts) and W local workers sharing the device. Cut
                           short at the deadline (SIGTERM: what finished is kept), so a
                           partial search is recorded as such; its run.db is copied beside
                           OUT_JSONL as search-B-W.db

SPARK_JAX_DEADLINE_S (seconds from the start of `measure`) bounds the search phase, so the
measurements of a device call come back before the call's own limit.

Each evaluation is a separate `spark-jax evaluate` process timed whole (`perf.gpu_runs`).
Runs anywhere JAX runs.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from spark_jax.perf.gpu_runs import (
    CHECKOUT,
    GpuSampler,
    append,
    cli,
    evaluate_cmd,
    run_evaluations,
    smi,
)

__all__ = ["PHASES", "UnknownPhase", "measure"]

OURS = "processors/triplet_gmpnn.py"
OFFICIAL = "official:triplet_gmpnn"


class UnknownPhase(ValueError):
    """A phase name `measure` does not know; the message names it."""


def phase_env(out: Path) -> None:
    """The device, driver and package versions."""
    import importlib.metadata as md

    import jax

    versions = {}
    for name in (
        "jax",
        "jaxlib",
        "jax-cuda13-plugin",
        "jax-cuda12-plugin",
        "flax",
        "optax",
        "chex",
        "dm-haiku",
        "dm-clrs",
        "numpy",
        "spark-jax",
    ):
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            pass
    device = smi("name,driver_version,memory.total")
    devices = jax.devices()
    append(
        out,
        dict(
            phase="env",
            backend=jax.default_backend(),
            device_kind=devices[0].device_kind,
            n_devices=len(devices),
            nvidia_smi=device,
            versions=versions,
            python=platform.python_version(),
            cpus=os.cpu_count(),
            commit=os.environ.get("SPARK_JAX_COMMIT", ""),
        ),
    )


def _parse(spec: str, default_preset: str = "smoke") -> tuple[int | None, str, int | None]:
    parts = spec.split(":")[1:]
    n = int(parts[0]) if parts and parts[0] else None
    preset = parts[1] if len(parts) > 1 else default_preset
    steps = int(parts[2]) if len(parts) > 2 else None
    return n, preset, steps


def phase_check(out: Path, spec: str, tmp: str) -> None:
    parts = spec.split(":")
    preset = parts[1] if len(parts) > 1 else "smoke"
    steps = int(parts[2]) if len(parts) > 2 else None
    for program in (OFFICIAL, OURS):
        path = os.path.join(tmp, f"check-{preset}-{abs(hash(program))}.json")
        [rec] = run_evaluations(
            [(evaluate_cmd(program, preset, steps, 0, 1, path), dict(os.environ), path)]
        )
        append(out, dict(phase="check", program=program, preset=preset, train_steps=steps, **rec))


def phase_workers(out: Path, spec: str, tmp: str) -> None:
    from spark_jax.jobs.worker import worker_env

    w, preset, steps = _parse(spec)
    runs = []
    for slot in range(w):
        path = os.path.join(tmp, f"workers{w}-{slot}.json")
        env = worker_env(slot, None, None, num_workers=w)
        runs.append((evaluate_cmd(OURS, preset, steps, 100 + slot, 1, path), env, path))
    with GpuSampler() as sampler:
        records = run_evaluations(runs)
    wall = max(r["process_wall_s"] for r in records)
    ok = sum(r["rc"] == 0 for r in records)
    append(
        out,
        dict(
            phase="workers",
            workers=w,
            preset=preset,
            train_steps=steps,
            ok=ok,
            wall_s=wall,
            candidates_per_hour=ok * 3600.0 / wall,
            mem_fraction=runs[0][1].get("XLA_PYTHON_CLIENT_MEM_FRACTION"),
            preallocate=runs[0][1].get("XLA_PYTHON_CLIENT_PREALLOCATE"),
            runs=records,
            **sampler.summary(),
        ),
    )


def phase_seeds(out: Path, spec: str, tmp: str) -> None:
    k, preset, steps = _parse(spec)
    path = os.path.join(tmp, f"seeds{k}.json")
    with GpuSampler() as sampler:
        [rec] = run_evaluations(
            [(evaluate_cmd(OURS, preset, steps, 200, k, path), dict(os.environ), path)]
        )
    append(
        out,
        dict(
            phase="seeds",
            k=k,
            preset=preset,
            train_steps=steps,
            seed_candidates_per_hour=(k * 3600.0 / rec["process_wall_s"])
            if rec["rc"] == 0
            else 0.0,
            **rec,
            **sampler.summary(),
        ),
    )


def phase_bench(out: Path, spec: str) -> None:
    seed, preset, _ = _parse(spec)
    seed = 42 if seed is None else seed
    cmd = [*cli(), "bench", "--only-candidate", "--repeats", "1", "--seed", str(seed)]
    cmd += ["--preset", preset, "--json"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=CHECKOUT)
    record = dict(
        phase="bench",
        preset=preset,
        seed=seed,
        rc=proc.returncode,
        process_wall_s=time.perf_counter() - start,
        commit=os.environ.get("SPARK_JAX_COMMIT", ""),
        jax=importlib.metadata.version("jax"),
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode == 0 and lines:
        record["candidate"] = json.loads(lines[-1])["candidate"]
    else:
        record["stderr_tail"] = proc.stderr[-2000:]
    append(out, record)


def _search_facts(run_db: Path) -> dict:
    """What the search did, from its run database (the report's own accounting)."""
    from spark_jax.report.accounting import read_meta, summarize
    from spark_jax.search.rundb import RunDB

    with RunDB.open(run_db) as db:
        meta, created = read_meta(db)
        acc = summarize(db, meta, created)
        final = (db.get_meta("final_test") or {}).get("programs") or {}
    tests = {
        pid: ((e.get("evaluation") or {}).get("ood_score"), e.get("roles") or [])
        for pid, e in final.items()
    }
    return dict(
        attempts=acc.attempts,
        feasible=acc.feasible,
        evaluated=acc.evaluated_budget,
        device_hours=acc.device_hours,
        final_test=tests,
    )


def _search_command(spec: str, tmp: str) -> tuple[dict, Path, list[str]]:
    """The search a `search[:BUDGET:WORKERS]` spec asks for: (its setting, as its record
    names it; its run directory under `tmp`; its command). Unless it is the embedded default,
    its config (configs/default.yaml with that budget, 3x as many attempts and W workers) is
    written beside the run directory."""
    from spark_jax.config.search import default_config

    embedded = default_config()
    parts = [int(x) for x in spec.split(":")[1:3]]
    budget = parts[0] if parts else embedded.budget
    workers = parts[1] if len(parts) > 1 else embedded.executor.num_workers
    setting = dict(spec=spec, budget=budget, workers=workers, embedded_default=not parts)
    run_dir = Path(tmp) / f"search-{budget}-{workers}"
    cmd = [*cli(), "search", "--run-dir", str(run_dir), "--no-progress"]
    if parts:
        text = (CHECKOUT / "configs" / "default.yaml").read_text()
        text = re.sub(r"(?m)^budget: .*$", f"budget: {budget}", text)
        text = re.sub(r"(?m)^max_attempts: .*$", f"max_attempts: {3 * budget}", text)
        text = re.sub(
            r"(?m)^executor: .*$",
            f"executor: {{kind: local, num_workers: {workers}, in_flight: {workers}}}",
            text,
        )
        config = run_dir.with_suffix(".yaml")
        config.write_text(text)
        cmd += ["--config", str(config)]
    return setting, run_dir, cmd


def phase_search(out: Path, spec: str, tmp: str, deadline: float) -> None:
    setting, run_dir, cmd = _search_command(spec, tmp)
    log_path = Path(tmp) / f"{run_dir.name}.log"
    start = time.perf_counter()
    with GpuSampler() as sampler, log_path.open("w") as log:
        proc = subprocess.Popen(cmd, cwd=CHECKOUT, stdout=log, stderr=subprocess.STDOUT)
        cut_short = False
        try:
            rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            # SIGTERM: the search keeps what finished and exits 143 (or dies of the signal,
            # -15, when it comes before the search has set its handler)
            proc.terminate()
            rc, cut_short = proc.wait(), True
    record = dict(
        phase="search",
        **setting,
        rc=rc,
        cut_short=cut_short,
        process_wall_s=time.perf_counter() - start,
        commit=os.environ.get("SPARK_JAX_COMMIT", ""),
        jax=importlib.metadata.version("jax"),
        device=smi("name,driver_version"),  # no JAX here: its client would take device memory
        **sampler.summary(),
    )
    db = run_dir / "run.db"
    if db.exists():
        record.update(_search_facts(db))
        shutil.copy(db, out.parent / f"{run_dir.name}.db")
    if rc != 0 and not cut_short:
        record["log_tail"] = log_path.read_text()[-3000:]
    append(out, record)


def _run_phase(out: Path, spec: str, tmp: str, deadline: float) -> None:
    name = spec.split(":")[0]
    if name == "env":
        phase_env(out)
    elif name == "check":
        phase_check(out, spec, tmp)
    elif name == "workers":
        phase_workers(out, spec, tmp)
    elif name == "seeds":
        phase_seeds(out, spec, tmp)
    elif name == "bench":
        phase_bench(out, spec)
    elif name == "search":
        phase_search(out, spec, tmp, deadline)
    else:
        raise UnknownPhase(f"unknown phase {spec!r}")


PHASES = ("env", "check", "workers", "seeds", "bench", "search")


def measure(out: Path, specs: list[str]) -> None:
    """Runs each phase of `specs` in turn (see the module docstring), appending its JSON lines
    to `out` and a line with its seconds to stdout.

    Raises:
      UnknownPhase: at the first spec that names no phase (the earlier ones have run).
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + float(os.environ.get("SPARK_JAX_DEADLINE_S", "1e9"))
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            t0 = time.perf_counter()
            _run_phase(out, spec, tmp, deadline)
            print(f"# {spec}: {time.perf_counter() - t0:.1f} s", flush=True)

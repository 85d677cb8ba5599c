"""K seeds of one candidate: trained one after another, as one program mapping the one-seed
step over the seed axis (`jax.lax.map`, the default) and as one `jax.vmap`-ed program. Are
the per-seed figures bit-identical to the seeds trained alone, and what does each cost? Our
port (`processors/triplet_gmpnn.py`), one task. `seed_modes` writes OUT.json;
`profile_table` renders it into results/bench/README.md (scripts/seed_modes.py).

Walls are those of this machine under its load at the time (`load_average` in the JSON);
identity does not depend on load.
"""

from __future__ import annotations

import os
import pathlib
import time

import jax

from spark_jax.config import protocol
from spark_jax.evaluation import evaluate, seeds
from spark_jax.perf.identity import figures, port_factory, write_port_report

__all__ = ["seed_modes"]


def _alone(factory, task: str, cfg, seed_list: list[int]) -> dict:
    """Each seed trained by itself, one after another: walls and compiles added up."""
    run = dict(wall_s=0.0, compile_wall_s=0.0, per_seed=[])
    for s in seed_list:
        start = time.perf_counter()
        metrics, _ = evaluate.train_and_score(factory, task, cfg, s)
        run["wall_s"] += time.perf_counter() - start
        run["compile_wall_s"] += metrics["compile_wall_seconds"]
        run["per_seed"].append(figures(metrics))
    return run


def seed_modes(out: pathlib.Path, task: str, seed_list: list[int], preset: str) -> dict:
    """Writes OUT.json: the seeds alone and in each of `seeds.SEED_MODES`, with whether each
    mode's per-seed figures equal the seeds' alone; returns the report."""
    cfg = protocol.get_preset(preset)
    factory = port_factory(cfg)
    load = [os.getloadavg()[0]]
    runs: dict[str, dict] = {"alone": _alone(factory, task, cfg, seed_list)}
    for mode in seeds.SEED_MODES:
        start = time.perf_counter()
        per_seed = seeds.train_and_score_seeds(factory, task, cfg, seed_list, mode=mode)
        runs[mode] = dict(
            wall_s=time.perf_counter() - start,
            compile_wall_s=per_seed[0]["compile_wall_seconds"],
            per_seed=[figures(m) for m in per_seed],
        )
        load.append(os.getloadavg()[0])
    alone = runs["alone"]["per_seed"]
    return write_port_report(
        out,
        dict(task=task, seeds=seed_list, preset=preset),
        backend=jax.default_backend(),
        jax=jax.__version__,
        xla_flags=os.environ.get("XLA_FLAGS", ""),
        load_average=[round(x, 2) for x in load],
        runs=runs,
        identical_to_alone={mode: runs[mode]["per_seed"] == alone for mode in seeds.SEED_MODES},
    )

"""Are scores unchanged by the cost work? Our port trained in the ways the work added, side by
side, at a preset; each check writes one JSON file that `profile_table` renders into
results/bench/README.md, or prints one line to compare across checkouts.

  smoke_identity   (`spark_jax.results.identity`: it reads a benchmark's record) our port
                   trained in the loop the work started from, with buckets and as a K=1 stack,
                   beside the same seed's record in the timed clrs10 benchmark.
  stack_divergence where a vmapped stack of one seed parts from that seed trained alone: both
                   runs' training losses step by step, and the first step where they differ.
                   scripts/stack_divergence.py.
  loop_identity    the training loop's scores at `tiny` (bfs, processors/mpnn.py, seed 3): one
                   seed, one seed with a cascade, two vmapped seeds, and DeepMind's model in
                   `spark-jax bench`'s loop. scripts/loop_identity.py prints them as one JSON
                   line; run it with two checkouts on PYTHONPATH and compare the lines.
"""

from __future__ import annotations

import json
import pathlib

from spark_jax import program as program_lib
from spark_jax.config import assets, protocol
from spark_jax.evaluation import bridge, evaluate, seeds
from spark_jax.perf import candidate
from spark_jax.util import labels

__all__ = [
    "KEYS",
    "figures",
    "loop_identity",
    "port_factory",
    "stack_divergence",
    "write_port_report",
]

KEYS = ("ood_score", "val_score", "best_step", "final_loss")
PORT = "processors/triplet_gmpnn.py"


def figures(metrics: dict) -> dict:
    """The compared figures of one run's metrics."""
    return {key: metrics[key] for key in KEYS}


def write_port_report(out: pathlib.Path, run: dict, **fields) -> dict:
    """Writes OUT.json: what ran (`run`: task, seed or seeds, preset), our port's name and the
    machine, then `fields`, in that order; returns the report."""
    report = dict(run, program=PORT, machine=labels.measured_on(), **fields)
    out.write_text(json.dumps(report) + "\n", encoding="utf-8")
    return report


def port_factory(cfg):
    """Our port's processor factory under protocol `cfg`."""
    prog = program_lib.read_program(assets.seed_program_path("triplet_gmpnn"))
    return bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts)


def stack_divergence(out: pathlib.Path, task: str, seed: int, preset: str) -> dict:
    """Writes OUT.json: both runs' losses and the first step where they differ (None: no
    step); returns the report."""
    cfg = protocol.get_preset(preset)
    factory = port_factory(cfg)
    alone: list[float] = []
    stacked: list[float] = []
    evaluate.train_and_score(factory, task, cfg, seed, progress=lambda s, x: alone.append(x))
    seeds.train_and_score_seeds(
        factory, task, cfg, [seed], progress=lambda s, x: stacked.append(x), mode="vmap"
    )
    first = next((i for i, (x, y) in enumerate(zip(alone, stacked)) if x != y), None)
    return write_port_report(
        out,
        dict(task=task, seed=seed, preset=preset),
        first_differing_step=None if first is None else first + 1,
        losses_alone=alone,
        losses_stack_of_one=stacked,
    )


def loop_identity() -> dict:
    """The training loop's scores at `tiny` (see the module docstring); a refactor of the
    loop must leave them byte-identical (as `json.dumps(..., sort_keys=True)`)."""
    cfg = protocol.get_preset("tiny")
    prog = program_lib.read_program(assets.seed_program_path("mpnn"))
    factory = bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts)
    keys = ("ood_score", "val_score", "best_step", "final_loss", "steps")
    cascade_keys = keys + ("cascade_steps", "cascade_val_score", "cascade_promoted")
    out = {}
    m, _ = evaluate.train_and_score(factory, "bfs", cfg, 3)
    out["one"] = {k: m[k] for k in keys}
    m, _ = evaluate.train_and_score(factory, "bfs", cfg, 3, cascade=(2.0, 0.5))
    out["cascade"] = {k: m.get(k) for k in cascade_keys}
    per = seeds.train_and_score_seeds(factory, "bfs", cfg, [3, 4])
    out["stack"] = [{k: p[k] for k in keys} for p in per]
    out["official"] = candidate._official_candidate("bfs", cfg, 3)["ood_score"]
    return out

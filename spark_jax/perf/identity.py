"""Are scores unchanged by the cost work? Our port trained in the ways the work added, side by
side, at a preset; each check writes one JSON file that `profile_table` renders into
results/bench/README.md, or prints one line to compare across checkouts.

  smoke_identity   for each task, our port (`processors/triplet_gmpnn.py`) trained with one
                   seed, alone, in the loop the work started from (no vmapped seeds,
                   validation and test sets scored unbucketed, padded to their longest
                   trajectory), again with hint-length buckets, and as a vmapped stack of that
                   one seed (K=1), set beside the same seed's record in the timed clrs10
                   benchmark (that seed trained with two others as one vmapped program,
                   bucketed sets). scripts/smoke_identity.py.
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
import sys

from spark_jax import program as program_lib
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.config import assets, protocol
from spark_jax.evaluation import bridge, evaluate, seeds
from spark_jax.perf import candidate
from spark_jax.util import labels

__all__ = [
    "KEYS",
    "NoBenchmarkRecord",
    "figures",
    "loop_identity",
    "port_factory",
    "smoke_identity",
    "stack_divergence",
]

KEYS = ("ood_score", "val_score", "best_step", "final_loss")
PORT = "processors/triplet_gmpnn.py"


class NoBenchmarkRecord(LookupError):
    """The benchmark database holds no result of our port for the task and seed."""


def figures(metrics: dict) -> dict:
    """The compared figures of one run's metrics."""
    return {key: metrics[key] for key in KEYS}


def port_factory(cfg):
    """Our port's processor factory under protocol `cfg`."""
    prog = program_lib.read_program(assets.seed_program_path("triplet_gmpnn"))
    return bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts)


def _benchmark_record(db_path: pathlib.Path, task: str, seed: int) -> dict:
    with BenchmarkDB.open_readonly(db_path) as db:
        ours = [p.key for p in db.programs() if not p.key.startswith("official:")]
        for r in db.results():
            if r.task == task and r.seed == seed and r.program_key in ours and r.evaluation:
                e = r.evaluation
                if not e.seeds:  # one record per seed: the seed's own figures
                    return {key: getattr(e, key) for key in KEYS}
                k = e.seeds.index(seed)
                return dict(
                    ood_score=e.seed_scores[k],
                    val_score=e.seed_val_scores[k],
                    best_step=e.seed_best_steps[k],
                    final_loss=e.seed_final_losses[k],
                )
    raise NoBenchmarkRecord(f"{db_path}: no result of our port on {task} seed {seed}")


def _identity_row(factory, task: str, cfg, seed: int, benchmark: pathlib.Path) -> dict:
    runs = {"benchmark (vmapped K=3, buckets)": _benchmark_record(benchmark, task, seed)}
    for name, buckets in (("one seed, unbucketed", False), ("one seed, buckets", True)):
        m, _ = evaluate.train_and_score(factory, task, cfg, seed, buckets=buckets)
        runs[name] = figures(m)
    (alone,) = seeds.train_and_score_seeds(factory, task, cfg, [seed], mode="vmap")
    runs["vmapped alone (K=1), buckets"] = figures(alone)
    buckets_same = runs["one seed, unbucketed"] == runs["one seed, buckets"]
    first = next(iter(runs.values()))
    identical = all(r == first for r in runs.values())
    return dict(task=task, seed=seed, runs=runs, identical=identical,
                buckets_identical=buckets_same)  # fmt: skip


def smoke_identity(
    out: pathlib.Path, tasks: list[str], seed: int, preset: str, benchmark: pathlib.Path
) -> dict:
    """Writes OUT.json: per task, the runs side by side and whether they are identical (a
    line per task on stderr); returns the report.

    Raises:
      NoBenchmarkRecord: `benchmark` lacks our port's record of a task and seed.
    """
    cfg = protocol.get_preset(preset)
    factory = port_factory(cfg)
    rows = []
    for task in tasks:
        rows.append(_identity_row(factory, task, cfg, seed, benchmark))
        print(task, "identical" if rows[-1]["identical"] else "DIFFERENT", file=sys.stderr)
    report = dict(
        preset=preset,
        program=PORT,
        machine=labels.measured_on(),
        benchmark=str(benchmark),
        rows=rows,
    )
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


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
    report = dict(
        task=task,
        seed=seed,
        preset=preset,
        program=PORT,
        machine=labels.measured_on(),
        first_differing_step=None if first is None else first + 1,
        losses_alone=alone,
        losses_stack_of_one=stacked,
    )
    out.write_text(json.dumps(report) + "\n", encoding="utf-8")
    return report


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

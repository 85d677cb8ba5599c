"""The timed clrs10 benchmark's seed against our port trained again (results/bench's identity
check): for each task, our port (`processors/triplet_gmpnn.py`) trained with one seed, alone,
in the loop the work started from (no vmapped seeds, validation and test sets scored
unbucketed, padded to their longest trajectory), again with hint-length buckets, and as a
vmapped stack of that one seed (K=1), set beside the same seed's record in the timed clrs10
benchmark (that seed trained with two others as one vmapped program, bucketed sets).
scripts/smoke_identity.py; `profile_table` renders its JSON into results/bench/README.md.
The training side is `spark_jax.perf.identity`'s; reading the benchmark's record puts this
module above the benchmark.
"""

from __future__ import annotations

import json
import pathlib
import sys

from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.config import protocol
from spark_jax.evaluation import evaluate, seeds
from spark_jax.perf.identity import PORT, figures, port_factory
from spark_jax.util import labels

__all__ = ["NoBenchmarkRecord", "smoke_identity"]


class NoBenchmarkRecord(LookupError):
    """The benchmark database holds no result of our port for the task and seed."""


def _benchmark_record(db_path: pathlib.Path, task: str, seed: int) -> dict:
    with BenchmarkDB.open_readonly(db_path) as db:
        ours = [p.key for p in db.programs() if not p.key.startswith("official:")]
        for r in db.results():
            if r.task == task and r.seed == seed and r.program_key in ours and r.evaluation:
                e = r.evaluation
                if not e.seeds:  # one record per seed: the seed's own figures
                    return figures(e.to_dict())  # the stored form's keys
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

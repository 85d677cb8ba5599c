"""Are scores unchanged by the cost work at the smoke preset? For each task, our port
(`processors/triplet_gmpnn.py`) trained with one seed, alone, in the loop the work started from
(no vmapped seeds, validation and test sets scored unbucketed, padded to their longest
trajectory), again with hint-length buckets, and as a vmapped stack of that one seed (K=1),
set beside the same seed's record in the timed clrs10 benchmark (that seed trained with two
others as one vmapped program, bucketed sets).
Writes OUT.json; `scripts/profile_table.py` renders it into results/bench/README.md.

    python scripts/smoke_identity.py results/bench/identity-smoke.json \
        --tasks dfs,activity_selector --seed 0 --benchmark results/bench/clrs10-smoke/benchmark.db
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from spark_jax import program as program_lib
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.config import assets, protocol
from spark_jax.evaluation import bridge, evaluate, seeds
from spark_jax.util import labels

KEYS = ("ood_score", "val_score", "best_step", "final_loss")


def figures(metrics: dict) -> dict:
    """The compared figures of one run's metrics (also scripts/seed_modes.py's)."""
    return {key: metrics[key] for key in KEYS}


def port_factory(cfg):
    """Our port's processor factory under protocol `cfg` (also scripts/stack_divergence.py's)."""
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
    raise SystemExit(f"{db_path}: no result of our port on {task} seed {seed}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--tasks", default="dfs,activity_selector")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--benchmark", type=pathlib.Path, required=True)
    args = parser.parse_args(argv)
    cfg = protocol.get_preset(args.preset)
    factory = port_factory(cfg)
    rows = []
    for task in args.tasks.split(","):
        runs = {
            "benchmark (vmapped K=3, buckets)": _benchmark_record(args.benchmark, task, args.seed)
        }
        for name, buckets in (("one seed, unbucketed", False), ("one seed, buckets", True)):
            m, _ = evaluate.train_and_score(factory, task, cfg, args.seed, buckets=buckets)
            runs[name] = figures(m)
        (alone,) = seeds.train_and_score_seeds(factory, task, cfg, [args.seed], mode="vmap")
        runs["vmapped alone (K=1), buckets"] = figures(alone)
        buckets_same = runs["one seed, unbucketed"] == runs["one seed, buckets"]
        first = next(iter(runs.values()))
        identical = all(r == first for r in runs.values())
        rows.append(dict(task=task, seed=args.seed, runs=runs, identical=identical,
                         buckets_identical=buckets_same))  # fmt: skip
        print(task, "identical" if identical else "DIFFERENT", file=sys.stderr)
    report = dict(
        preset=args.preset,
        program="processors/triplet_gmpnn.py",
        machine=labels.measured_on(),
        benchmark=str(args.benchmark),
        rows=rows,
    )
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""K seeds of one candidate: trained one after another, as one program mapping the one-seed
step over the seed axis (`jax.lax.map`, the default) and as one `jax.vmap`-ed program. Are
the per-seed figures bit-identical to the seeds trained alone, and what does each cost? Our
port (`processors/triplet_gmpnn.py`), one task. Writes OUT.json; `scripts/profile_table.py`
renders it into results/bench/README.md.

    python scripts/seed_modes.py results/bench/seed-modes-smoke.json --task dfs --seeds 0,1,2

Walls are those of this machine under its load at the time (`load_average` in the JSON);
identity does not depend on load.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

import jax
from smoke_identity import figures, port_factory  # scripts/ is on the path when run as a script

from spark_jax.config import protocol
from spark_jax.evaluation import evaluate, seeds
from spark_jax.util import labels


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--task", default="dfs")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated, at least two")
    parser.add_argument("--preset", default="smoke")
    args = parser.parse_args(argv)
    seed_list = [int(s) for s in args.seeds.split(",")]
    if len(seed_list) < 2:
        parser.error("--seeds needs at least two seeds")
    cfg = protocol.get_preset(args.preset)
    factory = port_factory(cfg)
    load = [os.getloadavg()[0]]
    runs: dict[str, dict] = {"alone": dict(wall_s=0.0, compile_wall_s=0.0, per_seed=[])}
    for s in seed_list:
        start = time.perf_counter()
        metrics, _ = evaluate.train_and_score(factory, args.task, cfg, s)
        runs["alone"]["wall_s"] += time.perf_counter() - start
        runs["alone"]["compile_wall_s"] += metrics["compile_wall_seconds"]
        runs["alone"]["per_seed"].append(figures(metrics))
    for mode in seeds.SEED_MODES:
        start = time.perf_counter()
        per_seed = seeds.train_and_score_seeds(factory, args.task, cfg, seed_list, mode=mode)
        runs[mode] = dict(
            wall_s=time.perf_counter() - start,
            compile_wall_s=per_seed[0]["compile_wall_seconds"],
            per_seed=[figures(m) for m in per_seed],
        )
        load.append(os.getloadavg()[0])
    alone = runs["alone"]["per_seed"]
    report = dict(
        task=args.task,
        seeds=seed_list,
        preset=args.preset,
        program="processors/triplet_gmpnn.py",
        machine=labels.measured_on(),
        backend=jax.default_backend(),
        jax=jax.__version__,
        xla_flags=os.environ.get("XLA_FLAGS", ""),
        load_average=[round(x, 2) for x in load],
        runs=runs,
        identical_to_alone={mode: runs[mode]["per_seed"] == alone for mode in seeds.SEED_MODES},
    )
    args.out.write_text(json.dumps(report) + "\n", encoding="utf-8")
    print("identical to alone:", report["identical_to_alone"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

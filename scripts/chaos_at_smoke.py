"""How far one training run moves when its initial parameters move by 1e-7 (results/chaos-at-smoke).

    python scripts/chaos_at_smoke.py OUT [--tasks dfs,articulation_points] [--perturbations 8]
        [--scale 1e-7] [--seed 0] [--preset smoke] [--program processors/triplet_gmpnn.py]

Rows land in OUT/runs.csv as they finish; a rerun skips the rows already there
(`spark_jax.results.chaos_runs`).
"""

from __future__ import annotations

import argparse
import pathlib
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--tasks", default="dfs,articulation_points")
    parser.add_argument("--perturbations", type=int, default=8)
    parser.add_argument("--scale", type=float, default=1e-7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--program", default="processors/triplet_gmpnn.py")
    args = parser.parse_args(argv)
    from spark_jax.results import chaos_runs as chaos  # after the arguments: it imports JAX

    chaos.run_chaos(
        args.out,
        args.tasks.split(","),
        args.perturbations,
        args.scale,
        args.seed,
        args.preset,
        args.program,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""K seeds of one candidate: trained one after another, as one `jax.lax.map` program and as
one `jax.vmap`-ed program; are the per-seed figures bit-identical to the seeds trained alone,
and what does each cost (`spark_jax.perf.seed_modes`)? Writes OUT.json;
`scripts/profile_table.py` renders it into results/bench/README.md.

    python scripts/seed_modes.py results/bench/seed-modes-smoke.json --task dfs --seeds 0,1,2
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from spark_jax.perf.seed_modes import seed_modes


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
    report = seed_modes(args.out, args.task, seed_list, args.preset)
    print("identical to alone:", report["identical_to_alone"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Are scores unchanged by the cost work at the smoke preset? Our port trained with one seed
alone (unbucketed, then with buckets) and as a vmapped stack of that one seed, beside the same
seed's record in the timed clrs10 benchmark (`spark_jax.results.identity.smoke_identity`).
Writes OUT.json; `scripts/profile_table.py` renders it into results/bench/README.md.

    python scripts/smoke_identity.py results/bench/identity-smoke.json \
        --tasks dfs,activity_selector --seed 0 --benchmark results/bench/clrs10-smoke/benchmark.db
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from spark_jax.results import identity


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--tasks", default="dfs,activity_selector")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--benchmark", type=pathlib.Path, required=True)
    args = parser.parse_args(argv)
    try:
        identity.smoke_identity(
            args.out, args.tasks.split(","), args.seed, args.preset, args.benchmark
        )
    except identity.NoBenchmarkRecord as e:
        sys.exit(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

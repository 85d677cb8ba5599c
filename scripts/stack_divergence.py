"""Where a vmapped stack of one seed parts from that seed trained alone: both runs' training
losses step by step (our port, one task, the smoke preset), and the first step where they
differ (`spark_jax.perf.identity.stack_divergence`). Writes OUT.json;
`scripts/profile_table.py` renders it into results/bench/README.md.

    python scripts/stack_divergence.py results/bench/stack-divergence-smoke.json \
        --task activity_selector --seed 0
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from spark_jax.perf import identity


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--task", default="activity_selector")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="smoke")
    args = parser.parse_args(argv)
    report = identity.stack_divergence(args.out, args.task, args.seed, args.preset)
    print("first differing step:", report["first_differing_step"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

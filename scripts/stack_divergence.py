"""Where a vmapped stack of one seed parts from that seed trained alone: both runs' training
losses step by step (our port, one task, the smoke preset), and the first step where they
differ. Writes OUT.json; `scripts/profile_table.py` renders it into results/bench/README.md.

    python scripts/stack_divergence.py results/bench/stack-divergence-smoke.json \
        --task activity_selector --seed 0
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from smoke_identity import port_factory  # scripts/ is on the path when run as a script

from spark_jax.config import protocol
from spark_jax.evaluation import evaluate, seeds
from spark_jax.util import labels


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--task", default="activity_selector")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="smoke")
    args = parser.parse_args(argv)
    cfg = protocol.get_preset(args.preset)
    factory = port_factory(cfg)
    alone: list[float] = []
    stacked: list[float] = []
    evaluate.train_and_score(
        factory, args.task, cfg, args.seed, progress=lambda s, x: alone.append(x)
    )
    seeds.train_and_score_seeds(
        factory, args.task, cfg, [args.seed], progress=lambda s, x: stacked.append(x), mode="vmap"
    )
    first = next((i for i, (x, y) in enumerate(zip(alone, stacked)) if x != y), None)
    report = dict(
        task=args.task,
        seed=args.seed,
        preset=args.preset,
        program="processors/triplet_gmpnn.py",
        machine=labels.measured_on(),
        first_differing_step=None if first is None else first + 1,
        losses_alone=alone,
        losses_stack_of_one=stacked,
    )
    args.out.write_text(json.dumps(report) + "\n", encoding="utf-8")
    print("first differing step:", report["first_differing_step"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Local workers on a CPU-only machine: a benchmark with one worker against the same with two.

    python scripts/bench_workers.py OUT_JSONL [--preset tiny] [--tasks dfs,bfs,...] [--repeats 1]

One JSON line per run appended to OUT_JSONL (`spark_jax.results.bench_workers`). Take it on a quiet
machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spark_jax.results.bench_workers import measure_workers


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--program", default="processors/mpnn.py")
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--tasks", default="dfs,bfs,bellman_ford,mst_prim")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--first-repeat", type=int, default=0, help="number of the first repeat")
    parser.add_argument("--label", default="")
    args = parser.parse_args(argv)
    repeats = list(range(args.first_repeat, args.first_repeat + args.repeats))
    measure_workers(args.out, args.program, args.tasks, args.preset, repeats, args.label)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

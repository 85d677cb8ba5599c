"""The paper's five non-CLRS benchmarks at a preset: each seed program and the best of a short
offline search (offline editor, not an LLM), in one table shaped like the paper's.

Usage: python scripts/families_smoke.py [--preset smoke] [--budget 4] [--out runs/families]
                                        [--benchmarks mnist1d,news20,...] [--retest-seeds 8]
Writes OUT/families_smoke.md, one run directory per (benchmark, seed program) under OUT
(resumed when run again) and OUT/notes.json; with --retest-seeds K (>= 2; 0 skips it), the
verdict table's retests (`spark_jax.results.families_smoke`).
"""

import argparse
import pathlib
import sys

from spark_jax.report.family_smoke import benchmarks
from spark_jax.results.families_smoke import run_families


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="smoke")
    ap.add_argument("--budget", type=int, default=4)
    ap.add_argument("--out", default="runs/families")
    ap.add_argument("--retest-seeds", type=int, default=8, help="fresh seeds per retest")
    ap.add_argument("--benchmarks", default=",".join(b for _, b, _ in benchmarks()))
    args = ap.parse_args()
    command = "python scripts/families_smoke.py " + " ".join(sys.argv[1:])
    text = run_families(
        pathlib.Path(args.out),
        args.preset,
        args.budget,
        args.retest_seeds,
        args.benchmarks.split(","),
        command,
    )
    print(text)


if __name__ == "__main__":
    main()

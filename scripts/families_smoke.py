"""The paper's five non-CLRS benchmarks at a preset: each seed program and the best of a short
offline search (offline editor, not an LLM), in one table shaped like the paper's.

Usage: python scripts/families_smoke.py [--preset smoke] [--budget 4] [--out runs/families]
                                        [--benchmarks mnist1d,news20,...] [--retest-seeds 8]
Writes OUT/families_smoke.md, one run directory per (benchmark, seed program) under OUT
(resumed when run again) and OUT/notes.json (why a benchmark has no run). 20News and Mice
Protein download on first use into the data directory; offline, their rows carry the one-line
error naming the URL and the directory instead of numbers. With --retest-seeds K (>= 2; 0
skips it), each finished search's seed and best programs are trained again with K seeds the
search never used and scored on the test part (`<run>/retest.json`): the verdict table.
"""

import argparse
import json
import pathlib
import sys

from spark_jax.benchmark import family_retest
from spark_jax.report import family_smoke


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="smoke")
    ap.add_argument("--budget", type=int, default=4)
    ap.add_argument("--out", default="runs/families")
    ap.add_argument("--retest-seeds", type=int, default=8, help="fresh seeds per retest")
    listed = family_smoke.benchmarks()
    ap.add_argument("--benchmarks", default=",".join(b for _, b, _ in listed))
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = args.benchmarks.split(",")
    rows = []
    for family, bench, seeds in listed:
        if bench not in wanted:
            continue
        for seed in seeds:
            new = family_smoke.run_benchmark(family, bench, seed, args.preset, args.budget, out)
            if args.retest_seeds and not any(r.note for r in new):
                run_dir = out / f"{bench}-{seed}"
                family_retest.retest_run(
                    family, bench, seed, run_dir, args.preset, args.retest_seeds
                )
            for row in new:
                print(row, flush=True)
            rows += new
    notes = {f"{r.benchmark}-{r.program}": r.note for r in rows if r.note}
    (out / "notes.json").write_text(json.dumps(notes, indent=2) + "\n", encoding="utf-8")
    command = "python scripts/families_smoke.py " + " ".join(sys.argv[1:])
    text = family_smoke.markdown(rows, args.preset, args.budget, command.strip())
    (out / "families_smoke.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()

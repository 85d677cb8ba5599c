"""The paper's five non-CLRS benchmarks at a preset: each seed program and the best of a short
offline search (offline editor, not an LLM), in one table shaped like the paper's.

`run_families` writes OUT/families_smoke.md, one run directory per (benchmark, seed program)
under OUT (resumed when run again) and OUT/notes.json (why a benchmark has no run). 20News and
Mice Protein download on first use into the data directory; offline, their rows carry the
one-line error naming the URL and the directory instead of numbers. With `retest_seeds` K
(>= 2; 0 skips it), each finished search's seed and best programs are trained again with K
seeds the search never used and scored on the test part (`<run>/retest.json`): the verdict
table. scripts/families_smoke.py runs it (results/families).
"""

from __future__ import annotations

import json
import pathlib

from spark_jax.benchmark import family_retest
from spark_jax.report import family_smoke

__all__ = ["run_families"]


def run_families(
    out: pathlib.Path,
    preset: str,
    budget: int,
    retest_seeds: int,
    benchmarks: list[str],
    command: str,
) -> str:
    """Runs (or resumes) each listed benchmark in `benchmarks`, a line per row to stdout;
    writes the notes and the report, whose header names `command`; returns the report."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for family, bench, seeds in family_smoke.benchmarks():
        if bench not in benchmarks:
            continue
        for seed in seeds:
            new = family_smoke.run_benchmark(family, bench, seed, preset, budget, out)
            if retest_seeds and not any(r.note for r in new):
                run_dir = out / f"{bench}-{seed}"
                family_retest.retest_run(family, bench, seed, run_dir, preset, retest_seeds)
            for row in new:
                print(row, flush=True)
            rows += new
    notes = {f"{r.benchmark}-{r.program}": r.note for r in rows if r.note}
    (out / "notes.json").write_text(json.dumps(notes, indent=2) + "\n", encoding="utf-8")
    text = family_smoke.markdown(rows, preset, budget, command.strip())
    (out / "families_smoke.md").write_text(text, encoding="utf-8")
    return text

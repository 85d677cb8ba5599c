#!/usr/bin/env bash
# results/families: the five non-CLRS benchmarks (MNIST-1D with its four seed programs,
# 20News, Mice Protein, Breast Cancer, CartPole), each seed program against the best of a
# short offline search (budget 4, `smoke` preset), selected on the family's validation part;
# then both programs trained again with 8 seeds the search never used and scored on the test
# part, best vs seed tested (paired, Holm over the rows). Offline rule-based editor: NOT an
# LLM result. The runs live in WORK (default benchmarks/families) and resume when run again.
# 20News and Mice Protein download on first use; offline, their rows say so instead of
# numbers.
NAME=families ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/families/data/run.json
out=results/families
work=${WORK:-benchmarks/families}
mkdir -p "$out/data" "$work"
start=$(date +%s)
"$PY" scripts/families_smoke.py --preset smoke --budget 4 --retest-seeds 8 --out "$work"
end=$(date +%s)
for db in "$work"/*/run.db; do
  name=$(basename "$(dirname "$db")")
  mkdir -p "$out/data/$name" && cp "$db" "$out/data/$name/run.db"
  rollback_mode "$out/data/$name/run.db"
  [ ! -f "$work/$name/retest.json" ] || cp "$work/$name/retest.json" "$out/data/$name/"
done
cp "$work/notes.json" "$out/data/notes.json"
cat > "$out/data/run.json" <<JSON
{"command": "python scripts/families_smoke.py --preset smoke --budget 4 --retest-seeds 8",
 "preset": "smoke", "budget": 4, "retest_seeds": 8,
 "commit": "$(git rev-parse --short HEAD)",
 "date_utc": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "wall_seconds": $((end - start)),
 "host": "$(uname -n) ($(uname -m), $(nproc) CPUs)"}
JSON
[ -f "$out/README.md" ] || cat > "$out/README.md" <<'MD'
# The non-CLRS benchmarks: each seed program against a short offline search

**Label.** `smoke`; the CPU it ran on (below); offline rule-based editor, NOT an LLM result.

**Question.** On the paper's five non-CLRS benchmarks, does a short offline search find a
program that beats its seed on the held-out test part, having selected on validation only?

**Answer.** The verdict table below: each search's best program against its seed program,
both trained again with 8 seeds the search never used, on the test part (a paired exact
sign-flip test per row, Holm over the rows). The search table under it is each search's own
record (training seed 0, one run per row: no verdict).

## Protocol

`scripts/results/families.sh`, then `python scripts/families_table.py results/families`
(the block below, from `data/`; with `--plot` also `retest.png`).

![Per row, each fresh seed's test score of the seed program and of the best of search, joined](retest.png)

<!-- generated -->
<!-- end generated -->
MD
"$PY" scripts/families_table.py "$out" --plot

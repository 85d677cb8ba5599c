#!/usr/bin/env bash
# results/default-search: the README's first command (`spark-jax search` on its embedded
# default: SPARK on dfs, smoke protocol, the offline rule-based editor, selection on the
# validation-size OOD set `ood_val`) at a budget a user would run, 16 evaluated candidates
# (48 attempts), search seed 0; then its best program against the seed program on clrs10,
# smoke, 3 training seeds (100-102) disjoint from the search's, paired verdicts with Holm.
# Offline rule-based editor: NOT an LLM result. The work (search run, benchmark) is kept in
# WORK (default benchmarks/default-search) and resumed when run again.
# CPU cost on the 2-core VM: about 1.5 h of search and 2 h of benchmark.
NAME=default-search ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/default-search/benchmark.db results/default-search/run.db
out=results/default-search
work=${WORK:-benchmarks/default-search}
run="$work/default-search"  # the benchmark labels its best `default-search:best`
mkdir -p "$out" "$work"
# The commit and time the work started at, written once (a resume keeps them).
[ -f "$work/provenance.json" ] || "$PY" -c 'import json, sys, time; json.dump(dict(commit=sys.argv[1],
  started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())), open(sys.argv[2], "w"))' \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$work/provenance.json"
sed -e 's/^budget: .*/budget: 16/' -e 's/^max_attempts: .*/max_attempts: 48/' \
  configs/default.yaml > "$work/search.yaml"
if [ -f "$run/run.db" ]; then
  "$PY" -m spark_jax.cli search --resume "$run" --no-progress
else
  "$PY" -m spark_jax.cli search --config "$work/search.yaml" --run-dir "$run" --no-progress
fi
if [ -f "$work/bench/benchmark.db" ]; then
  "$PY" -m spark_jax.cli benchmark --resume "$work/bench" --quiet
else
  "$PY" -m spark_jax.cli benchmark processors/triplet_gmpnn.py "$run" --tasks clrs10 \
    --first-seed 100 --seeds 3 --preset smoke --baseline triplet_gmpnn --out "$work/bench" --quiet
fi
cp "$run/run.db" "$run/report.md" "$work/provenance.json" "$out/"
cp "$work/bench/benchmark.db" "$work/bench/results.csv" "$out/"
rollback_mode "$out/benchmark.db"
cp "$work/bench/report.md" "$out/benchmark.md"
mkdir -p "$out/plots" && cp "$work/bench/plots/"*.png "$out/plots/"
for f in "$run/plots/"*.png; do cp "$f" "$out/plots/search-$(basename "$f")"; done
"$PY" scripts/default_search_table.py "$out"

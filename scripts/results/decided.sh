#!/usr/bin/env bash
# results/decided: the default search's best program against its seed program (the programs
# of results/default-search) on clrs10, smoke, in the sequential mode (issue 49): the fixed
# 3-seed benchmark of results/default-search (seeds 100-102, disjoint from the search's seed 0)
# continued with `spark-jax benchmark --resume WORK --seeds auto --max-seeds 12`: identity
# checked before training, then 3 seeds per round for every undecided pair until win, loss,
# equivalent within +-5 pp, or cannot tell at 12 seeds. No editor in this benchmark (the
# programs come from an offline rule-based search: NOT an LLM result). The work is kept in
# WORK (default benchmarks/decided) and resumed when run again; each run copies what has
# landed into results/decided (a part-done run is committed under results/.unfinished/decided).
# CPU cost on the 2-core VM: the identity check ~10 min, each round ~1 h per 5 undecided tasks.
NAME=decided ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/decided/finished.json
work=${WORK:-benchmarks/decided}
mkdir -p "$work"
if [ ! -f "$work/benchmark.db" ]; then
  cp results/default-search/benchmark.db "$work/benchmark.db"
fi
[ -f "$work/provenance.json" ] || "$PY" -c 'import json, sys, time; json.dump(dict(commit=sys.argv[1],
  started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), continued_from="results/default-search/benchmark.db"), open(sys.argv[2], "w"))' \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$work/provenance.json"
"$PY" -m spark_jax.cli benchmark --resume "$work" --seeds auto --max-seeds 12 \
  --seeds-per-round 3 --delta 5 --quiet
out=results/decided
mkdir -p "$out/plots"
cp "$work/benchmark.db" "$work/results.csv" "$work/provenance.json" "$out/"
rollback_mode "$out/benchmark.db"
cp "$work/report.md" "$out/benchmark.md"
cp "$work/plots/"*.png "$out/plots/"
"$PY" scripts/decided_table.py "$out" --finished

#!/usr/bin/env bash
# Does the persistent XLA compilation cache hit? The same evaluation twice with one fresh cache
# directory: prints each run's compile time (sum and wall), OOD score and the cache's entries.
#   scripts/bench_compile_cache.sh [PROGRAM] [TASK] [PRESET]
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAM="${1:-processors/mpnn.py}"; TASK="${2:-bfs}"; PRESET="${3:-tiny}"
CACHE="$(mktemp -d)"; trap 'rm -rf "$CACHE"' EXIT
for run in 1 2; do
  out="$(JAX_COMPILATION_CACHE_DIR="$CACHE" "${SPARK_JAX:-spark-jax}" evaluate "$PROGRAM" \
      --task "$TASK" --preset "$PRESET" --json 2>/dev/null)"
  entries="$(ls "$CACHE" | wc -l)"  # counted after the run: what it and the runs before wrote
  printf '%s' "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(f\"run $run: compile {d['compile_seconds']:.1f} s (wall {d['compile_wall_seconds']:.1f} s), \"
      f\"OOD {d['ood_score']:.6f}, cache entries after it $entries\")"
done

#!/usr/bin/env bash
# The paper's transfer table for a search: the best program of RUN_DIR against DeepMind's
# Triplet-GMPNN on the 10-task set and on all 30 tasks, K seeds each, one protocol.
#   scripts/transfer_table.sh RUN_DIR [PRESET=smoke] [SEEDS=3] [extra benchmark args...]
# Writes benchmarks/transfer-<run>-<set>/report.md (resumable: re-running continues).
# Both programs train with seeds the search never used (the benchmark starts its seeds after
# the last seed in RUN_DIR/run.db, refuses an overlapping --first-seed unless
# --allow-seed-overlap), so the searched row is not re-measured on its own selection seeds;
# the report lists every program's training seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir="${1:?usage: scripts/transfer_table.sh RUN_DIR [PRESET] [SEEDS] [args...]}"
preset="${2:-smoke}"
seeds="${3:-3}"
shift $(( $# < 3 ? $# : 3 ))
name="$(basename "$run_dir")"
for set in clrs10 clrs30; do
  out="benchmarks/transfer-${name}-${set}"
  if [ -f "$out/benchmark.db" ]; then
    "${SPARK_JAX:-spark-jax}" benchmark --resume "$out"  # the stored plan and executor
  else
    "${SPARK_JAX:-spark-jax}" benchmark official:triplet_gmpnn "$run_dir" --tasks "$set" \
      --seeds "$seeds" --preset "$preset" --baseline official:triplet_gmpnn --out "$out" "$@"
  fi
done

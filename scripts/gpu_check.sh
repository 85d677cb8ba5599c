#!/usr/bin/env bash
# Accelerator check and the measurements behind results/gpu/ (see its README):
#   scripts/gpu_check.sh [OUT_DIR] [PHASE ...]
# Default phases: the device and versions; one dfs evaluation of DeepMind's Triplet-GMPNN and
# one of our port at the smoke preset and at the paper preset (300 timed steps: a full paper
# candidate is projected from it); 1, 2 and 4 workers sharing the device; K = 4 and 8 seeds
# vmapped in one program. Each measurement is one JSON line in OUT_DIR/measurements.jsonl
# (kept when a run is cut short), then scripts/gpu_table.py writes OUT_DIR/README.md's tables.
# Runs on any JAX backend (GPU, TPU, or a CPU for a dry run); about 25 minutes on one H100.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-results-$(date +%Y%m%d-%H%M%S)}"
shift || true
phases=("$@")
if [ ${#phases[@]} -eq 0 ]; then
  phases=(env check:smoke check:paper:300 workers:1:smoke workers:2:smoke workers:4:smoke
          seeds:4:smoke seeds:8:smoke workers:4:paper:300)
fi
mkdir -p "$out"
[ -f "$out/README.md" ] || printf '# Accelerator measurements\n\n<!-- generated -->\n<!-- end generated -->\n' > "$out/README.md"
export SPARK_JAX_COMMIT="${SPARK_JAX_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
python scripts/gpu_measure.py "$out/measurements.jsonl" "${phases[@]}"
python scripts/gpu_table.py "$out"

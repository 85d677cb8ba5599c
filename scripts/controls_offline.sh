#!/usr/bin/env bash
# Regenerates results/controls-offline: SPARK, OpenEvolve and the two sampling controls
# (sample, sequential; Gideoni, Risi, Gal 2026) in one offline comparison, 3 search seeds.
#
#   scripts/controls_offline.sh [OUT=results/controls-offline] [BUDGET=2] [ATTEMPTS=2]
#
# METHODS, CONFIG, SEEDS and JOBS (environment) change the comparison (defaults: the four
# methods below, configs/tiny.yaml, 3 search seeds, one search at a time); scripts/results/
# compare-offline.sh runs every method's offline analogue this way.
#
# Offline rule-based analogues, NOT an LLM result: every method runs with the offline editor
# (SPARK's rule-based roles; the baselines' and controls' offline analogues). Config:
# configs/tiny.yaml (task bfs, seed program processors/mpnn.py, `tiny` preset) with the
# project's default selection, `fitness.source: ood_val` (select on validation; each search's
# seed and best are then scored on the test set). JAX on whatever device is present.
# Copies each run's database and the comparison's report and plots to OUT/data/ (so that
# `spark-jax compare --report-only OUT/data` rewrites the report), then runs
# scripts/compare_table.py OUT (OUT/runs.csv and the README's generated section).
# WORK=DIR names the comparison directory (re-running with the same WORK resumes it).
# Environment: PYTHON (default: python3, with spark-jax's dependencies installed).
# CPU cost on a 2-core VM: about an hour (12 searches, each with its final test training).
set -euo pipefail

REPO=$(git rev-parse --show-toplevel)
OUT=$(realpath -m "${1:-$REPO/results/controls-offline}")
BUDGET=${2:-2}
ATTEMPTS=${3:-2}
PY=${PYTHON:-python3}
METHODS=${METHODS:-spark,sample,sequential,openevolve}
CONFIG=${CONFIG:-configs/tiny.yaml}
SEEDS=${SEEDS:-3}
JOBS=${JOBS:-1}
WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/controls-offline.XXXXXX")}  # kept on failure
mkdir -p "$WORK"
echo "working in $WORK"

START=$(date +%s)
(cd "$REPO" && PYTHONPATH="$REPO" TF_CPP_MIN_LOG_LEVEL=3 "$PY" -m spark_jax.cli compare \
    --methods "$METHODS" --seeds "$SEEDS" --config "$CONFIG" --jobs "$JOBS" \
    --budget "$BUDGET" --max-attempts "$ATTEMPTS" --out "$WORK/cmp") \
    >"$WORK/stdout.txt" 2>"$WORK/log.txt"
END=$(date +%s)

EXTRAS=("$WORK/log.txt")  # and the part's record when it resumed a committed checkpoint
[ -f "$WORK/segment.json" ] && EXTRAS+=("$WORK/segment.json")
"$PY" "$REPO/scripts/compare_copy.py" "$WORK/cmp" "$OUT/data" "${EXTRAS[@]}"
cat >"$OUT/data/run.json" <<JSON
{"command": "spark-jax compare --methods $METHODS --seeds $SEEDS --config $CONFIG --budget $BUDGET --max-attempts $ATTEMPTS",
 "commit": "$(git -C "$REPO" rev-parse --short HEAD)",
 "date_utc": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "wall_seconds": $((END - START)),
 "host": "$(uname -n) ($(uname -m), $(nproc) CPUs)"}
JSON
(cd "$REPO" && PYTHONPATH="$REPO" "$PY" scripts/compare_table.py "$OUT")
rm -rf "$WORK"
echo "wrote $OUT"

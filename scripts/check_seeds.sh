#!/usr/bin/env bash
# Feasibility check (`spark-jax check`, no training) of every shipped seed program under
# processors/, at the preset's sizes (default smoke). Seconds per program on any CPU.
# Extra arguments are passed to each check (e.g. --preset tiny --task bfs --json).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for program in processors/*.py; do
  "${SPARK_JAX:-spark-jax}" check "$program" "$@" || status=$?
done
exit "$status"

#!/usr/bin/env bash
# results/bench: where one smoke evaluation's time goes (dfs; quickselect before/after buckets).
NAME=bench ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/bench/profile-dfs-smoke.json results/bench/profile-quickselect-smoke-after.json
label="${LABEL:-$(uname -n), $(nproc) CPUs}"
"$PY" scripts/profile_evaluation.py --task dfs --preset smoke --steps 30 --label "$label" \
  --json results/bench/profile-dfs-smoke.json
"$PY" scripts/profile_evaluation.py --task quickselect --preset smoke --steps 20 --no-buckets \
  --label "$label; before" --json results/bench/profile-quickselect-smoke-before.json
"$PY" scripts/profile_evaluation.py --task quickselect --preset smoke --steps 20 \
  --label "$label; after" --json results/bench/profile-quickselect-smoke-after.json
"$PY" scripts/profile_table.py results/bench

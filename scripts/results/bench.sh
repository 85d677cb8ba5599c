#!/usr/bin/env bash
# results/bench: where one smoke evaluation's time goes (dfs; quickselect before/after buckets),
# `spark-jax bench`'s per-candidate table (3 repeats) and the timed clrs10 benchmark. Take the
# timings on a quiet machine: anything else on the cores inflates them.
NAME=bench ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/bench/profile-dfs-smoke.json results/bench/profile-quickselect-smoke-after.json \
  results/bench/feasibility-unseen-1-after.json results/bench/bench-cpu-smoke.json \
  results/bench/clrs10-smoke/benchmark.db results/bench/identity-smoke.json \
  results/bench/stack-divergence-smoke.json results/bench/seed-modes-activity_selector-smoke.json \
  results/bench/seed-modes-dfs-smoke.json
label="${LABEL:-$(uname -n), $(nproc) CPUs}"
"$PY" scripts/profile_evaluation.py --task dfs --preset smoke --steps 30 --label "$label" \
  --json results/bench/profile-dfs-smoke.json
"$PY" scripts/profile_evaluation.py --task quickselect --preset smoke --steps 20 --no-buckets \
  --label "$label; before" --json results/bench/profile-quickselect-smoke-before.json
"$PY" scripts/profile_evaluation.py --task quickselect --preset smoke --steps 20 \
  --label "$label; after" --json results/bench/profile-quickselect-smoke-after.json
"$PY" -m spark_jax.cli bench --only-candidate --repeats 3 --preset smoke --json \
  | "$PY" -c 'import json, sys; d = json.loads(sys.stdin.read().splitlines()[-1]); d["label"] = sys.argv[1]; print(json.dumps(d))' "$label" \
  > results/bench/bench-cpu-smoke.json
SPARK_JAX="$PY -m spark_jax.cli" scripts/bench_clrs10.sh results/bench/clrs10-smoke
rm -rf results/bench/clrs10-smoke/xla-cache results/bench/clrs10-smoke/logs
rollback_mode results/bench/clrs10-smoke/benchmark.db
"$PY" scripts/smoke_identity.py results/bench/identity-smoke.json --tasks dfs,activity_selector \
  --seed 0 --benchmark results/bench/clrs10-smoke/benchmark.db
"$PY" scripts/stack_divergence.py results/bench/stack-divergence-smoke.json --task activity_selector \
  --seed 0
for task in activity_selector dfs; do
  "$PY" scripts/seed_modes.py "results/bench/seed-modes-$task-smoke.json" --task "$task" --seeds 0,1,2
done
"$PY" scripts/profile_feasibility.py results/bench/feasibility-unseen-1-after.json --label "$label"
"$PY" scripts/profile_table.py results/bench

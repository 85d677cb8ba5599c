#!/usr/bin/env bash
# The reliability experiment (proposal-only: nothing trains), from the repository root.
#
#   scripts/llm_reliability.sh run       # the experiment: model agents answer the queue
#   scripts/llm_reliability.sh table     # rewrite results/llm-reliability/README.md's table
#   scripts/llm_reliability.sh replay    # re-run every attempt from the cassettes, no model,
#                                        # and check the README's table is the same, byte for byte
#   scripts/llm_reliability.sh dry-run   # the whole harness with canned fake agents (NOT a model)
#
# dfs, seed program triplet_gmpnn, one search seed, parents from the fixed pool
# results/llm-reliability/parents/pool.json; attempts: spark 30, openevolve (diff mode) 30,
# global-rewrite 15, funsearch 15, eoh 15. Every prompt goes to $SPARK_LLM_QUEUE/pending/
# (scripts/llm_queue_model.py); the agents follow $SPARK_LLM_BRIEF (default
# scripts/llm_model_brief.md, version 3; the recorded run 2 answered under version 1,
# results/llm-reliability/model_brief.md), and the channel records per call the answerer, the
# brief's version and the answer's time, flagging answers faster than the brief's bound.
# Re-running `run` after a stop continues: finished runs are kept, a run resumes at its
# first unrecorded attempt, and answers already in a cassette are not asked again.
#
# Environment: PY (python with spark-jax; default python), SPARK_LLM_QUEUE (default
# ./llm-queue), SPARK_LLM_BRIEF (default scripts/llm_model_brief.md), OUT (default results/llm-reliability/record), PARALLEL (prompts in flight per
# run, default 4: up to 2x4 + 3x4 = 20 pending prompts at once).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python}
export SPARK_LLM_QUEUE=${SPARK_LLM_QUEUE:-$PWD/llm-queue}
export SPARK_LLM_BRIEF=${SPARK_LLM_BRIEF:-$PWD/scripts/llm_model_brief.md}
OUT=${OUT:-results/llm-reliability/record}
PARALLEL=${PARALLEL:-4}
CONFIG=results/llm-reliability/config.yaml
POOL=results/llm-reliability/parents/pool.json
README=${README:-results/llm-reliability/README.md}
MAIN_ATTEMPTS=${MAIN_ATTEMPTS:-30}
OTHER_ATTEMPTS=${OTHER_ATTEMPTS:-15}

compare() {  # compare OUT_DIR METHODS ATTEMPTS [more flags]
  local out=$1 methods=$2 attempts=$3
  shift 3
  "$PY" -m spark_jax.cli compare --proposal-only --config "$CONFIG" --pool "$POOL" \
    --methods "$methods" --seeds 1 --max-attempts "$attempts" \
    --parallel-attempts "$PARALLEL" --jobs 3 --out "$out" "$@"
}

both() {  # both OUT_ROOT [more flags]: the two comparisons at once
  local root=$1
  shift
  mkdir -p "$SPARK_LLM_QUEUE"/{pending,claimed,answers,unclear}
  compare "$root/main" spark,openevolve "$MAIN_ATTEMPTS" "$@" > "$root.main.log" 2>&1 &
  local a=$!
  compare "$root/others" global-rewrite,funsearch,eoh "$OTHER_ATTEMPTS" "$@" \
    > "$root.others.log" 2>&1 &
  local b=$!
  local rc=0
  wait $a || rc=$?
  wait $b || rc=$?
  return $rc
}

keep_unclear() {  # the agents' reasons a prompt was unclear, kept beside the results
  mkdir -p results/llm-reliability/unclear
  cp "$SPARK_LLM_QUEUE"/unclear/*.txt results/llm-reliability/unclear/ 2>/dev/null || true
}

case "${1:-}" in
  run)
    mkdir -p "$(dirname "$OUT")"
    both "$OUT"
    "$PY" scripts/llm_reliability_table.py --readme "$README" "$OUT/main" "$OUT/others"
    keep_unclear
    ;;
  table)
    "$PY" scripts/llm_reliability_table.py --readme "$README" "$OUT/main" "$OUT/others"
    keep_unclear
    "$PY" scripts/llm_account.py "$(dirname "$README")"
    ;;
  replay)
    tmp=$(mktemp -d)
    compare "$tmp/main" spark,openevolve "$MAIN_ATTEMPTS" --replay "$OUT/main" > "$tmp/main.log" 2>&1
    compare "$tmp/others" global-rewrite,funsearch,eoh "$OTHER_ATTEMPTS" --replay "$OUT/others" \
      > "$tmp/others.log" 2>&1
    "$PY" scripts/llm_reliability_table.py --check --readme "$README" "$tmp/main" "$tmp/others"
    ;;
  dry-run)
    # Fake agents answering from canned text (NOT a model), 2 attempts per method.
    root=${DRY_ROOT:-$(mktemp -d)}
    export SPARK_LLM_QUEUE=$root/queue OUT=$root/runs MAIN_ATTEMPTS=2 OTHER_ATTEMPTS=2
    mkdir -p "$SPARK_LLM_QUEUE"
    pids=()
    for i in 1 2 3; do
      "$PY" scripts/llm_fake_queue_agent.py "$SPARK_LLM_QUEUE" --agent "fake-$i" \
        --stop-after 600 & pids+=($!)
    done
    start=$(date +%s)
    both "$OUT" || true
    echo "dry run: $(( $(date +%s) - start )) s wall for the recorded runs"
    kill "${pids[@]}" 2>/dev/null || true
    cp "$README" "$root/README.md" 2>/dev/null || : > "$root/README.md"
    export README=$root/README.md
    "$PY" scripts/llm_reliability_table.py --readme "$README" "$OUT/main" "$OUT/others"
    "$0" replay
    echo "dry run in $root"
    ;;
  *)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac

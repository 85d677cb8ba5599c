#!/usr/bin/env bash
# results/llm-reliability: valid rate and entanglement with a real model, proposal-only.
NAME=llm-reliability ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/llm-reliability/record/main/compare.json
[ -n "${SPARK_LLM_QUEUE:-}" ] || needs "model agents answering \$SPARK_LLM_QUEUE \
(scripts/llm_model_brief.md, version 3; run 2 answered under version 1); without one, 'scripts/llm_reliability.sh replay' \
re-runs the recorded answers"
scripts/llm_reliability.sh run

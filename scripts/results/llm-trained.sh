#!/usr/bin/env bash
# results/llm-trained: SPARK vs OpenEvolve (and the two sampling controls) with a real model,
# trained, smoke, 2 search seeds.
NAME=llm-trained ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/llm-trained/data/run.json
[ -n "${SPARK_LLM_QUEUE:-}" ] || needs "model agents answering \$SPARK_LLM_QUEUE \
(scripts/llm_model_brief.md, version 3; the recorded run answered under versions 1 and 2)"
scripts/llm_trained.sh run

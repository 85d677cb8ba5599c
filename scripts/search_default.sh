#!/usr/bin/env bash
# The embedded-default SPARK search: `spark-jax search` with no config (dfs, smoke protocol,
# offline rule-based editor, one local worker, 1 evaluation in flight; see
# spark_jax/config/search.py). Sized for a CPU laptop or CI box: minutes, no GPU or LLM needed;
# a GPU only makes each evaluation faster. Extra arguments are passed on
# (e.g. --run-dir runs/default --seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${SPARK_JAX:-spark-jax}" search "$@"

#!/usr/bin/env bash
# The tiny search (configs/tiny.yaml: bfs, tiny protocol, 4 training steps, budget 3): a smoke
# check that the whole pipeline runs, in about a minute on any CPU. Its scores mean nothing.
# Extra arguments are passed on (e.g. --run-dir runs/tiny).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${SPARK_JAX:-spark-jax}" search --config configs/tiny.yaml "$@"

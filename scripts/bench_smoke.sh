#!/usr/bin/env bash
# `spark-jax perf --preset smoke`: our training loop, feasibility checker and search pipeline
# against the official CLRS loop, as ratios. The figures are meant for the machine you will
# search on: on an accelerator (GPU) host the throughput ratios are the ones that matter; on a
# CPU they still run (several minutes) but say little about GPU behaviour.
# Extra arguments are passed on (e.g. --task bfs --steps 50 --json).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${SPARK_JAX:-spark-jax}" perf --preset smoke "$@"

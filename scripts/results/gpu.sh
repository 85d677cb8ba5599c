#!/usr/bin/env bash
# results/gpu: our training loop against DeepMind's on a GPU, workers sharing it.
NAME=gpu ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/gpu/call1.jsonl
"$PY" -c "import jax, sys; sys.exit(0 if jax.default_backend() == 'gpu' else 1)" 2>/dev/null \
  || needs "a GPU visible to JAX (pip install -e '.[cuda12]'); see results/gpu/README.md"
scripts/gpu_check.sh results/gpu

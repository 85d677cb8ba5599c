#!/usr/bin/env bash
# results/port-vs-official: our Flax Triplet-GMPNN vs DeepMind's on clrs10, smoke, 5 seeds
# (seeds 0-2 and 3-4 as two benchmarks, merged: each seed's score is one draw, and both
# programs trained each seed beside the same seeds), plus the loss and gradients of both at
# equal parameters.
NAME=port-vs-official ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/port-vs-official/benchmark.db results/port-vs-official/equivalence.json
out=results/port-vs-official
work=${WORK:-benchmarks/port-vs-official}
mkdir -p "$out" "$work"
[ -f "$out/README.md" ] || printf '# Port vs official\n\n<!-- generated -->\n<!-- end generated -->\n' > "$out/README.md"
run() {  # run DIR FIRST_SEED SEEDS: one benchmark, resumed when DIR holds one
  if [ -f "$1/benchmark.db" ]; then
    "$PY" -m spark_jax.cli benchmark --resume "$1" --quiet
  else
    "$PY" -m spark_jax.cli benchmark official:triplet_gmpnn processors/triplet_gmpnn.py \
      --tasks clrs10 --first-seed "$2" --seeds "$3" --preset smoke --out "$1" --quiet
  fi
}
run "$work/seeds-0-2" 0 3
run "$work/seeds-3-4" 3 2
"$PY" scripts/port_equivalence.py "$out" --preset smoke --tasks clrs10
rm -f "$out/benchmark.db"
"$PY" scripts/port_vs_official.py "$out" --merge "$work/seeds-0-2/benchmark.db" \
  "$work/seeds-3-4/benchmark.db"

#!/usr/bin/env bash
# results/chaos-at-smoke: one smoke training run under 1e-7 perturbations of its initial
# parameters (dfs and articulation_points, 8 perturbations each, beside the unperturbed run).
NAME=chaos-at-smoke ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/chaos-at-smoke/spread.png
out=results/chaos-at-smoke
mkdir -p "$out"
[ -f "$out/README.md" ] || printf '# Chaos at the smoke preset\n\n<!-- generated -->\n<!-- end generated -->\n' > "$out/README.md"
"$PY" scripts/chaos_at_smoke.py "$out" --tasks dfs,articulation_points \
  --perturbations 8 --scale 1e-7 --seed 0 --preset smoke
rm -rf "$out/.xla-cache"
"$PY" scripts/chaos_table.py "$out" --plot

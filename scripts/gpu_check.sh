#!/usr/bin/env bash
# One-command accelerator check: one smoke evaluation of DeepMind's Triplet-GMPNN and one of
# our Flax port on the same task, seed and batches, then a summary line each: the device JAX
# ran on, compile seconds, steady-state steps/s, peak device memory, OOD score.
#   scripts/gpu_check.sh [TASK=dfs] [PRESET=smoke] [SEED=0]
# Runs on any JAX backend (GPU, TPU, or CPU for a dry run); nothing here is GPU-only.
set -euo pipefail
cd "$(dirname "$0")/.."
task="${1:-dfs}"; preset="${2:-smoke}"; seed="${3:-0}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
python - <<'PY'
import jax
devices = jax.devices()
print(f"backend {jax.default_backend()}: {len(devices)} device(s), {devices[0].device_kind}")
PY
for program in official:triplet_gmpnn processors/triplet_gmpnn.py; do
  name="$(basename "${program#official:}" .py)"
  [ "${program#official:}" != "$program" ] && name="official-$name" || name="ours-$name"
  "${SPARK_JAX:-spark-jax}" evaluate "$program" --task "$task" --preset "$preset" \
    --seed "$seed" --no-progress --json --output "$out/$name.json" > /dev/null
done
python - "$out" <<'PY'
import json, pathlib, sys
rows = {p.stem: json.loads(p.read_text()) for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json"))}
for name, r in rows.items():
    mem = "n/a" if r["device_peak_mb"] is None else f"{r['device_peak_mb']:.0f} MB"
    print(f"{name:>24}: compile {r['compile_seconds']:.1f} s, {r['steps_per_second']:.1f} steps/s,"
          f" peak device memory {mem}, OOD {r['ood_score']:.3f} ({r['task']}, {r['preset']})")
ours, official = rows["ours-triplet_gmpnn"], rows["official-triplet_gmpnn"]
print(f"steps/s ours/official: {ours['steps_per_second'] / official['steps_per_second']:.2f}")
PY

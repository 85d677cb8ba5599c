#!/usr/bin/env bash
# The issue's timed benchmark in one command: official Triplet-GMPNN vs our port on the paper's
# 10 tasks, 3 seeds, smoke preset, local workers (the seeds of a (program, task) train as one
# vmapped program; the jobs share one XLA compilation cache). Prints the benchmark's wall time
# and the job time (device time) per task, and writes them to OUT/timing.md beside the report.
# Time it on a quiet machine: a figure taken while other jobs share the cores is contended.
# Run again on the same OUT_DIR, it resumes the benchmark (`--resume`); each run's start and
# end go to OUT/segments.jsonl and the wall time is their sum (the pauses between are left out).
#
#   scripts/bench_clrs10.sh [OUT_DIR] [extra benchmark args, e.g. --workers 2 --sequential-seeds]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-benchmarks/clrs10-smoke-$(date +%Y%m%d-%H%M%S)}"
shift || true
SPARK="${SPARK_JAX:-spark-jax}"
start=$(date +%s)
if [ -f "$OUT/benchmark.db" ]; then
    $SPARK benchmark --resume "$OUT"
else
    $SPARK benchmark official:triplet_gmpnn processors/triplet_gmpnn.py --tasks clrs10 \
        --seeds 3 --preset smoke --out "$OUT" "$@"
fi
end=$(date +%s)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "{\"start\": $start, \"end\": $end, \"commit\": \"$commit\"}" >> "$OUT/segments.jsonl"
python3 - "$OUT" <<'PY'
import collections, csv, json, pathlib, platform, os, sys
out = pathlib.Path(sys.argv[1])
segments = [json.loads(l) for l in (out / "segments.jsonl").read_text().splitlines() if l]
wall = sum(s["end"] - s["start"] for s in segments)
rows = list(csv.DictReader((out / "results.csv").open()))
by_task = collections.defaultdict(float)
for r in rows:
    by_task[r["task"]] += float(r["wall_seconds"])
total = sum(by_task.values()) or float("nan")  # no job landed (all failed): no shares
runs = f"{len(segments)} runs" if len(segments) > 1 else "one run"
lines = [
    f"clrs10 x 3 seeds x 2 programs, smoke preset: wall {wall / 60:.1f} min (target <= 45; "
    f"{runs}), job time {total / 60:.1f} min; {platform.node()}, {os.cpu_count()} CPUs",
    "",
    "| task | job minutes | share |",
    "|---|---:|---:|",
]
for task, seconds in sorted(by_task.items(), key=lambda kv: -kv[1]):
    lines.append(f"| {task} | {seconds / 60:.1f} | {100 * seconds / total:.0f}% |")
text = "\n".join(lines)
print(text)
(out / "timing.md").write_text(text + "\n")
PY

#!/usr/bin/env bash
# results/decided: the default search's best program against its seed program (the programs
# of results/default-search) on clrs10, smoke, in the sequential mode (issue 49): the fixed
# 3-seed benchmark of results/default-search (seeds 100-102, disjoint from the search's seed 0)
# continued with `spark-jax benchmark --resume WORK --seeds auto --max-seeds 12`: identity
# checked before training, then 3 seeds per round for every undecided pair until win, loss,
# equivalent within +-5 pp, or cannot tell (at 12 seeds, or out of reach earlier). No editor in
# this benchmark (the programs come from an offline rule-based search: NOT an LLM result).
#
# It outlives one machine: the work (WORK, default benchmarks/decided) is checkpointed into
# results/.unfinished/decided (the benchmark database, a consistent SQLite snapshot, with the
# provenance and each part's machine in segments.json), and a run on a fresh checkout restores
# it and goes on; `--save` only writes the checkpoint again (while a run goes on: commit it as
# each round lands). When every pair is decided it writes results/decided and deletes the
# checkpoint. CPU cost on the 2-core VM: identity ~10 min, a round ~25 min per undecided task.
NAME=decided ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/decided/README.md
CHECKPOINT=results/.unfinished/decided
work=${WORK:-benchmarks/decided}
mkdir -p "$work"

snapshot() {  # snapshot DEST: the work's database (SQLite backup: consistent mid-write), report
  mkdir -p "$1/plots"
  "$PY" -c 'import sqlite3, sys; src = sqlite3.connect(sys.argv[1]); dst = sqlite3.connect(sys.argv[2]); src.backup(dst); dst.execute("PRAGMA journal_mode=DELETE"); dst.close()' \
    "$work/benchmark.db" "$1/benchmark.db.tmp"
  mv "$1/benchmark.db.tmp" "$1/benchmark.db"
  cp "$work/provenance.json" "$work/segments.json" "$1/"
  [ -f "$work/results.csv" ] && cp "$work/results.csv" "$1/"
  [ -f "$work/report.md" ] && cp "$work/report.md" "$1/benchmark.md"
  [ -d "$work/plots" ] && cp "$work/plots/"*.png "$1/plots/" 2>/dev/null || true
  "$PY" scripts/decided_table.py "$1"
}

if [ "$ARG" = "--save" ]; then snapshot "$CHECKPOINT"; exit 0; fi
if [ ! -f "$work/benchmark.db" ]; then
  if [ -f "$CHECKPOINT/benchmark.db" ]; then
    cp "$CHECKPOINT/benchmark.db" "$CHECKPOINT/provenance.json" "$CHECKPOINT/segments.json" "$work/"
  else
    cp results/default-search/benchmark.db "$work/benchmark.db"
  fi
fi
[ -f "$work/provenance.json" ] || "$PY" -c 'import json, sys, time; json.dump(dict(commit=sys.argv[1],
  started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
  continued_from="results/default-search/benchmark.db"), open(sys.argv[2], "w"))' \
  "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$work/provenance.json"
# This part's machine: host name, a hash of /etc/machine-id, the CPU, the commit, the start.
"$PY" -c 'import hashlib, json, os, pathlib, platform, sys, time
p = pathlib.Path(sys.argv[1]); parts = json.loads(p.read_text()) if p.exists() else []
mid = pathlib.Path("/etc/machine-id")
parts.append(dict(host=platform.node(), machine_id=hashlib.sha256(mid.read_bytes()).hexdigest()[:12]
  if mid.exists() else None, cpus=os.cpu_count(), commit=sys.argv[2],
  started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
p.write_text(json.dumps(parts, indent=1) + "\n")' "$work/segments.json" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$PY" -m spark_jax.cli benchmark --resume "$work" --seeds auto --max-seeds 12 \
  --seeds-per-round 3 --delta 5 --quiet
snapshot results/decided
rm -rf "$CHECKPOINT"

#!/usr/bin/env bash
# results/restructure-records: a benchmark and a comparison on `tiny` store the same records
# after issue 52's restructuring as before it (its target "a search, a benchmark and a
# comparison on tiny give the same records before and after"; the search's side is
# tests/test_pipeline_records.py). BEFORE (default 9b3e178, the restructuring's start) and
# AFTER (default HEAD) are checked out side by side under WORK; each runs this tree's
# tests/command_records.py (the commands: a two-program, two-task, two-seed benchmark and a
# SPARK/OpenEvolve comparison, budget 2, trained for real on this machine; about 15 minutes of
# CPU each on the 2-core VM), and the dumps are kept as per-table digests in data/.
# Floating point of training is this machine's: both sides must run on one machine.
NAME=restructure-records ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/restructure-records/data/before.json results/restructure-records/data/after.json
work=${WORK:-$ROOT/benchmarks/restructure-records}
out=results/restructure-records
mkdir -p "$work" "$out/data"
for side in before after; do
  if [ "$side" = before ]; then rev=${BEFORE:-9b3e178}; else rev=${AFTER:-HEAD}; fi
  commit=$(git rev-parse --short=7 "$rev")
  tree=$work/$side-tree
  [ -d "$tree" ] || git worktree add --detach "$tree" "$commit"
  git -C "$tree" checkout -q --detach "$commit"
  cp tests/command_records.py tests/pipeline_records.py "$tree/tests/"
  (cd "$tree" && PYTHONPATH=$tree "$PY" tests/command_records.py "$work/$side")
  PYTHONPATH=$ROOT "$PY" tests/command_records.py --digests "$work/$side" "$commit" "$out/data/$side.json"
done
"$PY" scripts/restructure_records_table.py "$out"

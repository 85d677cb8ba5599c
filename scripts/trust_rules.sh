#!/usr/bin/env bash
# Regenerates every before/after figure of issue 24 ("Verdicts a researcher can trust").
#
#   scripts/trust_rules.sh [OUT=results/trust-rules] [BEFORE=6648d88]
#
# Makes two throwaway git worktrees (BEFORE and HEAD), runs the same small commands in each
# (tiny preset, offline rule-based editor: NOT an LLM; JAX on whatever device is present), copies
# the small text outputs to OUT/before/<name>/ and OUT/after/<name>/ (no .db, no XLA caches),
# and the JSON records the table reads (spark_jax/results/trust_rules_records.py, run by path with
# each tree's code on PYTHONPATH: what that tree's own code computes from the stored outputs),
# then runs scripts/trust_rules_table.py OUT (figures.csv and the README's generated table).
# The probes that are no `spark-jax` command (the scripted budget scenario, the baseline
# prompts' vocabulary, the comparison's run summary) are spark_jax.results.trust_rules_probes
# for the HEAD side; the BEFORE side runs the stand-alone helpers written against its API,
# taken from git history (HELPERS, the last commit that kept them in results/trust-rules).
# Environment: PYTHON (default: python3; must have spark-jax's dependencies installed).
# CPU cost on a 2-core VM: roughly 30 to 60 minutes per side (the compares dominate).
set -euo pipefail

REPO=$(git rev-parse --show-toplevel)
OUT=$(realpath -m "${1:-$REPO/results/trust-rules}")
BEFORE=${2:-6648d88}
PY=${PYTHON:-python3}
HERE_RESULTS="$REPO/results/trust-rules"   # the configs live here
HELPERS=1167aea   # results/trust-rules/{dup_demo,vocab}.py for the BEFORE tree's API
WORK=$(mktemp -d "${TMPDIR:-/tmp}/trust-rules.XXXXXX")
WT_BEFORE="$WORK/tree-before"
WT_AFTER="$WORK/tree-after"

cleanup() {
    git -C "$REPO" worktree remove --force "$WT_BEFORE" 2>/dev/null || true
    git -C "$REPO" worktree remove --force "$WT_AFTER" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

git -C "$REPO" worktree add --detach "$WT_BEFORE" "$BEFORE" >/dev/null
git -C "$REPO" worktree add --detach "$WT_AFTER" HEAD >/dev/null
echo "before: $(git -C "$WT_BEFORE" log --oneline -1)"
echo "after:  $(git -C "$WT_AFTER" log --oneline -1)"

# sj TREE ARGS...: spark-jax from TREE (its code first on PYTHONPATH), cwd TREE.
sj() {
    local tree=$1
    shift
    (cd "$tree" && PYTHONPATH="$tree" "$PY" -m spark_jax.cli "$@")
}

# record TREE ARGS...: a JSON record from trust_rules_records.py, with TREE's code imported.
RECORDS="$REPO/spark_jax/results/trust_rules_records.py"
record() {
    local tree=$1
    shift
    (cd "$tree" && PYTHONPATH="$tree" "$PY" -P "$RECORDS" "$@")
}

# keep SRC DEST FILES...: copy the small text files that exist.
keep() {
    local src=$1 dest=$2
    shift 2
    mkdir -p "$dest"
    for f in "$@"; do
        if [ -f "$src/$f" ]; then cp "$src/$f" "$dest/"; fi
    done
}

# The search behind the selection benchmark: run once, with HEAD's code, shared by both sides
# (its seeds are what the benchmark must avoid).
RUN_DFS="$WORK/run-dfs"
sj "$WT_AFTER" search --config "$HERE_RESULTS/configs/tiny-dfs.yaml" --run-dir "$RUN_DFS" \
    --no-progress 2>&1 | tee "$WORK/run-dfs.log"
mkdir -p "$OUT/input/run-dfs"
keep "$RUN_DFS" "$OUT/input/run-dfs" report.md config.yaml
cp "$WORK/run-dfs.log" "$OUT/input/run-dfs/log.txt"

for side in before after; do
    if [ "$side" = before ]; then tree=$WT_BEFORE; else tree=$WT_AFTER; fi
    dst="$OUT/$side"
    tmp="$WORK/$side"
    mkdir -p "$tmp"

    # Statistics: 1 seed (cannot tell) and 2 seeds (exact test, Holm).
    for n in 1 2; do
        name="stats-${n}seed"
        [ "$n" = 2 ] && name="stats-2seeds"
        sj "$tree" benchmark official:triplet_gmpnn processors/mpnn.py --tasks bfs,dfs \
            --seeds "$n" --preset tiny --out "$tmp/$name" 2>&1 | tee "$tmp/$name.log"
        keep "$tmp/$name" "$dst/$name" report.md results.csv
        cp "$tmp/$name.log" "$dst/$name/log.txt"
        record "$tree" comparison "$dst/$name/results.csv" >"$dst/$name/comparison.json"
    done
    mkdir -p "$dst/reference"
    record "$tree" reference --preset tiny >"$dst/reference/clrs-row.json"

    # Selection: benchmark of a finished run (seeds disjoint from the search's).
    sj "$tree" benchmark "$RUN_DFS" --tasks dfs --seeds 2 --preset tiny --out "$tmp/bench-run" \
        2>&1 | tee "$tmp/bench-run.log"
    keep "$tmp/bench-run" "$dst/bench-run" report.md results.csv

    # Selection: classify (breast_cancer) selects on a validation split.
    sj "$tree" search --config "$HERE_RESULTS/configs/tiny-bc.yaml" --run-dir "$tmp/classify-bc" \
        --no-progress 2>&1 | tee "$tmp/classify-bc.log"
    keep "$tmp/classify-bc" "$dst/classify-bc" report.md config.yaml
    cp "$tmp/classify-bc.log" "$dst/classify-bc/log.txt"
    record "$tree" selection "$tmp/classify-bc" >"$dst/classify-bc/selection.json"

    # Budget, duplicates, equal attempts: compare under one budget and one attempt cap.
    sj "$tree" compare --methods spark,openevolve --seeds 1 --preset tiny --budget 2 \
        --max-attempts 5 --out "$tmp/budget" 2>&1 | tee "$tmp/budget.log"
    keep "$tmp/budget" "$dst/budget" report.md compare.json
    cp "$tmp/budget.log" "$dst/budget/log.txt"
    (cd "$REPO" && "$PY" -m spark_jax.results.trust_rules_probes run-summary "$tmp/budget") \
        >"$dst/budget/summary.txt"

    # Scripted duplicate / NaN / best-at-budget scenario (no training, no LLM), and the
    # baseline prompts' SPARK vocabulary (a loopback OpenAI-compatible server; no LLM).
    mkdir -p "$dst/dup-demo" "$dst/vocab"
    if [ "$side" = before ]; then
        git -C "$REPO" show "$HELPERS:results/trust-rules/dup_demo.py" >"$WORK/dup_demo.py"
        git -C "$REPO" show "$HELPERS:results/trust-rules/vocab.py" >"$WORK/vocab.py"
        (cd "$tree" && PYTHONPATH="$tree" "$PY" "$WORK/dup_demo.py" "$tree") \
            >"$dst/dup-demo/output.txt" 2>&1
        (cd "$tree" && PYTHONPATH="$tree" "$PY" "$WORK/vocab.py") >"$dst/vocab/output.txt" 2>&1
    else
        for probe in scripted-budget vocabulary; do
            name=dup-demo
            [ "$probe" = vocabulary ] && name=vocab
            (cd "$tree" && PYTHONPATH="$tree" "$PY" -m spark_jax.results.trust_rules_probes \
                "$probe" "$tree") >"$dst/$name/output.txt" 2>&1
        done
    fi
done

# The four baselines under the offline editor (after only: the reference for what offline
# analogues can show; no before counterpart is cited).
sj "$WT_AFTER" compare --methods openevolve,funsearch,eoh,evoprompting --seeds 1 \
    --config "$HERE_RESULTS/configs/tiny-bfs-baselines.yaml" --budget 3 --max-attempts 4 \
    --out "$WORK/baselines-compare" 2>&1 | tee "$WORK/baselines-compare.log"
keep "$WORK/baselines-compare" "$OUT/after/baselines-compare" report.md compare.json
cp "$WORK/baselines-compare.log" "$OUT/after/baselines-compare/log.txt"

(cd "$REPO" && "$PY" scripts/trust_rules_table.py "$OUT")
echo "wrote $OUT"

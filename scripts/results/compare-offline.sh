#!/usr/bin/env bash
# results/compare-offline: every method's offline analogue (SPARK, global rewrite, OpenEvolve,
# EvoPrompting, FunSearch, EoH) at the same budget (4 evaluated candidates, 12 attempts, the
# embedded default's), 3 search seeds, on the embedded default's task and protocol (dfs,
# smoke: configs/default.yaml): valid rate, entanglement rate, best at budget with its spread,
# every method against SPARK with Holm. Rule-based editors: NOT an LLM result.
# Resumable: the comparison lives in WORK (default benchmarks/compare-offline) until it has
# finished and been copied. CPU cost on the 2-core VM: 18 searches, two at a time, each
# running the common attempt cap of 12 (every method the same; the budget does not stop a
# run) and then its final test of seed and best: about 8 hours quiet, and several
# sessions of background time when other runs share the machine (run it again to resume).
NAME=compare-offline ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/compare-offline/data/run.json
out=results/compare-offline
mkdir -p "$out"
[ -f "$out/README.md" ] || cat > "$out/README.md" <<'MD'
# Every method's offline analogue at the same budget

**Label.** `smoke`; the CPU it ran on (below); offline rule-based editors and the baselines'
offline analogues, NOT an LLM result.

**Question.** Under one protocol and one budget, how do the methods' search machineries
(SPARK's factor-scoped steps, a global rewrite, OpenEvolve, EvoPrompting, FunSearch, EoH)
differ in valid rate, entanglement and best score at budget, when no LLM is involved?

**Answer.** Read the generated table and verdicts below (the verdicts use Holm over the
methods, and say `cannot tell` when 3 search seeds cannot).

## Protocol

`scripts/results/compare-offline.sh` (through `scripts/controls_offline.sh`), then
`python scripts/compare_table.py results/compare-offline` (the block below, from `data/`).

<!-- generated -->
<!-- end generated -->
MD
WORK=${WORK:-$ROOT/benchmarks/compare-offline} \
  METHODS=spark,global-rewrite,openevolve,evoprompting,funsearch,eoh CONFIG=configs/default.yaml \
  SEEDS=3 JOBS=2 PYTHON="$PY" scripts/controls_offline.sh "$out" 4 12

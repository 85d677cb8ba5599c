#!/usr/bin/env bash
# The real-model trained run (issue 28, part 3), from the repository root.
#
#   scripts/llm_trained.sh run      # the searches: model agents answer the queue
#   scripts/llm_trained.sh table    # rewrite results/llm-trained/README.md's generated block
#
# SPARK vs OpenEvolve (diff mode) and the two sampling controls (`sample`, `sequential`, both
# full rewrites), 2 search seeds each, dfs, seed program triplet_gmpnn, smoke
# preset, budget B = 8 evaluated candidates (seed included), 10 proposal attempts per search,
# selection on validation (`ood_val`); each search's seed and best are retrained and scored on
# the test set after the search (results/llm-trained/config.yaml). Every prompt goes to
# $SPARK_LLM_QUEUE/pending/ (scripts/llm_queue_model.py); model agents answer it following
# $SPARK_LLM_BRIEF (default scripts/llm_model_brief.md, version 3; the recorded run answered
# under versions 1 and 2, see results/llm-trained/README.md), and the channel records per call
# the answerer, the brief's version and the answer's time, flagging answers faster than the
# brief's bound. Re-running `run` with the same WORK resumes: finished
# searches are kept, unfinished ones resumed.
#
# Environment: PY (python with spark-jax; default python), SPARK_LLM_QUEUE (default
# ./llm-queue-trained), SPARK_LLM_BRIEF (default scripts/llm_model_brief.md), WORK (the comparison directory; default ./llm-trained-work), JOBS
# (searches at once, default 4), OUT (default results/llm-trained), METHODS (default
# spark,openevolve,sample,sequential; a WORK holds one set of methods).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python}
export SPARK_LLM_QUEUE=${SPARK_LLM_QUEUE:-$PWD/llm-queue-trained}
export SPARK_LLM_BRIEF=${SPARK_LLM_BRIEF:-$PWD/scripts/llm_model_brief.md}
WORK=${WORK:-$PWD/llm-trained-work}
JOBS=${JOBS:-4}
OUT=${OUT:-results/llm-trained}
METHODS=${METHODS:-spark,openevolve,sample,sequential}
ARGS=(--methods "$METHODS" --seeds 2 --config results/llm-trained/config.yaml --budget 8
      --max-attempts 10)

copy_data() {  # the comparison's record into OUT/data: databases, cassettes, report, plots
  "$PY" scripts/compare_copy.py "$WORK" "$OUT/data"
  rm -rf "$OUT/unclear"
  # The agents' notes on prompts of these searches only, with an index naming each one's call.
  "$PY" - "$SPARK_LLM_QUEUE" "$WORK" "$OUT/unclear" <<'PYEOF'
import pathlib, sqlite3, sys
queue, work, dest = map(pathlib.Path, sys.argv[1:])
calls = []
for db in sorted(work.glob("*/seed-*/run.db")):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT attempt, role, prompt, response FROM llm_calls")
    for attempt, role, prompt, response in rows:
        name = f"`{db.parts[-3]}` {db.parts[-2]} attempt {attempt} {role}"
        calls.append((name, prompt.strip(), (response or "").strip()))
    con.close()
dest.mkdir(parents=True)
rows = []
for note in sorted((queue / "unclear").glob("*.txt")):
    asked = sorted(queue.glob(f"claimed/*/{note.stem}.md"))
    text = asked[0].read_text(encoding="utf-8") if asked else ""
    owners = [(name, said) for name, prompt, said in calls if prompt and prompt in text]
    answer = queue / "answers" / f"{note.stem}.md"  # the same prompt asked again: its answer
    said = answer.read_text(encoding="utf-8").strip() if answer.is_file() else None
    owners = [n for n, a in owners if a == said] or [n for n, _ in owners]
    if owners:
        (dest / note.name).write_bytes(note.read_bytes())
        rows.append(f"| [{note.stem}]({note.name}) | {'; '.join(owners)} |")
(dest / "README.md").write_text("\n".join([
    "# What the agents found unclear, by prompt", "",
    "One file per prompt: the agent's own note. The call it belongs to (method, search seed,",
    "attempt, role) is found by the prompt text each run database records.", "",
    "| prompt | call(s) |", "|---|---|", *rows]) + "\n", encoding="utf-8")
PYEOF
}

case "${1:-}" in
  run)
    mkdir -p "$SPARK_LLM_QUEUE"/{pending,claimed,answers,unclear}
    start=$(date +%s)
    "$PY" -m spark_jax.cli compare "${ARGS[@]}" --jobs "$JOBS" --out "$WORK"
    end=$(date +%s)
    copy_data
    cat >"$OUT/data/run.json" <<JSON
{"command": "spark-jax compare ${ARGS[*]} --jobs $JOBS",
 "commit": "$(git rev-parse --short HEAD)",
 "date_utc": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "wall_seconds": $((end - start)),
 "host": "$(uname -n) ($(uname -m), $(nproc) CPUs)"}
JSON
    "$PY" scripts/compare_table.py "$OUT"
    "$PY" scripts/llm_account.py "$OUT"
    ;;
  table)
    "$PY" scripts/compare_table.py "$OUT"
    "$PY" scripts/llm_account.py "$OUT"
    ;;
  *)
    sed -n '2,17p' "$0"
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Every canonical experiment of results/, skipping the finished ones (FORCE=1: rerun all),
# then the README's Results table. Ends with one line per experiment: ran, finished earlier,
# skipped (what it needs) or failed; exits 1 if any failed.
#   scripts/results/all.sh            PY=python of the environment (default python3)
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-${PYTHON:-python3}}
status=()
rc=0
for script in scripts/results/*.sh; do
  name=$(basename "$script" .sh)
  case "$name" in all | _lib) continue ;; esac
  if [ "${FORCE:-0}" != 1 ] && bash "$script" --done; then
    status+=("$name: finished earlier, kept")
    continue
  fi
  echo "== $name" >&2
  bash "$script"
  code=$?
  case $code in
    0) status+=("$name: ran") ;;
    3) status+=("$name: skipped (see the line above)") ;;
    *) status+=("$name: failed (exit $code)"); rc=1 ;;
  esac
done
"$PY" scripts/results_index.py || rc=1
printf '%s\n' "${status[@]}"
exit $rc

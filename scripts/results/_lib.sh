# Shared by scripts/results/*.sh (sourced, never run). Each experiment script:
#   scripts/results/NAME.sh          regenerate results/NAME from nothing
#   scripts/results/NAME.sh --done   exit 0 when results/NAME holds a finished run
# and exits 3 with one line naming what it needs (a GPU, a model) when that is missing.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
PY=${PY:-${PYTHON:-python3}}
export PY PYTHON=$PY

done_if() {  # done_if FILE...: with --done, exit 0 when every FILE exists, else 1
  if [ "${ARG:-}" = "--done" ]; then
    for f in "$@"; do [ -e "$f" ] || exit 1; done
    exit 0
  fi
}

needs() {  # needs WHAT: exit 3 with one line
  echo "skipped: $NAME needs $1" >&2
  exit 3
}

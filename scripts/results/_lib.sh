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

rollback_mode() {  # rollback_mode DB: a committed SQLite file out of WAL mode (a read-only
  # reader of a WAL database leaves -shm/-wal files beside it, which would then be committed)
  "$PY" -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode=DELETE")' "$1"
}

needs() {  # needs WHAT: exit 3 with one line
  echo "skipped: $NAME needs $1" >&2
  exit 3
}

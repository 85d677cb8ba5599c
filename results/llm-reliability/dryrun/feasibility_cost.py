#!/usr/bin/env python3
"""Per-attempt cost of the harness itself (no model time) in a dry run's comparisons.

    python results/llm-reliability/dryrun/feasibility_cost.py RUNS_ROOT

For each run under RUNS_ROOT/*/METHOD/seed-0: attempts, the feasibility check's own time
per checked attempt (`total_s` of its report: median and max), and the run's wall time
(database started_at to finished_at, the sandbox start included) minus the summed LLM
latency, per attempt. With attempts in flight at once the LLM latencies overlap, so that
last figure is a lower bound of the harness cost.
"""

from __future__ import annotations

import pathlib
import statistics
import sys

from spark_jax.search.rundb import RunDB


def main(root: str) -> int:
    print("| run | attempts | feasibility s / checked attempt: median (max) | "
          "(wall - LLM latency) / attempt s |")
    print("|---|---|---|---|")
    for db in sorted(pathlib.Path(root).glob("*/*/seed-0/run.db")):
        with RunDB.open(db) as run:
            rows = run.proposals()
            wall = run.get_meta("finished_at") - run.get_meta("started_at")
        checks = [p.feasibility.total_seconds for p in rows if p.feasibility is not None]
        latency = sum(c.latency_s for p in rows for c in p.calls)
        check = f"{statistics.median(checks):.1f} ({max(checks):.1f})" if checks else "—"
        print(f"| {db.parts[-4]}/{db.parts[-3]} | {len(rows)} | {check} | "
              f"{(wall - latency) / len(rows):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

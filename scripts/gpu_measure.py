#!/usr/bin/env python3
"""Accelerator measurements behind results/gpu/: one JSON line per measurement.

    python scripts/gpu_measure.py OUT_JSONL PHASE [PHASE ...]

Phases: env, check:PRESET[:STEPS], workers:W[:PRESET[:STEPS]], seeds:K[:PRESET[:STEPS]],
bench:SEED[:PRESET], search[:BUDGET:WORKERS]; what each measures: `spark_jax.perf.gpu_measure`.
SPARK_JAX_DEADLINE_S (seconds from the start) bounds the search phase.
"""

from __future__ import annotations

import sys
from pathlib import Path

from spark_jax.perf import gpu_measure


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        gpu_measure.measure(Path(argv[0]), argv[1:])
    except gpu_measure.UnknownPhase as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Carries an unfinished `spark-jax compare` directory from one machine to the next.

    python scripts/compare_checkpoint.py save COMPARE_DIR CHECKPOINT_DIR
    python scripts/compare_checkpoint.py restore CHECKPOINT_DIR COMPARE_DIR
    python scripts/compare_checkpoint.py finish CHECKPOINT_DIR DATA_DIR
    python scripts/compare_checkpoint.py begin COMPARE_DIR

What each verb does: `spark_jax.compare.checkpoint` (used by scripts/results/compare-offline.sh
and intensify.sh).
"""

from __future__ import annotations

import pathlib
import sys

from spark_jax.compare import checkpoint


def main(argv: list[str]) -> int:
    verb = argv[0] if argv else ""
    try:
        lines = checkpoint.carry(verb, [pathlib.Path(a) for a in argv[1:]])
    except checkpoint.UsageError:
        sys.exit(__doc__.split("\n\n")[1].strip())
    except checkpoint.CheckpointError as e:
        sys.exit(f"compare_checkpoint {verb}: {e}")
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

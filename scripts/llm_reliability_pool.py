#!/usr/bin/env python3
"""Writes the reliability experiment's parent pool from a finished search's database.

    python scripts/llm_reliability_pool.py RUN_DIR results/llm-reliability/parents

What it writes: `spark_jax.compare.pool` (NAME.py per program and pool.json).
"""

from __future__ import annotations

import pathlib
import sys

from spark_jax.compare import pool


def main(run_dir: str, out_dir: str) -> int:
    path, programs = pool.write_pool(pathlib.Path(run_dir), pathlib.Path(out_dir))
    print(f"{programs} programs -> {path}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))

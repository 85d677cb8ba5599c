#!/usr/bin/env python3
"""Copies one `spark-jax compare` directory's record into a results folder's data/.

    python scripts/compare_copy.py COMPARE_DIR DATA_DIR [EXTRA_FILE...]

What is copied: `spark_jax.compare.export` (used by scripts/controls_offline.sh,
scripts/llm_trained.sh and scripts/results/intensify.sh).
"""

from __future__ import annotations

import pathlib
import sys

from spark_jax.compare import export


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.exit(__doc__.split("\n\n")[1].strip())
    src, dest, *extras = (pathlib.Path(a) for a in argv)
    try:
        export.copy_comparison(src, dest, extras)
    except export.NotAComparison as e:
        sys.exit(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

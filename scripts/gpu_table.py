#!/usr/bin/env python3
"""Writes results/gpu/README.md's generated tables and Answer from the JSON lines of
gpu_measure.py (`spark_jax.results.gpu`).

    python scripts/gpu_table.py [RESULTS_DIR]        (default: results/gpu)
"""

import sys

from spark_jax.results.gpu import main

if __name__ == "__main__":
    sys.exit(main())

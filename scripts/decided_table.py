"""Writes results/decided/README.md from its data (`spark_jax.results.decided`).

Usage: python scripts/decided_table.py [results/decided]
"""

import sys

from spark_jax.results import decided

if __name__ == "__main__":
    sys.exit(decided.main(sys.argv[1:]))

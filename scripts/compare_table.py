"""Writes a compare results folder's runs.csv and README block (`spark_jax.results.comparison`).

Usage: python scripts/compare_table.py OUT   (e.g. results/controls-offline)
"""

import sys

from spark_jax.results import comparison

if __name__ == "__main__":
    sys.exit(comparison.main(sys.argv[1:]))

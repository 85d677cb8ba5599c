"""Writes results/families/README.md's generated parts from its data (`spark_jax.results.families`).

Usage: python scripts/families_table.py [results/families] [--plot]

`--plot` also draws OUT/retest.png (each row's fresh-seed pairs and verdict).
"""

import sys

from spark_jax.results import families

if __name__ == "__main__":
    sys.exit(families.main(sys.argv[1:]))

"""Writes results/intensify/README.md's table and answer from its two comparisons
(`spark_jax.results.intensify`).

Usage: python scripts/intensify_table.py [results/intensify]
"""

import sys

from spark_jax.results import intensify

if __name__ == "__main__":
    sys.exit(intensify.main(sys.argv[1:]))

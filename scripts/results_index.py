"""Writes the README's Results table from the results folders (`spark_jax.results.index`).

Usage: python scripts/results_index.py [--check] [README]   (README defaults to ./README.md)
"""

import sys

from spark_jax.results import index

if __name__ == "__main__":
    sys.exit(index.main(sys.argv[1:]))

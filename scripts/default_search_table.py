"""Writes results/default-search/README.md from its data (`spark_jax.results.default_search`).

Usage: python scripts/default_search_table.py [results/default-search]
"""

import sys

from spark_jax.results import default_search

if __name__ == "__main__":
    sys.exit(default_search.main(sys.argv[1:]))

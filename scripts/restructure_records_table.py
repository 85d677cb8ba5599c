"""Writes results/restructure-records/README.md's table and answer from its two digest files
(`spark_jax.results.restructure_records`).

Usage: python scripts/restructure_records_table.py [results/restructure-records]
"""

import sys

from spark_jax.results import restructure_records

if __name__ == "__main__":
    sys.exit(restructure_records.main(sys.argv[1:]))

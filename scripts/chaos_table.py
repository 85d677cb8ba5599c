"""Writes results/chaos-at-smoke's tables and answer from its runs.csv
(`spark_jax.results.chaos_at_smoke`).

    python scripts/chaos_table.py [OUT] [--plot]     (OUT defaults to results/chaos-at-smoke)

`--plot` also draws OUT/spread.png.
"""

import sys

from spark_jax.results import chaos_at_smoke

if __name__ == "__main__":
    sys.exit(chaos_at_smoke.main(sys.argv[1:]))

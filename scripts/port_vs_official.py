#!/usr/bin/env python3
"""results/port-vs-official: our Flax Triplet-GMPNN against DeepMind's, on clrs10
(`spark_jax.results.port_vs_official`).

    python scripts/port_vs_official.py RESULTS_DIR [--merge PART.db ...]

`--merge` joins benchmark databases of the same programs, tasks and preset run with disjoint
seeds into RESULTS_DIR/benchmark.db; then the report, results.csv, plot and the README's
generated block and answer are written from that database alone.
"""

import sys

from spark_jax.results import port_vs_official

if __name__ == "__main__":
    sys.exit(port_vs_official.main(sys.argv[1:]))

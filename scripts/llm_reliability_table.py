#!/usr/bin/env python3
"""Regenerates the reliability table of results/llm-reliability/README.md from the runs
(`spark_jax.results.llm_reliability`).

    python scripts/llm_reliability_table.py [--readme README.md] [--plot PNG] [--check] COMPARE_DIR...
    python scripts/llm_reliability_table.py [--check] RESULTS_DIR
    python scripts/llm_reliability_table.py --harness-cost RUNS_ROOT

(the second form: RESULTS_DIR/record/main and RESULTS_DIR/record/others into
RESULTS_DIR/README.md and RESULTS_DIR/rates.png, e.g.
`python scripts/llm_reliability_table.py results/llm-reliability`; the third: the harness's
own cost per attempt in a dry run's comparisons, as in results/llm-reliability/dryrun.)
"""

import sys

from spark_jax.results.llm_reliability import main

if __name__ == "__main__":
    sys.exit(main())

"""Before/after figures of results/trust-rules (`spark_jax.results.trust_rules`): figures.csv,
the README's generated table and its Answer, each figure read from the folder's copied outputs.

Usage: python scripts/trust_rules_table.py [OUT]   (OUT defaults to results/trust-rules)
"""

import sys

from spark_jax.results.trust_rules import main

if __name__ == "__main__":
    sys.exit(main())

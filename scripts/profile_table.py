"""Regenerates the tables of a profile folder from its data (`spark_jax.results.profile`): each
`profile-*.json` into its `profile-*.md`, the summary between the README's generated markers,
the bench, clrs10, feasibility, workers, identity and seed-mode blocks where the README has
their markers, and the Answer.

    python scripts/profile_table.py results/bench
"""

import sys

from spark_jax.results.profile import main

if __name__ == "__main__":
    sys.exit(main())

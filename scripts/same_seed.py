"""One smoke training, the same program, task, preset and seed, on two machines: does it give
the same figures? results/same-seed-machines (`spark_jax.results.same_seed_machines`).

    python scripts/same_seed.py OUT --run [--commit C]   # train seeds 0-2 on this machine
    python scripts/same_seed.py OUT                      # OUT/runs.csv and the README block
"""

import sys

from spark_jax.results import same_seed_machines

if __name__ == "__main__":
    sys.exit(same_seed_machines.main(sys.argv[1:]))

"""CartPole-v1 at a preset: the seed policy, then a short offline-catalogue hill climb
(`spark_jax.perf.cartpole_climb`; not the SPARK search loop). Prints one row per candidate and
the seed/best rows shaped like the paper's table, validation and test returns labelled.

    python scripts/cartpole_smoke.py --preset smoke --budget 6
"""

from __future__ import annotations

import argparse

from spark_jax.perf.cartpole_climb import climb
from spark_jax.plugins.cartpole.ppo import PRESETS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="smoke", choices=sorted(PRESETS))
    ap.add_argument("--budget", type=int, default=6, help="candidates after the seed")
    ap.add_argument("--seed", type=int, default=0, help="the editor's seed")
    args = ap.parse_args()
    climb(args.preset, args.budget, args.seed)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Equal parameters, equal function: our Flax Triplet-GMPNN port against DeepMind's model.

    python scripts/port_equivalence.py RESULTS_DIR [--preset smoke] [--tasks clrs10]

Writes RESULTS_DIR/equivalence.json (`spark_jax.results.port_equivalence`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spark_jax.results import port_equivalence


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--tasks", default="clrs10")
    args = parser.parse_args(argv)
    try:
        port_equivalence.write_equivalence(args.results, args.preset, args.tasks)
    except port_equivalence.PortMismatch as e:
        sys.exit(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

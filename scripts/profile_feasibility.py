#!/usr/bin/env python3
"""Where the feasibility check of an unseen program spends its time.

    python scripts/profile_feasibility.py OUT_JSON [--preset smoke] [--programs 3] [--label TEXT]

What it measures: `spark_jax.perf.feasibility_profile`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spark_jax.perf.feasibility_profile import profile_feasibility


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--programs", type=int, default=3)
    parser.add_argument("--label", default="")
    args = parser.parse_args(argv)
    profile_feasibility(args.out, args.preset, args.programs, args.label)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Where one evaluation's time goes: compile per executable, training steps, scoring per
batch, host<->device, and how much of the validation and test scoring is hint padding.

    python scripts/profile_evaluation.py --task dfs --preset smoke \
        --label "contended 2-core CPU, shared with other jobs" --out results/bench/profile.md

Prints a Markdown table (`spark_jax.perf.profile.profile_to_files`); `--out` appends it to a
file and `--json` writes the raw figures beside it. Numbers on a shared machine are contended: read
the proportions.
"""

from __future__ import annotations

import argparse

from spark_jax.config import assets, protocol
from spark_jax.perf import profile


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--program", default=str(assets.seed_program_path("triplet_gmpnn")))
    p.add_argument("--task", default="dfs")
    p.add_argument("--preset", default="smoke")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--steps", type=int, default=30, help="training steps timed")
    p.add_argument(
        "--no-buckets", action="store_true", help="padded validation/test sets (the old path)"
    )
    p.add_argument("--label", default="", help="machine and conditions, printed in the title")
    p.add_argument("--out", help="append the table to this Markdown file")
    p.add_argument("--json", help="write the raw figures to this JSON file")
    args = p.parse_args()
    text = profile.profile_to_files(
        args.program,
        args.task,
        protocol.get_preset(args.preset),
        args.seed,
        args.steps,
        buckets=not args.no_buckets,
        label=args.label,
        out=args.out,
        json_path=args.json,
    )
    print(text)


if __name__ == "__main__":
    main()

"""The sequential mode's flags, shared by `benchmark` and `compare`: `--seeds auto` and the
design (`--max-seeds`, `--seeds-per-round`, `--delta`, `--alpha`), read into the design's
fields (`spark_jax.stats.sequential.Design`)."""

from __future__ import annotations

import argparse
from typing import Callable

__all__ = ["add_design_args", "design_fields"]


def add_design_args(p: argparse.ArgumentParser, unit: str) -> None:
    """Adds the design flags; `unit`: what a seed is ('seeds per (program, task)', ...)."""
    p.add_argument(
        "--max-seeds",
        type=int,
        default=12,
        help=f"with --seeds auto: the cap of {unit} (default 12)",
    )
    p.add_argument(
        "--seeds-per-round",
        type=int,
        default=3,
        help="with --seeds auto: seeds added per round (default 3)",
    )
    p.add_argument(
        "--delta",
        type=float,
        default=5.0,
        help="with --seeds auto: equivalence margin, pp of OOD accuracy (default 5)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="with --seeds auto: family-wise rate of false claims over the table (default 0.05)",
    )


def design_fields(
    args: argparse.Namespace, error: Callable[[str], Exception] = ValueError
) -> dict | None:
    """The design's fields from the flags; None in the fixed-seed mode (`--seeds` a number).
    Raises `error` (a command's own usage error; default ValueError) with a one-line message
    naming the bad value."""
    if args.seeds != "auto":
        try:
            int(args.seeds)
        except ValueError:
            raise error(f"--seeds must be a number or 'auto' (got {args.seeds!r})") from None
        return None
    from spark_jax.stats import sequential

    fields = {
        "alpha": args.alpha,
        "delta": args.delta,
        "seeds_per_round": args.seeds_per_round,
        "max_seeds": args.max_seeds,
    }
    try:
        sequential.Design(**fields)
    except ValueError as e:
        raise error(f"sequential design: {e}") from None
    return fields

"""`spark-jax bench [--task T] [--preset P] [--steps N] [--json]`: performance ratios of our
training loop, feasibility checker and search pipeline against the official CLRS loop
(the measurements live in `spark_jax.bench`).

Exit codes: 0 measured, 2 usage error.
"""

from __future__ import annotations

import argparse
import json

from spark_jax.cli.errors import EXIT_OK, UsageError, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `bench` subcommand to `sub`."""
    p = sub.add_parser("bench", help="performance ratios vs the official CLRS implementation")
    p.add_argument("--task", default="dfs")
    p.add_argument("--preset", default="smoke")
    p.add_argument("--steps", type=int, default=100, help="timed training steps per side")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument(
        "--skip-pipeline",
        action="store_true",
        help="skip the evaluator-busy figure (runs a short search on bfs)",
    )
    p.add_argument(
        "--skip-feasibility",
        action="store_true",
        help="skip the feasibility-vs-evaluation ratio (it runs one full evaluation)",
    )
    p.add_argument("--json", action="store_true")
    return p


def run(args: argparse.Namespace) -> int:
    """Runs `bench`; returns the exit code."""
    from spark_jax.config import protocol, tasks

    try:
        cfg = protocol.get_preset(args.preset)
        tasks.check_task(args.task)
        if args.steps < 1:
            raise UsageError("--steps must be >= 1")
    except (protocol.ConfigError, tasks.TaskError, UsageError) as e:
        return fail(str(e))
    from spark_jax.bench import training

    report = training.run_bench(
        args.task,
        cfg,
        steps=args.steps,
        seed=args.seed,
        with_feasibility=not args.skip_feasibility,
        with_pipeline=not args.skip_pipeline,
    )
    print(json.dumps(report) if args.json else training.format_report(report))
    return EXIT_OK

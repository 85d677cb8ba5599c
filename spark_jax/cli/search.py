"""`spark-jax search [--config F] [--run-dir D] [--seed S]` and `spark-jax search --resume D`:
run or continue a SPARK search, then write its report. With no arguments: the embedded
default config (see `spark_jax.config.search`).

Exit codes: 0 the search finished, 1 it failed (`SearchError`), 2 usage error.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

from spark_jax.cli.errors import EXIT_FAILED, EXIT_OK, UsageError, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `search` subcommand to `sub`."""
    p = sub.add_parser(
        "search",
        help="run (or resume) a SPARK search; no arguments: the "
        "embedded default (dfs, smoke, offline editor, CPU)",
    )
    p.add_argument("--config", help="YAML search config (see spark_jax/config/search.py)")
    p.add_argument("--run-dir", help="where to write the run (default: runs/<task>-<time>)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue an interrupted run")
    p.add_argument("--seed", type=int, help="override the config's seed")
    p.add_argument("--no-progress", action="store_true")
    return p


def _resolve(args: argparse.Namespace):
    """The config and run directory the arguments ask for; raises UsageError/ConfigError."""
    from spark_jax.config import search as search_config

    if args.resume:
        if args.config or args.run_dir or args.seed is not None:
            raise UsageError(
                "--resume takes the run's stored config: do not combine it "
                "with --config, --run-dir or --seed"
            )
        stored = pathlib.Path(args.resume) / "config.yaml"
        if not stored.is_file():
            raise UsageError(f"nothing to resume: {stored} does not exist")
        return search_config.load(stored), args.resume
    cfg = search_config.load(args.config) if args.config else search_config.default_config()
    if args.seed is not None:
        cfg = search_config.with_seed(cfg, args.seed)
    run_dir = args.run_dir or f"runs/{cfg.task}-{time.strftime('%Y%m%d-%H%M%S')}"
    return cfg, run_dir


def run(args: argparse.Namespace) -> int:
    """Runs `search`; returns the exit code."""
    from spark_jax.config.protocol import ConfigError

    try:
        cfg, run_dir = _resolve(args)
    except (ConfigError, UsageError) as e:
        return fail(str(e))

    from spark_jax.cli.progress import search_progress
    from spark_jax.report import tables
    from spark_jax.search import loop

    argv = getattr(args, "argv", None)
    command = ["spark-jax", *(sys.argv[1:] if argv is None else argv)]
    try:
        with search_progress(cfg.budget, enabled=not args.no_progress) as on_progress:
            result = loop.run_search(
                cfg, run_dir, resume=bool(args.resume), command=command, on_progress=on_progress
            )
    except loop.SearchError as e:
        return fail(str(e), EXIT_FAILED)
    verdict = (
        "beats"
        if result.best_ood > result.seed_ood
        else "equals"
        if result.best_ood == result.seed_ood
        else "is below"
    )
    print(
        f"run: {result.run_dir}\nattempts: {result.attempts}, evaluated: {result.evaluated}\n"
        f"seed OOD {result.seed_ood:.4f}; best OOD {result.best_ood:.4f} ({verdict} the seed)\n"
        f"best program: {result.best_path}"
    )
    tables.write_report(run_dir)
    print(f"report: {pathlib.Path(run_dir) / 'report.md'}")
    return EXIT_OK

"""`spark-jax report RUN_DIR`: (re)write a run's `report.md` and plots from its database.

Exit codes: 0 written, 2 not a run directory or an unreadable database.
"""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `report` subcommand to `sub`."""
    p = sub.add_parser("report", help="write report.md and plots for a run directory")
    p.add_argument("run_dir", help="a run directory (holding run.db) written by `spark-jax search`")
    return p


def run(args: argparse.Namespace) -> int:
    """Runs `report`; returns the exit code."""
    from spark_jax.report import tables

    return tables.report_main(args.run_dir)

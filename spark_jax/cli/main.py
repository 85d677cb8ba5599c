"""The `spark-jax` parser and dispatch: one module per command, each with
`add_parser(sub)` and `run(args) -> int`; exit codes in `spark_jax.cli.errors`.

  search    cli/search.py     run or resume a search, then write its report
  evaluate  cli/evaluate.py   train and score one program
  check     cli/check.py      feasibility check, no training
  report    cli/report.py     (re)write a run's report
  bench     cli/bench.py      performance ratios vs the official CLRS loop
  benchmark cli/benchmark.py  programs x tasks x seeds vs DeepMind's processors
  compare   cli/compare.py    search methods x search seeds under one budget
  serve     cli/serve.py      watch runs and benchmarks in the browser (read-only, live)

Command modules import their heavy dependencies (JAX, CLRS) only when run.
"""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType
from typing import Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # tensorflow (imported by clrs) is noisy

from spark_jax.cli import bench, benchmark, check, compare, evaluate, report, search, serve  # noqa: E402
from spark_jax.cli.errors import EXIT_USAGE  # noqa: E402

__all__ = ["COMMANDS", "TRAINING_COMMANDS", "build_parser", "main"]

COMMANDS: dict[str, ModuleType] = {
    "search": search,
    "evaluate": evaluate,
    "check": check,
    "report": report,
    "bench": bench,
    "benchmark": benchmark,
    "compare": compare,
    "serve": serve,
}

# Commands that train with JAX: they say so when a GPU is present but JAX would use the CPU.
TRAINING_COMMANDS = frozenset({"search", "evaluate", "bench", "benchmark", "compare"})


def build_parser() -> argparse.ArgumentParser:
    """The `spark-jax` parser; `args.command` names the chosen entry of COMMANDS."""
    parser = argparse.ArgumentParser(
        prog="spark-jax", description="SPARK architecture search over CLRS processors (JAX)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(sub)
    assert set(sub.choices) == set(COMMANDS), "a command module registered another name"
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parses `argv` (default: sys.argv[1:]) and runs the command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)  # argparse exits with code 2 on bad arguments
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    args.argv = argv  # what was asked, for run records
    if args.command in TRAINING_COMMANDS:
        from spark_jax.util.accelerator import cpu_fallback_note

        note = cpu_fallback_note()
        if note:
            print(note, file=sys.stderr)
    return COMMANDS[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())

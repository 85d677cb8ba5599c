"""The `spark-jax` parser and dispatch: one module per command, each with
`add_parser(sub)` and `run(args) -> int`; exit codes in `spark_jax.cli.errors`.

  search    cli/search.py     run or resume a search, then write its report
  evaluate  cli/evaluate.py   train and score one program
  check     cli/check.py      feasibility check, no training
  report    cli/report.py     (re)write a run's report
  perf      cli/perf.py       performance ratios vs the official CLRS loop (old name: bench)
  benchmark cli/benchmark.py  programs x tasks x seeds vs DeepMind's processors
  compare   cli/compare.py    search methods x search seeds under one budget
  serve     cli/serve.py      watch runs and benchmarks in the browser (read-only, live)
  config    cli/config.py     `config check FILE`: validate a search config, run nothing

Every subcommand's `--help` shows its module's docstring as its description (with its exit
codes) and every option's default (`HelpFormatter`).

Command modules import their heavy dependencies (JAX, CLRS) only when run.
"""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType
from typing import Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # tensorflow (imported by clrs) is noisy

from spark_jax.cli import benchmark, check, compare, config, evaluate, perf, report, search, serve  # noqa: E402
from spark_jax.cli.errors import EXIT_USAGE  # noqa: E402

__all__ = ["ALIASES", "COMMANDS", "TRAINING_COMMANDS", "HelpFormatter", "build_parser", "main"]

COMMANDS: dict[str, ModuleType] = {
    "search": search,
    "evaluate": evaluate,
    "check": check,
    "report": report,
    "perf": perf,
    "benchmark": benchmark,
    "compare": compare,
    "serve": serve,
    "config": config,
}

# Old command names kept working: each runs its new command and says so on stderr.
ALIASES: dict[str, str] = {"bench": "perf"}

# Commands that train with JAX: they say so when a GPU is present but JAX would use the CPU.
TRAINING_COMMANDS = frozenset({"search", "evaluate", "perf", "benchmark", "compare"})


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written (their line breaks kept) and every option's default shown:
    '(default: X)' is added unless the help already says 'default' or there is none to show
    (None, False, a flag)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = _with_names(action.help or "")
        default = action.default
        shown = default is not None and default is not False and default != argparse.SUPPRESS
        shown = shown and not isinstance(
            action, (argparse._StoreTrueAction, argparse._VersionAction, argparse._HelpAction)
        )
        if shown and "default" not in text and action.option_strings + [action.dest]:
            text += " (default: %(default)s)"
        return text


def _names(kind: str) -> str:
    """The valid names of one kind, from its registry (imported only when help is shown)."""
    if kind == "methods":
        from spark_jax.compare.methods import METHODS

        return ", ".join(METHODS)
    if kind == "presets":
        from spark_jax.config.protocol import PRESETS

        return ", ".join(PRESETS)
    if kind == "tasks":
        from spark_jax.config.tasks import TASKS

        return ", ".join(TASKS)
    from spark_jax.config.search import family_names

    return ", ".join(family_names())


def _with_names(text: str) -> str:
    """`text` with each '{methods}', '{presets}', '{tasks}', '{families}' replaced by the
    names its registry knows."""
    for kind in ("methods", "presets", "tasks", "families"):
        if "{" + kind + "}" in text:
            text = text.replace("{" + kind + "}", _names(kind))
    return text


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("spark-jax")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _Commands(argparse._SubParsersAction):
    """Subcommand parsers with the shared formatter and, unless given, their module's
    docstring as description (what it does, its options, its exit codes)."""

    descriptions: dict[str, str] = {}

    def add_parser(self, name, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("description", self.descriptions.get(name) or kwargs.get("help"))
        return super().add_parser(name, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The `spark-jax` parser; `args.command` names the chosen entry of COMMANDS."""
    parser = argparse.ArgumentParser(
        prog="spark-jax",
        description="SPARK: LLM-driven architecture search over CLRS processors (JAX), and "
        "a harness comparing it with baselines. Run `spark-jax COMMAND --help` for a "
        "command's options and exit codes.\n\nExit codes: 0 success, 1 the work ran and "
        "failed, 2 a usage error, 130 / 143 a search stopped by SIGINT / SIGTERM.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"spark-jax {_version()}")
    parser.register("action", "parsers", _Commands)
    _Commands.descriptions = {name: (m.__doc__ or "").strip() for name, m in COMMANDS.items()}
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in COMMANDS.values():
        module.add_parser(sub)
    assert set(sub.choices) == set(COMMANDS) | set(ALIASES), (
        "a command module registered another name"
    )
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
    if args.command in ALIASES:
        new = ALIASES[args.command]
        print(
            f"spark-jax {args.command}: the old name of `spark-jax {new}`; running that",
            file=sys.stderr,
        )
        args.command = new
    if args.command in TRAINING_COMMANDS:
        from spark_jax.util import accelerator

        if accelerator.wants_backend_line(sys.stderr):  # JAX's backend and devices
            for line in accelerator.backend_lines(accelerator.probe_backend()):
                print(line, file=sys.stderr)
        else:
            note = accelerator.cpu_fallback_note()
            if note:
                print(note, file=sys.stderr)
    return COMMANDS[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())

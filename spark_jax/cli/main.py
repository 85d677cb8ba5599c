"""The `spark-jax` command line: thin argument handling over library functions.

Exit codes: 0 success, 1 the work ran and failed (e.g. infeasible program, training diverged),
2 usage errors (bad arguments, missing or malformed files, unknown task or preset).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # tensorflow (imported by clrs) is noisy

USAGE_ERROR = 2
OFFICIAL_KINDS = ("triplet_gmpnn", "triplet_mpnn", "triplet_pgn", "gmpnn", "gpgn", "mpnn", "pgn",
                  "pgn_mask", "deepsets", "gat", "gatv2", "gat_full", "gatv2_full")


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit code 2."""


def _fail(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def write_atomic(path: str, text: str) -> None:
    """Writes a file via a temporary sibling and rename, so nothing half-written remains."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# -- evaluate ----------------------------------------------------------------------------------
def _add_evaluate(sub) -> Callable:
    p = sub.add_parser("evaluate", help="train and score one program on one CLRS task")
    p.add_argument("program", help="path of a processor program (e.g. processors/triplet_gmpnn.py), "
                                   "or official:KIND for DeepMind's Haiku processor KIND")
    p.add_argument("--task", default="dfs", help="CLRS algorithm (default: dfs)")
    p.add_argument("--preset", default="smoke", help="protocol preset: paper, smoke, tiny")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--output", help="also write the JSON result to this file")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return _run_evaluate


def _run_evaluate(args) -> int:
    from spark_jax.config import protocol as config
    from spark_jax import program as program_lib
    from spark_jax.config import tasks

    official = args.program.startswith(program_lib.OFFICIAL_PREFIX)
    try:
        cfg = config.get_preset(args.preset)
        tasks.check_task(args.task)
        if official:
            kind = args.program[len(program_lib.OFFICIAL_PREFIX):]
            if kind not in OFFICIAL_KINDS:
                raise UsageError(f"unknown official processor {kind!r}; "
                                 f"known: {', '.join(OFFICIAL_KINDS)}")
            name = args.program
        else:
            prog = program_lib.read_program(args.program)
            name = prog.name
    except (config.ConfigError, tasks.TaskError, program_lib.ProgramError, UsageError) as e:
        return _fail(str(e), USAGE_ERROR)

    from spark_jax.evaluation import evaluate
    from spark_jax.cli.progress import step_progress
    from spark_jax.evaluation.train import TrainingError

    try:
        with step_progress(f"{name} on {args.task} ({cfg.name})", cfg.train_steps,
                           enabled=not args.no_progress) as progress:
            if official:
                result = evaluate.evaluate_official(kind, args.task, cfg, args.seed,
                                                    progress=progress)
            else:
                result = evaluate.evaluate_program(prog, args.task, cfg, args.seed,
                                                   progress=progress)
    except program_lib.ProgramError as e:
        return _fail(str(e), 1)
    except TrainingError as e:
        return _fail(f"{name}: {e}", 1)
    record = result.to_dict()
    if args.output:
        write_atomic(args.output, json.dumps(record, indent=2) + "\n")
    if args.json:
        print(json.dumps(record))
    else:
        for key, value in record.items():
            print(f"{key:>16}: {value:.4f}" if isinstance(value, float) else f"{key:>16}: {value}")
    return 0


# -- check -------------------------------------------------------------------------------------
def _add_check(sub) -> Callable:
    from spark_jax.cli import check as feasibility_cli

    p = sub.add_parser("check", help="feasibility check of a program (no training)")
    feasibility_cli.add_arguments(p)
    return feasibility_cli.run


# -- bench -------------------------------------------------------------------------------------
def _add_bench(sub) -> Callable:
    p = sub.add_parser("bench", help="performance ratios vs the official CLRS implementation")
    p.add_argument("--task", default="dfs")
    p.add_argument("--preset", default="smoke")
    p.add_argument("--steps", type=int, default=100, help="timed training steps per side")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--skip-pipeline", action="store_true",
                   help="skip the evaluator-busy figure (runs a short search on bfs)")
    p.add_argument("--skip-feasibility", action="store_true",
                   help="skip the feasibility-vs-evaluation ratio (it runs one full evaluation)")
    p.add_argument("--json", action="store_true")
    return _run_bench


def _run_bench(args) -> int:
    from spark_jax.config import protocol as config
    from spark_jax.config import tasks

    try:
        cfg = config.get_preset(args.preset)
        tasks.check_task(args.task)
        if args.steps < 1:
            raise UsageError("--steps must be >= 1")
    except (config.ConfigError, tasks.TaskError, UsageError) as e:
        return _fail(str(e), USAGE_ERROR)
    from spark_jax.bench import training as bench

    report = bench.run_bench(args.task, cfg, steps=args.steps, seed=args.seed,
                             with_feasibility=not args.skip_feasibility,
                             with_pipeline=not args.skip_pipeline)
    print(json.dumps(report) if args.json else bench.format_report(report))
    return 0


# -- search ------------------------------------------------------------------------------------
def _add_search(sub) -> Callable:
    p = sub.add_parser("search", help="run (or resume) a SPARK search; no arguments: the "
                                      "embedded default (dfs, smoke, offline editor, CPU)")
    p.add_argument("--config", help="YAML search config (see spark_jax/search_config.py)")
    p.add_argument("--run-dir", help="where to write the run (default: runs/<task>-<time>)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue an interrupted run")
    p.add_argument("--seed", type=int, help="override the config's seed")
    p.add_argument("--no-progress", action="store_true")
    return _run_search


def _run_search(args) -> int:
    import dataclasses
    import pathlib
    import time

    from spark_jax.config import protocol as config
    from spark_jax.config import search as search_config

    try:
        if args.resume:
            if args.config or args.run_dir or args.seed is not None:
                raise UsageError("--resume takes the run's stored config: do not combine it "
                                 "with --config, --run-dir or --seed")
            stored = pathlib.Path(args.resume) / "config.yaml"
            if not stored.is_file():
                raise UsageError(f"nothing to resume: {stored} does not exist")
            cfg = search_config.load(stored)
            run_dir = args.resume
        else:
            cfg = search_config.load(args.config) if args.config else search_config.default_config()
            if args.seed is not None:
                cfg = dataclasses.replace(
                    cfg, seed=args.seed, archive=dataclasses.replace(cfg.archive, seed=args.seed),
                    editor=dataclasses.replace(cfg.editor, seed=args.seed))
            run_dir = args.run_dir or f"runs/{cfg.task}-{time.strftime('%Y%m%d-%H%M%S')}"
    except (config.ConfigError, UsageError) as e:
        return _fail(str(e), USAGE_ERROR)

    from spark_jax.search import loop as search
    from spark_jax.cli.progress import search_progress

    try:
        with search_progress(cfg.budget, enabled=not args.no_progress) as on_progress:
            result = search.run_search(cfg, run_dir, resume=bool(args.resume),
                                       command=["spark-jax", *sys.argv[1:]],
                                       on_progress=on_progress)
    except search.SearchError as e:
        return _fail(str(e), 1)
    verdict = ("beats" if result.best_ood > result.seed_ood else
               "equals" if result.best_ood == result.seed_ood else "is below")
    print(f"run: {result.run_dir}\nattempts: {result.attempts}, evaluated: {result.evaluated}\n"
          f"seed OOD {result.seed_ood:.4f}; best OOD {result.best_ood:.4f} ({verdict} the seed)\n"
          f"best program: {result.best_path}")
    from spark_jax.report import tables as report

    report.write_report(run_dir)
    print(f"report: {pathlib.Path(run_dir) / 'report.md'}")
    return 0


# -- report ------------------------------------------------------------------------------------
def _add_report(sub) -> Callable:
    p = sub.add_parser("report", help="write report.md and plots for a run directory")
    p.add_argument("run_dir")
    return _run_report


def _run_report(args) -> int:
    from spark_jax.report import tables as report

    return report.report_main(args.run_dir)


_COMMANDS = (_add_search, _add_evaluate, _add_check, _add_report, _add_bench)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Callable]]:
    parser = argparse.ArgumentParser(
        prog="spark-jax", description="SPARK architecture search over CLRS processors (JAX)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    handlers = {}
    for add in _COMMANDS:
        before = set(sub.choices)
        handler = add(sub)
        (name,) = set(sub.choices) - before
        handlers[name] = handler
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)  # argparse exits with code 2 on bad arguments
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())

"""`spark-jax evaluate PROGRAM [--task T] [--preset P] [--seed S] [--seeds K] [--seed-mode M]
[--train-steps N] [--json] [--output F]`: train and score one program (or DeepMind's official
processor `official:KIND`) on one task; `--seeds K` trains seeds S..S+K-1 as one program
(per-seed scores, each bit-identical to `--seed` of that seed; `--seed-mode vmap` batches them).

Exit codes: 0 scored, 1 the program failed to build or training failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import json

from spark_jax.cli import registry_names
from spark_jax.cli.errors import EXIT_FAILED, EXIT_OK, UsageError, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `evaluate` subcommand to `sub`."""
    p = sub.add_parser("evaluate", help="train and score one program on one CLRS task")
    p.add_argument(
        "program",
        help="path of a processor program (e.g. processors/triplet_gmpnn.py), "
        "or official:KIND for DeepMind's Haiku processor KIND",
    )
    p.add_argument("--task", default="dfs", help="CLRS algorithm, one of: {tasks}")
    p.add_argument("--preset", default="smoke", help="protocol preset, one of: {presets}")
    p.add_argument("--seed", type=int, default=42, help="training seed")
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="train seeds SEED..SEED+K-1 together as one program (default 1)",
    )
    registry_names.add_seed_mode_arg(
        p,
        "how one program trains K seeds: 'map' (default; each seed as if alone) or "
        "'vmap' (batched: one K-wide step; per-seed results apart by float rounding)",
    )
    p.add_argument(
        "--train-steps",
        type=int,
        help="train this many steps instead of the preset's (timing runs; the record says so; "
        "default: the preset's)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--output", help="also write the JSON result to this file (default: none)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    """Runs `evaluate`; returns the exit code."""
    from spark_jax import program as program_lib
    from spark_jax.config import protocol, tasks

    official = args.program.startswith(program_lib.OFFICIAL_PREFIX)
    try:
        cfg = protocol.get_preset(args.preset)
        tasks.check_task(args.task)
        if args.seeds < 1:
            raise UsageError(f"--seeds must be >= 1, got {args.seeds}")
        if args.train_steps is not None:
            if args.train_steps < 1:
                raise UsageError(f"--train-steps must be >= 1, got {args.train_steps}")
            cfg = cfg.replace(train_steps=args.train_steps)
        if official:
            kind = args.program[len(program_lib.OFFICIAL_PREFIX) :]
            if kind not in program_lib.OFFICIAL_KINDS:
                raise UsageError(
                    f"unknown official processor {kind!r}; known: {', '.join(program_lib.OFFICIAL_KINDS)}"
                )
            name = args.program
        else:
            prog = program_lib.read_program(args.program)
            name = prog.name
    except (protocol.ConfigError, tasks.TaskError, program_lib.ProgramError, UsageError) as e:
        return fail(str(e))

    from spark_jax.cli.progress import step_progress
    from spark_jax.evaluation import evaluate
    from spark_jax.evaluation.train import TrainingError
    from spark_jax.evaluation.training_options import TrainingOptions
    from spark_jax.util.files import write_atomic

    try:
        with step_progress(
            f"{name} on {args.task} ({cfg.name})", cfg.train_steps, enabled=not args.no_progress
        ) as progress:
            how = TrainingOptions(seeds=args.seeds, seed_mode=args.seed_mode, progress=progress)
            if official:
                result = evaluate.evaluate_official(kind, args.task, cfg, args.seed, training=how)
            else:
                result = evaluate.evaluate_program(prog, args.task, cfg, args.seed, training=how)
    except program_lib.ProgramError as e:
        return fail(str(e), EXIT_FAILED)
    except TrainingError as e:
        return fail(f"{name}: {e}", EXIT_FAILED)
    record = result.to_dict()
    if result.seed_scores:
        record.update(score_mean=result.score_mean, score_std=result.score_std)
    if args.output:
        write_atomic(args.output, json.dumps(record, indent=2) + "\n")
    if args.json:
        print(json.dumps(record))
    else:
        for key, value in record.items():
            print(f"{key:>16}: {value:.4f}" if isinstance(value, float) else f"{key:>16}: {value}")
    return EXIT_OK

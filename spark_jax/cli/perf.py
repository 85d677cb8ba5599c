"""`spark-jax perf [--task T] [--preset P] [--steps N] [--repeats R] [--seeds-k K] [--json]`:
performance ratios of our training loop, feasibility checker and search pipeline against the
official CLRS loop, and the per-candidate cost broken down (init, compile, steps/s,
evaluation, total; K seeds as one program, mapped and vmapped; an unseen program's
feasibility check), each with a verdict against its target (the measurements live in
`spark_jax.perf`). The performance harness, not the program benchmark (`spark-jax
benchmark`); `spark-jax bench`, its old name, still runs it and says so.

Exit codes: 0 measured, 2 usage error.
"""

from __future__ import annotations

import argparse
import json

from spark_jax.cli.errors import EXIT_OK, UsageError, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `perf` subcommand (alias: `bench`, its old name) to `sub`."""
    p = sub.add_parser(
        "perf",
        aliases=["bench"],
        help="performance ratios vs the official CLRS implementation (old name: bench)",
    )
    p.add_argument("--task", default="dfs", help="CLRS algorithm, one of: {tasks}")
    p.add_argument("--preset", default="smoke", help="protocol preset, one of: {presets}")
    p.add_argument("--steps", type=int, default=100, help="timed training steps per side")
    p.add_argument("--seed", type=int, default=42, help="training seed of both sides")
    p.add_argument(
        "--skip-pipeline",
        action="store_true",
        help="skip the evaluator-busy figure (runs a short search on bfs)",
    )
    p.add_argument(
        "--pipeline-candidates",
        type=int,
        default=6,
        help="candidates the pipeline's search evaluates after its seed",
    )
    p.add_argument(
        "--skip-feasibility",
        action="store_true",
        help="skip the feasibility-vs-evaluation ratio (it runs one full evaluation)",
    )
    p.add_argument(
        "--repeats", type=int, default=2, help="whole candidates per side (ratio spread)"
    )
    p.add_argument(
        "--seeds-k", type=int, default=4, help="seeds trained as one program, mapped and vmapped"
    )
    p.add_argument(
        "--skip-candidate", action="store_true", help="skip the per-candidate cost breakdown"
    )
    p.add_argument(
        "--only-candidate",
        action="store_true",
        help="only the per-candidate cost breakdown (no throughput, pipeline or warm check)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args: argparse.Namespace) -> int:
    """Runs `perf`; returns the exit code."""
    from spark_jax.config import protocol, tasks

    try:
        cfg = protocol.get_preset(args.preset)
        tasks.check_task(args.task)
        if args.steps < 1:
            raise UsageError("--steps must be >= 1")
        if args.repeats < 1 or args.seeds_k < 1 or args.pipeline_candidates < 1:
            raise UsageError("--repeats, --seeds-k and --pipeline-candidates must be >= 1")
    except (protocol.ConfigError, tasks.TaskError, UsageError) as e:
        return fail(str(e))
    from spark_jax.perf import candidate, training

    report, text = {}, []
    if not args.only_candidate:
        report = training.run_bench(
            args.task,
            cfg,
            steps=args.steps,
            seed=args.seed,
            with_feasibility=not args.skip_feasibility,
            with_pipeline=not args.skip_pipeline,
            pipeline_candidates=args.pipeline_candidates,
        )
        text.append(training.format_report(report))
    if not args.skip_candidate:
        report["candidate"] = candidate.bench_candidate(
            args.task, cfg, seed=args.seed, repeats=args.repeats, k=args.seeds_k
        )
        text.append(candidate.format_candidate(report["candidate"]))
    print(json.dumps(report) if args.json else "\n".join(text))
    return EXIT_OK

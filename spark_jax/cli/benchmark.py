"""`spark-jax benchmark PROGRAM... --tasks T[,T...] --seeds K --preset P [--baseline LABEL]`:
every (program, task, seed) trained and scored on the executors, stored as it lands in
`OUT/benchmark.db`, then `OUT/report.md` (per-task OOD mean ± std, 10- and 30-task means,
paired comparison with the baseline, the paper's reference rows), `results.csv` and a bar plot.
`--resume OUT` runs only what has not landed (after a crash or kill -9).

A search's run directory (or its `best/best_program.py`) trains with seeds its search never
used: by default the seeds start after the largest one the search trained with (for every
program, so comparisons stay paired); an explicit `--first-seed` that overlaps them is refused
in one line unless `--allow-seed-overlap` is given. The report lists each program's seeds.
The seeds of a (program, task) train as one program (one job; each seed's result stored as
its own, bit-identical to that seed trained alone; `--seed-mode vmap` batches them instead)
unless `--sequential-seeds` is given.

`--seeds auto` (the sequential mode, with `--baseline`): seeds are added in rounds of
`--seeds-per-round` until each (program, task) pair is decided against the baseline (win, loss,
equivalent within ±`--delta` pp) or reaches `--max-seeds` (cannot tell, with the minimal
detectable difference); valid under that optional stopping (`spark_jax/stats/sequential.py`).
Before training, every program is checked against the baseline on each task: a pair that
computes the same function there is `identical` and only the baseline trains.
`--resume OUT --seeds auto` continues a fixed-seed benchmark in the sequential mode.

Exit codes: 0 every job landed (failed programs are results, shown in the report), 1 the
benchmark could not finish, 2 usage error.
"""

from __future__ import annotations

import argparse
import datetime
import pathlib
import sys

from spark_jax.cli import decisions, registry_names
from spark_jax.cli.errors import EXIT_FAILED, EXIT_OK, UsageError, fail
from spark_jax.config.evaluation import EXECUTOR_KINDS

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `benchmark` subcommand to `sub`."""
    p = sub.add_parser("benchmark", help="programs x CLRS tasks x seeds, with a paper-shaped table")
    p.add_argument(
        "programs",
        nargs="*",
        help="program files, run directories (their best program) or official:KIND",
    )
    p.add_argument(
        "--tasks",
        default="dfs",
        help="tasks, comma-separated, or the sets clrs10, clrs30; tasks: {tasks}",
    )
    p.add_argument(
        "--seeds",
        default="3",
        help="evaluation seeds per (program, task), or 'auto': the sequential mode, seeds "
        "added per round until each pair is decided (win, loss, equivalent within "
        "±--delta) or --max-seeds is reached; with --resume, continues a fixed-seed "
        "benchmark that way",
    )
    _add_decision_args(p)
    p.add_argument(
        "--first-seed",
        type=int,
        help="seeds are FIRST..FIRST+K-1 (default: 0, or one past the last seed any given "
        "run directory's search trained with)",
    )
    p.add_argument(
        "--allow-seed-overlap",
        action="store_true",
        help="let a searched program train with seeds its search used (re-measures its "
        "selection; refused without this flag)",
    )
    p.add_argument("--preset", default="smoke", help="protocol preset, one of: {presets}")
    p.add_argument(
        "--baseline",
        help="label of the program the others are compared with (default: the official "
        "program, if one is given)",
    )
    p.add_argument("--out", help="output directory (default: benchmarks/<time>)")
    p.add_argument(
        "--resume", metavar="OUT", help="continue the benchmark in OUT (default: start a new one)"
    )
    _add_executor_args(p)
    p.add_argument("--quiet", action="store_true", help="no line per landed job")
    return p


def _add_decision_args(p: argparse.ArgumentParser) -> None:
    """The sequential mode's design and the budget guide."""
    decisions.add_design_args(p, "seeds per (program, task)")
    p.add_argument(
        "--guide",
        metavar="PILOT",
        help="run nothing: from the stored benchmark PILOT (a short run of the same two "
        "programs, e.g. --seeds 3), forecast per task what the sequential mode (--max-seeds, "
        "--seeds-per-round, --delta, --alpha) would decide and spend on that machine "
        "(default: none, run the benchmark)",
    )
    p.add_argument(
        "--effect",
        type=float,
        help="with --guide: the true difference to forecast, pp (default: each task's pilot mean)",
    )


def _add_executor_args(p: argparse.ArgumentParser) -> None:
    """Where the jobs run, their limits, and what they share."""
    p.add_argument(
        "--executor",
        choices=EXECUTOR_KINDS,
        default="local",
        help="where jobs run: local worker processes or a Ray cluster",
    )
    p.add_argument("--workers", type=int, default=1, help="local worker processes")
    p.add_argument("--address", help="Ray cluster address (default: a local Ray instance)")
    p.add_argument(
        "--timeout", type=float, help="per-job wall-clock limit, seconds (default: none)"
    )
    p.add_argument(
        "--sequential-seeds",
        action="store_true",
        help="one job per seed (default: the seeds of a (program, task) train as one "
        "program, one seed after another only when memory says so)",
    )
    registry_names.add_seed_mode_arg(
        p,
        "how one program trains the seeds: 'map' (default; each seed's result "
        "bit-identical to that seed trained alone) or 'vmap' (batched: one K-wide step; "
        "per-seed results then differ from one-seed runs by float rounding)",
    )
    p.add_argument(
        "--compile-cache",
        default="xla-cache",
        metavar="DIR",
        help="persistent XLA compilation cache shared by the jobs (relative: inside OUT; "
        "share one between benchmarks to reuse compiles); 'none' turns it off",
    )


def _progress(job, result, finished: int, total: int) -> None:
    if result.ok:
        what = f"OOD {100 * result.evaluation.score:.2f}%"
    else:
        what = f"failed ({result.error_type})"
    print(
        f"[{finished}/{total}] {job.program.label} {job.task} seed {job.seed}: {what} "
        f"in {result.wall_seconds:.1f} s",
        file=sys.stderr,
        flush=True,
    )


def _spec(args: argparse.Namespace):
    from spark_jax import benchmark
    from spark_jax.config.protocol import ConfigError, get_preset
    from spark_jax.config.sections import ExecutorConfig

    design = decisions.design_fields(args, UsageError)
    n_seeds = design["max_seeds"] if design else int(args.seeds)
    if n_seeds < 1:
        raise UsageError(f"--seeds must be at least 1 (got {args.seeds})")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout must be > 0 (got {args.timeout})")
    try:
        protocol = get_preset(args.preset)  # the preset resolved once, here
        cache = None if args.compile_cache.lower() == "none" else args.compile_cache
        executor = ExecutorConfig(
            kind=args.executor,
            num_workers=args.workers,
            address=args.address,
            compile_cache_dir=cache,
        )
    except ConfigError as e:
        raise UsageError(str(e)) from None
    programs = [benchmark.resolve_program(word) for word in args.programs]
    if args.baseline is None and any(p.official for p in programs):
        args.baseline = next(p.label for p in programs if p.official)
    first = args.first_seed
    if first is None:
        first = benchmark.default_first_seed(p.search_seeds for p in programs)
    spec = benchmark.BenchmarkSpec(
        tasks=benchmark.expand_tasks([args.tasks]),
        seeds=tuple(range(first, first + n_seeds)),
        preset=args.preset,
        baseline=args.baseline,
        executor=executor,
        timeout_s=args.timeout,
        allow_seed_overlap=args.allow_seed_overlap,
        seeds_together=not args.sequential_seeds,
        protocol=protocol,
        seed_mode=args.seed_mode,
        sequential=design,
    )
    return programs, spec


def _guide(args: argparse.Namespace) -> int:
    from spark_jax.benchmark import guide, stats
    from spark_jax.benchmark.store import BenchmarkDB
    from spark_jax.stats import sequential

    fields = decisions.design_fields(
        argparse.Namespace(**{**vars(args), "seeds": "auto"}), UsageError
    )
    design = sequential.Design(**fields)
    pilot = pathlib.Path(args.guide)
    db_path = pilot / "benchmark.db" if pilot.is_dir() else pilot
    if not db_path.is_file():
        raise UsageError(f"--guide {pilot}: no benchmark.db there")
    try:
        rows = guide.guide(db_path, design, args.effect)
    except ValueError as e:
        raise UsageError(str(e)) from None
    with BenchmarkDB.open_readonly(db_path) as db:
        machines = stats.machines_of_results(db.results())
    design = sequential.Design(**{**fields, "comparisons": max(1, len(rows))})
    print("\n".join(guide.guide_lines(rows, design, machines)))
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Runs `benchmark`; returns the exit code."""
    from spark_jax import benchmark

    progress = None if args.quiet else _progress
    out = args.resume or args.out or f"benchmarks/{datetime.datetime.now():%Y%m%d-%H%M%S}"
    try:
        if args.guide:
            return _guide(args)
        if args.resume:
            if args.programs:
                raise UsageError("--resume takes no programs (they are stored in the benchmark)")
            report = benchmark.resume_benchmark(
                args.resume, progress=progress, sequential=decisions.design_fields(args, UsageError)
            )
        else:
            if not args.programs:
                raise UsageError("give at least one program (a file, a run dir or official:KIND)")
            programs, spec = _spec(args)
            report = benchmark.start_benchmark(out, programs, spec, progress=progress)
    except (UsageError, benchmark.PlanError, benchmark.BenchmarkDBError) as e:
        return fail(str(e))
    except KeyboardInterrupt:
        print(f"interrupted; continue with: spark-jax benchmark --resume {out}", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - an executor or database failure mid-run
        return fail(f"benchmark stopped: {type(e).__name__}: {e}", EXIT_FAILED)
    from spark_jax.benchmark.tables import comparison_section

    print(comparison_section(report) + f"wrote {report}")
    return EXIT_OK

"""`spark-jax compare --methods M[,M...] --seeds K [--preset P] [--budget B] [--out DIR]`:
every method x search seed as a normal search run directory under DIR (run one after another;
finished runs are kept, unfinished ones resumed, so re-running the command after a crash or
kill -9 finishes the comparison), then DIR/report.md with the per-method table (every method
runs the same --max-attempts proposal attempts; best OOD at the budget B of evaluated
programs, the seed counted as in a search's budget (the best of the first B - 1 candidates
after it), evaluated candidates to a threshold and the ratio to the first method, valid and
entanglement rates, LLM calls and tokens per evaluated candidate, wall and device hours) and
band plots. `--report-only DIR` rewrites the report from what has run. An LLM editor records
every call to `DIR/METHOD/seed-S.cassette.jsonl`; `--replay DIR` re-runs that comparison from
those cassettes with no LLM (same proposals, same tables).

`--seeds auto`: search seeds are added `--seeds-per-round` at a time, for the methods whose
pair with the first method is still undecided (and the first method's same seeds), until each is
a win, a loss, equivalent within ±`--delta` pp, or `cannot tell` at `--max-seeds`
(`spark_jax/compare/sequential.py`); the report gives each decision.

Exit codes: 0 every search finished, 1 some search did not, 2 usage error.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import sys

from spark_jax.cli import decisions
from spark_jax.cli.errors import EXIT_FAILED, EXIT_OK, fail

__all__ = ["add_parser", "run"]


class _LibraryDefault:
    """--methods' default: `compare.methods.DEFAULT_METHODS`, comma-joined, read when shown or
    used (building the parser imports nothing of compare)."""

    def __str__(self) -> str:
        from spark_jax.compare.methods import DEFAULT_METHODS

        return ",".join(DEFAULT_METHODS)


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `compare` subcommand to `sub`."""
    p = sub.add_parser("compare", help="search methods x search seeds under one budget")
    p.add_argument(
        "--methods",
        default=_LibraryDefault(),
        help="comma-separated method names, of: {methods}; the sampling controls are sample, "
        "sequential, sample-regions, sequential-regions (default: %(default)s)",
    )
    p.add_argument(
        "--seeds",
        default="3",
        help="search seeds per method, or 'auto': search seeds added per round until each "
        "method's pair with the first is decided (win, loss, equivalent within ±--delta) or "
        "--max-seeds is reached",
    )
    decisions.add_design_args(p, "search seeds per method")
    p.add_argument("--first-seed", type=int, default=0, help="seeds FIRST..FIRST+K-1")
    p.add_argument("--config", help="base search config (default: the embedded default)")
    p.add_argument("--task", help="override the config's task (default: the config's)")
    p.add_argument(
        "--preset",
        help="override the config's protocol preset, one of: {presets} (default: the config's)",
    )
    p.add_argument(
        "--budget",
        type=int,
        help="B: evaluated programs, the seed counted, at which best at budget is read (the "
        "best of the first B - 1 candidates; default: the config's budget)",
    )
    p.add_argument(
        "--max-attempts",
        type=int,
        help="proposal attempts every method runs (default: the config's; the paper: 100)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        help="OOD fraction for the sample-efficiency column (default: the lowest method mean "
        "of the best evaluated candidate)",
    )
    p.add_argument("--out", help="comparison directory (default: comparisons/<time>)")
    _add_run_mode_args(p)
    return p


def _add_run_mode_args(p: argparse.ArgumentParser) -> None:
    """Replay, report-only and proposal-only runs; searches at once."""
    p.add_argument(
        "--replay",
        metavar="DIR",
        help="replay DIR's recorded LLM calls, no LLM (default: none, run the editor)",
    )
    p.add_argument(
        "--report-only",
        metavar="DIR",
        help="rewrite DIR's report, run nothing (default: run the comparison)",
    )
    p.add_argument(
        "--proposal-only",
        action="store_true",
        help="propose and check feasibility only, never train; the report is the reliability "
        "table (valid and entanglement rates with Wilson intervals, Fisher's test; default: "
        "train every feasible candidate)",
    )
    p.add_argument(
        "--pool",
        metavar="JSON",
        help="with --proposal-only: the fixed parent pool (default: the config's "
        "proposal_only.pool)",
    )
    p.add_argument(
        "--parallel-attempts",
        type=int,
        metavar="K",
        help="with --proposal-only: attempts in flight at once within each run (default 1)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="(method, seed) searches run at once (default: %(default)s)",
    )


def _proposal_only(args: argparse.Namespace, base: dict) -> None:
    """Sets the base config's `proposal_only` key from the flags."""
    from spark_jax.config.protocol import ConfigError

    if not args.proposal_only:
        if args.pool or args.parallel_attempts:
            raise ConfigError("--pool and --parallel-attempts need --proposal-only")
        return
    section = dict(base.get("proposal_only") or {})
    if args.pool:
        section["pool"] = str(pathlib.Path(args.pool).resolve())
    if args.parallel_attempts is not None:
        section["jobs"] = args.parallel_attempts
    if not section.get("pool"):
        raise ConfigError("--proposal-only needs a parent pool: --pool JSON")
    base["proposal_only"] = section


def _report(out: pathlib.Path, plan, threshold) -> str:
    from spark_jax import compare

    if plan.proposal_only:
        from spark_jax.compare.reliability import write_reliability_report

        return write_reliability_report(out, plan)
    return compare.write_compare_report(out, plan, threshold)


def _base(args: argparse.Namespace) -> dict:
    from spark_jax.config import search as search_config

    if args.config:
        values = search_config.read_mapping(args.config)  # the search loader's file errors
    else:
        values = search_config.default_config().to_dict()
        values.pop("protocol", None)  # the preset's, re-derived from `preset`
    for key in ("task", "preset"):
        if getattr(args, key):
            values[key] = getattr(args, key)
    return values


def run(args: argparse.Namespace) -> int:
    """Runs `compare`; returns the exit code."""
    from spark_jax import compare
    from spark_jax.config.protocol import ConfigError
    from spark_jax.config.search import SearchConfig

    log = lambda line: print(f"[compare] {line}", file=sys.stderr, flush=True)  # noqa: E731
    try:
        if args.report_only:
            out = pathlib.Path(args.report_only)
            plan_path = out / compare.PLAN_FILE
            if not plan_path.is_file():
                return fail(f"{out}: no {compare.PLAN_FILE} (not a comparison directory)")
            plan = compare.ComparePlan.from_dict(json.loads(plan_path.read_text(encoding="utf-8")))
            print(_report(out, plan, args.threshold))
            return EXIT_OK
        design = decisions.design_fields(args, ConfigError)
        n_seeds = design["max_seeds"] if design else int(args.seeds)
        if n_seeds < 1:
            return fail(f"--seeds must be at least 1 (got {args.seeds})")
        methods = compare.resolve_methods(str(args.methods))
        base = _base(args)
        _proposal_only(args, base)
        budget = args.budget if args.budget is not None else int(base.get("budget", 4))
        cap = args.max_attempts  # else the config's, or a config's default when it has none
        cap = cap if cap is not None else base.get("max_attempts", SearchConfig.max_attempts)
        plan = compare.ComparePlan(
            base=base,
            methods=tuple(m.name for m in methods),
            seeds=tuple(range(args.first_seed, args.first_seed + n_seeds)),
            budget=budget,
            max_attempts=None if cap is None else int(cap),
            replay=str(pathlib.Path(args.replay).resolve()) if args.replay else None,
            sequential=design,
        )
        out = pathlib.Path(args.out or f"comparisons/{datetime.datetime.now():%Y%m%d-%H%M%S}")
        if design is not None:
            from spark_jax.compare.sequential import run_sequential

            statuses = run_sequential(out, plan, log=log, jobs=args.jobs)
        else:
            statuses = compare.run_comparison(out, plan, log=log, jobs=args.jobs)
    except (compare.MethodError, ConfigError) as e:
        return fail(str(e))
    except KeyboardInterrupt:
        print("interrupted; run the same command again to continue", file=sys.stderr)
        return 130
    report = _report(out, plan, args.threshold)
    print(report)
    unfinished = [
        f"{m} seed {s}"
        for (m, s), st in statuses.items()
        if st != "finished" and not (design is not None and st == "missing")
    ]
    if unfinished:
        return fail(f"not finished: {', '.join(unfinished)} (re-run to continue)", EXIT_FAILED)
    return EXIT_OK

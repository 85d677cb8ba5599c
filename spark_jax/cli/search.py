"""`spark-jax search [--config F] [--run-dir D] [--seed S] [--family F --benchmark B]` and
`spark-jax search --resume D`:
run or continue a SPARK search, then write its report. With no arguments: the embedded
default config (see `spark_jax.config.search`).

Exit codes: 0 the search finished, 1 it failed (`SearchError`, e.g. the LLM editor kept
failing), 2 usage error (nothing written), 130 / 143 stopped by SIGINT / SIGTERM: what had
finished is kept and `--resume` continues (the evaluation that was running is abandoned and
runs again on resume).
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import signal
import sys
import time
from typing import Iterator

from spark_jax.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `search` subcommand to `sub`."""
    p = sub.add_parser(
        "search",
        help="run (or resume) a SPARK search; no arguments: the "
        "embedded default (dfs, smoke, offline editor, CPU)",
    )
    p.add_argument(
        "--config",
        help="YAML search config (keys: spark_jax/config/search.py; validate one with "
        "`spark-jax config check FILE`); default: the embedded default",
    )
    p.add_argument("--run-dir", help="where to write the run (default: runs/<task>-<time>)")
    p.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue an interrupted run from its run.db (default: start a new run)",
    )
    p.add_argument("--seed", type=int, help="override the config's seed (default: the config's)")
    p.add_argument("--family", help="task family, one of: {families} (default: the config's, clrs)")
    p.add_argument(
        "--benchmark",
        help="the family's benchmark, e.g. mnist1d, breast_cancer, cartpole_v1 (default: the config's)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (a line per step when not a terminal)",
    )
    p.add_argument(
        "--proposal-only",
        action="store_true",
        help="propose and check feasibility only, never train (parents from --pool; default: "
        "train every feasible candidate)",
    )
    p.add_argument(
        "--pool",
        metavar="JSON",
        help="with --proposal-only: the fixed parent pool file (default: the config's "
        "proposal_only.pool)",
    )
    p.add_argument(
        "--parallel-attempts",
        type=int,
        metavar="K",
        help="with --proposal-only: attempts in flight at once (default 1)",
    )
    return p


def _with_proposal_only(cfg, args: argparse.Namespace):
    """`cfg` with the `proposal_only` key the flags set (unchanged without them)."""
    import dataclasses

    from spark_jax.config.proposal_only import proposal_only_from

    pool, jobs = getattr(args, "pool", None), getattr(args, "parallel_attempts", None)
    if not getattr(args, "proposal_only", False):
        if pool or jobs is not None:
            raise UsageError("--pool and --parallel-attempts need --proposal-only")
        return cfg
    old = cfg.proposal_only
    section = dict(pool=pool or (old.pool if old else None), jobs=jobs or (old.jobs if old else 1))
    return dataclasses.replace(cfg, proposal_only=proposal_only_from(section))


def _resolve(args: argparse.Namespace):
    """The config and run directory the arguments ask for; raises UsageError/ConfigError."""
    from spark_jax.config import search as search_config

    if args.resume:
        family_args = getattr(args, "family", None) or getattr(args, "benchmark", None)
        if args.config or args.run_dir or args.seed is not None or family_args:
            raise UsageError(
                "--resume takes the run's stored config: do not combine it "
                "with --config, --run-dir, --seed, --family or --benchmark"
            )
        stored = pathlib.Path(args.resume) / "config.yaml"
        if stored.is_file():
            return search_config.load(stored), args.resume
        from spark_jax.search import startup

        try:  # config.yaml deleted: run.db holds the authoritative copy
            return startup.stored_config(pathlib.Path(args.resume)), args.resume
        except startup.SearchUsageError as e:
            raise UsageError(str(e)) from None
    cfg = search_config.load(args.config) if args.config else search_config.default_config()
    if args.seed is not None:
        cfg = search_config.with_seed(cfg, args.seed)
    cfg = _with_proposal_only(cfg, args)
    family, benchmark = getattr(args, "family", None), getattr(args, "benchmark", None)
    if family is not None or benchmark is not None:
        cfg = search_config.with_family(cfg, family, benchmark)
    run_dir = args.run_dir or f"runs/{cfg.target}-{time.strftime('%Y%m%d-%H%M%S')}"
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
    from spark_jax.search.rundb import RunDBError

    argv = getattr(args, "argv", None)
    command = ["spark-jax", *(sys.argv[1:] if argv is None else argv)]
    received: list[int] = []
    try:
        with _terminate_as_interrupt(received):
            with search_progress(cfg.budget, enabled=not args.no_progress) as on_progress:
                result = loop.run_search(
                    cfg, run_dir, resume=bool(args.resume), command=command, on_progress=on_progress
                )
    except KeyboardInterrupt:
        return _interrupted(received[0] if received else signal.SIGINT, run_dir)
    except loop.SearchUsageError as e:
        return fail(str(e), EXIT_USAGE)
    except (loop.SearchError, RunDBError) as e:  # RunDBError: e.g. the disk filled up
        return fail(" ".join(str(e).split()), EXIT_FAILED)
    except OSError as e:  # e.g. a full disk while writing best/: run.db keeps what finished
        return fail(
            f"{_os_error(e)}; what finished is kept in {run_dir}/run.db "
            f"(spark-jax search --resume {run_dir} continues it)",
            EXIT_FAILED,
        )
    if cfg.proposal_only is not None:  # nothing trained: the attempts are the result
        print(f"run: {result.run_dir}\nproposal-only: {result.attempts} attempts recorded")
        return EXIT_OK
    try:
        paths = tables.write_report(run_dir)
    except OSError as e:  # e.g. ENOSPC: the search and its database are complete
        return fail(
            f"the search finished but its report was not fully written: {_os_error(e)}; "
            f"free space, then run: spark-jax report {run_dir}",
            EXIT_FAILED,
        )
    print(summary_lines(result.run_dir, paths))
    return EXIT_OK


def summary_lines(run_dir: str, paths) -> str:
    """The CLI's end-of-search summary, in report.md's words and units: counts from the
    same accounting, OOD in percent with 2 decimals, the seed apart from the best evaluated
    candidate, which is what `best/best_program.py` holds."""
    acc, best = paths.accounting, paths.best
    pct = lambda x: "—" if x is None else f"{100.0 * x:.2f}%"  # noqa: E731
    lines = [
        f"run: {run_dir}",
        f"attempts: {acc.attempts}; evaluated candidates: {acc.evaluated_budget} "
        f"({acc.evaluated} scored; the seed's own evaluation apart)",
    ]
    seed_ood = None if acc.seed is None else acc.seed.get("ood_score")
    if best is None or best.is_seed:
        lines.append(f"seed OOD {pct(seed_ood)}; no evaluated candidate scored")
    else:
        word = {"beats": "above", "equals": "equal to", "below": "below"}.get(acc.verdict or "")
        lines.append(
            f"seed OOD {pct(seed_ood)}; best evaluated candidate OOD {pct(best.ood_score)} "
            f"(attempt index {best.attempt}{f', {word} the seed' if word else ''}; "
            "report.md's verdict weighs the seed's spread)"
        )
    lines.append(f"OOD on the {paths.source} set (the one the search selected on)")
    what = (
        "the seed: no candidate scored"
        if best is None or best.is_seed
        else ("the best evaluated candidate")
    )
    lines.append(f"best program ({what}): {pathlib.Path(run_dir) / 'best' / 'best_program.py'}")
    lines.append(f"report: {paths.report}")
    return "\n".join(lines)


def _os_error(e: OSError) -> str:
    """An OSError as one line: its reason and the file it names."""
    text = " ".join(str(e.strerror or e).split())
    return text + (f" ({e.filename})" if e.filename else "")


@contextlib.contextmanager
def _terminate_as_interrupt(received: list[int]) -> Iterator[None]:
    """Within the block SIGINT and SIGTERM stop the search as Ctrl-C does (noted in
    `received`). SIGINT is handled explicitly too: a search started in the background of a
    non-interactive shell inherits an ignored SIGINT, and `kill -INT` must still stop it."""
    stops = (signal.SIGINT, signal.SIGTERM)

    def on_signal(signum, frame):
        received.append(signum)
        for s in stops:  # one stop; the cleanup is not interrupted
            signal.signal(s, signal.SIG_IGN)
        raise KeyboardInterrupt

    try:
        previous = {s: signal.signal(s, on_signal) for s in stops}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _interrupted(signum: int, run_dir: str) -> int:
    """The one line printed on SIGINT / SIGTERM; returns 128 + the signal number."""
    name = signal.Signals(signum).name
    db = pathlib.Path(run_dir) / "run.db"
    if db.is_file():
        print(
            f"stopped by {name}: finished work is saved in {run_dir}; "
            f"resume with: spark-jax search --resume {run_dir}",
            file=sys.stderr,
        )
    else:
        print(f"stopped by {name} before the run started; nothing was written", file=sys.stderr)
    return 128 + int(signum)

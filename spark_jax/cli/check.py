"""`spark-jax check PROGRAM [--parent P --factor F] [--preset P] [--json]`: the staged
feasibility check of one program, without training.

The check does not depend on the CLRS task (a processor sees only [B, N, H] features), so
there is no `--task`; the preset sets the processor's width and options, and the semantic
stage runs at two graph sizes (`--nodes`, and `--large-nodes`, default 2N + 3).

Exit codes: 0 feasible, 1 infeasible (the report is printed), 2 usage error (one
`error: ...` line on stderr).
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

from spark_jax.cli.errors import EXIT_FAILED, EXIT_OK, UsageError, fail
from spark_jax.feasibility import checker as feasibility
from spark_jax.feasibility.sandbox import SandboxWorker
from spark_jax.program import regions

__all__ = ["add_arguments", "add_parser", "run"]


# The semantic check's graph sizes, then the check's limits: (flag, type, help); unset: None.
_SIZES = (
    ("--nodes", int, "N of the semantic check's first batch (default 5)"),
    ("--large-nodes", int, "N of the semantic check's second, larger batch (default 2N + 3)"),
)
_LIMITS = (
    ("--max-params", int, "budget cap on parameters (default: none)"),
    ("--max-macs", int, "budget cap on MACs (default: none)"),
    ("--timeout-s", float, "wall clock of the sandboxed stages (default 60)"),
)


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `check` subcommand to `sub`."""
    p = sub.add_parser("check", help="feasibility check of a program (no training)")
    add_arguments(p)
    return p


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds the `check` subcommand's arguments to `parser`."""
    parser.add_argument("program", help="candidate program file (.py with region tags)")
    parser.add_argument(
        "--parent",
        default=None,
        help="parent program: enables entanglement and the interface "
        "comparison; with --factor, the locality stage (default: none)",
    )
    parser.add_argument(
        "--factor",
        default=None,
        help="OPERATOR or ACTION: the region the edit was scoped to (needs --parent; "
        "default: none, no locality stage)",
    )
    for flag, kind, text in _SIZES:
        parser.add_argument(flag, type=kind, default=None, help=text)
    parser.add_argument(
        "--preset",
        default="smoke",
        help="protocol preset giving hidden size, use_ln, nb_triplet_fts "
        "and the MACs reference, one of: {presets} (default: smoke)",
    )
    for flag, kind, text in _LIMITS:
        parser.add_argument(flag, type=kind, default=None, help=text)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _read(path: str, what: str) -> str:
    p = pathlib.Path(path)
    if not p.is_file():
        raise UsageError(f"{what} file not found: {p}")
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {what} {p}: {e}") from None


def _parse(
    args: argparse.Namespace,
) -> tuple[str, str | None, str | None, feasibility.CheckOptions]:
    from spark_jax.config import protocol as config

    factor = args.factor.upper() if args.factor else None
    if factor is not None and factor not in regions.FACTORS:
        raise UsageError(
            f"--factor must be one of {', '.join(regions.FACTORS)} (got {args.factor!r})"
        )
    if factor is not None and args.parent is None:
        raise UsageError("--factor needs --parent")
    try:
        cfg = config.get_preset(args.preset)
    except config.ConfigError as e:
        raise UsageError(str(e)) from None
    child = _read(args.program, "program")
    parent = _read(args.parent, "parent") if args.parent is not None else None
    overrides: dict[str, Any] = {"max_params": args.max_params, "max_macs": args.max_macs}
    for key in ("timeout_s", "nodes", "large_nodes"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    try:
        options = feasibility.CheckOptions.from_protocol(cfg, **overrides)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return child, parent, factor, options


def run(args: argparse.Namespace, *, worker: SandboxWorker | None = None) -> int:
    """Runs `check`; returns the exit code. `worker` (tests share a warm one) defaults to a
    fresh single-use sandbox."""
    try:
        child, parent, factor, options = _parse(args)
    except UsageError as e:
        return fail(str(e))
    if worker is None:
        # One check: no untimed warm-up, no spare process.
        with SandboxWorker(warmup=False, standby=False, eager_restart=False) as own:
            report = feasibility.check_program(
                child, parent_source=parent, factor=factor, options=options, worker=own
            )
    else:
        report = feasibility.check_program(
            child, parent_source=parent, factor=factor, options=options, worker=worker
        )
    context = {
        "program": args.program,
        "parent": args.parent,
        "factor": factor,
        "preset": args.preset,
        "nodes": options.nodes,
        "large_nodes": options.semantic_sizes[1],
    }
    if args.json:
        print(json.dumps({**context, **report.to_dict()}))
    else:
        print(
            f"{args.program}: preset {args.preset}, N={options.nodes} and "
            f"N={options.semantic_sizes[1]}"
            + (f", parent {args.parent}" if args.parent else "")
            + (f", factor {factor}" if factor else "")
        )
        for line in report.summary_lines():
            print(f"  {line}")
    return EXIT_OK if report.feasible else EXIT_FAILED

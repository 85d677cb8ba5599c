"""A run's report: `write_report(run_dir)` reads `run_dir/run.db` and writes
`run_dir/report.md` (Markdown tables shaped like the paper's, the paper's own figures beside
ours) and `run_dir/plots/*.png`. The numbers come from `accounting`, the PNGs from `plots`.
OOD scores stored as fractions (CLRS `score`) are printed as percentages; any NULL field
prints as '—'.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import pathlib
import sys
from typing import Any, Mapping, Sequence

from spark_jax.operator.step import Proposal
from spark_jax.report import best_section, family, llm_usage, reference, selection, spread
from spark_jax.report.accounting import RunAccounting, find_meta, is_scored, read_meta, summarize
from spark_jax.report.plots import write_plots
from spark_jax.search import best_program
from spark_jax.search.rundb import RunDB, RunDBError
from spark_jax.util import files, labels

__all__ = ["ReportPaths", "ReportWriteError", "report_main", "write_report"]

_HIGHLIGHTS = (
    "task",
    "preset",
    "seed",
    "editor",
    "operator_variant",
    "variant",
    "budget",
    "max_attempts",
    "in_flight",
    "versions",
    "command",
)
_DASH = "—"


@dataclasses.dataclass(frozen=True)
class ReportPaths:
    """What `write_report` wrote: the Markdown file and the PNG plots (in PLOT_FILES order)."""

    report: pathlib.Path
    plots: tuple[pathlib.Path, ...]
    accounting: RunAccounting | None = None
    best: best_program.BestProgram | None = None
    source: str = "ood_test"  # the set the search's OOD scores were measured on


# ---------------------------------------------------------------- formatting


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return _DASH
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _kmacs(macs: int | None) -> str:
    return _DASH if macs is None else f"{macs / 1000.0:,.1f}"


def _pct(score: float | None) -> str:
    return _DASH if score is None else f"{100.0 * score:.2f}"


def _percent(score: float | None) -> float | None:
    return None if score is None else 100.0 * score


def _cell(value: Any, limit: int = 160) -> str:
    """A run_meta value as one table cell: a list of strings (a command) joined, else JSON."""
    words = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    text = (
        " ".join(value)
        if words
        else value
        if isinstance(value, str)
        else json.dumps(value, default=str, sort_keys=True)
    )
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _markdown(
    run_dir: pathlib.Path,
    meta: Mapping[str, Any],
    acc: RunAccounting,
    props: Sequence[Proposal],
    evals: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]],
    plots: Sequence[pathlib.Path],
    top_k: int,
    prices: Mapping[str, Any] | None = None,
    final_test: Mapping[str, Any] | None = None,
    best: best_program.BestProgram | None = None,
) -> str:
    anchor = acc.seed or acc.best_candidate or {}
    task = anchor.get("task") or find_meta(meta, "task")
    preset = anchor.get("preset") or find_meta(meta, "preset")
    seed_no = anchor.get("seed") if anchor.get("seed") is not None else find_meta(meta, "seed")
    protocol = f"task `{task or 'unknown'}`, preset `{preset or 'unknown'}`, seed {seed_no}"
    view = spread.noise_view(meta, final_test)
    seeds_text = "one training seed" if view.k == 1 else f"{view.k} training seeds (mean)"
    macs_n = find_meta(meta, "macs_nodes")
    our_macs = f"our MACs (K; one processor step, contraction count, N={macs_n or '?'})"
    lines = [
        f"# {best_section.method_title(meta)} run report: {run_dir.name}",
        "",
        f"Protocol: {protocol}. Editor: {labels.editor_label(find_meta(meta, 'editor'))}. "
        f"Machine: {find_meta(meta, 'machine') or 'not recorded'}.",
        "",
        f"Every number below was measured under this protocol ({seeds_text} per "
        f"program; OOD scores are on the {view.selection_label} unless labelled "
        f"otherwise), unless its row says otherwise; the paper's figures are only in "
        f"'Paper reference figures', in their own columns. MACs are {our_macs}.",
        "",
        view.describe(),
    ]
    lines += ["", f"## Seed vs best ({protocol})", ""]
    cols = [
        (f"OOD (%) on the {view.source} set, mean", "ood_score", _pct),
        ("val (%)", "val_score", _pct),
        (our_macs, "macs", _kmacs),
        ("params", "params", _fmt),
    ]
    pair = [("seed", acc.seed), ("best evaluated candidate", acc.best_candidate)]
    lines += _table(
        ["program", "id", "attempt index"] + [c[0] for c in cols],
        [
            [
                name,
                f"`{e['program_id']}`" if e else _DASH,
                _fmt(e["proposal_attempt"]) if e else _DASH,
            ]
            + [f(e[key]) if e else _DASH for _, key, f in cols]
            for name, e in pair
        ],
    )
    lines += ["", *best_section.best_lines(best)]
    lines += ["", *family.family_lines(meta, acc.seed, acc.best_candidate)]
    lines += ["", spread.verdict_line(acc, view, protocol), ""]
    lines += selection.selection_lines(meta)
    lines += spread.spread_lines(acc, view, protocol)
    lines += ["", f"## Search accounting (paper metric definitions; {protocol})", ""]
    if acc.best_ood is None:
        where = "no scored program"
    elif acc.best_attempt is None:
        where = "by the seed (no candidate exceeded its OOD)"
    else:
        where = (
            f"at attempt {acc.best_attempt} of {acc.attempts} (0-based attempt index "
            f"{acc.best_attempt_index}), evaluated candidate {acc.best_evaluated} of "
            f"{acc.evaluated}"
        )
    lines += [
        f"- Attempts (every proposal; the paper's *Cand.*): {acc.attempts} "
        f"({acc.feasible} feasible, {acc.infeasible} infeasible, {acc.failed} editor failures, "
        f"{acc.duplicates} duplicates: repeats of a trained program, not retrained).",
        f"- Evaluated candidates (feasible and entered training: the budget's count): "
        f"{acc.evaluated_budget} ({acc.evaluated} scored, {acc.eval_errors} evaluation errors "
        f"or NaN, counted all the same; {acc.not_evaluated} feasible not evaluated; the seed's "
        "baseline evaluation is not counted).",
        f"- Valid rate (feasible / attempts): {_fmt(acc.valid_rate, 3)}.",
        f"- Entanglement rate (entangled or scaffold, tag breaks included / attempts): "
        f"{_fmt(acc.entanglement_rate, 3)} ({acc.entangled} of {acc.attempts}).",
    ]
    n_llm = sum(bool(c["is_llm"]) for c in calls)
    per = f"{len(calls) / acc.attempts:.2f} per attempt" if acc.attempts else "no attempts"
    lines += [
        f"- LLM calls (routing + directives + editing): {len(calls)} editor calls ({per}); "
        f"{n_llm} to an LLM, {len(calls) - n_llm} offline rules (not an LLM).",
        f"- Wall hours (first to last record, database creation included): "
        f"{_fmt(acc.wall_hours, 3)}.",
        f"- Device hours (sum of train + compile seconds over all evaluations): "
        f"{acc.device_hours:.3f}.",
        f"- Train seconds per evaluated candidate (mean): {_fmt(acc.mean_train_seconds, 1)} "
        f"(compile: {_fmt(acc.mean_compile_seconds, 1)}).",
        f"- Best OOD {_pct(acc.best_ood)}% (best-so-far, seed included) first reached {where}.",
        "",
        "## LLM calls by role",
        "",
    ]
    lines += llm_usage.routing_lines(acc) + [llm_usage.cost_line(calls, prices), ""]
    lines += llm_usage.calls_table(calls)
    lines += ["", f"## Top {top_k} programs ({protocol})", ""]
    factor = {p.attempt: p.factor for p in props}
    ranked = sorted(
        [e for e in evals if is_scored(e)],
        key=lambda e: (-e["ood_score"], e["macs"] if e["macs"] is not None else math.inf, e["id"]),
    )[:top_k]
    lines += (
        _table(
            [
                "rank",
                "program",
                "attempt index",
                "factor",
                f"OOD (%) on the {view.source} set, mean",
                "val (%)",
                our_macs,
                "params",
                "train s",
            ],
            [
                [
                    i,
                    f"`{e['program_id']}`",
                    "seed" if e["proposal_attempt"] is None else e["proposal_attempt"],
                    factor.get(e["proposal_attempt"]) or _DASH,
                    _pct(e["ood_score"]),
                    _pct(e["val_score"]),
                    _kmacs(e["macs"]),
                    _fmt(e["params"]),
                    _fmt(e["train_seconds"], 1),
                ]
                for i, e in enumerate(ranked, 1)
            ],
        )
        if ranked
        else ["(no scored program)"]
    )
    fails: collections.Counter[tuple[str, str]] = collections.Counter()
    for p in props:
        if p.status != "feasible":
            stage = p.failure_stage or ("editor" if p.status == "failed" else "unknown")
            fails[stage, p.failure_type or p.status] += 1
    for e in evals:
        if e["status"] != "ok":
            fails["evaluation", e["error_type"] or "error"] += 1
    lines += ["", "## Failures by stage", ""]
    lines += (
        _table(
            ["stage", "failure type", "count"], [[s, t, c] for (s, t), c in sorted(fails.items())]
        )
        if fails
        else ["(no failures)"]
    )
    lines += ["", "## Plots", ""] + (
        [f"![{p.stem}](plots/{p.name})" for p in plots]
        or ["Not written (see the error printed); `spark-jax report RUN_DIR` writes them again."]
    )
    ours = [
        (
            label,
            _percent(spread.reported_ood(view, e)),
            None if e["macs"] is None else e["macs"] / 1000.0,
        )
        for label, e in pair
        if e
    ]
    lines += [""] + reference.comparison_lines(
        str(task) if task else None, str(preset) if preset else None, ours
    )
    lines += ["", "## Configuration", ""]
    order = sorted(
        (k for k in meta if not k.startswith("final_test.")),
        key=lambda k: (
            min(
                (
                    i
                    for i, h in enumerate(_HIGHLIGHTS)
                    if k == h or k.startswith(h + ".") or k.endswith("." + h)
                ),
                default=99,
            ),
            k,
        ),
    )
    lines += (
        _table(["key", "value"], [[f"`{k}`", _cell(meta[k])] for k in order])
        if meta
        else ["(no run metadata recorded)"]
    )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- entry points


def figure_label(meta: dict[str, Any]) -> str:
    """A run's figure caption: protocol, task, editor and the machine it ran on."""
    task = find_meta(meta, "task") or "?"
    preset = find_meta(meta, "preset") or "?"
    machine = find_meta(meta, "machine") or "machine not recorded"
    return (
        f"{preset} protocol, task {task}; {labels.editor_label(find_meta(meta, 'editor'))}; "
        f"{machine}"
    )


class ReportWriteError(OSError):
    """The report (or some of its plots) could not be written, e.g. the disk is full; the
    message is one line and says what was written. The run database is never touched."""


def write_report(run_dir: str | pathlib.Path, top_k: int = 10) -> ReportPaths:
    """Writes `run_dir/report.md` and `run_dir/plots/*.png` from `run_dir/run.db`.

    Every file is written via a temporary sibling and a rename. When the plots cannot be
    written (OSError, e.g. ENOSPC) report.md is still attempted; then ReportWriteError says
    which files are missing. Raises RunDBError when the directory or its database is
    missing or unusable.
    """
    run_dir = pathlib.Path(run_dir)
    if not run_dir.is_dir():
        raise RunDBError(f"run directory {run_dir} does not exist")
    with RunDB.open(run_dir / "run.db") as db:
        meta, created = read_meta(db)
        acc = summarize(db, meta, created)
        props, evals, calls = db.proposals(), db.evaluations(), db.llm_calls()
        config = db.get_meta("config")
        final_test = db.get_meta("final_test")
        best = best_program.best_program(db)
        best_error: OSError | None = None
        try:
            best_program.write_best(run_dir, db)
        except OSError as e:
            best_error = e
    prices = config.get("editor", {}).get("prices") if isinstance(config, dict) else None
    plot_error: OSError | None = best_error
    try:
        plots = write_plots(acc, run_dir / "plots", figure_label(meta))
    except OSError as e:
        plot_error, plots = plot_error or e, ()
    path = run_dir / "report.md"
    text = _markdown(
        run_dir, meta, acc, props, evals, calls, plots, top_k, prices, final_test, best
    )
    try:
        files.write_atomic(path, text)
    except OSError as e:
        raise ReportWriteError(
            e.errno, f"report.md and plots not written: {_why(plot_error or e)}", str(path)
        ) from None
    if plot_error is not None:
        raise ReportWriteError(
            plot_error.errno,
            f"plots or best/ not written ({_why(plot_error)}); report.md was written",
            str(run_dir / "plots"),
        )
    source = spread.noise_view(meta, final_test).source
    return ReportPaths(path, plots, acc, best, source)


def _why(e: OSError) -> str:
    return " ".join(f"{e.strerror or e}".split()) + (f": {e.filename}" if e.filename else "")


def report_main(run_dir: str | pathlib.Path) -> int:
    """`spark-jax report RUN_DIR`: writes the report, prints its paths; 2 on a bad run dir."""
    run_dir = pathlib.Path(run_dir)
    if not run_dir.is_dir():
        print(f"error: run directory {run_dir} does not exist", file=sys.stderr)
        return 2
    if not (run_dir / "run.db").is_file():
        print(f"error: {run_dir / 'run.db'} not found (not a run directory?)", file=sys.stderr)
        return 2
    try:
        paths = write_report(run_dir)
    except ReportWriteError as exc:  # e.g. a full disk: nothing stored is lost
        print(f"error: {exc.strerror}", file=sys.stderr)
        return 1
    except (RunDBError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(paths.report)
    for p in paths.plots:
        print(p)
    return 0

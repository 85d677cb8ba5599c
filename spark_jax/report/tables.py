"""A run's report: `write_report(run_dir)` reads `run_dir/run.db` and writes
`run_dir/report.md` (Markdown tables shaped like the paper's, the paper's own figures beside
ours) and `run_dir/plots/*.png`. The numbers come from `accounting`, the PNGs from `plots`.
OOD scores stored as fractions (CLRS `score`) are printed as percentages; any NULL field
prints as '—'.
"""

from __future__ import annotations

import dataclasses
import pathlib
import sys
from typing import Any

from spark_jax.report import intensification, run_sections, spread
from spark_jax.report.accounting import RunAccounting, find_meta, read_meta, summarize
from spark_jax.report.plots import write_plots
from spark_jax.search import best_program
from spark_jax.search.rundb import RunDB, RunDBError
from spark_jax.util import files, labels

__all__ = ["ReportPaths", "ReportWriteError", "report_main", "write_report"]


@dataclasses.dataclass(frozen=True)
class ReportPaths:
    """What `write_report` wrote: the Markdown file and the PNG plots (in PLOT_FILES order)."""

    report: pathlib.Path
    plots: tuple[pathlib.Path, ...]
    accounting: RunAccounting | None = None
    best: best_program.BestProgram | None = None
    source: str = "ood_test"  # the set the search's OOD scores were measured on


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
        intensified = intensification.section(
            db.get_meta("intensification"), sum(e["wall_seconds"] or 0.0 for e in evals)
        )
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
    report = run_sections.RunReport.build(
        run_dir, meta, acc, props, evals, calls, plots, top_k, prices, final_test, best
    )
    text = run_sections.render(report)
    if intensified:
        text = text.rstrip("\n") + "\n\n" + "\n".join(intensified)
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

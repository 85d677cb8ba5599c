"""The seed paper's published figures, loaded from the shipped `reference/` tables.

The CSVs are transcribed from the paper's tables (see `reference/README.md`). They were
obtained on GPUs with DeepSeek-R1 (Qwen-Plus where a row says so) under the paper's
protocol; a run of ours is comparable to them only when it uses the same protocol.

Loaders return immutable, typed rows in file order; a missing or malformed file raises
`ReferenceDataError` naming it. `for_task(task)` gathers every row that mentions one CLRS task;
`comparison_lines` renders them as Markdown beside a run's own rows, each labelled with the
protocol it was measured under.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import types
from typing import Mapping, Sequence

from spark_jax.util import resources

__all__ = [
    "REFERENCE_DIR",
    "PAPER_LLM",
    "PAPER_PROTOCOL",
    "SEARCH_DYNAMICS",
    "ReferenceDataError",
    "TenTaskRow",
    "ThirtyTaskRow",
    "AblationRow",
    "ExtraBenchmarkRow",
    "TaskFigure",
    "clrs_10task",
    "clrs_30task",
    "dfs_ablation",
    "extra_benchmarks",
    "for_task",
    "paper_label",
    "comparison_lines",
]

REFERENCE_DIR = resources.asset_dir("reference")
PAPER_LLM = "DeepSeek-R1"
PAPER_PROTOCOL = "paper"

# Search-dynamics figures quoted in reference/README.md (the paper's text, not a CSV).
SEARCH_DYNAMICS: Mapping[str, tuple[str, ...]] = types.MappingProxyType(
    {
        "dfs": (
            "SPARK reaches DFS 83.74 at attempt 57 (= 57 evaluated candidates).",
            "EvoPrompting's best DFS used 1600 evaluations (1600/57 = 28.1x).",
            "Cumulative valid rate ~0.5-0.6 (SPARK) vs ~0.25-0.3 (OpenEvolve) at 100 attempts; "
            "OpenEvolve peaks around attempt 80.",
        )
    }
)


class ReferenceDataError(RuntimeError):
    """A reference CSV is missing or malformed."""


@dataclasses.dataclass(frozen=True)
class TenTaskRow:
    """One row of Table 1 (representative 10-task comparison).

    Attributes:
      metric: 'macs_k' (thousands of MACs) or 'ood_acc' (OOD accuracy, %).
      method: CLRS, OE, EP, FS, EoH, Ours-1it or Ours (= SPARK).
      values: task name -> value, for the ten tasks.
      avg: the table's average column.
    """

    metric: str
    method: str
    values: Mapping[str, float]
    avg: float


@dataclasses.dataclass(frozen=True)
class ThirtyTaskRow:
    """One task of the appendix's 30-task table: method (CLRS, EP, Ours) -> OOD accuracy %."""

    task: str
    values: Mapping[str, float]


@dataclasses.dataclass(frozen=True)
class AblationRow:
    """One DFS ablation / scope-control row.

    Attributes:
      table: 'ablation' or 'scope_control'.
      variant: e.g. 'RC+SAR only', 'SPARK', 'Global Rewrite'.
      llm: the editor LLM (DeepSeek-R1 or Qwen-Plus).
      macs: MACs of the selected architecture (not thousands).
      ood_acc: DFS OOD accuracy, %.
      delta_pp: difference to the CLRS reference, percentage points.
    """

    table: str
    variant: str
    llm: str
    macs: int
    ood_acc: float
    delta_pp: float


@dataclasses.dataclass(frozen=True)
class ExtraBenchmarkRow:
    """One non-CLRS benchmark metric: method (Base, OE, EP, EoH, FS, Ours) -> value or None."""

    benchmark: str
    metric: str
    values: Mapping[str, float | None]


@dataclasses.dataclass(frozen=True)
class TaskFigure:
    """One published figure for one CLRS task, as a report prints it.

    Attributes:
      source: which table ('Table 1 (10-task)', '30-task appendix', 'DFS ablation', ...).
      method: method or variant name as the paper writes it.
      llm: the editor LLM of the table this row comes from (for CLRS rows, the hand-designed
        Triplet-GMPNN reference that no LLM edited, the LLM of the table beside it).
      ood_acc: OOD accuracy in %; None when the table has none.
      macs_k: thousands of MACs; None when the table has none.
    """

    source: str
    method: str
    llm: str
    ood_acc: float | None
    macs_k: float | None


def paper_label(llm: str | None = None) -> str:
    """The provenance label printed beside paper rows, e.g. 'paper, GPU, DeepSeek-R1, ...'."""
    return f"paper, GPU, {llm or PAPER_LLM}, `{PAPER_PROTOCOL}` protocol"


def _read(name: str) -> list[dict[str, str]]:
    path = REFERENCE_DIR / name
    try:
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise ReferenceDataError(f"reference table {path} is unreadable: {exc}") from exc
    if not rows:
        raise ReferenceDataError(f"reference table {path} is empty")
    return rows


def _num(value: str | None, where: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        return float(value)
    except ValueError as exc:
        raise ReferenceDataError(f"{where}: {value!r} is not a number") from exc


def _req(value: str | None, where: str) -> float:
    number = _num(value, where)
    if number is None:
        raise ReferenceDataError(f"{where}: missing value")
    return number


@functools.lru_cache(maxsize=None)
def clrs_10task() -> tuple[TenTaskRow, ...]:
    """Table 1: MACs (K) and OOD accuracy (%) for 7 methods on 10 CLRS tasks."""
    out = []
    for i, row in enumerate(_read("clrs_10task.csv")):
        where = f"clrs_10task.csv row {i + 1}"
        tasks = {
            k: _req(v, f"{where} {k}")
            for k, v in row.items()
            if k not in ("metric", "method", "avg")
        }
        out.append(
            TenTaskRow(
                row["metric"],
                row["method"],
                types.MappingProxyType(tasks),
                _req(row["avg"], f"{where} avg"),
            )
        )
    return tuple(out)


@functools.lru_cache(maxsize=None)
def clrs_30task() -> tuple[ThirtyTaskRow, ...]:
    """Appendix table: OOD accuracy (%) of CLRS, EP and Ours on 30 CLRS tasks."""
    out = []
    for i, row in enumerate(_read("clrs_30task.csv")):
        values = {
            k: _req(v, f"clrs_30task.csv row {i + 1} {k}") for k, v in row.items() if k != "task"
        }
        out.append(ThirtyTaskRow(row["task"], types.MappingProxyType(values)))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def dfs_ablation() -> tuple[AblationRow, ...]:
    """DFS ablation (two LLMs) and scope-control baselines."""
    out = []
    for i, row in enumerate(_read("dfs_ablation.csv")):
        where = f"dfs_ablation.csv row {i + 1}"
        out.append(
            AblationRow(
                row["table"],
                row["variant"],
                row["llm"],
                int(_req(row["macs"], f"{where} macs")),
                _req(row["ood_acc"], f"{where} ood_acc"),
                _req(row["delta_pp"], f"{where} delta_pp"),
            )
        )
    return tuple(out)


@functools.lru_cache(maxsize=None)
def extra_benchmarks() -> tuple[ExtraBenchmarkRow, ...]:
    """MNIST-1D per backbone and four other non-CLRS benchmarks (empty cells -> None)."""
    out = []
    for i, row in enumerate(_read("extra_benchmarks.csv")):
        values = {
            k: _num(v, f"extra_benchmarks.csv row {i + 1} {k}")
            for k, v in row.items()
            if k not in ("benchmark", "metric")
        }
        out.append(
            ExtraBenchmarkRow(row["benchmark"], row["metric"], types.MappingProxyType(values))
        )
    return tuple(out)


def for_task(task: str) -> tuple[TaskFigure, ...]:
    """Every published figure for `task`: Table 1, the 30-task table and (dfs) the ablations."""
    figures: list[TaskFigure] = []
    ten = [r for r in clrs_10task() if task in r.values]
    for method in dict.fromkeys(r.method for r in ten):
        by_metric = {r.metric: r.values[task] for r in ten if r.method == method}
        figures.append(
            TaskFigure(
                "Table 1 (10-task)",
                method,
                PAPER_LLM,
                by_metric.get("ood_acc"),
                by_metric.get("macs_k"),
            )
        )
    for row in clrs_30task():
        if row.task == task:
            figures += [
                TaskFigure("30-task appendix", m, PAPER_LLM, v, None) for m, v in row.values.items()
            ]
    if task == "dfs":
        for row in dfs_ablation():
            source = "DFS ablation" if row.table == "ablation" else "DFS scope control"
            figures.append(TaskFigure(source, row.variant, row.llm, row.ood_acc, row.macs / 1000.0))
    return tuple(figures)


def comparison_lines(
    task: str | None, preset: str | None, ours: Sequence[tuple[str, float | None, float | None]]
) -> list[str]:
    """Markdown: the paper's figures for `task` beside this run's rows, provenance-labelled.

    Args:
      task: the run's CLRS task (None: unknown; no paper rows then).
      preset: the protocol preset the run used ('paper' is the paper's own).
      ours: (label, OOD accuracy in %, thousands of MACs) per row of this run.
    """
    this = f"this run, `{preset or 'unknown'}` protocol"
    lines = [
        "## Paper reference figures",
        "",
        f"Paper rows: {paper_label()} (Qwen-Plus where the provenance says so; CLRS rows "
        f"are the hand-designed Triplet-GMPNN reference). Our rows: {this}.",
        "Only rows measured under the same protocol are comparable. ",
    ]
    if preset == PAPER_PROTOCOL:
        lines[-1] += (
            f"This run used the `{PAPER_PROTOCOL}` protocol, so its OOD numbers are "
            "comparable in protocol (hardware, LLM and editor may still differ)."
        )
    else:
        lines[-1] += (
            f"This run used the `{preset or 'unknown'}` protocol, so its numbers are "
            "NOT comparable with the paper rows."
        )
    if not task:
        return lines + ["", "The run's task is unknown, so no paper figures are shown."]
    try:
        figures = for_task(task)
    except ReferenceDataError as exc:
        return lines + ["", f"Reference tables unavailable: {exc}"]

    def fmt(value: float | None, digits: int) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    # Our MACs count the contractions of one processor step on the reference graph; the
    # paper's are its model-level figure: different quantities, so separate columns.
    rows = [("this run", label, this, fmt(ood, 2), fmt(macs, 1), "—") for label, ood, macs in ours]
    rows += [
        (f.source, f.method, paper_label(f.llm), fmt(f.ood_acc, 2), "—", fmt(f.macs_k, 1))
        for f in figures
    ]
    if not figures:
        lines += ["", f"The paper reports no figures for task `{task}`."]
    lines += [
        "",
        "Our MACs (one processor step, contraction count) and the paper's MACs (its "
        "model-level figure) measure different things and are never compared.",
        "",
        "| source | method | provenance | OOD (%) | our MACs (K, one processor step) "
        "| paper MACs (K, as reported) |",
        "|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    notes = SEARCH_DYNAMICS.get(task, ())
    if notes:
        lines += ["", f"Search dynamics reported by the paper ({paper_label()}):"]
        lines += [f"- {n}" for n in notes]
    return lines

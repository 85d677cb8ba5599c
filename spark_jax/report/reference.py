"""The seed paper's published figures, loaded from the shipped `reference/` tables.

The CSVs are transcribed from the paper's tables (see `reference/README.md`). Not every row
is the paper's own measurement: the CLRS rows (the hand-designed Triplet-GMPNN) are the
figures of Ibarz et al. 2022 and the EP rows those of the EvoPrompting paper (Chen et al.
2023), quoted by the paper. `source_of(table, method)` names each row's true source and the
protocol it was measured under; a row is called comparable with a run only when that
protocol is the run's (`Source.comparable`). The paper's own rows were obtained on GPUs with
DeepSeek-R1 (Qwen-Plus where a row says so) under the `paper` protocol.

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
from typing import Any, Callable, Mapping, Sequence, TypeVar

from spark_jax.config import assets, registry
from spark_jax.util import markdown

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
    "EVOPROMPTING",
    "IBARZ",
    "PROTOCOLS",
    "SPARK_PAPER",
    "Source",
    "TABLES",
    "TaskFigure",
    "clrs_10task",
    "clrs_30task",
    "dfs_ablation",
    "extra_benchmarks",
    "for_task",
    "paper_label",
    "legend_lines",
    "source_of",
    "comparable_text",
    "comparison_lines",
]

REFERENCE_DIR = assets.asset_dir("reference")
PAPER_LLM = "DeepSeek-R1"
PAPER_PROTOCOL = "paper"
T = TypeVar("T")  # one reference table's record type

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


# Where the SPARK paper prints each table a row is quoted from.
TABLES: Mapping[str, str] = types.MappingProxyType(
    {
        "10-task": "Table 1",
        "30-task": "30-task appendix table",
        "ablation": "DFS ablation table",
        "scope_control": "scope-control appendix table",
    }
)


@dataclasses.dataclass(frozen=True)
class Source:
    """Where a published row comes from and what it is comparable with.

    Attributes:
      author: who measured it ('Ibarz et al. 2022', 'Chen et al. 2023 (EvoPrompting)'
        or 'SPARK paper').
      table: where the SPARK paper prints it (a value of `TABLES`).
      protocol: the training and evaluation protocol the figure was measured under.
      presets: our protocol presets whose runs share that protocol (empty: none do).
    """

    author: str
    table: str
    protocol: str
    presets: frozenset[str] = frozenset()

    @property
    def quoted(self) -> bool:
        """Measured by others and quoted by the SPARK paper."""
        return self.author != SPARK_PAPER

    def label(self) -> str:
        """'Ibarz et al. 2022 (quoted in SPARK paper, Table 1)' or 'SPARK paper, Table 1'."""
        if self.quoted:
            return f"{self.author} (quoted in {SPARK_PAPER}, {self.table})"
        return f"{SPARK_PAPER}, {self.table}"

    def comparable(self, preset: str | None) -> bool:
        return preset is not None and preset in self.presets


SPARK_PAPER = "SPARK paper"
IBARZ = "Ibarz et al. 2022"
EVOPROMPTING = "Chen et al. 2023 (EvoPrompting)"  # a method's `quoted_from` (config.registry)
# Who measured what, under which protocol: one line per author, for a table's legend.
PROTOCOLS: Mapping[str, str] = types.MappingProxyType(
    {
        IBARZ: "the hand-designed Triplet-GMPNN (CLRS rows: no search, no LLM), trained under "
        "Ibarz et al.'s setup, whose defaults CLRS examples/run.py carries (our `paper` preset)",
        EVOPROMPTING: "EvoPrompting's evolved architectures (EP rows) under EvoPrompting's own "
        "search and training setup, which no preset of ours reproduces",
        SPARK_PAPER: f"measured by the SPARK paper's authors on GPUs, {PAPER_LLM} unless the row "
        f"names another LLM, `{PAPER_PROTOCOL}` protocol",
    }
)


def source_of(table: str, method: str) -> Source:
    """The true source of one published row: `table` a key of `TABLES`, `method` the row's
    method or variant as the CSV writes it. Raises KeyError on an unknown table."""
    where = TABLES[table]
    if method.startswith("CLRS"):
        return Source(IBARZ, where, PROTOCOLS[IBARZ], frozenset({PAPER_PROTOCOL}))
    author = _quoted_rows().get(method)
    if author is not None:
        return Source(author, where, PROTOCOLS[author])
    return Source(SPARK_PAPER, where, PROTOCOLS[SPARK_PAPER], frozenset({PAPER_PROTOCOL}))


def _quoted_rows() -> dict[str, str]:
    """Row -> who measured it, for rows quoted from a method's own paper (`config.registry`)."""
    methods = [m for m in registry.methods().values() if m.quoted_from]
    return {row: m.quoted_from for m in methods for row in m.paper_rows}


def legend_lines() -> list[str]:
    """One bullet per source: who measured the rows and under which protocol."""
    return [f"- {author}: {text}." for author, text in PROTOCOLS.items()]


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
      llm: the editor LLM of the row (None for rows no LLM of the paper's produced: the
        hand-designed CLRS reference, EvoPrompting's quoted figures).
      ood_acc: OOD accuracy in %; None when the table has none.
      macs_k: thousands of MACs; None when the table has none.
      cited: who measured the row, where the paper prints it, under which protocol.
    """

    source: str
    method: str
    llm: str | None
    ood_acc: float | None
    macs_k: float | None
    cited: Source | None = None


def paper_label(llm: str | None = None) -> str:
    """The provenance of the SPARK paper's own rows, e.g. 'SPARK paper, GPU, DeepSeek-R1, ...'
    (quoted rows carry `source_of(...).label()` instead)."""
    return f"SPARK paper, GPU, {llm or PAPER_LLM}, `{PAPER_PROTOCOL}` protocol"


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


def _columns(
    row: Mapping[str, str],
    where: str,
    number: Callable[[str | None, str], float | None],
    skip: tuple[str, ...],
) -> Mapping[str, float | None]:
    """A CSV row's value columns (all but `skip`, in the file's order), each read with `number`
    (`_req` or `_num`); an error names `where` and the column."""
    values = {k: number(v, f"{where} {k}") for k, v in row.items() if k not in skip}
    return types.MappingProxyType(values)


def _rows(name: str, row_of: Callable[[Mapping[str, str], str], T]) -> tuple[T, ...]:
    """One record per row of the reference table `name`, built by `row_of(row, where)` (where:
    'NAME row I', for its errors)."""
    return tuple(row_of(row, f"{name} row {i + 1}") for i, row in enumerate(_read(name)))


def _keyed_row(
    record: Callable[..., T], keys: tuple[str, ...], number: Callable[[str | None, str], Any]
) -> Callable[[Mapping[str, str], str], T]:
    """The row reader of a table whose rows are `record(*keys, values)`: the `keys` columns as
    text, then every other column read with `number` (`_req` or `_num`), see `_columns`."""
    return lambda row, where: record(*(row[k] for k in keys), _columns(row, where, number, keys))


def _ten_task_row(row: Mapping[str, str], where: str) -> TenTaskRow:
    tasks = _columns(row, where, _req, ("metric", "method", "avg"))
    return TenTaskRow(row["metric"], row["method"], tasks, _req(row["avg"], f"{where} avg"))


def _ablation_row(row: Mapping[str, str], where: str) -> AblationRow:
    return AblationRow(
        row["table"],
        row["variant"],
        row["llm"],
        int(_req(row["macs"], f"{where} macs")),
        _req(row["ood_acc"], f"{where} ood_acc"),
        _req(row["delta_pp"], f"{where} delta_pp"),
    )


@functools.lru_cache(maxsize=None)
def clrs_10task() -> tuple[TenTaskRow, ...]:
    """Table 1: MACs (K) and OOD accuracy (%) for 7 methods on 10 CLRS tasks."""
    return _rows("clrs_10task.csv", _ten_task_row)


@functools.lru_cache(maxsize=None)
def clrs_30task() -> tuple[ThirtyTaskRow, ...]:
    """Appendix table: OOD accuracy (%) of CLRS, EP and Ours on 30 CLRS tasks."""
    return _rows("clrs_30task.csv", _keyed_row(ThirtyTaskRow, ("task",), _req))


@functools.lru_cache(maxsize=None)
def dfs_ablation() -> tuple[AblationRow, ...]:
    """DFS ablation (two LLMs) and scope-control baselines."""
    return _rows("dfs_ablation.csv", _ablation_row)


@functools.lru_cache(maxsize=None)
def extra_benchmarks() -> tuple[ExtraBenchmarkRow, ...]:
    """MNIST-1D per backbone and four other non-CLRS benchmarks (empty cells -> None)."""
    return _rows(
        "extra_benchmarks.csv", _keyed_row(ExtraBenchmarkRow, ("benchmark", "metric"), _num)
    )


def _llm(cited: Source, llm: str) -> str | None:
    return llm if not cited.quoted else None


def for_task(task: str) -> tuple[TaskFigure, ...]:
    """Every published figure for `task`: Table 1, the 30-task table and (dfs) the ablations."""
    figures: list[TaskFigure] = []
    ten = [r for r in clrs_10task() if task in r.values]
    for method in dict.fromkeys(r.method for r in ten):
        by_metric = {r.metric: r.values[task] for r in ten if r.method == method}
        cited = source_of("10-task", method)
        figures.append(
            TaskFigure(
                "Table 1 (10-task)",
                method,
                _llm(cited, PAPER_LLM),
                by_metric.get("ood_acc"),
                by_metric.get("macs_k"),
                cited,
            )
        )
    for row in clrs_30task():
        if row.task == task:
            for m, v in row.values.items():
                cited = source_of("30-task", m)
                figures.append(
                    TaskFigure("30-task appendix", m, _llm(cited, PAPER_LLM), v, None, cited)
                )
    if task == "dfs":
        for row in dfs_ablation():
            source = "DFS ablation" if row.table == "ablation" else "DFS scope control"
            cited = source_of(row.table, row.variant)
            figures.append(
                TaskFigure(
                    source, row.variant, _llm(cited, row.llm), row.ood_acc, row.macs / 1000.0, cited
                )
            )
    return tuple(figures)


def comparable_text(cited: Source | None, preset: str | None) -> str:
    """'yes (...)' / 'no (...)': may a published row be set beside a run at `preset`?"""
    if cited is None:
        return "—"
    if cited.comparable(preset):
        return f"yes, same protocol (`{preset}`)"
    if not cited.presets:
        return "no (a protocol none of ours reproduces)"
    return f"no (its protocol: `{'`, `'.join(sorted(cited.presets))}`)"


def comparison_lines(
    task: str | None, preset: str | None, ours: Sequence[tuple[str, float | None, float | None]]
) -> list[str]:
    """Markdown: the published figures for `task` beside this run's rows, each labelled with
    who measured it, where the paper prints it, and whether its protocol is this run's.

    Args:
      task: the run's CLRS task (None: unknown; no published rows then).
      preset: the protocol preset the run used ('paper' is the paper's own).
      ours: (label, OOD accuracy in %, thousands of MACs) per row of this run.
    """
    this = f"this run, `{preset or 'unknown'}` protocol"
    lines = _comparison_intro(preset, this)
    if not task:
        return lines + ["", "The run's task is unknown, so no paper figures are shown."]
    try:
        figures = for_task(task)
    except ReferenceDataError as exc:
        return lines + ["", f"Reference tables unavailable: {exc}"]
    if not figures:
        lines += ["", f"The paper reports no figures for task `{task}`."]
    lines += [
        "",
        "Our MACs (one processor step, contraction count) and the paper's MACs (its "
        "model-level figure, counted by the SPARK paper for every row) measure different "
        "things and are never compared.",
        "",
    ]
    head = ["table", "method", "source", "LLM", "OOD (%)", "our MACs (K, one processor step)"]
    head += ["paper MACs (K, as reported)", "comparable"]
    lines += markdown.table(head, _comparison_rows(this, preset, ours, figures))
    notes = SEARCH_DYNAMICS.get(task, ())
    if notes:
        lines += ["", f"Search dynamics reported by the SPARK paper (its text; {paper_label()}):"]
        lines += [f"- {n}" for n in notes]
    return lines


def _comparison_intro(preset: str | None, this: str) -> list[str]:
    lines = [
        "## Paper reference figures",
        "",
        "Published rows, each labelled with its true source (column 'source'); a row is "
        f"comparable only when its protocol is this run's (column 'comparable'). Our rows: "
        f"{this}.",
    ]
    if preset == PAPER_PROTOCOL:
        lines[-1] += (
            f" This run used the `{PAPER_PROTOCOL}` protocol, so its OOD numbers are "
            "comparable in protocol with the rows marked so (hardware, LLM and editor may "
            "still differ)."
        )
    else:
        lines[-1] += (
            f" This run used the `{preset or 'unknown'}` protocol, so its numbers are "
            "NOT comparable with any published row."
        )
    return [*lines, "", *legend_lines()]


def _comparison_rows(this: str, preset: str | None, ours, figures) -> list[tuple[str, ...]]:
    def fmt(value: float | None, digits: int) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    # Our MACs count the contractions of one processor step on the reference graph; the
    # paper's are its model-level figure: different quantities, so separate columns.
    rows = [
        ("this run", label, this, "—", fmt(ood, 2), fmt(macs, 1), "—", "—")
        for label, ood, macs in ours
    ]
    rows += [
        (
            f.source,
            f.method,
            f.cited.label() if f.cited else SPARK_PAPER,
            f.llm or "—",
            fmt(f.ood_acc, 2),
            "—",
            fmt(f.macs_k, 1),
            comparable_text(f.cited, preset),
        )
        for f in figures
    ]
    return rows

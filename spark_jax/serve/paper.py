"""The paper's figures beside ours: the data of the pages' 'published beside ours' charts.

Where the SPARK paper prints per-task OOD accuracy a chart shows at a glance (Table 1's ten
CLRS tasks; the 30-task appendix table for the other tasks), a page draws the paper's bars
beside its own: a benchmark's per-task means, a comparison's best candidates on the test set,
a run's seed and best on the test set. The published numbers come from `report.reference`
(the shipped CSVs), each bar with its true source (`reference.source_of`: Ibarz et al. 2022
for the CLRS rows, EvoPrompting for EP, the SPARK paper for the rest), the protocol it was
measured under and whether that protocol is this page's preset. They are a separate list in
each group, never mixed into ours. Values are data (JSON), never markup.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from spark_jax.config import registry
from spark_jax.report import family as family_report
from spark_jax.report import reference
from spark_jax.report.accounting import meta_group

__all__ = [
    "REFERENCE_ROWS",
    "benchmark_figure",
    "compare_figure",
    "family_run_figure",
    "figure",
    "paper_name",
    "published",
    "run_figure",
]

# The paper's rows that are no search method (the hand-designed architectures a table starts
# from), as a reader knows them; a method's row is named by `config.registry`.
REFERENCE_ROWS = {"CLRS": "Triplet-GMPNN (CLRS)", "Base": "Base (the starting architecture)"}
# A family's paper row metric -> (our final-test metric of that name, factor to the shown
# value, the chart's unit, the axis maximum).
_FAMILY_METRICS = {
    "test_return": ("test_return", 1.0, "test return", 500.0),
    "acc": ("accuracy", 100.0, "test accuracy (%)", 100.0),
}
# Table 1's rows drawn when several tasks share a chart (the others are in the reference
# rows below it): the hand-designed reference our seed ports, OpenEvolve and SPARK.
FEW = ("CLRS", "OE", "Ours")


def paper_name(row: str) -> str:
    """A paper table's row key as a reader knows it: the registered method whose `paper_rows`
    hold it, by its paper name with the key after it ('OpenEvolve (OE)'; the key alone when it
    is the paper name), a reference architecture's name, or the key itself."""
    if row in REFERENCE_ROWS:
        return REFERENCE_ROWS[row]
    spec = next((m for m in registry.methods().values() if row in m.paper_rows), None)
    if spec is None or spec.paper_name == row:
        return row
    return f"{spec.paper_name} ({row})"


def _protocol(cited: reference.Source) -> str:
    """The protocol's short name: `paper` (ours: the `paper` preset) or the quoted setup's."""
    if reference.PAPER_PROTOCOL in cited.presets:
        return reference.PAPER_PROTOCOL
    if cited.author == reference.EVOPROMPTING:
        return "EvoPrompting's own (no preset of ours)"
    return f"{cited.author}'s own (no preset of ours)"


def _bar(method: str, value: float, table: str, preset: str | None) -> dict[str, Any]:
    cited = reference.source_of(table, method)
    return {
        "name": paper_name(method),
        "value": value,
        "source": cited.label(),
        "author": cited.author,
        "protocol": _protocol(cited),
        "comparable": cited.comparable(preset),
    }


def published(
    task: str, preset: str | None, methods: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The paper's OOD accuracy (%) bars for one CLRS task: Table 1's rows (only `methods`
    when given) when the task is one of its ten, else the 30-task appendix's; [] when the paper
    has none."""
    ten = [r for r in reference.clrs_10task() if r.metric == "ood_acc"]
    if ten and task in ten[0].values:
        return [
            _bar(r.method, r.values[task], "10-task", preset)
            for r in ten
            if methods is None or r.method in methods
        ]
    for row in reference.clrs_30task():
        if row.task == task:
            return [_bar(m, v, "30-task", preset) for m, v in row.values.items()]
    return []


def figure(
    title: str,
    preset: str | None,
    groups: Iterable[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]],
    unit: str = "OOD accuracy (%)",
    top: float = 100.0,
) -> dict[str, Any] | None:
    """A chart's data: `groups` (label, our bars, published bars), OOD accuracy in %; the
    sources named by its published bars with their protocols; `unit` and `top` (the axis's
    largest value) name the score. None when no group has a published bar (nothing of the
    paper's to draw beside ours)."""
    kept = [{"label": label, "ours": ours, "published": paper} for label, ours, paper in groups]
    if not any(g["published"] for g in kept):
        return None
    bars = [b for g in kept for b in g["published"]]
    authors = dict.fromkeys(b["author"] for b in bars)
    return {
        "title": title,
        "unit": unit,
        "percent": unit.endswith("(%)"),
        "top": top,
        "preset": preset,
        "groups": kept,
        "sources": list(dict.fromkeys(b["source"] for b in bars)),
        "protocols": [f"{a}: {reference.PROTOCOLS[a]}" for a in authors],
    }


def benchmark_figure(spec: Mapping[str, Any], table: Sequence[Mapping[str, Any]]):
    """Per task: each program's mean over seeds (this benchmark) beside Table 1's CLRS,
    OpenEvolve and SPARK bars (or the 30-task appendix's) for that task."""
    preset = spec.get("preset")
    groups = []
    for ti, task in enumerate(spec["tasks"]):
        ours = []
        for row in table:
            cell = row["cells"][ti]
            if cell is not None and cell["n"]:
                ours.append({"name": row["label"], "value": cell["mean"], "n": cell["n"]})
        groups.append((task, ours, published(task, preset, FEW)))
    return figure(
        "Per task: this benchmark's means beside the paper's published bars, OOD accuracy (%)",
        preset,
        groups,
    )


def compare_figure(task: str, preset: str, rows: Sequence[Mapping[str, Any]], seed_test):
    """The comparison's task: each method's best candidate on the test set (mean over search
    seeds) and the seed program's, beside every published bar for that task."""
    ours = []
    for r in rows:
        test = r.get("test_best_pct") or {}
        if test.get("mean") is not None:
            name = f"{r['name']}: best candidate (test set)"
            ours.append({"name": name, "value": test["mean"], "n": test.get("n")})
    if seed_test and seed_test.get("mean") is not None:
        ours.append(
            {"name": "seed program (test set)", "value": seed_test["mean"], "n": seed_test.get("n")}
        )
    return figure(
        f"OOD accuracy (%) on {task}: this comparison's test scores beside the paper's",
        preset,
        [(task, ours, published(task, preset))],
    )


def run_figure(task: str | None, preset: str | None, ours: Sequence[tuple[str, float | None]]):
    """A CLRS run's seed and best on the test set (fractions; None not scored) beside every
    published bar for its task; None for a task the paper has no figure for."""
    if not task:
        return None
    bars = [
        {"name": f"{label} (test set)", "value": 100.0 * value, "n": None}
        for label, value in ours
        if value is not None
    ]
    return figure(
        f"OOD accuracy (%) on {task}: this run's seed and best beside the paper's",
        preset,
        [(task, bars, published(task, preset))],
    )


def family_run_figure(meta: Mapping[str, Any], pair) -> dict[str, Any] | None:
    """A task family's run (flattened run_meta; `pair`: (label, evaluation) of the seed and
    the best): their test-part scores beside the paper's row for the benchmark and seed
    program (`reference/extra_benchmarks.csv`: the return for CartPole, accuracy for the
    classifiers); None when the paper has no such row."""
    fam, benchmark = meta.get("family"), meta.get("task")
    if not fam or not benchmark:
        return None
    key = family_report.paper_key(str(fam), str(benchmark), meta.get("config.seed_program"))
    rows = [
        r
        for r in reference.extra_benchmarks()
        if r.benchmark == key and r.metric in _FAMILY_METRICS
    ]
    if not rows:
        return None
    ours_name, scale, unit, top = _FAMILY_METRICS[rows[0].metric]
    ours = []
    for label, e in pair:
        if e is None:
            continue
        prefix = f"final_test.programs.{e['program_id']}.evaluation.metrics."
        value = meta_group(meta, prefix).get(ours_name)
        if value is not None:
            ours.append({"name": f"{label} (test part)", "value": scale * value, "n": None})
    where = "MNIST-1D appendix table" if str(key).startswith("mnist1d") else "appendix table"
    source = f"{reference.SPARK_PAPER}, {where} of the non-CLRS benchmarks"
    preset = meta.get("preset")
    paper = [
        {
            "name": paper_name(method),
            "value": value,
            "source": source,
            "author": reference.SPARK_PAPER,
            "protocol": reference.PAPER_PROTOCOL,
            "comparable": preset == reference.PAPER_PROTOCOL,
        }
        for method, value in rows[0].values.items()
        if value is not None
    ]
    return figure(
        f"{unit} on {benchmark}: this run's seed and best beside the paper's",
        None if preset is None else str(preset),
        [(str(benchmark), ours, paper)],
        unit=unit,
        top=top,
    )

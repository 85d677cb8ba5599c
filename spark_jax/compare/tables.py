"""A comparison's report: one row per method over its search seeds, read from the run
databases (`report.accounting.summarize` for each run), plus two band plots and the paper's
reference rows. Recomputed from the databases every time, so a partial comparison's report
is the report of what has finished.

Sample efficiency: for a threshold T on OOD accuracy (default: the lowest of the methods' mean
best OOD, so every method reaches it on average), each run's count of evaluated candidates until
its best-so-far first reaches T; a method's figure is the median over the runs that reached it,
and its ratio is that over the first method's (the paper's 1600/57 = 28.1x reading).
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import statistics
from typing import Any, Sequence

from spark_jax.compare.methods import Method, resolve_methods
from spark_jax.compare.runner import ComparePlan, run_dir_of
from spark_jax.report import reference
from spark_jax.report.accounting import RunAccounting, find_meta, read_meta, summarize
from spark_jax.search.rundb import RunDB
from spark_jax.util.files import write_atomic

__all__ = ["PLOT_FILES", "RunFigures", "collect", "write_compare_report"]

PLOT_FILES = ("best_ood_vs_evaluated.png", "valid_rate_vs_attempt.png")


@dataclasses.dataclass(frozen=True)
class RunFigures:
    """One finished search of a comparison."""

    method: str
    seed: int
    acc: RunAccounting
    editor: str
    llm_calls: int
    tokens: int


def collect(out: pathlib.Path, plan: ComparePlan) -> list[RunFigures]:
    """The figures of every run of `plan` that has a database (finished or not)."""
    figures = []
    for method, seed in plan.runs():
        path = run_dir_of(out, method, seed) / "run.db"
        if not path.is_file():
            continue
        with RunDB.open(path) as db:
            meta, created = read_meta(db)
            acc = summarize(db, meta, created)
            calls = db.llm_calls()
        editor = str(find_meta(meta, "editor.kind") or find_meta(meta, "kind") or "?")
        tokens = sum((c["prompt_tokens"] or 0) + (c["completion_tokens"] or 0) for c in calls)
        n_llm = sum(1 for c in calls if c["is_llm"])
        figures.append(RunFigures(method.name, seed, acc, editor, n_llm, tokens))
    return figures


def _spread(values: Sequence[float | None], scale: float = 1.0, digits: int = 2) -> str:
    xs = [scale * v for v in values if v is not None and not math.isnan(v)]
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{xs[0]:.{digits}f}"
    return f"{statistics.mean(xs):.{digits}f} ± {statistics.stdev(xs):.{digits}f}"


def _per(count: int, evaluated: int) -> str:
    return f"{count / evaluated:.2f}" if evaluated else "—"


def _to_threshold(acc: RunAccounting, threshold: float) -> int | None:
    """Evaluated candidates until the best-so-far first reaches `threshold` (0: the seed)."""
    for k, v in enumerate(acc.curves.get("best_eval", ())):
        if v is not None and not math.isnan(v) and v >= threshold:
            return k
    return None


def _default_threshold(by_method: dict[str, list[RunFigures]]) -> float | None:
    means = [
        statistics.mean(r.acc.best_ood for r in runs if r.acc.best_ood is not None)
        for runs in by_method.values()
        if any(r.acc.best_ood is not None for r in runs)
    ]
    return min(means) if means else None


def _method_table(methods, by_method, threshold) -> list[str]:
    head = [
        "method (paper name)",
        "runs",
        "best OOD % at budget",
        "evaluated",
        f"evaluated to reach {100 * threshold:.2f}%" if threshold is not None else "to threshold",
        "ratio vs first",
        "valid rate",
        "entanglement rate",
        "LLM calls / evaluated",
        "tokens / evaluated",
        "wall h",
        "device h",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    reference_median = None
    for i, m in enumerate(methods):
        runs = by_method.get(m.name, [])
        accs = [r.acc for r in runs]
        reach = [_to_threshold(a, threshold) for a in accs] if threshold is not None else []
        reached = [k for k in reach if k is not None]
        median = statistics.median(reached) if reached else None
        if i == 0:
            reference_median = median
        ratio = (
            f"{median / reference_median:.2f}x" if median is not None and reference_median else "—"
        )
        reach_text = f"{median:g} ({len(reached)}/{len(runs)} reached)" if runs else "—"
        evaluated = sum(a.evaluated for a in accs)
        row = [
            f"`{m.name}` ({m.paper_name})",
            str(len(runs)),
            _spread([a.best_ood for a in accs], 100.0),
            _spread([float(a.evaluated) for a in accs], digits=1),
            reach_text,
            ratio,
            _spread([a.valid_rate for a in accs]),
            _spread([a.entanglement_rate for a in accs]),
            _per(sum(r.llm_calls for r in runs), evaluated),
            _per(sum(r.tokens for r in runs), evaluated),
            f"{sum(a.wall_hours or 0.0 for a in accs):.3f}",
            f"{sum(a.device_hours for a in accs):.3f}",
        ]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _band_plot(path, methods, by_method, curve, xlabel, ylabel, title, scale) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for m in methods:
        curves = [list(r.acc.curves.get(curve, ())) for r in by_method.get(m.name, [])]
        curves = [[scale * v for v in c] for c in curves if c]
        if not curves:
            continue
        n = max(len(c) for c in curves)
        # Runs that stopped early keep their last value (a best-so-far or a cumulative rate).
        padded = [c + [c[-1]] * (n - len(c)) for c in curves]
        cols = [[row[k] for row in padded if not math.isnan(row[k])] for k in range(n)]
        xs = [k for k in range(n) if cols[k]]
        mean = [statistics.mean(cols[k]) for k in xs]
        ax.plot(xs, mean, label=f"{m.name} (n={len(curves)})")
        ax.fill_between(xs, [min(cols[k]) for k in xs], [max(cols[k]) for k in xs], alpha=0.2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path), dpi=110)


def _reference_rows(task: str) -> list[str]:
    if task != "dfs":
        return ["The paper's ablation tables are for dfs only."]
    lines = [
        f"Published DFS figures ({reference.paper_label()}); not measured here.",
        "",
        "| table | variant | LLM | OOD % | Δ vs CLRS (pp) |",
        "|---|---|---|---|---|",
    ]
    for r in reference.dfs_ablation():
        lines.append(f"| {r.table} | {r.variant} | {r.llm} | {r.ood_acc:.2f} | {r.delta_pp:+.2f} |")
    return lines


def write_compare_report(
    out: pathlib.Path, plan: ComparePlan, threshold: float | None = None
) -> pathlib.Path:
    """Writes OUT/report.md and OUT/plots/*.png from the runs' databases; returns report.md."""
    methods: list[Method] = list(resolve_methods(list(plan.methods)))
    figures = collect(out, plan)
    by_method: dict[str, list[RunFigures]] = {}
    for r in figures:
        by_method.setdefault(r.method, []).append(r)
    if threshold is None:
        threshold = _default_threshold(by_method)
    base: dict[str, Any] = dict(plan.base)
    task, preset = base.get("task", "dfs"), base.get("preset", "smoke")
    editors = sorted({r.editor for r in figures}) or ["?"]
    offline = editors == ["offline"]
    protocol = (
        f"`{preset}` protocol, task `{task}`, budget {plan.budget} evaluated candidates (seed "
        f"included), attempt cap {plan.max_attempts}, search seeds {list(plan.seeds)}; editor: "
        + (
            "offline rule-based editor (NOT an LLM: these rows compare the scoping and the "
            "harness under rules, not what an LLM would do)"
            if offline
            else ", ".join(editors)
        )
    )
    plots = out / "plots"
    _band_plot(
        plots / PLOT_FILES[0], methods, by_method, "best_eval", "evaluated candidates (0: seed)",
        "best-so-far OOD accuracy (%)", f"best-so-far vs evaluated ({preset}, {task})", 100.0,
    )  # fmt: skip
    _band_plot(
        plots / PLOT_FILES[1], methods, by_method, "valid", "attempt",
        "cumulative valid rate", f"cumulative valid rate ({preset}, {task})", 1.0,
    )  # fmt: skip
    expected = len(methods) * len(plan.seeds)
    lines = [
        "# Comparison",
        "",
        protocol,
        "",
        f"Runs with a database: {len(figures)} of {expected}.",
        "",
        "## Methods at the same budget",
        "",
        *_method_table(methods, by_method, threshold),
        "",
        "Cells: mean ± sample std over search seeds. Entanglement rate: share of attempts "
        "whose edit mixed both factors or touched the scaffolding (broken tag lines "
        "included). Device hours: the runs' evaluations (compile + train).",
        "",
        *(f"![{name}](plots/{name})" for name in PLOT_FILES),
        "",
        "## Methods",
        "",
        *(f"- `{m.name}` ({m.paper_name}): {m.description}" for m in methods),
        "",
        "## Paper reference rows",
        "",
        *_reference_rows(task),
        "",
    ]
    report = out / "report.md"
    write_atomic(report, "\n".join(lines))
    return report

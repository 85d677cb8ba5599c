"""A comparison's report: one row per method over its search seeds, read from the run
databases (`report.accounting.summarize` for each run), the seed program as its own row, the
methods' verdicts against the first (`compare.verdicts`), two band plots and the paper's
reference rows. Recomputed from the databases every time, so a partial comparison's report
is the report of what has finished.

Best at budget B: the seed counts toward B (the rule of `search.budget`), so it is the best of
a run's first B - 1 candidates evaluated after the seed; the seed's own score is not a
candidate's (a run whose candidates all score below the seed shows that; the seed is the row
'seed program'), beside the run's attempts and evaluated count.

Sample efficiency: for a threshold T on OOD accuracy (default: the lowest of the methods' mean
best evaluated candidate, so every method reaches it on average), each run's count of evaluated
candidates until its best-so-far first reaches T; a method's figure is the median over the runs
that reached it, and its ratio is that over the first method's (the paper's 1600/57 = 28.1x
reading).
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import statistics
from typing import Any, Mapping, Sequence

from spark_jax.compare import entanglement, sequential, verdicts
from spark_jax.compare import plots as plots_lib
from spark_jax.compare.figures import (
    RunFigures,
    best_at_budget,
    best_candidate_ood,
    by_method,
    collect,
    run_figures,
)
from spark_jax.compare.methods import Method, resolve_methods
from spark_jax.compare.plots import Band, band
from spark_jax.compare.runner import ComparePlan
from spark_jax.operator.baselines import BASELINES
from spark_jax.report import reference
from spark_jax.report.accounting import RunAccounting
from spark_jax.util import labels, markdown
from spark_jax.util.files import write_atomic

__all__ = [
    "OFFLINE_LABEL",
    "PLOT_FILES",
    "Band",
    "MethodRow",
    "RunFigures",
    "Spread",
    "band",
    "best_candidate_ood",
    "by_method",
    "collect",
    "default_threshold",
    "method_rows",
    "run_figures",
    "seed_ood",
    "write_compare_report",
]

PLOT_FILES = ("best_ood_vs_evaluated.png", "valid_rate_vs_attempt.png")
# What a method's row says when its runs used the offline (rule-based) editor.
OFFLINE_LABEL = "offline analogue, not an LLM result"


@dataclasses.dataclass(frozen=True)
class Spread:
    """Mean and sample std over search seeds (std None with one value; both None with none)."""

    mean: float | None
    std: float | None
    n: int

    def text(self, digits: int = 2) -> str:
        if self.mean is None:
            return "—"
        if self.std is None:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} ± {self.std:.{digits}f}"


def spread(values: Sequence[float | None], scale: float = 1.0) -> Spread:
    xs = [scale * v for v in values if v is not None and not math.isnan(v)]
    if not xs:
        return Spread(None, None, 0)
    if len(xs) == 1:
        return Spread(xs[0], None, 1)
    return Spread(statistics.mean(xs), statistics.stdev(xs), len(xs))


def _per(count: int, evaluated: int) -> float | None:
    return count / evaluated if evaluated else None


def _to_threshold(acc: RunAccounting, threshold: float) -> int | None:
    """Evaluated candidates until the best-so-far first reaches `threshold` (0: the seed)."""
    for k, v in enumerate(acc.curves.get("best_eval", ())):
        if v is not None and not math.isnan(v) and v >= threshold:
            return k
    return None


def seed_ood(acc: RunAccounting) -> float | None:
    """The seed program's OOD (fraction) in this run; None when it was not scored."""
    return None if acc.seed is None else acc.seed["ood_score"]


def default_threshold(grouped: Mapping[str, Sequence[RunFigures]]) -> float | None:
    """The lowest of the methods' mean best evaluated candidate (every method reaches it on
    average)."""
    means = [
        statistics.mean(v for v in values if v is not None)
        for values in ([best_candidate_ood(r.acc) for r in runs] for runs in grouped.values())
        if any(v is not None for v in values)
    ]
    return min(means) if means else None


@dataclasses.dataclass(frozen=True)
class MethodRow:
    """One method's row of the comparison table (percent where the report shows percent).

    Attributes:
      best_ood_pct: best at budget B (the run's selection score: validation under ood_val):
        the best of the first B - 1 candidates after the seed (the seed counts toward B),
        over the runs.
      test_best_pct: the run's best evaluated candidate scored on the test set after the
        search (ood_val runs only).
      attempts, evaluated: proposal attempts and evaluated candidates (counted toward the
        budget beside the seed) per run.
      to_threshold: median evaluated candidates to reach the threshold over the runs that
        reached it (`reached` of `runs`); ratio: that over the first method's.
      llm_calls_per_evaluated, tokens_per_evaluated: totals over runs / evaluated candidates.
      editors: the runs' editor kinds; offline: all of them the offline editor.
    """

    method: Method
    runs: int
    best_ood_pct: Spread
    test_best_pct: Spread
    attempts: Spread
    evaluated: Spread
    evaluated_total: int
    to_threshold: float | None
    reached: int
    ratio: float | None
    valid_rate: Spread
    entanglement_rate: Spread
    llm_calls_per_evaluated: float | None
    tokens_per_evaluated: float | None
    wall_hours: float
    device_hours: float
    editors: tuple[str, ...]

    @property
    def offline(self) -> bool:
        return self.editors == ("offline",)


def method_rows(
    methods: Sequence[Method],
    grouped: Mapping[str, Sequence[RunFigures]],
    threshold: float | None,
    budget: int | None = None,
) -> list[MethodRow]:
    """The table's rows, one per method in order (the first is the reference of ratios)."""
    rows: list[MethodRow] = []
    reference_median = None
    for i, m in enumerate(methods):
        runs = list(grouped.get(m.name, []))
        accs = [r.acc for r in runs]
        reach = [_to_threshold(a, threshold) for a in accs] if threshold is not None else []
        reached = [k for k in reach if k is not None]
        median = statistics.median(reached) if reached else None
        if i == 0:
            reference_median = median
        evaluated = sum(a.evaluated_budget for a in accs)
        rows.append(
            MethodRow(
                method=m,
                runs=len(runs),
                best_ood_pct=spread([best_at_budget(a, budget) for a in accs], 100.0),
                test_best_pct=spread([r.test_best for r in runs], 100.0),
                attempts=spread([float(a.attempts) for a in accs]),
                evaluated=spread([float(a.evaluated_budget) for a in accs]),
                evaluated_total=evaluated,
                to_threshold=median,
                reached=len(reached),
                ratio=median / reference_median
                if median is not None and reference_median
                else None,
                valid_rate=spread([a.valid_rate for a in accs]),
                entanglement_rate=spread([a.entanglement_rate for a in accs]),
                llm_calls_per_evaluated=_per(sum(r.llm_calls for r in runs), evaluated),
                tokens_per_evaluated=_per(sum(r.tokens for r in runs), evaluated),
                wall_hours=sum(a.wall_hours or 0.0 for a in accs),
                device_hours=sum(a.device_hours for a in accs),
                editors=tuple(sorted({r.editor for r in runs})),
            )
        )
    return rows


def _opt(value: float | None, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def _method_table(methods, grouped, threshold, budget) -> list[str]:
    head = [
        "method (paper name)",
        "runs",
        f"best at budget B={budget} (seed counted): selection OOD %",
        "best candidate: test OOD %",
        "attempts",
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
    rows = []
    for r in method_rows(methods, grouped, threshold, budget):
        reach = f"{_opt(r.to_threshold, 'g')} ({r.reached}/{r.runs} reached)" if r.runs else "—"
        label = (
            f"; {OFFLINE_LABEL}" if r.offline and r.method.operator.get("mode") in BASELINES else ""
        )
        row = [
            f"`{r.method.name}` ({r.method.paper_name}{label})",
            str(r.runs),
            r.best_ood_pct.text(),
            r.test_best_pct.text(),
            r.attempts.text(1),
            r.evaluated.text(1),
            reach,
            "—" if r.ratio is None else f"{r.ratio:.2f}x",
            r.valid_rate.text(),
            r.entanglement_rate.text(),
            _opt(r.llm_calls_per_evaluated, ".2f"),
            _opt(r.tokens_per_evaluated, ".2f"),
            f"{r.wall_hours:.3f}",
            f"{r.device_hours:.3f}",
        ]
        rows.append(row)
    seeds = spread([seed_ood(r.acc) for runs in grouped.values() for r in runs], 100.0)
    tests = spread([r.test_seed for runs in grouped.values() for r in runs], 100.0)
    cells = ["`seed` (seed program, no search)", str(seeds.n), seeds.text(), tests.text()]
    rows.append(cells + ["—"] * (len(head) - len(cells)))
    return markdown.table(head, rows)


def reference_rows(task: str, preset: str) -> list[str]:
    if task != "dfs":
        return ["The paper's ablation tables are for dfs only."]
    lines = [
        "Published DFS figures, not measured here, each labelled with its true source; "
        f"comparable only when its protocol is this comparison's (`{preset}`).",
        "",
        *reference.legend_lines(),
        "",
    ]
    rows = []
    for r in reference.dfs_ablation():
        cited = reference.source_of(r.table, r.variant)
        llm = "—" if cited.quoted else r.llm
        rows.append(
            [r.variant, cited.label(), llm, f"{r.ood_acc:.2f}", f"{r.delta_pp:+.2f}"]
            + [reference.comparable_text(cited, preset)]
        )
    head = ["variant", "source", "LLM", "OOD %", "Δ vs CLRS (pp, the paper's)", "comparable"]
    return lines + markdown.table(head, rows)


_TABLE_NOTE = (
    "Cells: mean ± sample std over search seeds. Best at budget B: the seed counts toward B "
    "(as a search's `budget` counts it), so this is the best of each run's first B - 1 "
    "candidates evaluated after the seed, on the score the search selected with (the "
    "validation set under `ood_val`); the seed's own score is the row `seed` (one "
    "evaluation per run); best candidate: test OOD %: the run's best evaluated candidate "
    "(over all its attempts) trained again on seeds the search never used and scored once "
    "on the test set after the search (`ood_val` runs only; runs before that rule reused the "
    "search's seeds); attempts: every proposal, the same cap for every method; evaluated: the "
    "candidates counted toward the budget beside the seed (feasible and entered training, failed "
    "trainings included; duplicates are not retrained and not counted). Entanglement rate: share of attempts whose edit mixed both "
    "factors or touched the scaffolding (broken tag lines included). Device hours: the "
    "runs' evaluations (compile + train)."
)


_ENTANGLEMENT_READING = (
    "Reading (the paper's): an edit that mixes both factors or touches the scaffolding "
    "is entangled; holistic methods are free to, factor-scoped SPARK steps are not."
)


def _first_candidates(n: int) -> str:
    """'the first candidate', 'the first 3 candidates', 'no candidate' (B = 1)."""
    return (
        "no candidate"
        if n < 1
        else "the first candidate"
        if n == 1
        else f"the first {n} candidates"
    )


def _run_context(plan: ComparePlan, figures) -> dict[str, Any]:
    """Task, preset, editors and machine of the runs, the report's protocol line and the
    plots' label."""
    base: dict[str, Any] = dict(plan.base)
    task, preset = base.get("task", "dfs"), base.get("preset", "smoke")
    editors = sorted({r.editor for r in figures}) or ["?"]
    offline = editors == ["offline"]
    machine = "; ".join(sorted({r.machine for r in figures if r.machine})) or "not recorded"
    protocol = (
        f"`{preset}` protocol, task `{task}`, budget {plan.budget} evaluated programs (the "
        f"seed counted: best at budget reads {_first_candidates(plan.budget - 1)}), "
        f"attempt cap {plan.max_attempts}, search seeds {list(plan.seeds)}; editor: "
        + (
            "offline rule-based editor (NOT an LLM: these rows compare the scoping and the "
            "harness under rules, not what an LLM would do)"
            if offline
            else ", ".join(editors)
        )
        + f"; machine {machine}"
    )
    label = (
        f"{preset} protocol, task {task}, budget {plan.budget}, search seeds "
        f"{list(plan.seeds)}; {labels.editor_label(editors)}; machine {machine}"
    )
    return dict(task=task, preset=preset, offline=offline, protocol=protocol, label=label)


def _draw_plots(plots: pathlib.Path, methods, grouped, context: dict[str, Any]) -> None:
    preset, task, label = context["preset"], context["task"], context["label"]
    plots_lib.band_plot(
        plots / PLOT_FILES[0], methods, grouped, "best_eval", "evaluated candidates (0: seed)",
        "best-so-far OOD accuracy (%)", f"best-so-far vs evaluated ({preset}, {task})", 100.0,
        label,
    )  # fmt: skip
    plots_lib.band_plot(
        plots / PLOT_FILES[1], methods, grouped, "valid", "attempt",
        "cumulative valid rate", f"cumulative valid rate ({preset}, {task})", 1.0, label,
    )  # fmt: skip


def _methods_section(methods: list[Method], offline: bool) -> list[str]:
    lines = [f"- `{m.name}` ({m.paper_name}): {m.description}" for m in methods]
    if offline and any(m.operator.get("mode") in BASELINES for m in methods):
        lines += [
            "",
            "Baselines under the offline editor run offline analogues: the method's "
            "population loop and selection with catalogue transforms in place of the "
            "LLM (NOT an LLM). They test the harness, the budget accounting and the "
            "selection schemes, not what the method's prompts would get from a model.",
        ]
    return lines


def write_compare_report(
    out: pathlib.Path, plan: ComparePlan, threshold: float | None = None
) -> pathlib.Path:
    """Writes OUT/report.md and OUT/plots/*.png from the runs' databases; returns report.md."""
    methods: list[Method] = list(resolve_methods(list(plan.methods)))
    figures = collect(out, plan)
    grouped = by_method(figures)
    if threshold is None:
        threshold = default_threshold(grouped)
    context = _run_context(plan, figures)
    task, preset, offline = context["task"], context["preset"], context["offline"]
    _draw_plots(out / "plots", methods, grouped, context)
    expected = len(methods) * len(plan.seeds)
    first = methods[0].name if methods else "?"
    runs = f"{len(figures)} of {expected}"
    sections = [
        ["# Comparison", "", context["protocol"], "", f"Runs with a database: {runs}.", ""],
        markdown.section(
            "Methods at the same budget",
            [*_method_table(methods, grouped, threshold, plan.budget), "", _TABLE_NOTE],
        ),
        markdown.section(
            f"Methods against `{first}`",
            [
                *verdicts.against_first(methods, grouped, plan.budget),
                "",
                *(f"![{name}](plots/{name})" for name in PLOT_FILES),
            ],
        ),
        *(
            [markdown.section("Sequential decisions", sequential.section_lines(plan, grouped))]
            if plan.sequential
            else []
        ),
        markdown.section(
            "Methods against the sampling controls",
            verdicts.against_controls(methods, grouped, plan.budget),
        ),
        markdown.section(
            "Entanglement per method and factor",
            [*entanglement.section(out, plan, methods), "", _ENTANGLEMENT_READING],
        ),
        markdown.section("Methods", _methods_section(methods, offline)),
        markdown.section("Paper reference rows", reference_rows(task, preset)),
    ]
    report = out / "report.md"
    write_atomic(report, markdown.document(sections))
    return report

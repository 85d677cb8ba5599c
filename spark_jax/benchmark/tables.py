"""A benchmark's outputs: `report.md` (the paper-shaped table, the paired comparison, the
paper's reference rows, failures, the protocol), `results.csv` (one row per job) and
`plots/ood_by_task.png`. Everything is recomputed from the database, so a resumed or
interrupted benchmark's report is always the report of what has landed."""

from __future__ import annotations

import csv
import io
import math
import pathlib

from spark_jax.benchmark import decided, rounds, stats
from spark_jax.benchmark.plan import CLRS10
from spark_jax.benchmark.seeds import program_lines
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.config import tasks as tasks_lib
from spark_jax.report import reference
from spark_jax.stats import significance
from spark_jax.util import labels, markdown
from spark_jax.util.files import write_atomic

__all__ = [
    "COMPARISON_HEADING",
    "PLOT_FILE",
    "comparison_lines",
    "comparison_section",
    "reference_lines",
    "report_cells",
    "write_benchmark_report",
]

PLOT_FILE = "plots/ood_by_task.png"
COMPARISON_HEADING = "## Paired comparison"


def _cell_text(cell: stats.Cell | None) -> str:
    if cell is None:
        return "…"  # not landed yet
    if not cell.n:
        return "failed"
    text = f"{cell.mean:.2f} ± {cell.std:.2f}" if cell.n > 1 else f"{cell.mean:.2f}"
    return text + (f" ({len(cell.failures)} failed)" if cell.failures else "")


def _num(value: float, digits: int = 2) -> str:
    return "—" if math.isnan(value) else f"{value:.{digits}f}"


def _protocol_line(spec: dict, machines: str) -> str:
    p = spec["protocol"]
    return (
        f"`{spec['preset']}` protocol: train sizes {list(p['train_lengths'])}, "
        f"{p['train_steps']} steps, batch {p['batch_size']}, hidden {p['hidden_size']}; "
        f"OOD test size {p['test_length']} ({p['test_samples']} samples); seeds "
        f"{list(spec['seeds'])}; executor {spec['executor']['kind']}; measured on {machines}"
    )


def _main_table(db, spec, programs, cells) -> list[str]:
    tasks = list(spec["tasks"])
    means = [("mean", tasks)]
    if set(CLRS10) <= set(tasks) and len(tasks) > len(CLRS10):
        means.insert(0, ("10-task mean", list(CLRS10)))
    if set(tasks_lib.TASKS) <= set(tasks):
        means[-1] = ("30-task mean", list(tasks_lib.TASKS))
    evals = {}
    for r in db.results():
        if r.evaluation is not None:
            evals.setdefault(r.program_key, r.evaluation)
    head = ["program", *tasks, *(m for m, _ in means), "params", "MACs/step (K)"]
    rows = []
    for p in programs:
        ev = evals.get(p.key)
        row = [f"`{p.label}`", *(_cell_text(cells.get((p.label, t))) for t in tasks)]
        row += [_num(stats.mean_over(cells, p.label, ts)) for _, ts in means]
        row += [
            "—" if ev is None else f"{ev.params:,}",
            "—" if ev is None else f"{ev.macs / 1000:.1f}",
        ]
        rows.append(row)
    lines = markdown.table(head, rows)
    nodes = next(iter(evals.values())).macs_nodes if evals else "?"
    lines += [
        "",
        "Cells: OOD accuracy (%) mean ± sample std over the seeds that trained (one seed: no "
        "spread shown); '…' not landed yet; failed seeds are counted apart, never as zeros. "
        "Means are over per-task means and need every task. params: processor parameters; "
        f"MACs/step: contraction MACs of one processor step at {nodes} nodes, batch 1 (ours; "
        "the paper's MACs are model-level and are shown in their own table below).",
    ]
    return lines


def _p(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3g}"


def _test_name(test: significance.TaskTest) -> str:
    if not test.tested:
        return "none (fewer than 2 seeds on a side)"
    return f"{test.method}{' (same seeds)' if test.paired else ''}"


def _interval_text(c: stats.PairedComparison) -> str:
    if c.interval is None:
        return "cannot be computed (a task has fewer than 2 seeds on a side)"
    return c.interval.text()


def _comparison_notes(base: str, comparisons, alpha: float) -> list[str]:
    tests = [v.test for c in comparisons for v in c.per_task]
    m = sum(t.tested for t in tests)
    mdd = stats.table_mdd(comparisons)
    lines = [
        "",
        f"- Per task, each program against `{base}`: fewer than 2 seeds on either side gives "
        f"`{significance.CANNOT_TELL}` (no test: one seed has no spread); up to "
        f"{significance.EXACT_MAX_N} seeds per side an exact permutation test of the "
        "difference of means (sign flips of the per-seed differences when both used the same "
        "seeds), Welch's t-test (paired t) beyond. Holm-Bonferroni over the "
        f"{m} test(s) of this table at family-wise alpha = {alpha:g}: `win` or `loss` only "
        f"when the Holm-adjusted p is at most alpha, `{significance.CANNOT_TELL}` otherwise "
        "(not evidence of equality).",
        "- Mean difference over the tasks (fixed; never resampled): 95% t interval with "
        "Var = sum of the per-task variances of the difference / T^2 and Welch-Satterthwaite "
        "degrees of freedom.",
    ]
    if math.isnan(mdd):
        lines.append(
            "- Minimal detectable difference: cannot be computed (no task has 2 or more seeds on "
            "both sides: no spread is known)."
        )
    else:
        lines.append(
            f"- Minimal detectable difference per task at these seeds and spread: {mdd:.2f} pp "
            f"({significance.MDD_FORMULA})."
        )
    floor = significance.floor_note(tests, alpha)
    if floor:
        lines.append(f"- {floor}")
    return lines


def _comparison(
    spec, programs, cells, same=(), alpha: float = significance.DEFAULT_ALPHA
) -> list[str]:
    base = spec.get("baseline")
    if base is None:
        return ["No baseline chosen (`--baseline LABEL`): no paired comparison."]
    others = [p.label for p in programs if p.label != base]
    comparisons = stats.compare_table(cells, others, base, spec["tasks"], alpha, same)
    head = ["program", "tasks", "wins", "losses", significance.CANNOT_TELL, "mean diff (pp)"]
    lines = markdown.table(
        [*head, "95% CI (seeds within tasks)"],
        [
            [f"`{c.program}`", len(c.tasks), c.wins, c.losses, c.cannot_tell]
            + ["—" if math.isnan(c.mean_diff) else f"{c.mean_diff:+.2f}", _interval_text(c)]
            for c in comparisons
        ],
    )
    head = ["program", "task", "seeds (program / baseline)", "test", "diff (pp)", "p"]
    lines += [""] + markdown.table(
        [*head, "p (Holm)", "verdict"],
        [
            [f"`{c.program}`", v.task, f"{v.test.n_a} / {v.test.n_b}", _test_name(v.test)]
            + [f"{v.test.diff:+.2f}", _p(v.test.p), _p(v.p_holm), v.verdict]
            for c in comparisons
            for v in c.per_task
        ],
    )
    lines += _comparison_notes(base, comparisons, alpha)
    if same:
        lines.append(
            f"- `{stats.IDENTICAL}`: shown to compute the baseline's function on that task before "
            "training (`spark_jax/evaluation/identity.py`: same parameters from the same keys, "
            "bit-identical loss and gradients on probe batches; evidence, not a proof for every "
            "input); trained once, the baseline's scores stand for both; not in Holm's family."
        )
    return lines


def _reference(spec) -> list[str]:
    tasks = [t for t in spec["tasks"]]
    ten = [t for t in tasks if t in CLRS10]
    preset = spec["preset"]
    lines = [
        "Published figures, not measured here, each row labelled with its true source; a row "
        f"is comparable with the table above only when its protocol is this benchmark's "
        f"(`{preset}`): see 'comparable'.",
        "",
        *reference.legend_lines(),
        "",
    ]
    if ten:
        rows = []
        for row in sorted(reference.clrs_10task(), key=lambda r: r.metric != "ood_acc"):
            ood = row.metric == "ood_acc"
            unit, digits = ("OOD %", 2) if ood else ("MACs (K, model-level)", 0)
            cells = [f"{row.values[t]:.{digits}f}" for t in ten] + [f"{row.avg:.{digits}f}"]
            cited = reference.source_of("10-task", row.method)
            cells += [cited.label(), reference.comparable_text(cited, preset)]
            rows.append([f"{row.method} ({unit})", *cells])
        lines += markdown.table(["paper row", *ten, "10-task avg", "source", "comparable"], rows)
        lines.append("")
    rest = {r.task: r for r in reference.clrs_30task()}
    others = [t for t in tasks if t in rest]
    if others:
        methods = list(next(iter(rest.values())).values)
        cited = [reference.source_of("30-task", m) for m in methods]
        head = ["30-task appendix (OOD %)", *(f"{m}: {c.label()}" for m, c in zip(methods, cited))]
        rows = [[t, *(f"{rest[t].values[m]:.2f}" for m in methods)] for t in others]
        rows.append(["comparable", *(reference.comparable_text(c, preset) for c in cited)])
        lines += markdown.table(head, rows)
    return lines


def _failures(db, labels) -> list[str]:
    failed = [r for r in db.results() if not r.ok]
    if not failed:
        return ["None."]
    rows = [
        [f"`{labels[r.program_key]}`", r.task, r.seed, r.error_type]
        + [markdown.cell((r.error or "").splitlines()[0][:160] if r.error else "")]
        for r in failed
    ]
    return markdown.table(["program", "task", "seed", "type", "error"], rows)


def _write_csv(db, labels, path: pathlib.Path) -> None:
    rows = [
        [
            "program",
            "task",
            "seed",
            "ok",
            "ood_score",
            "val_score",
            "params",
            "macs",
            "error_type",
            "wall_seconds",
            "machine",
        ]
    ]
    for r in db.results():
        ev = r.evaluation
        rows.append(
            [labels[r.program_key], r.task, r.seed, int(r.ok)]
            + (["", "", "", ""] if ev is None else [ev.score, ev.val_score, ev.params, ev.macs])
            + [r.error_type or "", f"{r.wall_seconds:.1f}", (ev and ev.machine) or ""]
        )
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    write_atomic(path, buf.getvalue())


def _plot(spec, programs, cells, machines: str, path: pathlib.Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tasks = list(spec["tasks"])
    fig = Figure(figsize=(max(6.0, 0.9 * len(tasks) + 2), 5.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(1, len(programs))
    for i, p in enumerate(programs):
        xs = [k + (i - (len(programs) - 1) / 2) * width for k in range(len(tasks))]
        found = [cells.get((p.label, t)) for t in tasks]
        means = [c.mean if c is not None and c.n else 0.0 for c in found]
        errs = [c.std if c is not None and c.n else 0.0 for c in found]
        ax.bar(xs, means, width, yerr=errs, capsize=2, label=p.label)
    ax.set_xticks(range(len(tasks)))
    ax.set_xticklabels(tasks, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("OOD % (mean ± std over seeds)")
    ax.set_title(f"OOD accuracy by task ({spec['preset']} protocol, seeds {list(spec['seeds'])})")
    ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    searched = [p.label for p in programs if p.search_seeds]
    found = (
        f" ({', '.join(searched)}: found by a search, its editor in its run)" if searched else ""
    )
    labels.caption(
        fig,
        f"{spec['preset']} protocol; programs trained as given, no editor in this "
        f"benchmark{found}; measured on {machines}",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path), dpi=110)


def report_cells(spec, programs, results, identity):
    """(cells, identical pairs) as report.md shows them: a program shown identical to the
    baseline on a task takes the baseline's cell there (it was not trained)."""
    cells = stats.cells_of_results(programs, results)
    same = rounds.identical(identity, programs)
    for label, task in same:
        if (spec.get("baseline"), task) in cells:
            cells[(label, task)] = cells[(spec["baseline"], task)]
    return cells, same


def comparison_lines(spec, programs, results, identity, cells, same) -> list[str]:
    """The report's 'Paired comparison' section: the sequential mode's decisions
    (`benchmark.decided`) or the fixed mode's tests."""
    if spec.get("sequential"):
        return decided.section_lines(spec, programs, results, identity)
    return _comparison(spec, programs, cells, same)


def reference_lines(spec) -> list[str]:
    """The report's 'Paper reference rows' section."""
    return _reference(spec)


def write_benchmark_report(db: BenchmarkDB, out: pathlib.Path) -> pathlib.Path:
    """Writes report.md, results.csv and the bar plot from what `db` holds; returns report.md."""
    spec, programs = db.spec(), db.programs()
    labels = {p.key: p.label for p in programs}
    results, identity = db.results(), db.identity()
    cells, same = report_cells(spec, programs, results, identity)
    expected = len(programs) * len(spec["tasks"]) * len(spec["seeds"])
    comparison = comparison_lines(spec, programs, results, identity, cells, same)
    if spec.get("sequential"):
        landed = f"Jobs landed: {len(results)} (sequential: at most {expected} at the seed cap); "
    else:
        landed = f"Jobs landed: {len(results)} of {expected - len(same) * len(spec['seeds'])}; "
    _write_csv(db, labels, out / "results.csv")
    machines = stats.machines_of_results(results)
    _plot(spec, programs, cells, machines, out / PLOT_FILE)
    sections = [
        [
            "# Benchmark",
            "",
            _protocol_line(spec, machines),
            "",
            landed
            + f"device time {db.wall_seconds() / 3600:.2f} h (sum of job wall times); wall time "
            f"{db.running_seconds() / 3600:.2f} h while jobs ran (pauses between resumes left "
            "out).",
            "",
        ],
        markdown.section("OOD accuracy by task", _main_table(db, spec, programs, cells)),
        markdown.section(COMPARISON_HEADING[3:], comparison),
        [f"![OOD accuracy by task]({PLOT_FILE})", ""],
        markdown.section("Failures", _failures(db, labels)),
        markdown.section("Paper reference rows", _reference(spec)),
        markdown.section("Programs and training seeds", program_lines(spec, programs, results)),
    ]
    report = out / "report.md"
    write_atomic(report, markdown.document(sections))
    return report


def comparison_section(report: pathlib.Path) -> str:
    """The 'Paired comparison' section of a written report.md (what `spark-jax benchmark`
    prints after the run: the verdicts, `cannot tell` included); '' when it has none."""
    text = report.read_text()
    if COMPARISON_HEADING not in text:
        return ""
    section = text.split(COMPARISON_HEADING, 1)[1].split("\n## ", 1)[0]
    section = section.split("\n![", 1)[0]  # the plot link that follows it
    return f"{COMPARISON_HEADING}\n\n{section.strip()}\n\n"

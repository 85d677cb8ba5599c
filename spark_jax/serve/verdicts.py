"""The reports' verdicts for the pages, written by the reports' own code.

Every verdict a page shows is the Markdown the report writes for the same folder, produced by
the same functions (`report.spread.verdict_line` and `spread_lines` for a run,
`benchmark.tables` for a benchmark's paired comparison, `compare.verdicts` for a comparison's
method pairs and sampling controls), then cut into blocks the page puts into the document as
text: a table (head and rows of cells), a list of items, a paragraph. Cells keep the report's
inline marks (`code`, **strong**); the page shows them as such, never as markup. So the page
and `report.md` cannot disagree: there is no second copy of a test, a p value, Holm's
adjustment, an interval or a minimal detectable difference here or in the browser.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any, Iterable, Mapping, Sequence

from spark_jax.benchmark import rounds, stats
from spark_jax.benchmark import tables as bench_tables
from spark_jax.compare import tables as compare_tables
from spark_jax.compare import verdicts as compare_verdicts
from spark_jax.report import family, run_sections, selection, spread
from spark_jax.report.accounting import RunAccounting
from spark_jax.serve import paper

__all__ = [
    "benchmark_blocks",
    "benchmark_cells",
    "blocks",
    "compare_blocks",
    "reference_blocks",
    "run_blocks",
    "split_row",
]

_CELL = re.compile(r"(?<!\\) \| ")


def split_row(line: str) -> list[str]:
    """The cells of one Markdown table row (`| a | b |`), escaped pipes restored."""
    inner = line.strip()[2:-2] if line.strip() != "||" else ""
    return [c.replace("\\|", "|") for c in _CELL.split(inner)]


def blocks(lines: Iterable[str]) -> list[dict[str, Any]]:
    """Markdown lines as page blocks: {'table': {'head', 'rows'}}, {'items': [...]},
    {'heading': text}, {'text': paragraph}; images and blank lines are left out."""
    out: list[dict[str, Any]] = []
    rows: list[str] = []

    def flush() -> None:
        if rows:
            head, body = rows[0], rows[2:]  # rows[1]: the separator
            out.append({"table": {"head": split_row(head), "rows": [split_row(r) for r in body]}})
            rows.clear()

    for line in lines:
        if line.startswith("|"):
            rows.append(line)
            continue
        flush()
        if not line.strip() or line.startswith("!["):
            continue
        if line.startswith("#"):
            out.append({"heading": line.lstrip("#").strip()})
        elif line.startswith("- "):
            if out and "items" in out[-1]:
                out[-1]["items"].append(line[2:])
            else:
                out.append({"items": [line[2:]]})
        else:
            out.append({"text": line})
    flush()
    return out


def run_blocks(
    run_dir: pathlib.Path,
    meta: Mapping[str, Any],
    acc: RunAccounting,
    final_test: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The run's final outcome as `report.md` gives it: the verdict line (on the official test
    set when the final programs were scored on it), the selection note, the seed spread
    (selection score beside test score) and, for a task family, its section."""
    r = run_sections.RunReport.build(run_dir, meta, acc, (), (), (), (), 10, None, final_test, None)
    finals = [e["program_id"] in r.view.final for e in (acc.seed, acc.best_candidate) if e]
    return {
        # whether the verdict is on the test set (as the verdict line itself says)
        "on_test": r.view.source != "ood_val" or (len(finals) == 2 and all(finals)),
        "protocol": r.protocol,
        "fitness": r.view.describe(),
        "verdict": blocks([spread.verdict_line(r.acc, r.view, r.protocol)]),
        "selection": blocks(selection.selection_lines(r.meta)),
        "spread": blocks(spread.spread_lines(r.acc, r.view, r.protocol)[2:]),
        "family": blocks(family.family_lines(r.meta, r.acc.seed, r.acc.best_candidate)),
        "reference": blocks(run_sections.reference_section(r)),  # the paper's rows beside ours
        # the same rows' scores as bars beside the seed's and the best's test scores: the
        # family's paper row (`paper_keys`), else the paper's CLRS figure for the task
        "paper_figure": paper.family_run_figure(r.meta, r.pair)
        or paper.run_figure(
            str(r.task) if r.task else None,
            str(r.preset) if r.preset else None,
            [(label, spread.reported_ood(r.view, e)) for label, e in r.pair if e],
        ),
    }


def benchmark_cells(spec: Mapping[str, Any], programs: Sequence, results, identity):
    """(cells, identical pairs, per-pair decisions) as `benchmark.tables` makes them for
    report.md: a program shown identical to the baseline on a task takes the baseline's cell
    there (it was not trained); decisions: program -> task -> verdict, the sequential mode's
    decisions (`benchmark.rounds`) or the fixed mode's Holm verdicts (`stats.compare_table`)."""
    cells, same = bench_tables.report_cells(spec, programs, results, identity)
    base = spec.get("baseline")
    found: dict[str, dict[str, str]] = {}
    if base is not None and spec.get("sequential"):
        for d in rounds.decisions(spec, programs, results, identity):
            found.setdefault(d.program, {})[d.task] = d.decision.verdict
    elif base is not None:
        others = [p.label for p in programs if p.label != base]
        for c in stats.compare_table(cells, others, base, list(spec["tasks"]), identical=same):
            found[c.program] = {v.task: v.verdict for v in c.per_task}
    return cells, same, found


def benchmark_blocks(spec: Mapping[str, Any], programs: Sequence, results, identity, cells, same):
    """The 'Paired comparison' section of the benchmark's report.md: the sequential mode's
    decisions (`benchmark.decided`) or the fixed mode's tests (`benchmark.tables`), chosen as
    `write_benchmark_report` chooses."""
    return blocks(bench_tables.comparison_lines(spec, programs, results, identity, cells, same))


def compare_blocks(methods, grouped, budget: int | None) -> dict[str, list[dict]]:
    """The sections 'Methods against the first' and 'Methods against the sampling controls'
    of the comparison's report.md."""
    return {
        "first": blocks(compare_verdicts.against_first(methods, grouped, budget)),
        "controls": blocks(compare_verdicts.against_controls(methods, grouped, budget)),
    }


def reference_blocks(kind: str, spec_or_base: Mapping[str, Any]) -> list[dict]:
    """The 'Paper reference rows' section of a benchmark's ('benchmark': its spec) or a
    comparison's ('compare': its plan's base config) report.md: the paper's published rows,
    each with its source and whether its protocol is comparable."""
    if kind == "benchmark":
        return blocks(bench_tables.reference_lines(spec_or_base))
    task, preset = spec_or_base.get("task", "dfs"), spec_or_base.get("preset", "smoke")
    return blocks(compare_tables.reference_rows(str(task), str(preset)))

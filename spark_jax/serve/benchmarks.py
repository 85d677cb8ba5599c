"""The JSON of the benchmark pages: the benchmarks under the root, and one benchmark.

Every number comes from `benchmark.stats` (cells, paired comparison) and the verdicts from the
report's own code (`verdicts.benchmark_blocks`), read through a read-only `BenchmarkDB`, so a
benchmark still running shows what has landed. Values are data, never markup.
"""

from __future__ import annotations

from typing import Any

from spark_jax.benchmark import stats
from spark_jax.serve import paper, verdicts
from spark_jax.serve.data import clean, listing
from spark_jax.serve.reader import Root

__all__ = ["benchmark_detail", "benchmarks_list"]


def _benchmark_line(root: Root, rel: str) -> dict[str, Any]:
    db = root.open_benchmark(rel)
    try:
        spec = db.spec()
        return {
            "path": rel,
            "programs": [p.label for p in db.programs()],
            "tasks": len(spec["tasks"]),
            "landed": len(db.done_job_ids()),
        }
    finally:
        db.close()


def benchmarks_list(root: Root) -> list[dict[str, Any]]:
    return listing(root, root.benchmark_dirs(), lambda rel: _benchmark_line(root, rel))


def _benchmark_rows(programs, cells, tasks: list[str], evals) -> list[dict[str, Any]]:
    """Per program: each task's cell (n, mean, std, failed seeds, each seed's score) and the
    mean over tasks, its parameters and MACs per processor step (as report.md)."""
    table = []
    for p in programs:
        ev = evals.get(p.key)
        row = {"label": p.label, "origin": p.origin, "cells": []}
        row |= {"params": None if ev is None else ev.params}
        row |= {"macs": None if ev is None else ev.macs, "macs_nodes": ev and ev.macs_nodes}
        for t in tasks:
            c = cells.get((p.label, t))
            row["cells"].append(
                None
                if c is None
                else {
                    "n": c.n,
                    "mean": c.mean,
                    "std": c.std,
                    "failed": len(c.failures),
                    "scores": list(c.scores),
                    "seeds": list(c.seeds),
                }
            )
        row["mean"] = stats.mean_over(cells, p.label, tasks)
        table.append(row)
    return table


def _benchmark_comparisons(programs, cells, tasks: list[str], base, same) -> list[dict]:
    """Each program against the baseline: verdict counts, per-task verdicts, mean difference
    (the fixed mode's table; pairs shown identical are 'identical', untested)."""
    if base is None:
        return []
    others = [p.label for p in programs if p.label != base]
    return [
        {
            "program": c.program,
            "baseline": c.baseline,
            "wins": c.wins,
            "losses": c.losses,
            "cannot_tell": c.cannot_tell,
            "verdicts": {v.task: v.verdict for v in c.per_task},
            "mean_diff": c.mean_diff,
            "ci": [c.ci_low, c.ci_high],
        }
        for c in stats.compare_table(cells, others, base, tasks, identical=same)
    ]


def benchmark_detail(root: Root, rel: str) -> dict[str, Any]:
    """The benchmark's table: per (program, task) mean/std over seeds, means, comparisons."""
    db = root.open_benchmark(rel)
    try:
        spec, programs, results = db.spec(), db.programs(), db.results()
        wall, running, identity = db.wall_seconds(), db.running_seconds(), db.identity()
    finally:
        db.close()
    labels = {p.key: p.label for p in programs}
    cells, same, decisions = verdicts.benchmark_cells(spec, programs, results, identity)
    evals = {}
    for r in results:
        if r.evaluation is not None:
            evals.setdefault(r.program_key, r.evaluation)
    tasks = list(spec["tasks"])
    base = spec.get("baseline")
    failures = [
        {
            "program": labels[r.program_key],
            "task": r.task,
            "seed": r.seed,
            "error_type": r.error_type,
        }
        for r in results
        if not r.ok
    ]
    payload = {
        "path": rel,
        "preset": spec.get("preset"),
        "seeds": spec.get("seeds"),
        "tasks": tasks,
        "landed": len(results),
        # planned jobs (sequential: at most, at the seed cap); identical pairs train nothing
        "expected": (len(programs) * len(tasks) - len(same)) * len(spec.get("seeds", [])),
        "device_hours": wall / 3600,
        "wall_hours": running / 3600,
        "machines": stats.machines_of_results(results),
        "table": (table := _benchmark_rows(programs, cells, tasks, evals)),
        "baseline": base,
        "sequential": bool(spec.get("sequential")),
        "comparison": []
        if spec.get("sequential")
        else _benchmark_comparisons(programs, cells, tasks, base, same),
        # each pair's verdict or decision, drawn under its task's bars
        "decisions": decisions,
        "identical": sorted([label, task] for label, task in same),
        # report.md's 'Paired comparison' section, by its own code
        "verdicts": verdicts.benchmark_blocks(spec, programs, results, identity, cells, same),
        "reference": verdicts.reference_blocks("benchmark", spec),
        # the paper's per-task bars beside ours (None where the paper has none of these tasks)
        "paper_figure": paper.benchmark_figure(spec, table),
        "failures": failures,
    }
    return clean(payload)

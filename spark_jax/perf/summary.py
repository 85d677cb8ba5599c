"""The cost issue's targets for `spark-jax perf`'s per-candidate ratios, and the Markdown table
of one or more bench reports (no heavy imports: the result scripts read them)."""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from spark_jax.config.evaluation import SEED_MODES
from spark_jax.util import markdown

__all__ = ["TARGETS", "candidate_table", "meets"]

TARGETS = {
    "total_wall_ours_over_official": ("<=", 0.5),
    "seeds_mapped_over_sequential": ("<=", 0.5),  # the default K-seed program
    "seeds_vmapped_over_sequential": ("<=", 0.5),
    "steps_per_s_ours_over_official": (">=", 1.2),
    "feasibility_unseen_over_evaluation": ("<=", 0.01),
}
_SIDE_FIGURES = (
    ("total_s", "candidate wall s"),
    ("compile_wall_s", "compile wall s"),
    ("steps_per_s", "steady steps/s"),
)


def meets(name: str, median: float) -> bool:
    """Whether a ratio's median meets its target (`name` must be in TARGETS)."""
    op, target = TARGETS[name]
    return median <= target if op == "<=" else median >= target


def _row(name: str, values: Sequence[float], digits: int, target: str = "", verdict: str = ""):
    med = statistics.median(values)
    return [name, *(f"{v:.{digits}f}" for v in (med, min(values), max(values))), target, verdict]


def candidate_table(reports: Sequence[dict[str, Any]]) -> list[str]:
    """`bench_candidate` reports (one with R repeats, or R of one repeat each) as one table:
    each side's figures and each ratio as the median and range over every repeat, the ratios
    against their targets."""
    runs = {
        side: [run for r in reports for run in r["runs"][side]] for side in ("official", "ours")
    }
    out = []
    for side in ("official", "ours"):
        for key, label in _SIDE_FIGURES:
            out.append(_row(f"{side} {label}", [run[key] for run in runs[side]], 1))
    for mode in SEED_MODES:  # a report from before 'map' has only vmapped walls
        walls = [v for r in reports for v in r["runs"].get(f"seeds_{mode}ped_s", [])]
        if walls:
            out.append(_row(f"K={reports[0]['k']} {mode}ped seeds wall s", walls, 1))
    for name in reports[0]["ratios"]:
        # Per-repeat values ('values'); a report of one repeat has its value as the median.
        values = [
            v
            for r in reports
            for v in r["ratios"][name].get("values", [r["ratios"][name]["median"]])
        ]
        target, verdict = "", ""
        if name in TARGETS:
            op, bound = TARGETS[name]
            target = f"{op} {bound:g}"
            verdict = "yes" if meets(name, statistics.median(values)) else "no"
        out.append(_row(name, values, 3, target, verdict))
    return markdown.table(["figure", "median", "min", "max", "target", "median meets it"], out)

"""`spark-jax compare --seeds auto`: search seeds added in rounds until every method's pair
with the first method is decided (`stats.sequential`).

The score of a search seed is the test OOD % of its best candidate (selected on validation,
trained again on a seed the search never used), as the fixed-seed verdicts use it; a pair's
differences are taken over the search seeds both methods finished, in seed order. Each round
runs, for every undecided method, its next `seeds_per_round` search seeds and the first
method's same seeds (paired); a decided method runs no more searches. The decisions are a pure
function of the finished runs, so re-running the command after a kill goes on where it was.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Callable, Sequence

from spark_jax.compare import runner
from spark_jax.compare.figures import RunFigures, by_method, collect
from spark_jax.compare.methods import Method, resolve_methods
from spark_jax.stats import sequential
from spark_jax.util import markdown

__all__ = ["MethodDecision", "decisions", "next_runs", "run_sequential", "section_lines"]


@dataclasses.dataclass(frozen=True)
class MethodDecision:
    """One method against the first: its decision and the search seeds both finished."""

    method: str
    decision: sequential.Decision
    seeds: int


def design_of(plan: runner.ComparePlan) -> sequential.Design:
    return sequential.Design(
        **{**dict(plan.sequential or {}), "comparisons": max(1, len(plan.methods) - 1)}
    )


def _scores(runs: Sequence[RunFigures]) -> dict[int, float]:
    return {r.seed: 100.0 * r.test_best for r in runs if r.test_best is not None}


def decisions(plan: runner.ComparePlan, grouped) -> tuple[MethodDecision, ...]:
    """Every method after the first, against the first, from the runs' figures."""
    design = design_of(plan)
    first = _scores(grouped.get(plan.methods[0], []))
    out = []
    for name in plan.methods[1:]:
        mine = _scores(grouped.get(name, []))
        decision, prefix = sequential.decide_paired(mine, first, plan.seeds, design)
        out.append(MethodDecision(name, decision, prefix))
    return tuple(out)


def next_runs(out: pathlib.Path, plan: runner.ComparePlan) -> list[tuple[Method, int]]:
    """The (method, search seed) runs of the next round (finished ones left out)."""
    design = design_of(plan)
    methods = {m.name: m for m in resolve_methods(list(plan.methods))}
    due: list[tuple[Method, int]] = []
    for found in decisions(plan, by_method(collect(out, plan))):
        if found.decision.verdict != sequential.PENDING:
            continue
        for seed in (plan.seeds[i] for i in design.next_round(found.seeds)):
            for name in (plan.methods[0], found.method):
                if (methods[name], seed) not in due:
                    due.append((methods[name], seed))
    return [
        (m, s)
        for m, s in due
        if runner.run_status(runner.run_dir_of(out, m, s)) not in ("finished",)
    ]


def run_sequential(
    out: pathlib.Path,
    plan: runner.ComparePlan,
    *,
    log: Callable[[str], None] = lambda line: None,
    jobs: int = 1,
) -> dict[tuple[str, int], str]:
    """Runs rounds of searches until every pair is decided or at the cap; returns every
    planned run's status ('missing' for seeds a decided method never needed)."""
    statuses: dict[tuple[str, int], str] = {}
    while True:
        due = next_runs(out, plan)
        if not due:
            break
        log(f"next round: {', '.join(f'{m.name} seed {s}' for m, s in due)}")
        statuses = runner.run_comparison(out, plan, log=log, jobs=jobs, runs=due)
        if any(statuses[(m.name, s)] != "finished" for m, s in due):
            break  # a search did not finish: re-running the command retries the round
    return statuses or {
        (m.name, s): runner.run_status(runner.run_dir_of(out, m, s)) for m, s in plan.runs()
    }


def section_lines(plan: runner.ComparePlan, grouped) -> list[str]:
    """The report's section of the sequential decisions (nothing for a fixed-seed plan)."""
    if not plan.sequential:
        return []
    design = design_of(plan)
    rows = []
    for found in decisions(plan, grouped):
        x = found.decision
        interval = "—" if x.low != x.low else f"[{x.low:+.2f}, {x.high:+.2f}]"
        mdd = f"{x.mdd:.2f}" if x.verdict == sequential.CANNOT_TELL else "—"
        diff = "—" if x.diff != x.diff else f"{x.diff:+.2f}"
        rows.append([f"`{found.method}`", x.verdict, found.seeds, diff, interval, mdd])
    head = ["method", "decision", "search seeds", "diff (pp)", "interval (pp)", "MDD (pp)"]
    return [
        *markdown.table(head, rows),
        "",
        f"Sequential decisions against `{plan.methods[0]}` on the test OOD % of each search "
        f"seed's best candidate: search seeds added {design.seeds_per_round} per round up to "
        f"{design.max_seeds}, a paired t interval at each look with {design.min_look_seeds} "
        f"seeds or more (alpha {design.alpha:g} spent over the looks, Lan-DeMets Pocock type, "
        f"and divided over the {design.comparisons} methods: Bonferroni); `win`/`loss`: the "
        f"interval excludes 0; `equivalent`: inside ±{design.delta:g} pp; `cannot tell` at the "
        "cap (or out of reach earlier: futility), with the minimal detectable difference. "
        "The fixed-seed tables above test the same runs as if their number had been fixed in "
        "advance: read the decisions here.",
    ]

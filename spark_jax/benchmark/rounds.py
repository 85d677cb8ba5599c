"""Which jobs a benchmark runs next, and what it has decided: identity before training, and
the sequential mode's rounds.

Before any training, each program is checked against the baseline on every task
(`evaluation.identity`): a pair shown identical is reported `identical` and only the baseline
trains there (its scores stand for both). In the fixed-seed mode every other planned job runs
once. In the sequential mode (`spec['sequential']`, a `stats.sequential.Design`), each
undecided (program, task) pair gets its next round of seeds (with the baseline's, paired) until
it is decided or reaches the cap; the decision is a pure function of the stored results, so a
killed benchmark resumes mid-round and decides the same.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Sequence

from spark_jax.benchmark.plan import BenchmarkJob, BenchmarkProgram, plan_jobs
from spark_jax.evaluation import identity as identity_lib
from spark_jax.stats import sequential

__all__ = [
    "PairDecision",
    "check_identity",
    "decisions",
    "design_of",
    "fmt_interval",
    "identical",
    "next_jobs",
]


def _key(program: BenchmarkProgram, task: str) -> str:
    return f"{program.key}|{task}"


def _baseline(spec: Mapping[str, Any], programs: Sequence[BenchmarkProgram]):
    return next((p for p in programs if p.label == spec.get("baseline")), None)


def check_identity(db, spec: Mapping[str, Any], programs: Sequence[BenchmarkProgram]) -> None:
    """Runs the identity check of every (program, task) against the baseline not yet stored
    (nothing without a baseline, or when the spec turns it off)."""
    base = _baseline(spec, programs)
    if base is None or not spec.get("check_identity", False):
        return
    stored = db.identity()
    for p in programs:
        if p is base:
            continue
        missing = [t for t in spec["tasks"] if _key(p, t) not in stored]
        if not missing:
            continue
        reports = identity_lib.same_function(
            (p.source, p.program_name), (base.source, base.program_name), missing, spec["protocol"]
        )
        db.store_identity({_key(p, r.task): r.to_dict() for r in reports})


def identical(db_identity: Mapping[str, Mapping[str, Any]], programs) -> set[tuple[str, str]]:
    """(label, task) of every program shown identical to the baseline on a task."""
    by_key = {p.key: p.label for p in programs}
    out = set()
    for key, found in db_identity.items():
        program_key, task = key.split("|", 1)
        if found.get("identical") and program_key in by_key:
            out.add((by_key[program_key], task))
    return out


def design_of(spec: Mapping[str, Any], comparisons: int) -> sequential.Design | None:
    """The sequential design stored in `spec` for a table of `comparisons` (None: fixed)."""
    found = spec.get("sequential")
    if not found:
        return None
    return sequential.Design(**{**found, "comparisons": max(1, comparisons)})


@dataclasses.dataclass(frozen=True)
class PairDecision:
    """One (program, task) pair of a sequential benchmark.

    Attributes:
      program, task: the pair (against the spec's baseline).
      decision: the sequential decision (verdict 'identical' for a pair shown identical).
      seeds: seeds trained for this pair (both sides landed).
      hours: device hours its jobs took (both programs' job wall times).
    """

    program: str
    task: str
    decision: sequential.Decision
    seeds: int
    hours: float


def _scores(results, key: str, task: str) -> dict[int, float | None]:
    return {
        r.seed: (None if r.evaluation is None else 100.0 * r.evaluation.score)
        for r in results
        if r.program_key == key and r.task == task
    }


def _pair(spec, design, program, base, task, results) -> PairDecision:
    mine, theirs = _scores(results, program.key, task), _scores(results, base.key, task)
    decision, prefix = sequential.decide_paired(mine, theirs, spec["seeds"], design)
    seeds = spec["seeds"][:prefix]
    walls = [
        r.wall_seconds
        for r in results
        if r.task == task and r.seed in seeds and r.program_key in (program.key, base.key)
    ]
    return PairDecision(program.label, task, decision, prefix, sum(walls) / 3600.0)


def decisions(
    spec: Mapping[str, Any], programs: Sequence[BenchmarkProgram], results, db_identity
) -> tuple[PairDecision, ...]:
    """Every (program, task) pair's decision in a sequential benchmark, task-major."""
    base = _baseline(spec, programs)
    same = identical(db_identity, programs)
    others = [p for p in programs if p is not base]
    pairs = [(p, t) for t in spec["tasks"] for p in others]
    design = design_of(spec, sum((p.label, t) not in same for p, t in pairs))
    out = []
    for p, t in pairs:
        if (p.label, t) in same:
            base_seeds = len(_scores(results, base.key, t))
            hours = sum(
                r.wall_seconds for r in results if r.task == t and r.program_key == base.key
            )
            verdict = sequential.Decision(sequential.IDENTICAL, base_seeds, 0.0)
            out.append(PairDecision(p.label, t, verdict, base_seeds, hours / 3600.0))
        else:
            out.append(_pair(spec, design, p, base, t, results))
    return tuple(out)


def _next_seeds(spec, design, decision: PairDecision) -> tuple[int, ...]:
    """The seeds of the pair's next round (none when it is decided or at the cap)."""
    if decision.decision.verdict != sequential.PENDING:
        return ()
    return tuple(spec["seeds"][i] for i in design.next_round(decision.seeds))


def next_jobs(
    spec: Mapping[str, Any], programs: Sequence[BenchmarkProgram], results, db_identity
) -> list[BenchmarkJob]:
    """The jobs to run now, in plan order: fixed mode, every planned job not landed (pairs
    shown identical train the baseline only); sequential mode, the next round of every
    undecided pair, and the baseline's first round on tasks where every pair is identical."""
    done = {(r.program_key, r.task, r.seed) for r in results}
    same = identical(db_identity, programs)
    base = _baseline(spec, programs)
    planned = plan_jobs(programs, spec["tasks"], spec["seeds"])
    if not spec.get("sequential"):
        return [
            j
            for j in planned
            if (j.program.key, j.task, j.seed) not in done and (j.program.label, j.task) not in same
        ]
    found = decisions(spec, programs, results, db_identity)
    design = design_of(spec, 1)
    wanted: set[tuple[str, str, int]] = set()
    for d in found:
        program = next(p for p in programs if p.label == d.program)
        if d.decision.verdict == sequential.IDENTICAL:
            first = spec["seeds"][: design.seeds_per_round]
            wanted |= {(base.key, d.task, s) for s in first}
            continue
        for seed in _next_seeds(spec, design, d):
            wanted |= {(program.key, d.task, seed), (base.key, d.task, seed)}
    return [
        j
        for j in planned
        if (j.program.key, j.task, j.seed) in wanted and (j.program.key, j.task, j.seed) not in done
    ]


def fmt_interval(decision: sequential.Decision) -> str:
    """A decision's interval as the reports print it ('—' before a look)."""
    if math.isnan(decision.low):
        return "—"
    return f"[{decision.low:+.2f}, {decision.high:+.2f}]"

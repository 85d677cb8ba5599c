"""The sequential mode's section of a benchmark report: each pair's decision, the seeds and
device hours it used, and the design in words (`stats.sequential`)."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from spark_jax.benchmark import guide, rounds
from spark_jax.stats import sequential
from spark_jax.util import markdown

__all__ = ["design_lines", "section_lines", "summary"]


def _num(x: float, fmt: str = "+.2f") -> str:
    return "—" if math.isnan(x) else format(x, fmt)


def summary(found: Sequence[rounds.PairDecision]) -> dict[str, int]:
    """verdict -> number of pairs."""
    out: dict[str, int] = {}
    for d in found:
        out[d.decision.verdict] = out.get(d.decision.verdict, 0) + 1
    return out


def design_lines(spec: Mapping, design: sequential.Design) -> list[str]:
    looks = ", ".join(str(n) for n in design.spending_looks)
    spent = ", ".join(f"{design.look_alpha(n):.2g}" for n in design.spending_looks)
    first = spec.get("continued_from_fixed")
    lines = [
        f"- Design (`spark_jax/stats/sequential.py`): seeds added {design.seeds_per_round} per "
        f"round up to {design.max_seeds}; at the looks with {looks} seeds a paired t interval "
        f"per pair at level 1 - alpha_k, alpha_k = {spent} (Lan-DeMets Pocock-type spending of "
        f"alpha = {design.alpha:g}, divided over the {design.comparisons} compared pairs: "
        "Bonferroni); the first look that decides stops the pair: `win` (interval above 0), "
        f"`loss` (below 0), `equivalent` (inside ±{design.delta:g} pp), else on to the next "
        f"round; at the cap `cannot tell`, with the minimal detectable difference (80% power) "
        f"of the last look. A pair whose |mean| is under {design.futility:g} of the interval "
        "half-width projected to the cap (and that could not fit in ±delta there) stops early as "
        "`cannot tell` (non-binding futility: it only removes claims). The family-wise rate of "
        f"false claims of any kind is at most {design.alpha:g} under any stopping "
        "(union bound over looks and pairs; calibration by simulation in "
        "`tests/test_sequential.py`).",
        f"- `{sequential.IDENTICAL}`: shown before training to compute the baseline's function "
        "on that task (`spark_jax/evaluation/identity.py`: same parameters from the same keys, "
        "bit-identical loss and gradients on probe batches; evidence on those probes, not a "
        "proof for every input): only the baseline trains there; not among the compared pairs.",
    ]
    if first:
        lines.append(
            f"- Continued from a fixed-seed benchmark of seeds {first}: those are the first "
            f"{len(first)} seeds of each sequence; no alpha is spent before "
            f"{design.min_look_seeds} seeds, so the fixed run's look costs the design nothing."
        )
    return lines


def section_lines(spec: Mapping, programs, results, db_identity) -> list[str]:
    """The report's comparison section in the sequential mode."""
    found = rounds.decisions(spec, programs, results, db_identity)
    compared = sum(d.decision.verdict != sequential.IDENTICAL for d in found)
    design = rounds.design_of(spec, compared)
    rows = []
    for d in found:
        x = d.decision
        verdict = x.verdict + (
            " (within ±delta)" if x.within_delta and x.verdict in ("win", "loss") else ""
        )
        rows.append(
            [
                f"`{d.program}`",
                d.task,
                verdict,
                d.seeds,
                _num(x.diff),
                rounds.fmt_interval(x),
                _num(x.level, ".4f"),
                _num(x.mdd, ".2f") if x.verdict == sequential.CANNOT_TELL else "—",
                f"{d.hours:.2f}",
            ]
        )
    head = ["program", "task", "decision", "seeds", "diff (pp)", "interval (pp)", "level"]
    lines = markdown.table([*head, "MDD (pp)", "device h"], rows)
    counts = summary(found)
    decided = sum(
        v for k, v in counts.items() if k not in (sequential.PENDING, sequential.CANNOT_TELL)
    )
    words = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    hours = sum(d.hours for d in found)
    lines += [
        "",
        f"Decided: {decided} of {len(found)} pairs ({words}); device time of the compared "
        f"jobs {hours:.2f} h.",
        "",
        *_against_guide(spec, programs, results, db_identity, found, design),
        *design_lines(spec, design),
    ]
    return lines


def _against_guide(spec, programs, results, db_identity, found, design) -> list[str]:
    """What each pair spent beside what `benchmark --guide` forecast from its first round."""
    if len(programs) != 2:
        return []
    rows = guide.guide_from(
        spec, programs, results, db_identity, design, first_seeds=design.seeds_per_round
    )
    spent = {d.task: d for d in found}
    table = [
        [r.task, f"{r.mean_seeds:.1f}", spent[r.task].seeds]
        + [f"{r.mean_hours:.2f}", f"{spent[r.task].hours:.2f}"]
        for r in rows
        if r.task in spent and not math.isnan(r.mean_seeds)
    ]
    if not table:
        return []
    head = ["task", "guide: mean seeds", "spent seeds", "guide: mean device h", "spent device h"]
    return [
        *markdown.table(head, table),
        "",
        "The guide (`spark-jax benchmark --guide`): the design simulated per task with normal "
        f"seed noise of the spread of its first {design.seeds_per_round} seeds and their mean "
        "difference as the truth, per-seed cost from their job times; spent: what the run used "
        "(a pair still pending has spent only part of its seeds).",
        "",
    ]

"""A comparison's verdicts: every method against the first, on the best evaluated candidate of
each search seed (the seed program excluded), with `report.significance`'s rules: `cannot
tell` under 2 search seeds a side, an exact permutation test up to 8 (sign flips when both
methods ran the same search seeds), Welch's t beyond, Holm-Bonferroni over the methods."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from spark_jax.report import significance

__all__ = ["verdict_lines"]


def _paired(a: Mapping[int, float], b: Mapping[int, float]) -> bool:
    return len(a) > 1 and set(a) == set(b)


def verdict_lines(
    names: Sequence[str],
    scores: Mapping[str, Mapping[int, float]],
    alpha: float = significance.DEFAULT_ALPHA,
    score_label: str = "the best evaluated candidate of each search seed (the seed program "
    "excluded), OOD %",
) -> list[str]:
    """Markdown: each of `names[1:]` against `names[0]`.

    Args:
      names: the methods in table order (the first is the reference).
      scores: method -> search seed -> best evaluated candidate's OOD (%), for the runs that
        evaluated a candidate.
      alpha: family-wise error rate over the methods' tests.
      score_label: what the scores are, for the table's note.
    """
    if len(names) < 2:
        return ["One method only: nothing to compare."]
    first, others = names[0], list(names[1:])
    ref = scores.get(first, {})
    tests = []
    for name in others:
        mine = scores.get(name, {})
        if _paired(mine, ref):
            order = sorted(mine)
            tests.append(
                significance.task_test([mine[s] for s in order], [ref[s] for s in order], True)
            )
        else:
            tests.append(significance.task_test(list(mine.values()), list(ref.values())))
    adjusted = significance.holm([t.p for t in tests])
    words = significance.verdicts(tests, alpha)
    lines = [
        f"| method | search seeds (method / `{first}`) | test | diff (pp) | p | p (Holm) "
        "| verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, t, q, word in zip(others, tests, adjusted, words):
        test = "none (fewer than 2 seeds on a side)" if not t.tested else t.method
        diff = "—" if math.isnan(t.diff) else f"{t.diff:+.2f}"
        p = "—" if math.isnan(t.p) else f"{t.p:.3g}"
        holm = "—" if math.isnan(q) else f"{q:.3g}"
        lines.append(f"| `{name}` | {t.n_a} / {t.n_b} | {test} | {diff} | {p} | {holm} | {word} |")
    mdd = significance.mdd(tests, alpha)
    mdd_text = (
        "cannot be computed (no method has 2 or more search seeds on both sides)"
        if math.isnan(mdd)
        else f"{mdd:.2f} pp ({significance.MDD_FORMULA})"
    )
    floor = significance.floor_note(tests, alpha)
    return lines + [
        "",
        f"- Score: {score_label}. Fewer than 2 search seeds on either side: "
        f"`{significance.CANNOT_TELL}`; up to {significance.EXACT_MAX_N} an exact "
        "permutation test (sign flips when both ran the same search seeds), Welch's t "
        f"beyond; Holm-Bonferroni over the {sum(t.tested for t in tests)} test(s) at "
        f"family-wise alpha = {alpha:g}; `win`/`loss` only when significant after Holm.",
        f"- Minimal detectable difference at these seeds and spread: {mdd_text}.",
        *([f"- {floor}"] if floor else []),
    ]

"""A comparison's verdicts, on the best evaluated candidate of each search seed (the seed
program excluded), with `report.significance`'s rules: `cannot tell` under 2 search seeds a
side, an exact permutation test up to 8 (sign flips when both methods ran the same search
seeds), Welch's t beyond, Holm-Bonferroni over a table's tests. Two tables: every method
against the first (`verdict_lines`), and SPARK and OpenEvolve against each sampling control
(`control_lines`)."""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

from spark_jax.compare.figures import RunFigures, best_at_budget
from spark_jax.compare.methods import Method, is_control
from spark_jax.stats import significance
from spark_jax.util import markdown

__all__ = [
    "AGAINST_CONTROLS",
    "against_controls",
    "against_first",
    "control_lines",
    "control_verdicts",
    "first_verdicts",
    "verdict_lines",
]

SCORE_LABEL = "the best evaluated candidate of each search seed (the seed program excluded), OOD %"


def _paired(a: Mapping[int, float], b: Mapping[int, float]) -> bool:
    return len(a) > 1 and set(a) == set(b)


def _test(a: Mapping[int, float], b: Mapping[int, float]) -> significance.TaskTest:
    """A - B over search seeds, paired when both ran the same seeds."""
    if _paired(a, b):
        order = sorted(a)
        return significance.task_test([a[s] for s in order], [b[s] for s in order], True)
    return significance.task_test(list(a.values()), list(b.values()))


def _pair_verdicts(
    pairs: Sequence[tuple[str, str]], scores: Mapping[str, Mapping[int, float]], alpha: float
) -> tuple[list[significance.TaskTest], tuple[float, ...], tuple[str, ...]]:
    """Each (A, B) pair's test of A - B, its Holm-adjusted p over the pairs, its verdict."""
    tests = [_test(scores.get(a, {}), scores.get(b, {})) for a, b in pairs]
    return tests, significance.holm([t.p for t in tests]), significance.verdicts(tests, alpha)


def _pair_table(
    pairs: Sequence[tuple[str, str]],
    scores: Mapping[str, Mapping[int, float]],
    alpha: float,
    score_label: str,
    head: tuple[str, str],
    label: Callable[[str, str], str],
) -> list[str]:
    """Markdown: one row per (A, B) pair testing A - B, Holm over the table's tests."""
    tests, adjusted, words = _pair_verdicts(pairs, scores, alpha)
    rows = []
    for (a, b), t, q, word in zip(pairs, tests, adjusted, words):
        test = "none (fewer than 2 seeds on a side)" if not t.tested else t.method
        diff = "—" if math.isnan(t.diff) else f"{t.diff:+.2f}"
        p = "—" if math.isnan(t.p) else f"{t.p:.3g}"
        holm = "—" if math.isnan(q) else f"{q:.3g}"
        rows.append([label(a, b), f"{t.n_a} / {t.n_b}", test, diff, p, holm, word])
    lines = markdown.table([*head, "test", "diff (pp)", "p", "p (Holm)", "verdict"], rows)
    mdd = significance.mdd(tests, alpha)
    mdd_text = (
        "cannot be computed (no pair has 2 or more search seeds on both sides)"
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


def verdict_lines(
    names: Sequence[str],
    scores: Mapping[str, Mapping[int, float]],
    alpha: float = significance.DEFAULT_ALPHA,
    score_label: str = SCORE_LABEL,
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
    first = names[0]
    pairs = [(name, first) for name in names[1:]]
    head = ("method", f"search seeds (method / `{first}`)")
    return _pair_table(pairs, scores, alpha, score_label, head, lambda a, b: f"`{a}`")


def control_lines(
    methods: Sequence[str],
    controls: Sequence[str],
    scores: Mapping[str, Mapping[int, float]],
    alpha: float = significance.DEFAULT_ALPHA,
    score_label: str = SCORE_LABEL,
) -> list[str]:
    """Markdown: each of `methods` (SPARK, OpenEvolve) against each control (`sample`,
    `sequential`): the difference is method - control, `win` meaning the method beats the
    control; Holm over every (method, control) test of the table."""
    if not controls:
        return [
            "No control ran: this comparison cannot tell how much of a method's result comes "
            "from its search machinery rather than from sampling the same model many times "
            "(add `sample,sequential` to --methods)."
        ]
    if not methods:
        return ["No search method to set against the controls."]
    pairs = [(m, c) for m in methods for c in controls]
    head = ("method vs control", "search seeds (method / control)")
    return _pair_table(pairs, scores, alpha, score_label, head, lambda a, b: f"`{a}` vs `{b}`")


# -- the report's two verdict sections, from a comparison's runs ------------------------------
# The methods set against every control (when they ran): SPARK, and OpenEvolve (the system
# the SPARK paper compares with).
AGAINST_CONTROLS = ("spark", "openevolve")


def _scores(methods, grouped, budget) -> tuple[dict[str, dict[int, float]], str]:
    """Per method and search seed, the score the verdicts test: the test OOD % of each
    run's best candidate when every run has one (selected on validation, reported on test),
    else best at budget; and what that score is."""
    runs = [r for m in methods for r in grouped.get(m.name, [])]
    on_test = bool(runs) and all(r.test_best is not None for r in runs)

    def score(r: RunFigures) -> float | None:
        return r.test_best if on_test else best_at_budget(r.acc, budget)

    scores = {
        m.name: {r.seed: 100.0 * score(r) for r in grouped.get(m.name, []) if score(r) is not None}
        for m in methods
    }
    reused = sum(r.test_train_seeds is None for r in runs)
    label = (
        "the test OOD % of each search seed's best evaluated candidate (selected on the "
        "validation set, scored on the test set after the search; the seed program excluded; "
        + (
            "trained again on seeds the search never used)"
            if not reused
            else ("" if reused == len(runs) else f"{reused} of {len(runs)} ")
            + "trained again with the search's own seeds, the parameters it selected: "
            "optimistic)"
        )
        if on_test
        else f"best at budget B={budget} of each search seed, OOD % on the set the search "
        "selected with (the seed counts toward B, its own score is not a candidate's: the "
        f"best of the first {budget - 1 if budget else '—'} candidates after it; a run selected on the test set carries "
        "the winner's curse)"
    )
    return scores, label


def against_first(methods: Sequence[Method], grouped, budget: int | None) -> list[str]:
    """Every method against the first (`verdict_lines` on the runs' scores)."""
    scores, label = _scores(methods, grouped, budget)
    return verdict_lines([m.name for m in methods], scores, score_label=label)


def first_verdicts(
    methods: Sequence[Method], grouped, budget: int | None
) -> list[tuple[str, str, significance.TaskTest]]:
    """(method, verdict, test) of every method against the first, as `against_first`'s table
    gives them (Holm over the methods, at the default alpha)."""
    scores, _ = _scores(methods, grouped, budget)
    first = methods[0].name
    names = [m.name for m in methods[1:]]
    tests, _, words = _pair_verdicts(
        [(n, first) for n in names], scores, significance.DEFAULT_ALPHA
    )
    return list(zip(names, words, tests))


def control_verdicts(
    methods: Sequence[Method], grouped, budget: int | None
) -> list[tuple[str, str, str, significance.TaskTest]]:
    """(method, control, verdict, test) of SPARK and OpenEvolve against each control that
    ran, as `against_controls`'s table gives them (Holm over the pairs, default alpha)."""
    scores, _ = _scores(methods, grouped, budget)
    controls = [m.name for m in methods if is_control(m)]
    others = [m.name for m in methods if m.name in AGAINST_CONTROLS]
    pairs = [(m, c) for m in others for c in controls]
    tests, _, words = _pair_verdicts(pairs, scores, significance.DEFAULT_ALPHA)
    return [(m, c, w, t) for (m, c), w, t in zip(pairs, words, tests)]


def _form(runs: Sequence[RunFigures]) -> str:
    """Which form of a control ran, read from its runs' call roles."""
    forms = {"full": "full rewrite", "regions": "region edit"}
    seen = []
    for key, text in forms.items():
        n = sum(any(role.endswith(f"-{key}") for role in r.roles) for r in runs)
        if n:
            seen.append(f"{text} in {n} of {len(runs)} run(s)")
    return "; ".join(seen) or "no call recorded yet"


def against_controls(methods: Sequence[Method], grouped, budget: int | None) -> list[str]:
    """SPARK and OpenEvolve (those that ran) against each control that ran, and the form
    each control ran in."""
    controls = [m for m in methods if is_control(m)]
    others = [m.name for m in methods if m.name in AGAINST_CONTROLS]
    scores, label = _scores(methods, grouped, budget)
    lines = control_lines(others, [c.name for c in controls], scores, score_label=label)
    forms = [f"- `{c.name}` ran as: {_form(grouped.get(c.name, []))}." for c in controls]
    return lines + ([""] + forms if forms else [])

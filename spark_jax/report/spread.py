"""Seed noise in a run's report: per-seed scores, the fitness source, a noise-aware verdict.

A program's OOD score is a mean over the training seeds it was evaluated with
(`fitness.seeds`, K). The verdict tests the best evaluated candidate against the seed with
`report.significance` (the rules `benchmark` and `compare` use): `cannot tell` with K = 1;
an exact permutation test for K <= 8 (sign flips of the per-seed differences when both were
trained with the same seeds), Welch's t beyond; "beats" or "is worse than" only when
p <= alpha (one test: no multiplicity correction). Under `fitness.source: ood_val` the
verdict uses the official OOD test scores of the final programs (`run_meta['final_test']`),
when they were recorded; on the selection scores themselves it warns that the best was
chosen on them (the test is then optimistic). Scores are shown as the run's task family names
them (its `score_metric`: CLRS's OOD accuracy and MNIST-1D's accuracy in percent, CartPole's
return), and its sets by the family's own words (its `report_labels`, CLRS's protocol sets;
else its test and validation parts).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Mapping, Sequence

from spark_jax import families
from spark_jax.families import DEFAULT_FAMILY
from spark_jax.report.accounting import RunAccounting, find_meta
from spark_jax.search.final_test import recorded_train_seeds
from spark_jax.stats import significance
from spark_jax.util import markdown

__all__ = [
    "Metric",
    "NoiseView",
    "metric_for",
    "noise_view",
    "reported_ood",
    "spread_lines",
    "verdict_line",
]


@dataclasses.dataclass(frozen=True)
class Metric:
    """A task family's score as the reports and pages name it. Stored scores are fractions
    in [0, 1]; `scale` turns one into the shown value (CartPole stores its return / 500).

    Attributes:
      name: the pages' name ("OOD accuracy"); word: the reports' word in a sentence ("OOD").
      unit: after a value ("%" or ""); diff_unit: after a difference ("pp" or "").
      note: why one training seed per program tells nothing, in the family's words ('': the
        generic sentence).
    """

    name: str
    word: str
    scale: float
    unit: str
    digits: int
    diff_unit: str
    note: str = ""

    def value(self, fraction: float) -> str:
        """A stored score as shown: '23.83%', '489.0'."""
        return f"{self.scale * fraction:.{self.digits}f}{self.unit}"

    def amount(self, shown: float, sign: bool = False) -> str:
        """A difference already in shown units: '+0.98 pp', '-12.5'."""
        text = f"{shown:+.{self.digits}f}" if sign else f"{shown:.{self.digits}f}"
        return f"{text} {self.diff_unit}" if self.diff_unit else text

    @property
    def column(self) -> str:
        """A column's name: 'OOD (%)', 'return'."""
        return f"{self.word} ({self.unit})" if self.unit else self.word


_OTHER = Metric("score", "score", 1.0, "", 4, "")  # A family without `score_metric`.


def _family(name: str | None) -> Any:
    """The run's task family (None named: the default, a run that predates families); None
    when its plug-in is not installed here."""
    try:
        return families.get(name or DEFAULT_FAMILY)
    except ValueError:
        return None


def metric_for(family: str | None) -> Metric:
    """The score's name and unit for a run of `family` (None: the default family), from the
    family's `score_metric`; a family without one (or not installed) shows its stored score."""
    words = getattr(_family(family), "score_metric", None)
    return Metric(**words) if words else _OTHER


def _labels(family: str | None, source: str, ood_val_seed: int | None, metric: Metric) -> dict:
    """The report's words for the run's sets: 'selection' (what the search's scores were
    measured on), 'test_set' (what a run reports on), 'test_column' (its table column); the
    family's own `report_labels` (CLRS: the protocol's OOD sets), else its parts by name."""
    fam = _family(family)
    own = getattr(fam, "report_labels", None)
    if own is not None:
        return dict(own(source, ood_val_seed))
    test_part, val_part = (fam.test_part, fam.val_part) if fam is not None else (None, None)
    if source == "ood_val":
        selection = f"validation part (`ood_val`: {val_part or 'disjoint from the test part'})"
    else:
        selection = f"test part (`ood_test`: {test_part or 'the benchmark'}, the paper's protocol)"
    test_set = f"test part ({test_part})" if test_part else "test part"
    return dict(selection=selection, test_set=test_set, test_column=f"{test_set}: {metric.column}")


@dataclasses.dataclass(frozen=True)
class NoiseView:
    """What the report needs about seeds and the fitness source.

    Attributes:
      source: 'ood_test' or 'ood_val'; recorded: whether the run database recorded it
        (older runs did not: 'ood_test' is then assumed).
      k: seeds per candidate; ood_val_seed: the OOD validation set's sampler seed.
      final: program id -> official-test evaluation dict (ood_val runs), when scored.
      final_seeds: the final test's training seeds (its `train_seeds`); None for runs before
        it trained on seeds the search never used (it then reused the search's own).
    """

    source: str
    recorded: bool
    k: int
    ood_val_seed: int | None
    final: Mapping[str, Mapping[str, Any]]
    final_seeds: tuple[int, ...] | None = None
    family: str | None = None  # None: the default family (a run that predates families)
    metric: Metric = dataclasses.field(default_factory=lambda: metric_for(None))

    def _label(self, key: str) -> str:
        return _labels(self.family, self.source, self.ood_val_seed, self.metric)[key]

    @property
    def selection_label(self) -> str:
        """What the search's scores were measured on."""
        return self._label("selection")

    @property
    def test_set(self) -> str:
        """The set a run reports on: the official OOD test set, or the family's test part."""
        return self._label("test_set")

    @property
    def test_column(self) -> str:
        """The seed-spread table's column of the test set's scores."""
        return self._label("test_column")

    def describe(self) -> str:
        """One sentence: the fitness source and the seeds, for the report's header."""
        assumed = "" if self.recorded else " (not recorded by this run: assumed)"
        seeds = "one training seed" if self.k == 1 else f"{self.k} training seeds"
        text = (
            f"Fitness: the search selected on the {self.selection_label}{assumed}, with "
            f"{seeds} per program (scores are means over the seeds)."
        )
        if self.source == "ood_val":
            text += (
                f" The {self.test_set} was scored only for the final programs (the seed "
                "and the best), after the search"
            )
            if self.final_seeds:
                text += (
                    f", each trained again with training seeds {list(self.final_seeds)}, which "
                    "the search never trained with."
                )
            elif self.final:  # scored before the fresh-seed rule
                text += (
                    ", each trained again with the search's own seeds (the parameters it "
                    "selected, so the best's test score is optimistic; `--resume` scores "
                    "them again on fresh seeds)."
                )
            else:
                text += "."
        return text


def _record(e: Mapping[str, Any]) -> Mapping[str, Any]:
    """The evaluation record of a run.db row (its `evaluation_json`), or `e` itself when it is
    a record dict already."""
    if "evaluation_json" in e:
        return json.loads(e["evaluation_json"]) if e["evaluation_json"] else {}
    return e


def seed_scores(e: Mapping[str, Any] | None) -> tuple[float, ...]:
    """The per-seed OOD scores of an evaluation row or record dict ((ood,) for one seed)."""
    if e is None:
        return ()
    scores = _record(e).get("seed_scores")
    if scores:
        return tuple(float(s) for s in scores)
    ood = e.get("ood_score")
    return () if ood is None else (float(ood),)


def seeds_of(e: Mapping[str, Any] | None) -> tuple[int, ...]:
    """The training seeds of an evaluation row or record dict, in `seed_scores` order."""
    if e is None:
        return ()
    data = _record(e)
    seeds = data.get("seeds")
    if seeds:
        return tuple(int(s) for s in seeds)
    seed = data.get("seed", e.get("seed"))
    return () if seed is None else (int(seed),)


def _mean_std(scores: Sequence[float]) -> tuple[float, float | None]:
    mean = math.fsum(scores) / len(scores)
    if len(scores) < 2:
        return mean, None
    return mean, math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / (len(scores) - 1))


def noise_view(meta: Mapping[str, Any], final_test: Mapping[str, Any] | None) -> NoiseView:
    """The fitness source and K from the run's flattened metadata (old runs: defaults)."""
    source = find_meta(meta, "fitness_source") or find_meta(meta, "fitness.source")
    k = find_meta(meta, "seeds_per_candidate") or find_meta(meta, "fitness.seeds") or 1
    family = find_meta(meta, "family")
    family = None if family is None else str(family)
    final = {
        pid: entry["evaluation"]
        for pid, entry in ((final_test or {}).get("programs") or {}).items()
        if entry.get("ok") and entry.get("evaluation")
    }
    return NoiseView(
        source=source or "ood_test",
        recorded=source is not None,
        k=int(k),
        ood_val_seed=find_meta(meta, "fitness.ood_val_seed"),
        final=final,
        final_seeds=recorded_train_seeds(final_test),
        family=family,
        metric=metric_for(family),
    )


def reported_ood(view: NoiseView, e: Mapping[str, Any]) -> float | None:
    """The OOD score set beside the paper's: on the official test set (mean over seeds);
    None for an `ood_val` run whose final program was not scored on it."""
    if view.source == "ood_val":
        final = view.final.get(e["program_id"])
        return None if final is None else final["ood_score"]
    return e["ood_score"]


def _fmt_scores(scores: Sequence[float], metric: Metric) -> str:
    if not scores:
        return "—"
    mean, std = _mean_std(scores)
    x, d = metric.scale, metric.digits
    each = ", ".join(f"{x * s:.{d}f}" for s in scores)
    spread = "" if std is None else f" ± {x * std:.{d}f}"
    return f"{x * mean:.{d}f}{spread} ({each})"


def spread_lines(acc: RunAccounting, view: NoiseView, protocol: str) -> list[str]:
    """The 'Seed spread' section: per-seed scores, mean ± sample std, for seed and best."""
    rows = []
    for name, e in (("seed", acc.seed), ("best evaluated candidate", acc.best_candidate)):
        if e is None:
            rows.append([name, "—", "—", "—"])
            continue
        selection = seed_scores(e)
        if view.source == "ood_test":
            test = _fmt_scores(selection, view.metric) + " (same set)"
        else:
            final = view.final.get(e["program_id"])
            test = _fmt_scores(seed_scores(final), view.metric) if final else "not scored (yet)"
        rows.append([name, f"`{e['program_id']}`", _fmt_scores(selection, view.metric), test])
    column = view.metric.column
    head = ["program", "id", f"selection score: {column} mean ± sample std (per seed)"]
    head.append(f"{view.test_column} mean ± sample std (per seed)")
    return [f"## Seed spread ({protocol})", "", *markdown.table(head, rows)] + [
        "",
        "Sample std over the training seeds; one seed has no spread (—).",
    ]


def verdict_line(acc: RunAccounting, view: NoiseView, protocol: str) -> str:
    """The noise-aware verdict: best evaluated candidate vs seed."""
    if acc.seed is None:
        return (
            "**Verdict:** the seed has no recorded evaluation, so the best candidate "
            "cannot be compared with it."
        )
    if acc.best_candidate is None:
        return (
            "**Verdict:** no candidate was evaluated, so nothing beats the seed; the "
            "best program is the seed itself."
        )
    b, s = acc.best_candidate, acc.seed
    on, b_rec, s_rec, selected_on_these = view.selection_label, b, s, True
    if view.source == "ood_val":
        fb, fs = view.final.get(b["program_id"]), view.final.get(s["program_id"])
        if fb and fs:
            on, b_rec, s_rec, selected_on_these = view.test_set, fb, fs, False
        else:
            on += " (the official test scores of the final programs are not recorded)"
    b_scores, s_scores = seed_scores(b_rec), seed_scores(s_rec)
    b_mean, _ = _mean_std(b_scores)
    s_mean, _ = _mean_std(s_scores)
    metric = view.metric
    margin = metric.scale * (b_mean - s_mean)
    k = len(s_scores) if len(s_scores) == len(b_scores) else f"{len(s_scores)}/{len(b_scores)}"
    head = (
        f"**Verdict ({protocol}; {on}; mean over {k} seed(s) per program):** the best evaluated "
        f"candidate (program `{b['program_id']}`, attempt index {b['proposal_attempt']})"
    )
    scores = (
        f"{metric.word} {metric.value(b_mean)} vs {metric.value(s_mean)} "
        f"({metric.amount(margin, sign=True)})"
    )
    paired = seeds_of(b_rec) == seeds_of(s_rec) and len(seeds_of(b_rec)) == len(b_scores)
    line = f"{head} {_verdict_text(b_scores, s_scores, paired, scores, metric)}"
    if selected_on_these and len(b_scores) > 1:
        line += (
            " These are the scores the search selected the best on, so the test is "
            "optimistic (the best of many draws)."
        )
    if (b["task"], b["preset"], b["seed"]) != (s["task"], s["preset"], s["seed"]):
        line += (
            " Warning: the seed and the candidate were evaluated under different "
            f"task/preset/seed ({s['task']}/{s['preset']}/{s['seed']} vs "
            f"{b['task']}/{b['preset']}/{b['seed']})."
        )
    return line


def _single_seed_note(metric: Metric) -> str:
    """Why one seed per program tells nothing (the family's own note, e.g. CLRS's measured
    example; else in its metric's word)."""
    if metric.note:
        return metric.note
    return (
        "One training seed per program cannot separate them: the same architecture's "
        f"{metric.word} varies between initialisations. Set `fitness.seeds` to 2 or more to "
        "measure the spread."
    )


def _verdict_text(
    b_scores: Sequence[float],
    s_scores: Sequence[float],
    paired: bool,
    scores: str,
    metric: Metric | None = None,
) -> str:
    """'beats the seed: ...' / 'cannot tell ...' from the per-seed scores (fractions), tested
    in the metric's shown units (default: the default family's metric)."""
    metric = metric or metric_for(None)
    paired = paired and len(b_scores) == len(s_scores) > 1
    x = metric.scale
    test = significance.task_test(
        [x * v for v in b_scores], [x * v for v in s_scores], paired=paired
    )
    word = significance.verdicts([test])[0]
    direction = "scores above" if test.diff > 0 else "equals" if test.diff == 0 else "is below"
    if not test.tested:
        return (
            f"{direction} the seed: {scores}. Verdict: {significance.CANNOT_TELL} (fewer than "
            f"2 training seeds per program: no test). {_single_seed_note(metric)}"
        )
    how = f"{test.method}{' on the shared seeds' if paired else ''}, p = {test.p:.3g}"
    alpha = f"alpha = {significance.DEFAULT_ALPHA:g}"
    if word == significance.WIN:
        return f"beats the seed: {scores}; {how} <= {alpha}."
    if word == significance.LOSS:
        return f"is worse than the seed: {scores}; {how} <= {alpha}."
    mdd = significance.mdd([test])
    text = (
        f"{direction} the seed: {scores}. Verdict: {significance.CANNOT_TELL} ({how} > "
        f"{alpha}; minimal detectable difference at these seeds and spread: "
        f"{metric.amount(mdd)})."
    )
    floor = significance.floor_note([test])
    return text + (f" {floor}" if floor else "")

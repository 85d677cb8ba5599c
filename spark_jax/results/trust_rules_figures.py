"""The figures of results/trust-rules, each read from a stored record of the run it comes from,
before and after, never from a report's Markdown: the benchmarks' `results.csv` (per-seed
scores and training seeds) and `comparison.json` (the verdicts, interval, per-task tests and
minimal detectable difference each tree's own code computes from that results.csv), the
searches' `config.yaml`, the classify searches' `selection.json` (read from their run
databases), the scripted scenarios' `output.txt` (`FIGURE name=value` lines), the
comparison's `summary.txt` (`trust_rules_probes.run_summary`, read from its run databases) and
each tree's `reference/clrs-row.json`. The JSON records are written by
`trust_rules_records`; no number is typed here."""

from __future__ import annotations

import csv
import io
import json
import pathlib
import re
import statistics

import yaml

Row = dict[str, str]
NO_INTERVAL = "cannot be computed (a task has fewer than 2 seeds on a side)"


def read(out: pathlib.Path, rel: str) -> str:
    """A stored file of the folder, as text."""
    return (out / rel).read_text(encoding="utf-8")


def record(out: pathlib.Path, rel: str) -> dict:
    """A stored JSON record of the folder."""
    return json.loads(read(out, rel))


def verdict_words(comparison: dict) -> str:
    """A comparison record's verdict counts, as words ("0 wins, 2 ties, 0 losses")."""
    return ", ".join(f"{n} {name}" for name, n in comparison["verdicts"].items())


def interval_text(comparison: dict) -> str:
    """The 95% interval of the mean difference over tasks, in pp."""
    ci = comparison["ci_95_pp"]
    return NO_INTERVAL if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def _test_name(task: dict) -> str:
    if not task["tested"]:
        return "none (fewer than 2 seeds on a side)"
    return f"{task['test']}{' (same seeds)' if task['paired'] else ''}"


def task_tests(comparison: dict) -> str:
    """Each task's test, Holm-adjusted p and verdict (the old code tests no task)."""
    if comparison["per_task"] is None:
        return "no per-task test (spread rule)"
    return "; ".join(
        f"{t['task']}: {_test_name(t)}, p(Holm) "
        f"{'—' if t['p_holm'] is None else format(t['p_holm'], '.3g')}, {t['verdict']}"
        for t in comparison["per_task"]
    )


def mdd_text(comparison: dict) -> str:
    mdd = comparison["mdd_pp"]
    return "not stated" if mdd is None else f"{mdd:.2f} pp"


def p_floor(comparison: dict) -> float | None:
    """The exact test's smallest possible p where it is above Holm's first threshold (no
    verdict is possible at these seeds), else None."""
    floor = comparison.get("exact_p_floor") or {}
    p = floor.get("smallest_possible_p")
    return p if p is not None and p > floor["holm_first_threshold"] else None


def results_rows(out: pathlib.Path, rel: str) -> list[dict[str, str]]:
    """A stored benchmark's `results.csv`: one row per (program, task, seed) job."""
    return list(csv.DictReader(io.StringIO(read(out, rel))))


def _pct(x: str | float) -> str:
    return f"{100 * float(x):.2f}"


def _mean_std(rows: list[dict[str, str]]) -> str:
    """Mean ± sample std over seeds, in %, as the benchmark's report writes a cell."""
    scores = [100 * float(r["ood_score"]) for r in rows]
    return f"{statistics.mean(scores):.2f} ± {statistics.stdev(scores):.2f}"


def search_seeds(config: dict) -> list[int]:
    """The seeds a search trained with, from its stored config: `seed` ..
    `seed + fitness.seeds - 1` (the rule of `spark_jax.benchmark.seeds`)."""
    first, k = int(config["seed"]), int((config.get("fitness") or {}).get("seeds") or 1)
    return list(range(first, first + k))


def _summary(text: str) -> dict[str, dict[str, str]]:
    """run_summary lines -> {method: {key: value}}."""
    out = {}
    for line in text.splitlines():
        name, _, rest = line.partition(": ")
        out[name.split("/")[0]] = dict(re.findall(r"(\w+(?:\([^)]*\))?)=(\{[^}]*\}|\S+)", rest))
    return out


def _valid_rate(summary: dict[str, str]) -> str:
    """Feasible proposals / attempts, from a run summary's statuses."""
    feasible = yaml.safe_load(summary["statuses"]).get("feasible", 0)
    return f"{feasible / int(summary['attempts']):.2f}"


def _figures(text: str) -> dict[str, str]:
    return dict(re.findall(r"^FIGURE (\w+)=(\S+)", text, re.M))


def figure(rule, name, before, after, unit, src_b, src_a=None) -> Row:
    """One row of the table: a rule's figure before and after, and the files it came from."""
    return dict(
        rule=rule,
        figure=name,
        before=before,
        after=after,
        unit=unit,
        source_before=src_b,
        source_after=src_a or src_b.replace("before/", "after/"),
    )


def _both(out: pathlib.Path, src: str) -> tuple[dict, dict]:
    """A JSON record of the before side (`src`) and its after counterpart."""
    return record(out, src), record(out, src.replace("before/", "after/"))


def _verdict_row(rule: str, b: dict, a: dict, src: str) -> Row:
    """A comparison's verdict counts before and after, named by the pair it compares."""
    name = f"{a['program']} vs {a['baseline']} on {','.join(a['tasks'])}"
    return figure(rule, name, verdict_words(b), verdict_words(a), "tasks", src)


def one_seed(out: pathlib.Path) -> list[Row]:
    """One seed per side: the verdict and the interval of the mean difference."""
    src = "before/stats-1seed/comparison.json"
    (b, a), rule = _both(out, src), "1 seed per side: `cannot tell`"
    return [
        _verdict_row(rule, b, a, src),
        figure(rule, "95% CI of the mean difference", interval_text(b), interval_text(a), "pp",
               src),
    ]  # fmt: skip


def two_seeds(out: pathlib.Path) -> list[Row]:
    """Two seeds: the exact test with Holm's correction, its interval and detectable size."""
    src = "before/stats-2seeds/comparison.json"
    (b, a), rule = _both(out, src), "2 seeds: exact permutation test, Holm over tasks"
    return [
        _verdict_row(rule, b, a, src),
        figure(rule, "per-task test", task_tests(b), task_tests(a), "", src),
        figure(
            rule, f"95% CI of the mean difference ({a['mean_diff_pp']:.2f} pp)",
            interval_text(b), interval_text(a), "pp", src,
        ),
        figure(rule, "minimal detectable difference per task", mdd_text(b), mdd_text(a), "", src),
    ]  # fmt: skip


def disjoint_seeds(out: pathlib.Path) -> list[Row]:
    """A finished run's benchmark: its training seeds, those it shares with the search (the
    search's stored config) and its best's scores (each side's results.csv)."""
    searched = search_seeds(yaml.safe_load(read(out, "input/run-dfs/config.yaml")))
    rule = f"benchmark RUN_DIR: seeds disjoint from the search's {searched}"
    src = "before/bench-run/results.csv"
    rows_b, rows_a = results_rows(out, src), results_rows(out, src.replace("before/", "after/"))
    sb, sa = (sorted({int(r["seed"]) for r in rows}) for rows in (rows_b, rows_a))

    def overlap(seeds: list[int]) -> str:
        return str(sorted(set(seeds) & set(searched)) or "none")

    shared = [r for r in rows_b if int(r["seed"]) in searched]
    best = [r for r in rows_b if r["program"] == "run-dfs:best" and r["task"] == "dfs"]
    best_a = [r for r in rows_a if r["program"] == "run-dfs:best" and r["task"] == "dfs"]
    return [
        figure(rule, "training seeds", str(sb), str(sa), "seeds", src),
        figure(rule, "seeds shared with the search", overlap(sb), overlap(sa), "seeds", src),
        figure(
            rule, "dfs OOD of the run's best, mean ± std over 2 seeds", _mean_std(best),
            _mean_std(best_a), "%", src,
        ),
        figure(
            rule, "dfs OOD of the seed the search also trained with",
            ", ".join(f"seed {r['seed']}: {_pct(r['ood_score'])}" for r in shared) or "none",
            "none", "%", src,
        ),
    ]  # fmt: skip


def classify_split(out: pathlib.Path) -> list[Row]:
    """Classify: the fitness source (config.yaml), the split it selected on and the best
    candidate's scores (selection.json, read from the search's run database)."""
    source_b, source_a = (
        yaml.safe_load(read(out, f"{side}/classify-bc/config.yaml"))["fitness"]["source"]
        for side in ("before", "after")
    )
    rule = "classify (breast_cancer): selection on a validation split"
    src = "before/classify-bc/selection.json"
    b, a = _both(out, src)

    def split(r: dict) -> str:
        return f"{r['selection_split']['name']} ({r['selection_split']['examples']} examples)"

    best_b, best_a = b["best_candidate"], a["best_candidate"]
    return [
        figure(rule, "fitness.source", source_b, source_a, "", "before/classify-bc/config.yaml"),
        figure(rule, "split the search selected on", split(b), split(a), "", src),
        figure(
            rule, "best program: score it was selected with", _pct(best_b["selection_score"]),
            _pct(best_a["selection_score"]), "%", src,
        ),
        figure(
            rule, "best program: test accuracy reported", _pct(best_b["test_score"]),
            _pct(best_a["test_score"]), "%", src,
        ),
    ]  # fmt: skip


def scripted(out: pathlib.Path) -> list[Row]:
    """The scripted budget/duplicate scenario's FIGURE lines (no training, no LLM)."""
    db = _figures(read(out, "before/dup-demo/output.txt"))
    da = _figures(read(out, "after/dup-demo/output.txt"))
    src = "before/dup-demo/output.txt"
    nan = "budget counts failed trainings (scripted, B=3, first child NaN)"
    dup = "duplicates not retrained (scripted: `a` proposed twice, the seed once)"
    best = f"best at budget excludes the seed (scripted, seed scores {da['seed_score']})"
    return [
        figure(nan, "attempts until B is reached", db["nan_attempts"], da["nan_attempts"],
               "attempts", src),
        figure(nan, "distinct candidates trained", db["nan_distinct_candidates_trained"],
               da["nan_distinct_candidates_trained"], "programs", src),
        figure(dup, "proposals recorded as `duplicate`", db["dup_recorded"], da["dup_recorded"],
               "proposals", src),
        figure(dup, "trainings of program `a`", db["a_trainings"], da["a_trainings"],
               "trainings", src),
        figure(best, "best candidate's score", db["best_candidate"], da["best_candidate"],
               "score", src),
    ]  # fmt: skip


def equal_attempts(out: pathlib.Path) -> list[Row]:
    """compare under one attempt cap: attempts, trainings and OpenEvolve's valid rate
    (feasible / attempts) per method, from summary.txt (read from the run databases)."""
    src = "before/budget/summary.txt"
    rb, ra = _summary(read(out, src)), _summary(read(out, src.replace("before/", "after/")))
    rule = "compare: equal attempts (`--budget 2 --max-attempts 5`)"
    rows = []
    for method in ("spark", "openevolve"):
        b, a = rb[method], ra[method]
        rows.append(figure(
            rule, f"{method}: attempts / trainings",
            f"{b['attempts']} / {b['evaluated(entered training)']}",
            f"{a['attempts']} / {a['evaluated(entered training)']}",
            "count", src,
        ))  # fmt: skip
    rows.append(figure(
        "OpenEvolve diffs applied as OpenEvolve does (offline analogue)",
        "openevolve valid rate", _valid_rate(rb["openevolve"]), _valid_rate(ra["openevolve"]),
        "fraction", src,
    ))  # fmt: skip
    return rows


def _reference_text(r: dict) -> str:
    if r["source"] is None:
        return f"no source column; Published figures ({r['every_row']})"
    return f"{r['source']}; comparable: {r['comparable']}"


def vocabulary_and_reference(out: pathlib.Path) -> list[Row]:
    """Baseline prompts carrying SPARK's vocabulary (the count the vocabulary probe prints),
    and the source each tree's reference module gives the CLRS reference row."""
    pat = r"(\d+ of \d+) distinct baseline prompts carry"
    vb, va = read(out, "before/vocab/output.txt"), read(out, "after/vocab/output.txt")
    src = "before/reference/clrs-row.json"
    rb, ra = _both(out, src)
    return [
        figure(
            "baseline prompts without SPARK vocabulary",
            "prompts carrying `factor-scoped` / `an OPERATOR edit` / `an ACTION edit` / `FACTOR:`",
            re.search(pat, vb).group(1), re.search(pat, va).group(1), "prompts",
            "before/vocab/output.txt",
        ),
        figure(
            "reference rows labelled with their true source", "source of the CLRS row",
            _reference_text(rb), _reference_text(ra), "", src,
        ),
    ]  # fmt: skip


RULES = (
    one_seed, two_seeds, disjoint_seeds, classify_split, scripted, equal_attempts,
    vocabulary_and_reference,
)  # fmt: skip


def extract(out: pathlib.Path) -> list[Row]:
    """Every cited figure, rule by rule, from the folder's stored records."""
    return [row for rule in RULES for row in rule(out)]

"""The figures of results/trust-rules, each read from a copied output of the run it comes from,
before and after: the benchmarks' `results.csv` (per-seed scores and training seeds), the
searches' `config.yaml`, the scripted scenarios' `output.txt` (`FIGURE name=value` lines),
the comparison's `summary.txt` (`trust_rules_probes.run_summary`) and, for what only the
versions' own reports hold (verdicts, intervals, minimal detectable differences, a family's
best program, the reference rows' source), the report each version wrote. The folder keeps no
databases: the "before" figures are what the old code's reports said, which today's code
cannot recompute. No number is typed here."""

from __future__ import annotations

import csv
import io
import pathlib
import re
import statistics

import yaml

Row = dict[str, str]


def read(out: pathlib.Path, rel: str) -> str:
    """A copied file of the folder, as text."""
    return (out / rel).read_text(encoding="utf-8")


def md_tables(text: str, heading: str) -> list[list[dict[str, str]]]:
    """The tables of a copied report under `heading` (up to the next '## ' heading)."""
    start = text.index(heading)
    rest = text[start + len(heading) :]
    nxt = re.search(r"^## ", rest, re.M)
    section = rest[: nxt.start()] if nxt else rest
    tables, current = [], []
    for line in section.splitlines() + [""]:
        if line.startswith("|"):
            current.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif current:
            header, body = current[0], [r for r in current[1:] if not set("".join(r)) <= set("-")]
            tables.append([dict(zip(header, r)) for r in body])
            current = []
    return tables


def _row(rows: list[dict[str, str]], key: str, value: str) -> dict[str, str]:
    return next(r for r in rows if r.get(key) == value)


def _mpnn_summary(report: str) -> dict[str, str]:
    return _row(md_tables(report, "## Paired comparison")[0], "program", "`mpnn`")


def _verdicts(report: str) -> str:
    """The `mpnn` summary row of a benchmark's paired comparison, as words."""
    summary = _mpnn_summary(report)
    keys = [k for k in ("wins", "ties", "losses", "cannot tell") if k in summary]
    return ", ".join(f"{summary[k]} {k}" for k in keys)


def _mean_ci(report: str) -> tuple[str, str]:
    summary = _mpnn_summary(report)
    ci = next(v for k, v in summary.items() if k.startswith("95% CI"))
    return summary["mean diff (pp)"], ci


def _task_tests(report: str) -> str:
    tables = md_tables(report, "## Paired comparison")
    if len(tables) < 2:
        return "no per-task test (spread rule)"
    return "; ".join(
        f"{r['task']}: {r['test']}, p(Holm) {r['p (Holm)']}, {r['verdict']}" for r in tables[1]
    )


def _mdd(report: str) -> str:
    m = re.search(r"Minimal detectable difference[^:]*: ([^\n]*?)(?: \(|$)", report, re.M)
    return m.group(1).strip() if m else "not stated"


def _ints(text: str) -> set[int]:
    return {int(x) for x in re.findall(r"\d+", text)}


def results_rows(out: pathlib.Path, rel: str) -> list[dict[str, str]]:
    """A copied benchmark's `results.csv`: one row per (program, task, seed) job."""
    return list(csv.DictReader(io.StringIO(read(out, rel))))


def _pct(x: str) -> str:
    return f"{100 * float(x):.2f}"


def _mean_std(rows: list[dict[str, str]]) -> str:
    """Mean ± sample std over seeds, in %, as the benchmark's report writes a cell."""
    scores = [100 * float(r["ood_score"]) for r in rows]
    return f"{statistics.mean(scores):.2f} ± {statistics.stdev(scores):.2f}"


def _family_best(report: str) -> dict[str, str]:
    rows = md_tables(report, "## Task family")[0]
    return _row(rows, "program", "best evaluated candidate")


def _summary(text: str) -> dict[str, dict[str, str]]:
    """run_summary lines -> {method: {key: value}}."""
    out = {}
    for line in text.splitlines():
        name, _, rest = line.partition(": ")
        out[name.split("/")[0]] = dict(re.findall(r"(\w+(?:\([^)]*\))?)=(\{[^}]*\}|\S+)", rest))
    return out


def _figures(text: str) -> dict[str, str]:
    return dict(re.findall(r"^FIGURE (\w+)=(\S+)", text, re.M))


def _report_table_row(report: str, heading: str, method: str) -> dict[str, str]:
    return _row(md_tables(report, heading)[0], "method (paper name)", method)


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


def one_seed(out: pathlib.Path) -> list[Row]:
    """One seed per side: the verdict and the interval of the mean difference."""
    s1b, s1a = read(out, "before/stats-1seed/report.md"), read(out, "after/stats-1seed/report.md")
    rule, src = "1 seed per side: `cannot tell`", "before/stats-1seed/report.md"
    return [
        figure(
            rule, "mpnn vs official:triplet_gmpnn on bfs,dfs", _verdicts(s1b), _verdicts(s1a),
            "tasks", src,
        ),
        figure(
            rule, "95% CI of the mean difference", _mean_ci(s1b)[1], _mean_ci(s1a)[1], "pp", src
        ),
    ]  # fmt: skip


def two_seeds(out: pathlib.Path) -> list[Row]:
    """Two seeds: the exact test with Holm's correction, its interval and detectable size."""
    s2b = read(out, "before/stats-2seeds/report.md")
    s2a = read(out, "after/stats-2seeds/report.md")
    rule, src = "2 seeds: exact permutation test, Holm over tasks", "before/stats-2seeds/report.md"
    return [
        figure(
            rule, "mpnn vs official:triplet_gmpnn on bfs,dfs", _verdicts(s2b), _verdicts(s2a),
            "tasks", src,
        ),
        figure(rule, "per-task test", _task_tests(s2b), _task_tests(s2a), "", src),
        figure(
            rule, "95% CI of the mean difference ({} pp)".format(_mean_ci(s2a)[0]),
            _mean_ci(s2b)[1], _mean_ci(s2a)[1], "pp", src,
        ),
        figure(rule, "minimal detectable difference per task", _mdd(s2b), _mdd(s2a), "", src),
    ]  # fmt: skip


def disjoint_seeds(out: pathlib.Path) -> list[Row]:
    """A finished run's benchmark: its training seeds (results.csv), those it shares with the
    search (the search's seeds as the benchmark's report names them), its best's scores."""
    ba = read(out, "after/bench-run/report.md")
    search_seeds = re.search(r"its search trained with seeds (\[[^\]]*\])", ba).group(1)
    rule = f"benchmark RUN_DIR: seeds disjoint from the search's {search_seeds}"
    rows_b = results_rows(out, "before/bench-run/results.csv")
    rows_a = results_rows(out, "after/bench-run/results.csv")
    sb, sa = (str(sorted({int(r["seed"]) for r in rows})) for rows in (rows_b, rows_a))

    def overlap(seeds: str) -> str:
        return str(sorted(_ints(seeds) & _ints(search_seeds)) or "none")

    src = "before/bench-run/report.md"
    shared = [r for r in rows_b if int(r["seed"]) in _ints(search_seeds)]
    best = [r for r in rows_b if r["program"] == "run-dfs:best" and r["task"] == "dfs"]
    best_a = [r for r in rows_a if r["program"] == "run-dfs:best" and r["task"] == "dfs"]
    return [
        figure(rule, "training seeds", sb, sa, "seeds", src),
        figure(rule, "seeds shared with the search", overlap(sb), overlap(sa), "seeds", src),
        figure(
            rule, "dfs OOD of the run's best, mean ± std over 2 seeds", _mean_std(best),
            _mean_std(best_a), "%", src,
        ),
        figure(
            rule, "dfs OOD of the seed the search also trained with",
            ", ".join(f"seed {r['seed']}: {_pct(r['ood_score'])}" for r in shared) or "none",
            "none", "%", "before/bench-run/results.csv", "after/bench-run/results.csv",
        ),
    ]  # fmt: skip


def classify_split(out: pathlib.Path) -> list[Row]:
    """Classify: the fitness source (config.yaml), the split it selected on and the best
    program's scores (the search's report)."""
    cb = read(out, "before/classify-bc/report.md")
    ca = read(out, "after/classify-bc/report.md")
    source_b, source_a = (
        yaml.safe_load(read(out, f"{side}/classify-bc/config.yaml"))["fitness"]["source"]
        for side in ("before", "after")
    )
    rule = "classify (breast_cancer): selection on a validation split"
    src = "before/classify-bc/report.md"
    nb = re.search(r"n_test=(\d+)", cb).group(1)
    na = re.search(r"n_val=(\d+)", ca).group(1)
    best_b, best_a = _family_best(cb), _family_best(ca)
    return [
        figure(rule, "fitness.source", source_b, source_a, "", "before/classify-bc/config.yaml"),
        figure(
            rule, "split the search selected on", f"test ({nb} examples)",
            f"validation ({na} examples)", "", src,
        ),
        figure(
            rule, "best program: score it was selected with", best_b["accuracy (%)"],
            best_a["validation accuracy (%)"], "%", src,
        ),
        figure(
            rule, "best program: test accuracy reported", best_b["accuracy (%)"],
            best_a["test accuracy (%)"], "%", src,
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
    """compare under one attempt cap: attempts and trainings per method (summary.txt, read
    from the run databases) and OpenEvolve's valid rate (the comparison's report)."""
    rb = _summary(read(out, "before/budget/summary.txt"))
    ra = _summary(read(out, "after/budget/summary.txt"))
    rule = "compare: equal attempts (`--budget 2 --max-attempts 5`)"
    rows = []
    for method in ("spark", "openevolve"):
        b, a = rb[method], ra[method]
        rows.append(figure(
            rule, f"{method}: attempts / trainings",
            f"{b['attempts']} / {b['evaluated(entered training)']}",
            f"{a['attempts']} / {a['evaluated(entered training)']}",
            "count", "before/budget/summary.txt",
        ))  # fmt: skip
    cmp_b, cmp_a = read(out, "before/budget/report.md"), read(out, "after/budget/report.md")
    oe = "`openevolve` (OpenEvolve; offline analogue, not an LLM result)"
    heading = "## Methods at the same budget"
    rows.append(figure(
        "OpenEvolve diffs applied as OpenEvolve does (offline analogue)",
        "openevolve valid rate",
        _report_table_row(cmp_b, heading, oe)["valid rate"],
        _report_table_row(cmp_a, heading, oe)["valid rate"],
        "fraction", "before/budget/report.md",
    ))  # fmt: skip
    return rows


def vocabulary_and_reference(out: pathlib.Path) -> list[Row]:
    """Baseline prompts carrying SPARK's vocabulary (the count vocab's output prints), and the
    source the reports give the CLRS reference row."""
    pat = r"(\d+ of \d+) distinct baseline prompts carry"
    vb, va = read(out, "before/vocab/output.txt"), read(out, "after/vocab/output.txt")
    s1b, s1a = read(out, "before/stats-1seed/report.md"), read(out, "after/stats-1seed/report.md")
    ref_sec = s1b.split("## Paper reference rows", 1)[1].strip().splitlines()[0]
    ref_b = "no source column; " + re.search(r"^([^;]*\))", ref_sec).group(1)
    clrs = _row(md_tables(s1a, "## Paper reference rows")[0], "paper row", "CLRS (OOD %)")
    return [
        figure(
            "baseline prompts without SPARK vocabulary",
            "prompts carrying `factor-scoped` / `an OPERATOR edit` / `an ACTION edit` / `FACTOR:`",
            re.search(pat, vb).group(1), re.search(pat, va).group(1), "prompts",
            "before/vocab/output.txt",
        ),
        figure(
            "reference rows labelled with their true source", "source of the CLRS row", ref_b,
            f"{clrs['source']}; comparable: {clrs['comparable']}", "",
            "before/stats-1seed/report.md",
        ),
    ]  # fmt: skip


RULES = (
    one_seed, two_seeds, disjoint_seeds, classify_split, scripted, equal_attempts,
    vocabulary_and_reference,
)  # fmt: skip


def extract(out: pathlib.Path) -> list[Row]:
    """Every cited figure, rule by rule, from the folder's copied outputs."""
    return [row for rule in RULES for row in rule(out)]

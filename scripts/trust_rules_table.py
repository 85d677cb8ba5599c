"""Before/after figures of issue 24 ("Verdicts a researcher can trust") from results/trust-rules.

Usage: python scripts/trust_rules_table.py [OUT]   (OUT defaults to results/trust-rules)

Reads the copied text outputs under OUT/before/ and OUT/after/ (report.md, results.csv,
config.yaml, summary.txt, output.txt), extracts every figure the README cites into
OUT/figures.csv, and rewrites the README's section between the `<!-- generated -->` and
`<!-- end generated -->` markers. No number is typed here: each one is parsed from a copied file.
"""

from __future__ import annotations

import csv
import io
import pathlib
import re
import sys

from spark_jax.util import markdown

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "results" / "trust-rules"
BEGIN, END = "<!-- generated -->", "<!-- end generated -->"
FIELDS = ("rule", "figure", "before", "after", "unit", "source_before", "source_after")
HEADER = ["rule", "figure", "before", "after", "unit", "source (before / after)"]


def _read(out: pathlib.Path, rel: str) -> str:
    return (out / rel).read_text(encoding="utf-8")


def md_tables(text: str, heading: str) -> list[list[dict[str, str]]]:
    """The markdown tables under `heading` (up to the next '## ' heading), as lists of rows."""
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


def _verdicts(report: str) -> str:
    """The `mpnn` summary row of a benchmark's paired comparison, as words."""
    summary = _row(md_tables(report, "## Paired comparison")[0], "program", "`mpnn`")
    keys = [k for k in ("wins", "ties", "losses", "cannot tell") if k in summary]
    return ", ".join(f"{summary[k]} {k}" for k in keys)


def _mean_ci(report: str) -> tuple[str, str]:
    summary = _row(md_tables(report, "## Paired comparison")[0], "program", "`mpnn`")
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


def _header_seeds(report: str) -> str:
    return re.search(r"seeds (\[[^\]]*\])", report).group(1)


def _ints(text: str) -> set[int]:
    return {int(x) for x in re.findall(r"\d+", text)}


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _pct(x: str) -> str:
    return f"{100 * float(x):.2f}"


def _yaml_value(text: str, key: str) -> str:
    return re.search(rf"^\s*{key}: *(\S+)", text, re.M).group(1)


def _family_best(report: str) -> dict[str, str]:
    rows = md_tables(report, "## Task family")[0]
    return _row(rows, "program", "best evaluated candidate")


def _summary(text: str) -> dict[str, dict[str, str]]:
    """run_summary.py lines -> {method: {key: value}}."""
    out = {}
    for line in text.splitlines():
        name, _, rest = line.partition(": ")
        out[name.split("/")[0]] = dict(re.findall(r"(\w+(?:\([^)]*\))?)=(\{[^}]*\}|\S+)", rest))
    return out


def _figures(text: str) -> dict[str, str]:
    return dict(re.findall(r"^FIGURE (\w+)=(\S+)", text, re.M))


def _report_table_row(report: str, heading: str, method: str) -> dict[str, str]:
    return _row(md_tables(report, heading)[0], "method (paper name)", method)


def extract(out: pathlib.Path = DEFAULT_OUT) -> list[dict[str, str]]:
    """Every cited figure, parsed from the copied outputs."""
    rows: list[dict[str, str]] = []

    def add(rule, figure, before, after, unit, src_b, src_a=None):
        rows.append(
            dict(
                rule=rule,
                figure=figure,
                before=before,
                after=after,
                unit=unit,
                source_before=src_b,
                source_after=src_a or src_b.replace("before/", "after/"),
            )
        )

    # 1. One seed: cannot tell.
    s1b, s1a = _read(out, "before/stats-1seed/report.md"), _read(out, "after/stats-1seed/report.md")
    rule = "1 seed per side: `cannot tell`"
    add(
        rule,
        "mpnn vs official:triplet_gmpnn on bfs,dfs",
        _verdicts(s1b),
        _verdicts(s1a),
        "tasks",
        "before/stats-1seed/report.md",
    )
    add(
        rule,
        "95% CI of the mean difference",
        _mean_ci(s1b)[1],
        _mean_ci(s1a)[1],
        "pp",
        "before/stats-1seed/report.md",
    )

    # 2. Two seeds: exact test + Holm.
    s2b, s2a = (
        _read(out, "before/stats-2seeds/report.md"),
        _read(out, "after/stats-2seeds/report.md"),
    )
    rule = "2 seeds: exact permutation test, Holm over tasks"
    add(
        rule,
        "mpnn vs official:triplet_gmpnn on bfs,dfs",
        _verdicts(s2b),
        _verdicts(s2a),
        "tasks",
        "before/stats-2seeds/report.md",
    )
    add(
        rule,
        "per-task test",
        _task_tests(s2b),
        _task_tests(s2a),
        "",
        "before/stats-2seeds/report.md",
    )
    add(
        rule,
        "95% CI of the mean difference ({} pp)".format(_mean_ci(s2a)[0]),
        _mean_ci(s2b)[1],
        _mean_ci(s2a)[1],
        "pp",
        "before/stats-2seeds/report.md",
    )
    add(
        rule,
        "minimal detectable difference per task",
        _mdd(s2b),
        _mdd(s2a),
        "",
        "before/stats-2seeds/report.md",
    )

    # 3. Benchmark of a finished run: seeds disjoint from the search's.
    bb, ba = _read(out, "before/bench-run/report.md"), _read(out, "after/bench-run/report.md")
    search_seeds = re.search(r"its search trained with seeds (\[[^\]]*\])", ba).group(1)
    rule = f"benchmark RUN_DIR: seeds disjoint from the search's {search_seeds}"
    sb, sa = _header_seeds(bb), _header_seeds(ba)

    def overlap(seeds: str) -> str:
        return str(sorted(_ints(seeds) & _ints(search_seeds)) or "none")

    add(rule, "training seeds", sb, sa, "seeds", "before/bench-run/report.md")
    add(
        rule,
        "seeds shared with the search",
        str(overlap(sb)),
        str(overlap(sa)),
        "seeds",
        "before/bench-run/report.md",
    )

    def dfs(report: str) -> str:
        rows = md_tables(report, "## OOD accuracy by task")[0]
        return _row(rows, "program", "`run-dfs:best`")["dfs"]

    add(
        rule,
        "dfs OOD of the run's best, mean ± std over 2 seeds",
        dfs(bb),
        dfs(ba),
        "%",
        "before/bench-run/report.md",
    )
    csv_b = _csv_rows(_read(out, "before/bench-run/results.csv"))
    shared = [r for r in csv_b if int(r["seed"]) in _ints(search_seeds)]
    add(
        rule,
        "dfs OOD of the seed the search also trained with",
        ", ".join(f"seed {r['seed']}: {_pct(r['ood_score'])}" for r in shared) or "none",
        "none",
        "%",
        "before/bench-run/results.csv",
        "after/bench-run/results.csv",
    )

    # 4. Classify selects on a validation split.
    cb, ca = _read(out, "before/classify-bc/report.md"), _read(out, "after/classify-bc/report.md")
    yb, ya = (
        _read(out, "before/classify-bc/config.yaml"),
        _read(out, "after/classify-bc/config.yaml"),
    )
    rule = "classify (breast_cancer): selection on a validation split"
    add(
        rule,
        "fitness.source",
        _yaml_value(yb, "source"),
        _yaml_value(ya, "source"),
        "",
        "before/classify-bc/config.yaml",
    )
    nb = re.search(r"n_test=(\d+)", cb).group(1)
    na = re.search(r"n_val=(\d+)", ca).group(1)
    add(
        rule,
        "split the search selected on",
        f"test ({nb} examples)",
        f"validation ({na} examples)",
        "",
        "before/classify-bc/report.md",
    )
    best_b, best_a = _family_best(cb), _family_best(ca)
    add(
        rule,
        "best program: score it was selected with",
        best_b["accuracy (%)"],
        best_a["validation accuracy (%)"],
        "%",
        "before/classify-bc/report.md",
    )
    add(
        rule,
        "best program: test accuracy reported",
        best_b["accuracy (%)"],
        best_a["test accuracy (%)"],
        "%",
        "before/classify-bc/report.md",
    )

    # 5-6, 8. Scripted budget/duplicate scenario.
    db = _figures(_read(out, "before/dup-demo/output.txt"))
    da = _figures(_read(out, "after/dup-demo/output.txt"))
    src = "before/dup-demo/output.txt"
    rule = "budget counts failed trainings (scripted, B=3, first child NaN)"
    add(
        rule, "attempts until B is reached", db["nan_attempts"], da["nan_attempts"], "attempts", src
    )
    add(
        rule,
        "distinct candidates trained",
        db["nan_distinct_candidates_trained"],
        da["nan_distinct_candidates_trained"],
        "programs",
        src,
    )
    rule = "duplicates not retrained (scripted: `a` proposed twice, the seed once)"
    add(
        rule,
        "proposals recorded as `duplicate`",
        db["dup_recorded"],
        da["dup_recorded"],
        "proposals",
        src,
    )
    add(rule, "trainings of program `a`", db["a_trainings"], da["a_trainings"], "trainings", src)
    rule = f"best at budget excludes the seed (scripted, seed scores {da['seed_score']})"
    add(rule, "best candidate's score", db["best_candidate"], da["best_candidate"], "score", src)

    # 7. Equal attempts in compare.
    ub, ua = _read(out, "before/budget/summary.txt"), _read(out, "after/budget/summary.txt")
    rb, ra = _summary(ub), _summary(ua)
    rule = "compare: equal attempts (`--budget 2 --max-attempts 5`)"
    for method in ("spark", "openevolve"):
        add(
            rule,
            f"{method}: attempts / trainings",
            f"{rb[method]['attempts']} / {rb[method]['evaluated(entered training)']}",
            f"{ra[method]['attempts']} / {ra[method]['evaluated(entered training)']}",
            "count",
            "before/budget/summary.txt",
        )
    cmp_b, cmp_a = _read(out, "before/budget/report.md"), _read(out, "after/budget/report.md")
    oe = "`openevolve` (OpenEvolve; offline analogue, not an LLM result)"
    heading = "## Methods at the same budget"
    add(
        "OpenEvolve diffs applied as OpenEvolve does (offline analogue)",
        "openevolve valid rate",
        _report_table_row(cmp_b, heading, oe)["valid rate"],
        _report_table_row(cmp_a, heading, oe)["valid rate"],
        "fraction",
        "before/budget/report.md",
    )

    # Baseline prompts without SPARK vocabulary.
    vb = _read(out, "before/vocab/output.txt")
    va = _read(out, "after/vocab/output.txt")
    pat = r"(\d+ of \d+) distinct baseline prompts carry"
    add(
        "baseline prompts without SPARK vocabulary",
        "prompts carrying `factor-scoped` / `an OPERATOR edit` / `an ACTION edit` / `FACTOR:`",
        re.search(pat, vb).group(1),
        re.search(pat, va).group(1),
        "prompts",
        "before/vocab/output.txt",
    )

    # Reference rows labelled with their source.
    ref_sec = s1b.split("## Paper reference rows", 1)[1].strip().splitlines()[0]
    ref_b = "no source column; " + re.search(r"^([^;]*\))", ref_sec).group(1)
    clrs = _row(md_tables(s1a, "## Paper reference rows")[0], "paper row", "CLRS (OOD %)")
    add(
        "reference rows labelled with their true source",
        "source of the CLRS row",
        ref_b,
        f"{clrs['source']}; comparable: {clrs['comparable']}",
        "",
        "before/stats-1seed/report.md",
    )
    return rows


def write_csv(rows: list[dict[str, str]], path: pathlib.Path) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")


def render(rows: list[dict[str, str]]) -> str:
    """The README's generated section (between the markers, markers excluded)."""
    body = [
        [r[k].replace("|", "/") for k in FIELDS[:5]]
        + [f"`{r['source_before']}` / `{r['source_after']}`"]
        for r in rows
    ]
    lines = ["", *markdown.table(HEADER, body), ""]
    lines.append(
        "_Generated by `scripts/trust_rules_table.py` from the files above "
        "(`figures.csv` holds the same rows)._"
    )
    lines.append("")
    return "\n".join(lines)


def generated_section(readme: str) -> str:
    return readme.split(BEGIN, 1)[1].split(END, 1)[0]


def main(argv: list[str]) -> int:
    out = pathlib.Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    rows = extract(out)
    write_csv(rows, out / "figures.csv")
    readme_path = out / "README.md"
    if readme_path.exists():
        readme = readme_path.read_text(encoding="utf-8")
        if BEGIN in readme and END in readme:
            head, rest = readme.split(BEGIN, 1)
            tail = rest.split(END, 1)[1]
            readme_path.write_text(head + BEGIN + render(rows) + END + tail, encoding="utf-8")
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""The JSON records of results/trust-rules that no `spark-jax` command writes: what each code
tree (the folder's before or after commit) computes from the folder's stored inputs, so that
the table reads stored records and never a report's Markdown.

- `comparison`: a benchmark's paired comparison of one program against the baseline,
  recomputed by the tree's own `spark_jax.benchmark.stats` from the benchmark's `results.csv`
  (verdict counts, mean difference and its interval, per-task tests, minimal detectable
  difference, the exact test's smallest possible p), whichever of these the tree computes.
- `reference`: the source the tree's `spark_jax.report.reference` gives the CLRS reference
  row (or, in a tree without per-row sources, the one label its reports put on every row).
- `selection`: a search's selection split and best candidate (the score it was selected with
  and its test score), read from the run's `run.db` with sqlite alone (a database of any
  version).

The before tree has no `spark_jax.results`, so this file runs by path, with the tree's code on
PYTHONPATH and without its own folder on sys.path (`-P`):

    PYTHONPATH=TREE python -P spark_jax/results/trust_rules_records.py comparison RESULTS_CSV
    PYTHONPATH=TREE python -P spark_jax/results/trust_rules_records.py reference [--preset P]
    python -P spark_jax/results/trust_rules_records.py selection RUN_DIR
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import pathlib
import sqlite3
import subprocess
import sys

VERDICTS = (
    ("wins", "wins"),
    ("ties", "ties"),
    ("losses", "losses"),
    ("cannot tell", "cannot_tell"),
)


def _num(value: float) -> float | None:
    """A float for JSON (None for nan)."""
    return None if value is None or math.isnan(value) else float(value)


def tree_commit(module) -> str | None:
    """The short commit of the git tree a module was imported from (None outside git)."""
    root = pathlib.Path(module.__file__).resolve().parents[2]
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short=7", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or None


def _cells(stats, rows: list[dict[str, str]]):
    """The tree's cells from a benchmark's results.csv rows (a failed job: no score)."""
    return stats.cells_of(
        [
            (
                r["program"],
                r["task"],
                int(r["seed"]),
                float(r["ood_score"]) if r["ok"] == "1" and r["ood_score"] else None,
                r["error_type"] or None,
            )
            for r in rows
        ]
    )


def _per_task(c) -> list[dict] | None:
    """Each task's test and Holm-adjusted verdict (None: the tree tests no task)."""
    if not hasattr(c, "per_task"):
        return None
    return [
        {
            "task": v.task,
            "tested": v.test.tested,
            "test": v.test.method,
            "paired": v.test.paired,
            "seeds": [v.test.n_a, v.test.n_b],
            "diff_pp": _num(v.test.diff),
            "p": _num(v.test.p),
            "p_holm": _num(v.p_holm),
            "verdict": v.verdict,
        }
        for v in c.per_task
    ]


def _floor(stats, c) -> dict | None:
    """The exact tests' smallest possible p and Holm's first threshold (None: no such test)."""
    significance = getattr(stats, "significance", None)
    if significance is None or not hasattr(c, "per_task"):
        return None
    tested = [v.test for v in c.per_task if v.test.tested]
    floors = [significance.min_exact_p(t.n_a, t.n_b, t.paired) for t in tested]
    floor = min((f for f in floors if not math.isnan(f)), default=math.nan)
    return {
        "smallest_possible_p": _num(floor),
        "holm_first_threshold": c.alpha / max(len(tested), 1),
    }


def comparison(results_csv: pathlib.Path, baseline: str | None = None) -> dict:
    """The tree's paired comparison of the benchmark's other program against `baseline`
    (default: the first program of results.csv) over its tasks, in results.csv's order."""
    from spark_jax.benchmark import stats

    with results_csv.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    labels = list(dict.fromkeys(r["program"] for r in rows))
    baseline = baseline or labels[0]
    [program] = [label for label in labels if label != baseline]
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    c = stats.compare(_cells(stats, rows), program, baseline, tasks)
    mdd = stats.table_mdd([c]) if hasattr(stats, "table_mdd") else None
    return {
        "code": tree_commit(stats),
        "program": program,
        "baseline": baseline,
        "tasks": list(c.tasks),
        "verdicts": {name: getattr(c, attr) for name, attr in VERDICTS if hasattr(c, attr)},
        "mean_diff_pp": _num(c.mean_diff),
        "ci_95_pp": None if math.isnan(c.ci_low) else [c.ci_low, c.ci_high],
        "per_task": _per_task(c),
        "mdd_pp": None if mdd is None else _num(mdd),
        "exact_p_floor": _floor(stats, c),
    }


def reference(preset: str = "tiny") -> dict:
    """The source the tree gives the CLRS row of the 10-task reference table, and whether it
    is comparable with a benchmark under `preset`."""
    from spark_jax.report import reference as ref

    if not hasattr(ref, "source_of"):
        return {"code": tree_commit(ref), "source": None, "every_row": ref.paper_label()}
    cited = ref.source_of("10-task", "CLRS")
    return {
        "code": tree_commit(ref),
        "source": cited.label(),
        "comparable": ref.comparable_text(cited, preset),
    }


def _best(meta: dict, candidates: list[tuple]) -> dict:
    """The best candidate's selection score and its test score: the final test's `best`
    program where the search scored one, else (selection on the test set) the same score."""
    score = max(s for _, _, s in candidates)
    final = meta.get("final_test")
    if final:
        [best] = [p for p in final["programs"].values() if "best" in p["roles"]]
        test, where = best["evaluation"]["ood_score"], "run_meta final_test (role best)"
    else:
        test = score if meta.get("fitness_source") == "ood_test" else None
        where = "the selection score (fitness.source ood_test)" if test is not None else None
    return {"selection_score": score, "test_score": test, "test_score_from": where}


def selection(run_dir: pathlib.Path) -> dict:
    """A search's protocol, selection split and best candidate, from its run.db."""
    con = sqlite3.connect(f"file:{run_dir / 'run.db'}?mode=ro", uri=True)
    meta = {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM run_meta")}
    rows = con.execute(
        "SELECT proposal_attempt, status, ood_score FROM evaluations ORDER BY id"
    ).fetchall()
    con.close()
    data = meta.get("data") or {}
    source = meta.get("fitness_source")
    split = {"ood_test": ("test", "n_test"), "ood_val": ("validation", "n_val")}[source]
    candidates = [r for r in rows if r[0] is not None and r[1] == "ok"]
    return {
        "preset": meta.get("preset"),
        "family": meta.get("family"),
        "task": meta.get("task"),
        "editor": meta.get("editor"),
        "machine": meta.get("machine"),
        "fitness_source": source,
        "selection_split": {"name": split[0], "examples": data.get(split[1])},
        "best_candidate": _best(meta, candidates),
    }


def main(argv: list[str] | None = None) -> int:
    """Prints one record as JSON (the module's docstring shows the commands)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="record", required=True)
    sub.add_parser("comparison").add_argument("results_csv", type=pathlib.Path)
    sub.choices["comparison"].add_argument("--baseline")
    sub.add_parser("reference").add_argument("--preset", default="tiny")
    sub.add_parser("selection").add_argument("run_dir", type=pathlib.Path)
    args = ap.parse_args(argv)
    if args.record == "comparison":
        record = comparison(args.results_csv, args.baseline)
    elif args.record == "reference":
        record = reference(args.preset)
    else:
        record = selection(args.run_dir)
    print(json.dumps(record, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The generated block of a results folder that holds one `spark-jax compare` run
(results/controls-offline, results/llm-trained).

Usage: python scripts/compare_table.py OUT   (e.g. results/controls-offline)

Reads the comparison copied to OUT/data (compare.json, run.json and each run's database),
writes OUT/runs.csv (one row per search) and rewrites OUT/README.md's section between the
`<!-- generated -->` and `<!-- end generated -->` markers with the per-method table, the
pairwise verdicts and the verdicts against the sampling controls when they ran, computed by
`spark_jax.compare` (the report's own code). The editor of every row is read from the runs
(an offline run is labelled as one, never as an LLM). No number is typed here.
"""

from __future__ import annotations

import csv
import json
import pathlib
import sys

from spark_jax.compare import tables, verdicts
from spark_jax.compare.figures import best_at_budget, by_method, collect
from spark_jax.compare.methods import resolve_methods
from spark_jax.compare.runner import PLAN_FILE, ComparePlan, run_dir_of
from spark_jax.operator.baselines import BASELINES
from spark_jax.search.rundb import RunDB
from spark_jax.util import labels, markdown

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- generated -->", "<!-- end generated -->"
FIELDS = ("method", "seed", "attempts", "evaluated", "best_at_budget_pct", "test_best_pct",
          "test_seed_pct", "valid_rate", "wall_hours", "roles")  # fmt: skip


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100.0 * v:.2f}"


def _versions() -> str:
    found = labels.package_versions(("jax", "flax", "dm-clrs", "optax"))
    return ", ".join(f"{n} {v}" for n, v in found.items() if v != labels.NOT_INSTALLED)


def _job_hours(data: pathlib.Path, plan: ComparePlan) -> tuple[float, int, int]:
    """(hours, evaluations, searches): the wall time of the searches' evaluation jobs, each
    counted once, from their databases: what the comparison cost, whatever pauses and resumes
    its own wall time holds. A result reused from the comparison's cache (worker `cache:...`)
    carries the time of the run that measured it and is left out; the final tests, stored
    apart from the evaluations, are not counted."""
    seconds, jobs, searches = 0.0, 0, 0
    for method, seed in plan.runs():
        path = run_dir_of(data, method, seed) / "run.db"
        if not path.is_file():
            continue
        searches += 1
        with RunDB.open(path) as db:
            rows = [e for e in db.evaluations() if not str(e["worker"] or "").startswith("cache:")]
        seconds += sum(e["wall_seconds"] or 0.0 for e in rows)
        jobs += len(rows)
    return seconds / 3600, jobs, searches


def _wall(meta: dict, jobs: tuple[float, int, int]) -> str:
    """The run's wall time (a comparison run in parts says so in run.json's `wall_note`) and
    its evaluation jobs' summed wall time."""
    cost = f"evaluation jobs {jobs[0]:.2f} h summed ({jobs[1]} jobs of {jobs[2]} searches)"
    if meta.get("wall_note"):
        return f"wall time {meta['wall_note']}; {cost}"
    return f"wall time {meta['wall_seconds'] / 60:.1f} min; {cost}"


def main(out: pathlib.Path) -> None:
    data = out / "data"
    plan = ComparePlan.from_dict(json.loads((data / PLAN_FILE).read_text(encoding="utf-8")))
    methods = list(resolve_methods(list(plan.methods)))
    figures = collect(data, plan)
    grouped = by_method(figures)
    with (out / "runs.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        for r in figures:
            w.writerow([
                r.method, r.seed, r.acc.attempts, r.acc.evaluated_budget,
                _pct(best_at_budget(r.acc, plan.budget)), _pct(r.test_best), _pct(r.test_seed),
                f"{r.acc.valid_rate:.3f}", f"{r.acc.wall_hours or 0.0:.4f}", " ".join(r.roles),
            ])  # fmt: skip
    rows = tables.method_rows(methods, grouped, None, plan.budget)
    head = ["method", "runs", f"best at budget B={plan.budget}: selection OOD %",
            "best candidate: test OOD %", "attempts", "evaluated", "valid rate",
            "entanglement rate", "editor"]  # fmt: skip
    body = []
    for r in rows:
        editor = ", ".join(r.editors)
        if r.offline:
            baseline = r.method.operator.get("mode") in BASELINES
            editor = tables.OFFLINE_LABEL if baseline else "offline rule-based editor, not an LLM"
        body.append([f"`{r.method.name}`", str(r.runs), r.best_ood_pct.text(),
                     r.test_best_pct.text(), r.attempts.text(1), r.evaluated.text(1),
                     r.valid_rate.text(), r.entanglement_rate.text(), editor])  # fmt: skip
    lines = markdown.table(head, body)
    seeds = tables.spread([tables.seed_ood(r.acc) for r in figures], 100.0)
    selection = (plan.base.get("fitness") or {}).get("source", "ood_val")  # the default
    meta = json.loads((data / "run.json").read_text(encoding="utf-8"))
    machine = "; ".join(sorted({r.machine for r in figures if r.machine})) or "not recorded"
    offline = all(r.offline for r in rows)
    llm = (plan.base.get("editor") or {}).get("llm") or {}
    if offline:
        label = "Offline rule-based analogues, not an LLM result."
    else:
        label = f"Editor: an LLM, model `{llm.get('model')}` through the `{llm.get('kind')}` " + (
            "backend (some methods offline: see each row)."
            if any(r.offline for r in rows)
            else "backend, the same for every method."
        )
    if selection == "ood_test":
        chosen = (
            "`ood_test` (the search selects on the official OOD test set it reports, the SPARK "
            "paper's protocol, so best at budget carries the winner's curse; the column "
            "'best candidate: test OOD %' is filled only under `ood_val`)"
        )
    else:
        chosen = (
            f"`{selection}` (selection on a validation draw of the OOD distribution; after "
            "each search its seed and best candidate were trained again with the search's "
            "seed, the same parameters, and scored once on the official OOD test set: the "
            "column 'best candidate: test OOD %')"
        )
    generated = [
        BEGIN,
        f"Command: `{meta['command']}` at commit `{meta['commit']}`, {meta['date_utc']}; "
        f"{_wall(meta, _job_hours(data, plan))}; machine {machine}; {_versions()}.",
        "",
        f"{label} Cells: mean ± sample std over the search seeds {list(plan.seeds)}. "
        f"Selection set: {chosen}. The seed program scored {seeds.text()} on the selection "
        f"set (mean ± std over the {seeds.n} runs; its own row in the report).",
        "",
        *lines,
        "",
        f"Every method against `{methods[0].name}` (from the comparison's report):",
        "",
        *verdicts.against_first(methods, grouped, plan.budget),
        "",
        "Methods against the sampling controls (from the comparison's report):",
        "",
        *verdicts.against_controls(methods, grouped, plan.budget),
        END,
    ]
    readme = out / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    readme.write_text(text[:start] + "\n".join(generated) + text[stop:], encoding="utf-8")
    print("\n".join(generated))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/compare_table.py OUT (a results folder with data/)")
    main(pathlib.Path(sys.argv[1]))

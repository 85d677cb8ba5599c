"""The generated parts of a results folder that holds one `spark-jax compare` run
(results/compare-offline, results/controls-offline, results/llm-trained).

`write(OUT)` reads the comparison copied to OUT/data (compare.json, run.json and each run's
database), writes OUT/runs.csv (one row per search) and rewrites OUT/README.md's section
between the `<!-- generated -->` and `<!-- end generated -->` markers with the per-method
table, the pairwise verdicts and the verdicts against the sampling controls when they ran,
computed by `spark_jax.compare` (the report's own code), and the `**Answer.**` paragraph
after ANSWER_MARK. The editor of every row is read from the runs (an offline run is labelled
as one, never as an LLM). No number is typed here.
"""

from __future__ import annotations

import argparse
import csv
import json
import pathlib
import time
from collections.abc import Sequence
from typing import NamedTuple

from spark_jax.compare import tables, verdicts
from spark_jax.compare.figures import best_at_budget, by_method, collect
from spark_jax.compare.methods import is_control, resolve_methods
from spark_jax.compare.runner import PLAN_FILE, ComparePlan, run_dir_of
from spark_jax.operator.baselines import BASELINES
from spark_jax.results import readme
from spark_jax.search.rundb import RunDB
from spark_jax.stats import significance
from spark_jax.util import labels, markdown

# A README whose `**Answer.**` paragraph follows this line gets it generated as well.
ANSWER_MARK = readme.answer_mark("compare_table")
FIELDS = ("method", "seed", "attempts", "evaluated", "best_at_budget_pct", "test_best_pct",
          "test_seed_pct", "valid_rate", "wall_hours", "roles", "best_program")  # fmt: skip


def _versions() -> str:
    found = labels.package_versions(("jax", "flax", "dm-clrs", "optax"))
    return ", ".join(f"{n} {v}" for n, v in found.items() if v != labels.NOT_INSTALLED)


class JobTime(NamedTuple):
    """What a comparison's searches cost, read from their databases."""

    hours: float  # wall time of the evaluation jobs, summed, each counted once
    jobs: int
    searches: int
    first: float | None  # epoch seconds: the first job's start, the last job's end
    last: float | None


def _job_time(data: pathlib.Path, plan: ComparePlan) -> JobTime:
    """The wall time of the searches' evaluation jobs, each counted once, and when they ran:
    what the comparison cost, whatever pauses and resumes its own wall time holds. A result
    reused from the comparison's cache (worker `cache:...`) carries the time of the run that
    measured it and is not summed; the final tests, stored apart from the evaluations, are
    not counted."""
    seconds, jobs, searches, stamps = 0.0, 0, 0, []
    for method, seed in plan.runs():
        path = run_dir_of(data, method, seed) / "run.db"
        if not path.is_file():
            continue
        searches += 1
        with RunDB.open(path) as db:
            rows = db.evaluations()
        own = [e for e in rows if not str(e["worker"] or "").startswith("cache:")]
        seconds += sum(e["wall_seconds"] or 0.0 for e in own)
        jobs += len(own)
        stamps += [(e["created_at"] - (e["wall_seconds"] or 0.0), e["created_at"]) for e in own]
    first = min((a for a, _ in stamps), default=None)
    return JobTime(seconds / 3600, jobs, searches, first, max((b for _, b in stamps), default=None))


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch))


def _wall(meta: dict, t: JobTime) -> str:
    """The run's wall time (a comparison run in parts says so in run.json's `wall_note`), when
    its evaluation jobs ran, and their summed wall time."""
    cost = f"evaluation jobs {t.hours:.2f} h summed ({t.jobs} jobs of {t.searches} searches"
    if t.first is not None:
        cost += f", run between {_utc(t.first)} and {_utc(t.last)} UTC"
    cost += ")"
    if meta.get("wall_note"):
        return f"wall time {meta['wall_note']}; {cost}"
    return f"wall time {meta['wall_seconds'] / 60:.1f} min (the last invocation); {cost}"


def shared_bests(figures: list) -> str:
    """Which searches ended with the same best candidate (runs.csv's `best_program`): where
    two share a search seed, their final tests trained the same program on the same seed."""
    searches: dict[str, list] = {}
    for r in figures:
        if r.best_program:
            searches.setdefault(r.best_program, []).append(f"`{r.method}` {r.seed}")
    shared = [(p, names) for p, names in searches.items() if len(names) > 1]
    if not shared:
        return "Every search's best candidate is a different program (runs.csv: `best_program`)."
    listed = "; ".join(f"`{p[:8]}` ({', '.join(names)})" for p, names in shared)
    return (
        "Searches whose best candidate is the same program (runs.csv: `best_program`; two of "
        f"them with the same search seed therefore have the same test score): {listed}."
    )


def rate_range(rows: list, field: str) -> str:
    """'ranges from 0.00 (`spark`, `funsearch`) to 0.92 (`eoh`)': the lowest and highest mean
    of a rate as the table prints it (two decimals), with every method at each."""
    means = [(getattr(r, field).mean, r.method.name) for r in rows]
    known = [(round(v, 2), n) for v, n in means if v is not None]
    if not known:
        return "not measured"
    lo, hi = min(v for v, _ in known), max(v for v, _ in known)
    if lo == hi:
        return f"is {lo:.2f} for every method"

    def at(value: float) -> str:
        return ", ".join(f"`{n}`" for v, n in known if v == value)

    return f"ranges from {lo:.2f} ({at(lo)}) to {hi:.2f} ({at(hi)})"


def _where(runs: list, budget: int | None) -> tuple[bool, str]:
    """Whether the verdicts test scores on the test set, and the words for where."""
    on_test = bool(runs) and all(r.test_best is not None for r in runs)
    return on_test, "on the test set" if on_test else f"at budget B={budget} on the selection set"


def _controls_answer(methods: list, grouped: dict, budget: int | None, expected: int) -> str:
    """The answer of a comparison that ran the sampling controls: whether they ran, SPARK's
    and OpenEvolve's verdicts against each, what the seeds allow, and how the first method's
    winners fared on the test set against the seed program."""
    found = verdicts.control_verdicts(methods, grouped, budget)
    runs = [r for rs in grouped.values() for r in rs]
    controls = [m.name for m in methods if is_control(m)]
    ran = all(len(grouped.get(c, [])) == expected for c in controls)
    on_test, where = _where(runs, budget)
    fresh = on_test and all(r.test_train_seeds is not None for r in runs)
    how = (
        "with selection on validation and each search's winner trained again on a seed the "
        "search never used and scored on the test set"
        if fresh
        else f"with each search's best candidate scored {where}"
    )
    words = {w for _, _, w, _ in found}
    named = (
        " and ".join(f"`{m}`" for m in dict.fromkeys(m for m, _, _, _ in found))
        + " each against "
        + " and against ".join(f"`{c}`" for c in controls)
    )
    if words == {significance.CANNOT_TELL}:
        said = f"the statistics say `{significance.CANNOT_TELL}` for all {len(found)} comparisons"
    else:
        said = "the statistics say " + "; ".join(f"`{m}` vs `{c}`: {w}" for m, c, w, _ in found)
    text = [
        f"{'Yes' if ran else 'Not yet'}, the controls run beside "
        + " and ".join(f"`{m}`" for m in dict.fromkeys(m for m, _, _, _ in found))
        + f" under the same rules ({len(runs)} searches), and {how}, {said} ({named}; table "
        "below)"
    ]
    floor = significance.floor_note([t for _, _, _, t in found])
    if floor and words == {significance.CANNOT_TELL}:
        n = sorted({t.n_a for _, _, _, t in found})
        text.append(
            f"At {'/'.join(map(str, n))} paired seeds the exact test cannot reach Holm's "
            "threshold whatever the difference, so this run cannot say whether any method "
            "beats sampling"
        )
    first = [r for r in grouped.get(methods[0].name, []) if r.test_best is not None]
    below = [r for r in first if r.test_seed is not None and r.test_best < r.test_seed]
    if fresh and first:
        lead = "every one" if len(below) == len(first) else f"{len(below)}"
        text.append(
            f"On fresh seeds {lead} of `{methods[0].name}`'s {len(first)} winners scored below "
            "the seed program on the test set (`runs.csv`)"
            + (
                ": at this preset a winner's validation score says little about another "
                "training of the same program"
                if len(below) == len(first)
                else ""
            )
        )
    return ". ".join(text) + "."


def _answer(methods: list, grouped: dict, rows: list, budget: int | None) -> str:
    """The one-paragraph answer: each method's verdict against the first, then the ranges of
    the valid and entanglement rates, every word from the same data as the tables."""
    found = verdicts.first_verdicts(methods, grouped, budget)
    first = f"`{methods[0].name}`"
    runs = [r for rs in grouped.values() for r in rs]
    seeds = {r.seed for r in runs}
    where = (
        "on the test set"
        if runs and all(r.test_best is not None for r in runs)
        else f"at budget B={budget} on the selection set"
    )
    decided = [(n, w) for n, w, _ in found if w != significance.CANNOT_TELL]
    if not decided:
        lead = (
            f"Cannot tell: after Holm over the {len(found)} methods set against {first}, no "
            f"method's best candidate differs from {first}'s {where} at "
            f"{len(seeds)} search seeds"
        )
    else:
        said = ", ".join(
            f"`{n}` {'beats' if w == significance.WIN else 'is below'} {first}" for n, w in decided
        )
        rest = len(found) - len(decided)
        lead = (
            f"After Holm over the {len(found)} methods set against {first} ({len(seeds)} search "
            f"seeds; best candidate {where}), {said}"
            + (f"; the statistics cannot tell for the other {rest}" if rest else "")
        )
    return (
        f"{lead}. Per attempt, the valid rate {rate_range(rows, 'valid_rate')} and the "
        f"entanglement rate {rate_range(rows, 'entanglement_rate')} (means over the search seeds)."
    )


class Comparison(NamedTuple):
    """One comparison as its results folder stores it (OUT/data)."""

    data: pathlib.Path
    plan: ComparePlan
    methods: list  # the plan's methods, resolved
    figures: list  # one per search (`compare.figures.collect`)
    grouped: dict  # method name -> its searches' figures
    rows: list  # one per method (`compare.tables.method_rows`)
    meta: dict  # run.json: the command, commit, date and wall time


def load(out: pathlib.Path) -> Comparison:
    """The comparison copied to OUT/data: its plan, every search's figures, run.json."""
    data = out / "data"
    plan = ComparePlan.from_dict(json.loads((data / PLAN_FILE).read_text(encoding="utf-8")))
    methods = list(resolve_methods(list(plan.methods)))
    figures = collect(data, plan)
    grouped = by_method(figures)
    rows = tables.method_rows(methods, grouped, None, plan.budget)
    meta = json.loads((data / "run.json").read_text(encoding="utf-8"))
    return Comparison(data, plan, methods, figures, grouped, rows, meta)


def write_runs_csv(path: pathlib.Path, c: Comparison) -> None:
    """One row per search: its method, seed, counts, scores (%), valid rate, hours, roles."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        for r in c.figures:
            w.writerow([
                r.method, r.seed, r.acc.attempts, r.acc.evaluated_budget,
                readme.pct(best_at_budget(r.acc, c.plan.budget)), readme.pct(r.test_best),
                readme.pct(r.test_seed), f"{r.acc.valid_rate:.3f}",
                f"{r.acc.wall_hours or 0.0:.4f}", " ".join(r.roles), r.best_program,
            ])  # fmt: skip


def _method_table(c: Comparison) -> list[str]:
    """The per-method table: runs, scores, counts, rates and each method's editor."""
    head = ["method", "runs", f"best at budget B={c.plan.budget} (seed counted): selection OOD %",
            "best candidate: test OOD %", "attempts", "evaluated", "valid rate",
            "entanglement rate", "editor"]  # fmt: skip
    body = []
    for r in c.rows:
        editor = ", ".join(r.editors)
        if r.offline:
            baseline = r.method.operator.get("mode") in BASELINES
            editor = tables.OFFLINE_LABEL if baseline else "offline rule-based editor, not an LLM"
        body.append([f"`{r.method.name}`", str(r.runs), r.best_ood_pct.text(),
                     r.test_best_pct.text(), r.attempts.text(1), r.evaluated.text(1),
                     r.valid_rate.text(), r.entanglement_rate.text(), editor])  # fmt: skip
    return markdown.table(head, body)


def _machine(figures: list) -> str:
    """The machines the searches recorded, each once."""
    machines = {r.machine for r in figures if r.machine}
    # 'host (...)' beside 'host (...); JAX cpu x1' (a run that recorded no device) says less.
    machines = {m for m in machines if not any(o != m and o.startswith(m) for o in machines)}
    return "; ".join(sorted(machines)) or "not recorded"


def _editor_label(c: Comparison) -> str:
    """The label's first sentence: offline analogues, or the config's LLM model string."""
    if all(r.offline for r in c.rows if r.runs):  # a method with no run yet has no editor
        return "Offline rule-based analogues, not an LLM result."
    llm = (c.plan.base.get("editor") or {}).get("llm") or {}
    return (
        f"Editor: an LLM editor, model as the config names it `{llm.get('model')}`, through "
        f"the `{llm.get('kind')}` backend, for every method"
        + (" (some methods offline: see each row)." if any(r.offline for r in c.rows) else ".")
        + " Which model or agent answered each call is the folder's own account, not this "
        "config string."
    )


def _selection(c: Comparison) -> str:
    """The selection set the searches chose on, and how the test column was scored."""
    selection = (c.plan.base.get("fitness") or {}).get("source", "ood_val")  # the default
    if selection == "ood_test":
        return (
            "`ood_test` (the search selects on the official OOD test set it reports, the SPARK "
            "paper's protocol, so best at budget carries the winner's curse; the column "
            "'best candidate: test OOD %' is filled only under `ood_val`)"
        )
    fresh = [r.test_train_seeds for r in c.figures if r.test_train_seeds is not None]
    retrained = (
        "trained again on training seeds the search never used ("
        + ", ".join(f"search seed {r.seed}: {list(r.test_train_seeds)}" for r in c.figures
                    if r.method == c.methods[0].name and r.test_train_seeds)
        + ", the same for every method)"
        if len(fresh) == len(c.figures)
        else "trained again with the search's own seed, the parameters it selected (so the "
        "best candidate's test score is optimistic)"
    )  # fmt: skip
    return (
        f"`{selection}` (selection on a validation draw of the OOD distribution; after "
        f"each search its seed and best candidate were {retrained} and scored once on the "
        "official OOD test set: the column 'best candidate: test OOD %')"
    )


def generated_block(c: Comparison) -> list[str]:
    """The README's generated block, both markers included."""
    plan, meta = c.plan, c.meta
    seeds = tables.spread([tables.seed_ood(r.acc) for r in c.figures], 100.0)
    return [
        readme.BEGIN,
        f"Command: `{meta['command']}` at commit `{meta['commit']}`, {meta['date_utc']}; "
        f"{_wall(meta, _job_time(c.data, plan))}; machine {_machine(c.figures)}; {_versions()}.",
        "",
        f"{_editor_label(c)} Preset `{plan.base.get('preset', 'smoke')}`, task "
        f"`{plan.base.get('task', 'dfs')}`. Cells: mean ± sample std over the search seeds "
        f"{list(plan.seeds)}. "
        f"Selection set: {_selection(c)}. The seed program scored {seeds.text()} on the "
        f"selection set (mean ± std over the {seeds.n} runs; its own row in the report).",
        "",
        *_method_table(c),
        "",
        shared_bests(c.figures),
        "",
        f"Every method against `{c.methods[0].name}` (from the comparison's report):",
        "",
        *verdicts.against_first(c.methods, c.grouped, plan.budget),
        "",
        "Methods against the sampling controls (from the comparison's report):",
        "",
        *verdicts.against_controls(c.methods, c.grouped, plan.budget),
        readme.END,
    ]


def answer(c: Comparison) -> str:
    """The README's answer: against the controls when they ran, else against the first."""
    if any(is_control(m) for m in c.methods):
        return _controls_answer(c.methods, c.grouped, c.plan.budget, len(c.plan.seeds))
    return _answer(c.methods, c.grouped, c.rows, c.plan.budget)


def write(out: pathlib.Path) -> list[str]:
    """Writes OUT/runs.csv and OUT/README.md's generated block and answer from OUT/data;
    returns the block."""
    c = load(out)
    write_runs_csv(out / "runs.csv", c)
    block = generated_block(c)
    readme.rewrite(out / "README.md", block[1:-1], ANSWER_MARK, answer(c))
    return block


def main(argv: Sequence[str] | None = None) -> int:
    """`OUT` (a results folder with data/): writes it and prints the generated block."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("out", type=pathlib.Path, help="a results folder with data/")
    print("\n".join(write(parser.parse_args(argv).out)))
    return 0

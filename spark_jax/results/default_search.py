"""Writes results/default-search/README.md from the folder's data: the search's run database
(`run.db`: what it selected on validation, its seed and best scored once on the test set) and
the clrs10 benchmark of its best against its seed (`benchmark.db`, training seeds disjoint
from the search's). Every number, the one-sentence answer included, comes from those files.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Sequence

from spark_jax.benchmark import stats
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.report.accounting import find_meta, meta_group, read_meta, summarize
from spark_jax.results import readme
from spark_jax.search import best_program, final_test
from spark_jax.search.rundb import RunDB
from spark_jax.stats import significance
from spark_jax.util import markdown

BASELINE = "triplet_gmpnn"
ANSWER_MARK = readme.answer_mark("default_search_table")


def _pct(x: float | None) -> str:
    return readme.pct(x, markdown.DASH)


def _tested_on(seeds: tuple[int, ...] | None) -> str:
    """How the search's final test trained its two programs (its `train_seeds`)."""
    if seeds is None:  # a record from before the fresh-seed rule
        return "trained again with the search's own seed (the parameters it selected: optimistic)"
    named = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))}"
    return f"trained again on {named} (never used by the search)"


def _search(out: pathlib.Path) -> tuple[dict, list[str]]:
    """The search's facts and its table (validation selection, then the test set once)."""
    with RunDB.open(out / "run.db") as db:
        best = best_program.best_program(db)
        record = db.get_meta("final_test") or {}
        final = record.get("programs") or {}
        meta, created = read_meta(db)
        acc = summarize(db, meta, created)
    facts = dict(
        attempts=acc.attempts,
        evaluated=acc.evaluated_budget,
        machine=find_meta(meta, "machine") or "machine not recorded",
        versions=meta_group(meta, "versions."),
        budget=find_meta(meta, "budget"),
        hours=f"wall {acc.wall_hours or 0:.2f} h (first to last record, pauses between "
        f"sessions included), device {acc.device_hours:.2f} h",
        tested=_tested_on(final_test.recorded_train_seeds(record)),
        preset=find_meta(meta, "preset") or "preset not recorded",
        editor=_editor(str(find_meta(meta, "editor.kind") or ""), find_meta(meta, "editor.llm")),
        selection=record.get("selection_source") or find_meta(meta, "fitness.source"),
        task=find_meta(meta, "task") or "task not recorded",
    )
    if best is None:
        raise SystemExit(f"{out / 'run.db'}: the seed was not evaluated")
    seed_id = next(pid for pid, e in final.items() if "seed" in (e.get("roles") or []))

    def test(pid: str) -> float | None:
        return ((final.get(pid) or {}).get("evaluation") or {}).get("ood_score")

    rows = [
        ["seed (`processors/triplet_gmpnn.py`)", f"`{seed_id}`", _pct(best.seed_ood), _pct(test(seed_id))],
        [
            "best evaluated candidate" + (" (the seed: no candidate beat it)" if best.is_seed else ""),
            f"`{best.program_id}`",
            _pct(best.ood_score if best.ood_score is not None else best.seed_ood),
            _pct(test(best.program_id)),
        ],
    ]  # fmt: skip
    head = ["program", "id", "selection: validation-size OOD set (%)", "official OOD test (%)"]
    facts.update(is_seed=best.is_seed, best_id=best.program_id)
    note = f"The test column: each program {facts['tested']}, after the search."
    if record.get("superseded"):  # a final test from before the fresh-seed rule, scored again
        note += (
            " Scored again under that rule once the search had finished; the earlier final "
            "test (the search's own seed) is kept in `run.db` under `superseded`."
        )
    return facts, [*markdown.table(head, rows), "", note]


def _editor(kind: str, llm) -> str:
    """The label's editor, as the run recorded it."""
    if kind == "offline":
        return "offline rule-based editor (not an LLM)"
    model = (llm or {}).get("model") if isinstance(llm, dict) else None
    return f"editor `{kind or 'not recorded'}`" + (f", model `{model}`" if model else "")


def _benchmark(out: pathlib.Path) -> tuple[stats.PairedComparison | None, dict, list[str]]:
    """The comparison, the benchmark's facts (its spec's tasks and seeds, its hours, the tasks
    where the two programs score alike on every seed) and its tables."""
    with BenchmarkDB.open_readonly(out / "benchmark.db") as db:
        spec, programs, results = db.spec(), db.programs(), db.results()
        hours = f"wall {db.running_seconds() / 3600:.2f} h, device {db.wall_seconds() / 3600:.2f} h"
    cells = stats.cells_of_results(programs, results)
    others = [p.label for p in programs if p.label != BASELINE]
    found = stats.compare_table(cells, others, BASELINE, spec["tasks"])
    comparison = found[0] if found else None
    rows = [
        [t]
        + [
            f"{c.mean:.2f} ± {c.std:.2f}" if c is not None and c.n > 1 else markdown.DASH
            for c in (cells.get((p.label, t)) for p in programs)
        ]
        for t in spec["tasks"]
    ]
    table = markdown.table(["task", *(f"`{p.label}` OOD (%)" for p in programs)], rows)
    if comparison is not None:
        table += [""] + markdown.table(
            ["task", "diff (pp)", "p", "p (Holm)", "verdict"],
            [
                [v.task, f"{v.test.diff:+.2f}", f"{v.test.p:.3g}", f"{v.p_holm:.3g}", v.verdict]
                for v in comparison.per_task
            ],
        )
    facts = dict(
        tasks=spec["tasks"],
        seeds=spec["seeds"],
        hours=hours,
        same_everywhere=_same_on_every_seed(programs, results, spec["tasks"]),
    )
    return comparison, facts, table


def _same_on_every_seed(programs, results, tasks) -> list[str]:
    """The tasks on which the two programs score exactly alike (validation and OOD) on every
    seed: there the search's edit changed nothing that is trained or scored."""
    if len(programs) != 2:
        return []
    scores = readme.seed_scores(results, lambda e: (e.score, e.val_score))
    a, b = (p.key for p in programs)
    return [t for t in tasks if scores.get((a, t)) and scores.get((a, t)) == scores.get((b, t))]


def _answer(facts: dict, c: stats.PairedComparison | None, bench: dict) -> str:
    if facts["is_seed"]:
        lead = (
            f"No candidate of the {facts['evaluated']} evaluated beat the seed on validation, "
            "so there is no searched program to set against it"
        )
        return lead + "."
    if c is None:
        return "The benchmark holds no comparison yet."
    n = len(c.tasks)
    if c.wins == 0 and c.losses == 0:
        verdict = f"Cannot tell, task by task: no task differs significantly after Holm ({c.cannot_tell} of {n} `{significance.CANNOT_TELL}`)"
    else:
        verdict = f"{c.wins} win(s) and {c.losses} loss(es) of {n} tasks after Holm"
    sentences = [
        f"{verdict}, the default search's best program against its seed on clrs10 with "
        "training seeds the search never used"
    ]
    if not math.isnan(c.mean_diff):
        text = f"Averaged over these {n} tasks the difference is {c.mean_diff:+.2f} pp"
        if c.interval is not None:
            side = (
                "above zero"
                if c.interval.low > 0
                else "below zero"
                if c.interval.high < 0
                else "not apart from zero"
            )
            text += (
                f" (95% t interval {c.interval.text()} from the seeds within the tasks, {side}; "
                "an average over this fixed task set, not a claim about any one task)"
            )
        sentences.append(text)
    floor = significance.floor_note([v.test for v in c.per_task])
    if floor:
        sentences.append(floor.rstrip("."))
    same = bench["same_everywhere"]
    if same:
        names = ", ".join(f"`{t}`" for t in same)
        sentences.append(
            f"On {len(same)} of the tasks ({names}) the two programs score exactly alike on "
            "every seed, validation and OOD: there the edit changed nothing that is trained "
            "or scored"
        )
    return ". ".join(sentences) + "."  # fmt: skip


def _provenance(out: pathlib.Path) -> str:
    """'commit `abc1234`, started 2026-...Z': what `default-search.sh` wrote when the work began."""
    path = out / "provenance.json"
    if not path.is_file():
        return "commit not recorded"
    found = json.loads(path.read_text(encoding="utf-8"))
    return (
        f"commit `{found.get('commit', 'unknown')}`, started {found.get('started_utc', 'unknown')}"
    )


def render(out: pathlib.Path) -> str:
    facts, search_table = _search(out)
    comparison, bench, bench_table = _benchmark(out)
    versions = ", ".join(f"{k} {v}" for k, v in sorted(facts["versions"].items())) or "not recorded"
    lines = [
        "# Default search: what the README's first command finds, checked on ten tasks",
        "",
        f"**Label.** `{facts['preset']}`; {facts['machine']}; {facts['editor']}; selection on "
        f"`{facts['selection']}`.",
        "",
        "**Question.** Run as a user would (the embedded default at a budget of "
        f"{facts['budget']} evaluations, the seed's included), "
        "does the search's best program beat its seed program on the paper's ten CLRS tasks, "
        "trained with seeds the search never used?",
        "",
        ANSWER_MARK,
        f"**Answer.** {_answer(facts, comparison, bench)}",
        "",
        "## Protocol",
        "",
        "- **Command.** `scripts/results/default-search.sh`: `spark-jax search` on "
        "`configs/default.yaml` with `budget: 16`, `max_attempts: 48` (SPARK, dfs, `smoke`, "
        "the offline editor, `fitness.source: ood_val`, search seed 0), then `spark-jax "
        "benchmark processors/triplet_gmpnn.py <run> --tasks clrs10 --first-seed 100 --seeds 3 "
        "--preset smoke --baseline triplet_gmpnn`; this README by `python "
        "scripts/default_search_table.py results/default-search`.",
        f"- **Search.** {facts['attempts']} attempts, {facts['evaluated']} evaluated candidates "
        f"and the seed's own evaluation (`budget: {facts['budget']}` counts the seed); "
        f"selected on the validation-size OOD set, the seed and the best {facts['tested']} "
        f"and scored once on the official test set; {facts['hours']}; {versions}.",
        f"- **Benchmark.** seeds {list(bench['seeds'])} (the search trained with seed 0); "
        f"`smoke` preset; {bench['hours']}.",
        f"- **Code.** {_provenance(out)} (the work's first step; resumes ran the same code).",
        "- **Machines.** The search was resumed in parts; its records (run_meta and each "
        "evaluation) name the machine only as `vm (x86_64, 2 CPUs)`, without a machine "
        "fingerprint (they predate `labels.machine_fingerprint`): which part ran on which "
        "machine is not recorded.",
        "- **Files.** `run.db`, `report.md` and `plots/search-*.png` (the search), "
        "`provenance.json`, `benchmark.db`, `benchmark.md`, `results.csv` and "
        "`plots/ood_by_task.png` (the benchmark).",
        "",
        "![OOD accuracy by task of the seed program and the search's best, mean and std over "
        "the 3 fresh seeds](plots/ood_by_task.png)",
        "",
        "<!-- generated -->",
        f"### The search ({facts['task']}, `{facts['preset']}`; {facts['machine']}; "
        f"{facts['editor']}; selection on `{facts['selection']}`)",
        "",
        *search_table,
        "",
        "### Its best against its seed on clrs10 (mean ± sample std over 3 fresh seeds)",
        "",
        *bench_table,
        "<!-- end generated -->",
    ]
    return markdown.document([lines], end="\n")


def write(out: pathlib.Path) -> pathlib.Path:
    """Writes OUT/README.md from OUT's run.db, benchmark.db and provenance.json."""
    (out / "README.md").write_text(render(out), encoding="utf-8")
    return out / "README.md"


def main(argv: Sequence[str] | None = None) -> int:
    """`[OUT]` (default results/default-search): writes OUT/README.md and prints its path."""
    print(write(readme.folder_arguments(argv, "default-search", __doc__).out))
    return 0

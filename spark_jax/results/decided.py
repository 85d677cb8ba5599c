"""Writes results/decided/README.md (or the part-done checkpoint's) from the folder's data: the
sequential benchmark's database (`benchmark.db`: every landed seed, the identity checks, the
design) and its provenance; the design's simulation from the project's stored seed noise
(results/port-vs-official and results/default-search `results.csv`). Every number, the answer
included, comes from those files.
"""

from __future__ import annotations

import csv
import json
import pathlib
from collections.abc import Sequence

from spark_jax.benchmark import decided, rounds
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.results import readme
from spark_jax.stats import calibration, sequential
from spark_jax.util import labels, markdown

ANSWER_MARK = readme.answer_mark("decided_table")
FIXED = readme.RESULTS / "default-search" / "benchmark.db"
NOISE = (
    ("port-vs-official", "triplet_gmpnn", "official:triplet_gmpnn"),
    ("default-search", "default-search:best", "triplet_gmpnn"),
)


def _load(out: pathlib.Path):
    with BenchmarkDB.open_readonly(out / "benchmark.db") as db:
        spec, programs, results, identity = db.spec(), db.programs(), db.results(), db.identity()
    found = rounds.decisions(spec, programs, results, identity)
    machines = labels.machines_label(r.evaluation.machine for r in results if r.evaluation)
    return spec, found, machines


def _fixed_hours() -> float:
    """Device hours of the fixed 3-seed design (results/default-search, 0 decisions)."""
    with BenchmarkDB.open_readonly(FIXED) as db:
        return db.wall_seconds() / 3600.0


def _task_rows(found) -> list[list]:
    return [
        [
            d.task,
            d.decision.verdict,
            d.seeds,
            markdown.DASH if d.decision.verdict == sequential.IDENTICAL else f"{d.decision.diff:+.2f}",
            rounds.fmt_interval(d.decision),
            f"{d.decision.mdd:.2f}" if d.decision.verdict == sequential.CANNOT_TELL else markdown.DASH,
            f"{d.hours:.2f}",
        ]
        for d in found
    ]  # fmt: skip


def _simulation_lines(design: sequential.Design) -> list[str]:
    pooled: dict[str, list[list[float]]] = {}
    for folder, program, baseline in NOISE:
        with (readme.RESULTS / folder / "results.csv").open() as f:
            rows = list(csv.DictReader(f))
        for task, diffs in calibration.differences_of(rows, program, baseline).items():
            pooled.setdefault(task, []).extend(diffs)
    tasks, noise = calibration.noise_pools(pooled)
    cal = calibration.calibrate(tasks, noise, design, effects=(0.0, 2.0, 5.0, 10.0), sims=4000)
    rows = [
        [f"{r.effect:g}", f"{r.right:.3f}", f"{r.wrong:.4f}", f"{r.equivalent:.3f}"]
        + [f"{r.any_false:.3f}", f"{r.mean_seeds:.2f}", r.fixed_seeds or markdown.DASH]
        for r in cal.rows
    ]
    head = ["true diff (pp)", "power (right sign)", "wrong sign", "equivalent"]
    head += ["tables with a false claim", "mean seeds", "fixed design, same power (seeds)"]
    return [
        f"{cal.sims} simulated tables of the {len(tasks)} clrs10 tasks per row, the same true "
        "difference on every task, each task's seed noise drawn like the project's "
        "(`spark_jax/stats/calibration.py`: each task's spread from `results/port-vs-official` "
        "and `results/default-search`, one shape of residuals), a look after every round:",
        "",
        *markdown.table(head, rows),
        "",
        "'tables with a false claim': a win or loss of the wrong sign, or 'equivalent' where "
        "the true difference is at least delta; at 0 pp every win or loss is false. The fixed "
        "design: one paired t test at alpha/10 after n seeds, the fewest n whose power reaches "
        "the sequential design's.",
    ]


def _answer(spec, found, fixed_hours: float) -> str:
    counts = decided.summary(found)
    done = [d for d in found if d.decision.decided]
    pending = [d for d in found if d.decision.verdict == sequential.PENDING]
    named = ", ".join(f"`{d.task}` {d.decision.verdict}" for d in done) or "none"
    seeds = sum(d.seeds for d in found)
    hours = sum(d.hours for d in found)
    state = (
        f"So far (part-done: {len(pending)} of {len(found)} tasks still adding seeds), "
        if pending
        else "Finished: "
    )
    return (
        f"{state}{len(done)} of {len(found)} tasks are decided ({named}); "
        f"{counts.get(sequential.CANNOT_TELL, 0)} `cannot tell` at the cap or out of reach. "
        f"Seeds per task: {', '.join(f'{d.task} {d.seeds}' for d in found)} ({seeds} in all); "
        f"{hours:.2f} h of device time in all (job wall times; the identity probes not "
        f"counted), the fixed 3-seed design's {fixed_hours:.2f} h included: it decided nothing "
        f"(`results/default-search`, whose seeds {spec['continued_from_fixed']} are this "
        "run's first)."
    )


def _document(spec, found, machines, fixed_hours, provenance) -> str:
    design = rounds.design_of(spec, sum(d.decision.verdict != sequential.IDENTICAL for d in found))
    head = ["task", "decision", "seeds", "diff (pp)", "interval (pp)", "MDD (pp)", "device h"]
    generated = [
        "<!-- generated -->",
        f"### Decisions per task (`{spec['preset']}`; measured on {machines}; no editor in this "
        "benchmark: its programs come from an offline rule-based search, not an LLM)",
        "",
        *markdown.table(head, _task_rows(found)),
        "",
        *decided.design_lines(spec, design),
        "",
        "### The design, by simulation",
        "",
        *_simulation_lines(design),
        "<!-- end generated -->",
    ]
    return "\n".join(
        [
            "# Decided: the default search's best against its seed, seeds added until each task is decided",
            "",
            f"**Label.** `{spec['preset']}`; the 2-core x86_64 CPU VMs (each job's machine in "
            "`results.csv`); no editor in this benchmark (its programs come from the offline "
            "rule-based default search, not an LLM).",
            "",
            "**Question.** With training seeds the search never used, added 3 per round up to "
            "12, on how many of the paper's ten CLRS tasks can the tool decide whether the "
            "default search's best program beats its seed program (win, loss, equivalent within "
            "±5 pp, or identical), and what does each decision cost?",
            "",
            ANSWER_MARK,
            "**Answer.** " + _answer(spec, found, fixed_hours),
            "",
            "## Protocol",
            "",
            "- **Command.** `scripts/results/decided.sh`: the fixed 3-seed benchmark of "
            "`results/default-search` (its `benchmark.db`) continued with `spark-jax benchmark "
            "--resume WORK --seeds auto --max-seeds 12 --seeds-per-round 3 --delta 5`; this README "
            "by `python scripts/decided_table.py results/decided`.",
            f"- **Code.** commit `{provenance.get('commit', '?')}`, started "
            f"{provenance.get('started_utc', '?')}; each part's machine in `segments.json` where "
            "recorded.",
            "- **Files.** `benchmark.db` (plan, identity checks, every seed), `results.csv`, "
            "`benchmark.md` (the benchmark's own report), `provenance.json`.",
            "",
            *generated,
            "",
        ]
    )


def write(out: pathlib.Path) -> pathlib.Path:
    """Writes OUT/README.md from OUT/benchmark.db, OUT/provenance.json and the fixed design's
    and the seed noise's folders."""
    spec, found, machines = _load(out)
    provenance = json.loads((out / "provenance.json").read_text())
    text = _document(spec, found, machines, _fixed_hours(), provenance)
    (out / "README.md").write_text(text, encoding="utf-8")
    return out / "README.md"


def main(argv: Sequence[str] | None = None) -> int:
    """`[OUT]` (default results/decided)."""
    print(f"wrote {write(readme.folder_arguments(argv, 'decided', __doc__).out)}")
    return 0

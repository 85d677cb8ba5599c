"""The non-CLRS benchmarks (every family's without its own re-measure command) at one preset:
seed programs and the best of a short offline search, in one Markdown table shaped like the
paper's.

Each (benchmark, seed program) runs one `run_search` with the offline editor (budget B, the
seed included); the seed's evaluation is that run's first record, so the seed row and the
search row come from one run database. A benchmark whose data is not cached (20News, Mice
Protein on a machine with no network) gets the search's one-line cache-path error as its row
note: no data is ever substituted.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

from spark_jax import families
from spark_jax.config import search as search_config
from spark_jax.report import accounting
from spark_jax.search import best_program, loop
from spark_jax.search.rundb import RunDB
from spark_jax.util import labels
from spark_jax.util import markdown as markdown_lib

__all__ = [
    "PROTOCOL_NOTE",
    "SmokeRow",
    "benchmarks",
    "markdown",
    "rows_from_folder",
    "rows_of_run",
    "run_benchmark",
    "table_lines",
]


def benchmarks() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(family, benchmark, seed programs) of every family in the registry that this retest
    re-measures (not CLRS, whose `remeasure_command` is `spark-jax benchmark`; a plug-in
    on $SPARK_JAX_FAMILIES included), in each family's benchmark order: the seed programs the
    paper reports for the benchmark (the family's optional `paper_seeds`), else its default."""
    rows = []
    for name in families.names():
        family = families.get(name)
        if not getattr(family, "remeasure_command", None):
            seeds = getattr(family, "paper_seeds", None) or {}
            rows += [
                (name, b, tuple(seeds.get(b, (family.default_seed,)))) for b in family.benchmarks
            ]
    return tuple(rows)


@dataclasses.dataclass(frozen=True)
class SmokeRow:
    """One table row: a program's measurements, or a note saying why there are none."""

    benchmark: str
    program: str
    candidates: int | None = None
    wall_hours: float | None = None
    train_seconds: float | None = None
    macs: int | None = None
    metrics: dict[str, float] | None = None
    note: str = ""


def _row(
    benchmark: str, label: str, row: dict[str, Any], cand: int, wall_s: float, final: dict
) -> SmokeRow:
    """One row: the search's (validation) metrics merged with the program's test-part
    metrics from `final` (the run's `final_test` programs)."""
    record = json.loads(row["evaluation_json"])
    tested = ((final.get(row["program_id"]) or {}).get("evaluation") or {}).get("metrics")
    return SmokeRow(
        benchmark,
        label,
        cand,
        wall_s / 3600,
        float(row["train_seconds"]),
        int(row["macs"]),
        {**(record.get("metrics") or {}), **(tested or {})},
    )


def run_benchmark(
    family: str, benchmark: str, seed: str, preset: str, budget: int, out_dir: pathlib.Path
) -> list[SmokeRow]:
    """The seed row and the best-of-search row of one (benchmark, seed program); its run is
    `out_dir/<benchmark>-<seed>/` (resumed when it holds one)."""
    values = dict(
        family=family,
        benchmark=benchmark,
        seed_program=seed,
        preset=preset,
        budget=budget,
        max_attempts=2 * budget,
        archive={"num_islands": 2},
        executor={"timeout_s": 3600},
    )
    run_dir = out_dir / f"{benchmark}-{seed}"
    resume = (run_dir / loop.DB_NAME).is_file()
    try:
        cfg = search_config.from_dict(values)
        loop.run_search(cfg, run_dir, resume=resume, command=["family_smoke"])
    except (search_config.ConfigError, loop.SearchUsageError, loop.SearchError) as e:
        return [SmokeRow(benchmark, seed, note=" ".join(str(e).split()))]
    return rows_of_run(benchmark, seed, run_dir / loop.DB_NAME)


def rows_of_run(benchmark: str, seed: str, db_path: pathlib.Path) -> list[SmokeRow]:
    """The seed row and the best-of-search row from a finished run's database (the best:
    `search.best_program`'s, selected on the validation part)."""
    with RunDB.open(db_path) as db:
        evals = [e for e in db.evaluations() if e["status"] == "ok"]
        final = (db.get_meta("final_test") or {}).get("programs") or {}
        best_id = best_program.best_program(db).program_id
        meta, created = accounting.read_meta(db)
        acc = accounting.summarize(db, meta, created)
    seed_row = next(e for e in evals if e["proposal_attempt"] is None)
    best = next(e for e in evals if e["program_id"] == best_id)
    seed_wall = float(seed_row["wall_seconds"] or 0.0)
    wall = 3600 * (acc.wall_hours or 0.0)
    return [
        _row(benchmark, f"{seed} (seed)", seed_row, 1, seed_wall, final),
        _row(benchmark, f"{seed} best of search", best, acc.attempts, wall, final),
    ]


def rows_from_folder(data: pathlib.Path) -> list[SmokeRow]:
    """Every registered (benchmark, seed program)'s rows from `data/<benchmark>-<seed>/run.db`,
    or its note from `data/notes.json` (why it has no run, e.g. its data was not reachable);
    one not there at all is noted as not run."""
    notes_path = data / "notes.json"
    notes = json.loads(notes_path.read_text(encoding="utf-8")) if notes_path.is_file() else {}
    rows: list[SmokeRow] = []
    for _, benchmark, seeds in benchmarks():
        for seed in seeds:
            name = f"{benchmark}-{seed}"
            if (data / name / loop.DB_NAME).is_file():
                rows += rows_of_run(benchmark, seed, data / name / loop.DB_NAME)
            else:
                rows.append(SmokeRow(benchmark, seed, note=notes.get(name, "not run")))
    return rows


def _fmt(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "—" if value is None else f"{scale * value:.{digits}f}"


def _metric_cells(m: dict[str, float]) -> tuple[str, str, str]:
    """Validation, test and third cells: accuracy (%) and loss, or returns."""
    if "accuracy" in m or "val_accuracy" in m:
        cells = (
            _fmt(m.get("val_accuracy"), 100, 2),
            _fmt(m.get("accuracy"), 100, 2),
            _fmt(m.get("loss"), digits=4),
        )
    else:
        cells = (_fmt(m.get("val_return")), _fmt(m.get("test_return")), _fmt(m.get("train_return")))
    return cells


def table_lines(rows: list[SmokeRow]) -> list[str]:
    """The paper-shaped table: one row per program, or its note."""
    head = ["Benchmark", "Program", "Cand.", "Wall-h", "Train(s)", "MACs(K)"]
    head += ["Val acc / val return", "Test acc / test return", "Test loss / train return", "Note"]
    cells = [
        [r.benchmark, r.program, *(["—"] * 7), markdown_lib.cell(r.note)]
        if r.note
        else [r.benchmark, r.program, r.candidates, f"{r.wall_hours:.4f}"]
        + [f"{r.train_seconds:.1f}", f"{r.macs / 1e3:.2f}", *_metric_cells(r.metrics or {}), ""]
        for r in rows
    ]
    return markdown_lib.table(head, cells)


PROTOCOL_NOTE = (
    "Cand. counts every proposal (feasible or not); Wall-h is the whole search (the seed row: "
    "its evaluation); accuracy in %. Val: the validation part the search selected on; test: "
    "the test part, scored only for these final programs."
)


def markdown(rows: list[SmokeRow], preset: str, budget: int, command: str) -> str:
    """The paper-shaped table, labelled with protocol, machine and editor."""
    lines = [
        f"# Non-CLRS benchmarks, preset `{preset}` (offline editor, not an LLM)",
        "",
        f"Protocol: our `{preset}` preset of each family (fixed split / evaluation seeds, "
        f"training seed 0); search: offline editor, not an LLM, budget {budget} evaluated "
        f"programs (seed included). Machine: {labels.measured_on()}. Command: `{command}`.",
        PROTOCOL_NOTE,
        "",
    ]
    return markdown_lib.document([lines, table_lines(rows)], end="\n")

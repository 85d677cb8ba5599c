"""A family search's verdict: its seed program and its best program trained again with seeds
the search never trained with, scored on the test part, compared with the project's statistics.

A family search selects its best program on the validation part under its own training seeds, so the
best program's numbers under those seeds carry the winner's curse. `retest_run` trains the
seed program and the best program again with K fresh seeds (after every seed the search used,
`benchmark.seeds.search_seeds`), the same K for both (paired), and scores each on the test part
only. Results are kept in `<run dir>/retest.json` after every evaluation, so a stopped retest
resumes where it stopped. `verdicts` turns a table's retests into one paired test per row
(best vs seed, exact sign-flip up to 8 seeds) with Holm over the rows; a row whose search kept
its seed is not tested (the two programs are one).
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import statistics
from typing import Sequence

from spark_jax import families
from spark_jax.benchmark import seeds as seeds_lib
from spark_jax.benchmark import stats
from spark_jax.report import family_smoke
from spark_jax.search import best_program, loop
from spark_jax.search.rundb import RunDB
from spark_jax.stats import significance
from spark_jax.util import files
from spark_jax.util import markdown as markdown_lib

__all__ = [
    "FILE_NAME",
    "Retest",
    "RowVerdict",
    "load",
    "retest_lines",
    "retest_run",
    "retests_from_folder",
    "test_score",
    "verdicts",
]

FILE_NAME = "retest.json"
SEED = "seed"
BEST = "best"


@dataclasses.dataclass(frozen=True)
class Retest:
    """One (benchmark, seed program)'s retest.

    Attributes:
      seeds: the fresh training seeds, shared by both programs (paired).
      seed_scores, best_scores: the test-part score per seed (accuracy in %, or the test
        return), in `seeds` order; fewer than `seeds` while the retest is unfinished.
      metric: what the scores are ('accuracy %' or 'test return').
      best_is_seed: the search kept its seed (no candidate beat it on validation).
    """

    benchmark: str
    seed_program: str
    seeds: tuple[int, ...]
    seed_scores: tuple[float, ...]
    best_scores: tuple[float, ...]
    metric: str
    best_is_seed: bool

    @property
    def finished(self) -> bool:
        n = len(self.seeds)
        return len(self.seed_scores) == n and len(self.best_scores) == n


def test_score(metrics: dict[str, float]) -> tuple[str, float]:
    """(metric label, value) of a test-part evaluation: classification accuracy in %, or the
    test return; ValueError naming the metrics when neither is there."""
    if "accuracy" in metrics:
        return "accuracy %", 100.0 * float(metrics["accuracy"])
    if "test_return" in metrics:
        return "test return", float(metrics["test_return"])
    raise ValueError(f"a test-part evaluation has no accuracy or test_return: {sorted(metrics)}")


def _write(path: pathlib.Path, data: dict) -> None:
    files.write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _stored(path: pathlib.Path, seeds: Sequence[int], ids: dict[str, str]) -> dict:
    """The stored retest when it is of these seeds and programs, else a fresh one."""
    fresh = {"seeds": list(seeds), "programs": ids, "scores": {SEED: {}, BEST: {}}}
    if not path.is_file():
        return fresh
    data = json.loads(path.read_text(encoding="utf-8"))
    same = data.get("seeds") == list(seeds) and data.get("programs") == ids
    return data if same else fresh


def retest_run(
    family: str, benchmark: str, seed_program: str, run_dir: pathlib.Path, preset: str, k: int
) -> Retest:
    """Trains the seed and the best program of the finished search in `run_dir` with `k`
    seeds after the search's own and scores them on the test part (what is missing from
    `run_dir/retest.json` only)."""
    if k < 2:
        raise ValueError(f"a retest needs at least 2 seeds to test anything, got {k}")
    first = max(seeds_lib.search_seeds(run_dir), default=-1) + 1
    seeds = tuple(range(first, first + k))
    with RunDB.open(run_dir / "run.db") as db:
        best = best_program.best_program(db)  # None when not even the seed was evaluated
    if best is None:
        raise ValueError(f"{run_dir}: the search evaluated no program; nothing to retest")
    ids = {SEED: best.seed_id, BEST: best.program_id}
    sources = {SEED: best.seed_source, BEST: best.source}
    path = run_dir / FILE_NAME
    data = _stored(path, seeds, ids)
    impl = families.get(family)
    for role in (SEED,) if best.is_seed else (SEED, BEST):
        for seed in seeds:
            if str(seed) in data["scores"][role]:
                continue
            ev = impl.evaluate(sources[role], benchmark, preset, seed, "test")
            data["scores"][role][str(seed)] = dict(ev.metrics)
            _write(path, data)
    if not path.is_file():
        _write(path, data)
    return load(path, benchmark, seed_program, best.is_seed)


def load(path: pathlib.Path, benchmark: str, seed_program: str, best_is_seed: bool) -> Retest:
    """The retest stored at `path` (a search that kept its seed: the best's scores are the
    seed's)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    seeds = tuple(int(s) for s in data["seeds"])
    metric = ""
    scores: dict[str, tuple[float, ...]] = {}
    for role in (SEED, BEST):
        got = data["scores"][SEED if best_is_seed else role]
        values = []
        for s in seeds:
            if str(s) in got:
                metric, value = test_score(got[str(s)])
                values.append(value)
        scores[role] = tuple(values)
    return Retest(benchmark, seed_program, seeds, scores[SEED], scores[BEST], metric, best_is_seed)


@dataclasses.dataclass(frozen=True)
class RowVerdict:
    """One retest row: the difference best - seed, its Holm-adjusted p and the verdict
    ('kept its seed' or 'unfinished' when not tested)."""

    retest: Retest
    diff: float
    p_holm: float
    verdict: str

    @staticmethod
    def spread(scores: Sequence[float]) -> str:
        if not scores:
            return "—"
        sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
        return f"{statistics.fmean(scores):.2f} ± {sd:.2f}"


def verdicts(
    retests: Sequence[Retest], alpha: float = significance.DEFAULT_ALPHA
) -> tuple[list[RowVerdict], str | None]:
    """One `RowVerdict` per retest, and `significance.floor_note`'s sentence (None when the
    seeds suffice): finished rows whose search changed the program are tested (paired, best
    vs seed) with Holm over those rows."""
    cells: dict[tuple[str, str], stats.Cell] = {}
    tested = []
    for r in retests:
        if r.finished and not r.best_is_seed:
            row = f"{r.benchmark}/{r.seed_program}"
            cells[(BEST, row)] = stats.Cell(r.best_scores, seeds=r.seeds)
            cells[(SEED, row)] = stats.Cell(r.seed_scores, seeds=r.seeds)
            tested.append(row)
    table = stats.compare(cells, BEST, SEED, tested, alpha) if tested else None
    by_row = {v.task: v for v in table.per_task} if table else {}
    out = []
    for r in retests:
        row = f"{r.benchmark}/{r.seed_program}"
        if row in by_row:
            v = by_row[row]
            out.append(RowVerdict(r, v.test.diff, v.p_holm, v.verdict))
        else:
            word = "kept its seed" if r.best_is_seed else "unfinished"
            out.append(RowVerdict(r, math.nan, math.nan, word))
    note = significance.floor_note([v.test for v in table.per_task], alpha) if table else None
    return out, note


def retests_from_folder(data: pathlib.Path) -> list[Retest]:
    """The retest of every registered (benchmark, seed program) that has one in
    `data/<benchmark>-<seed>/retest.json`, in the families table's order."""
    out = []
    for _, benchmark, seeds in family_smoke.benchmarks():
        for seed in seeds:
            run_dir = data / f"{benchmark}-{seed}"
            if (run_dir / FILE_NAME).is_file():
                with RunDB.open(run_dir / loop.DB_NAME) as db:
                    kept = best_program.best_program(db).is_seed
                out.append(load(run_dir / FILE_NAME, benchmark, seed, kept))
    return out


def _cell(value: float, digits: int) -> str:
    return "—" if math.isnan(value) else f"{value:.{digits}f}"


def retest_lines(retests: Sequence[Retest]) -> list[str]:
    """The verdict table: per row, both programs' test score over the fresh seeds (mean ±
    sd), best - seed, Holm-adjusted p and the verdict; then the floor note, if any."""
    rows, note = verdicts(retests)
    head = ["Benchmark", "Seed program", "Metric", "Fresh seeds", "Seed program: test"]
    head += ["Best of search: test", "Best - seed", "p (Holm)", "Verdict"]
    cells = [
        [
            v.retest.benchmark,
            v.retest.seed_program,
            v.retest.metric,
            f"{v.retest.seeds[0]}-{v.retest.seeds[-1]}",
            RowVerdict.spread(v.retest.seed_scores),
            RowVerdict.spread(v.retest.best_scores),
            _cell(v.diff, 2),
            _cell(v.p_holm, 4),
            v.verdict,
        ]
        for v in rows
    ]
    return markdown_lib.table(head, cells) + ([] if note is None else ["", note])

"""The figures of each run of a comparison, read from its database: its accounting
(`report.accounting.summarize`), editor, LLM calls and tokens, machine, and the test scores of
its final programs (`run_meta['final_test']`, written by `search.final_test` under
`fitness.source: ood_val`), and the roles of its calls (which form of a control ran)."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping, Sequence

from spark_jax.compare.runner import ComparePlan, run_dir_of
from spark_jax.report.accounting import RunAccounting, best_within, find_meta, read_meta, summarize
from spark_jax.search.final_test import META_KEY as FINAL_TEST_KEY
from spark_jax.search.final_test import recorded_train_seeds
from spark_jax.search.queries import RunQueries
from spark_jax.search.rundb import RunDB

__all__ = [
    "RunFigures",
    "best_at_budget",
    "best_candidate_ood",
    "by_method",
    "collect",
    "run_figures",
]


@dataclasses.dataclass(frozen=True)
class RunFigures:
    """One finished search of a comparison."""

    method: str
    seed: int
    acc: RunAccounting
    editor: str
    llm_calls: int
    tokens: int
    machine: str = ""  # where it ran ('' when the run predates the record)
    # The run's best evaluated candidate scored on the official test set after the search
    # (`fitness.source: ood_val`; None under `ood_test`, where selection scored the test set).
    test_best: float | None = None
    test_seed: float | None = None  # the seed program on the same test set
    # The final test's training seeds (never the search's); None when it predates that
    # rule and reused the search's own seeds (the parameters the search selected).
    test_train_seeds: tuple[int, ...] | None = None
    selection: str = ""  # the run's fitness source ('' when not recorded)
    best_program: str = ""  # the program id of the final test's best candidate ('' if none)
    roles: tuple[str, ...] = ()  # the roles of its calls (a control's role names its form)


def best_candidate_ood(acc: RunAccounting) -> float | None:
    """The run's best evaluated candidate's OOD (fraction), the seed excluded; None if none."""
    e = acc.best_candidate
    return None if e is None else e["ood_score"]


def best_at_budget(acc: RunAccounting, budget: int | None) -> float | None:
    """Best at budget B under the one budget rule (`search.budget`): the seed counts toward
    B, so B evaluated programs are the seed and the first B - 1 candidates evaluated after
    it; best at budget is the best of those candidates (the seed's own score is its own
    row, not a candidate's). None at B = 1 (the seed alone); the run's best evaluated
    candidate when no budget is given."""
    return best_candidate_ood(acc) if budget is None else best_within(acc, budget - 1)


def _final_entry(final_test: Mapping[str, Any] | None, role: str) -> tuple[str, Mapping]:
    """The final program with `role` ('best', 'seed') in run_meta's `final_test`: its id and
    entry; ('', {}) when the run recorded none."""
    for program_id, entry in ((final_test or {}).get("programs") or {}).items():
        if role in entry.get("roles", ()):
            return str(program_id), entry
    return "", {}


def _final_test(final_test: Mapping[str, Any] | None, role: str) -> float | None:
    """Test OOD of the final program with `role`; None when the run scored none."""
    entry = _final_entry(final_test, role)[1]
    if entry.get("ok") and entry.get("evaluation"):
        return entry["evaluation"].get("ood_score")
    return None


def run_figures(
    method: str,
    seed: int,
    db: RunQueries,
    meta: Mapping[str, Any],
    created_at: float | None,
    final_test: Mapping[str, Any] | None = None,
) -> RunFigures:
    """The figures of one run from its open database (any reader), flattened metadata and
    the raw `final_test` record."""
    acc = summarize(db, meta, created_at)
    calls = db.llm_calls()
    editor = str(find_meta(meta, "editor.kind") or find_meta(meta, "kind") or "?")
    tokens = sum((c["prompt_tokens"] or 0) + (c["completion_tokens"] or 0) for c in calls)
    n_llm = sum(1 for c in calls if c["is_llm"])
    machine = str(find_meta(meta, "machine") or "")
    return RunFigures(
        method, seed, acc, editor, n_llm, tokens, machine,
        test_best=_final_test(final_test, "best"),
        test_seed=_final_test(final_test, "seed"),
        test_train_seeds=recorded_train_seeds(final_test),
        selection=str((final_test or {}).get("selection_source") or ""),
        best_program=_final_entry(final_test, "best")[0],
        roles=tuple(sorted({str(c["role"]) for c in calls if c.get("role")})),
    )  # fmt: skip


def collect(out: pathlib.Path, plan: ComparePlan) -> list[RunFigures]:
    """The figures of every run of `plan` that has a database (finished or not)."""
    figures = []
    for method, seed in plan.runs():
        path = run_dir_of(out, method, seed) / "run.db"
        if not path.is_file():
            continue
        with RunDB.open(path) as db:
            meta, created = read_meta(db)
            final_test = db.get_meta(FINAL_TEST_KEY)
            figures.append(run_figures(method.name, seed, db, meta, created, final_test))
    return figures


def by_method(figures: Sequence[RunFigures]) -> dict[str, list[RunFigures]]:
    """The runs grouped by method name, in the order given."""
    out: dict[str, list[RunFigures]] = {}
    for r in figures:
        out.setdefault(r.method, []).append(r)
    return out

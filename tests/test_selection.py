"""The report's selection note: a run that selected on its test set says so beside the
verdict (CLRS and the other families); a run that selected on validation does not."""

from __future__ import annotations

import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax.jobs.executors import EvalResult
from spark_jax.report import selection
from spark_jax.report import tables as report
from spark_jax.search.rundb import RunDB


def _report(tmp_path, **meta) -> str:
    values = dict(task="dfs", preset="tiny", seed=0, seeds_per_candidate=1, **meta)
    with RunDB.create(tmp_path / "run.db", values) as db:
        pid = db.insert_program("seed = 0\n")
        result = EvalResult("seed", True, records.evaluation(0.5), None, "", "test", 1.0)
        db.record_evaluation(pid, None, records.job(), result)
    return report.write_report(tmp_path).report.read_text()


@pytest.mark.parametrize(
    "meta, says",
    [
        (dict(fitness_source="ood_test"), "official OOD test set; `fitness.source: ood_test`"),
        (dict(), "runs before it was recorded did"),  # older runs: the test set, assumed
        (dict(fitness_source="ood_test", family="classify"), "classify test split"),
    ],
)
def test_a_run_selected_on_its_test_set_says_so(tmp_path, meta, says):
    md = _report(tmp_path, **meta)
    assert selection.TEST_SELECTED in md and says in md


@pytest.mark.parametrize("family", ["clrs", "cartpole"])
def test_a_run_selected_on_validation_has_no_such_note(tmp_path, family):
    md = _report(tmp_path, fitness_source="ood_val", family=family)
    assert selection.TEST_SELECTED not in md
    assert selection.selection_source({"fitness_source": "ood_val"}) == ("ood_val", True)
